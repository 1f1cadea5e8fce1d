package admission

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/steward-sh/steward/internal/spec"
)

// Signed specs.
//
// An operator's key signs what each host will run: for every worker of a
// tree, its path and its kind and driver blocks as the host receives them
// (vars inherited and templates rendered). The signature rides in the
// worker's node (spec.Node.Signature) through the tree's workflows to the
// action. A host started with --trusted-keys verifies it before every
// process start: a spec changed anywhere on the way (a raw `spec` signal,
// an edited history, a compromised control plane) does not verify, and a
// signature cannot be moved to another path.
//
// A signature is "ed25519:KEYID:SIG": KEYID the first 8 bytes (hex) of the
// SHA-256 of the public key, SIG the base64 of the Ed25519 signature of
// Message. Keys are PEM files: PKCS #8 "PRIVATE KEY" (mode 0600) and PKIX
// "PUBLIC KEY", as openssl reads and writes them.

// signatureDomain separates steward's signed messages from any other use
// of the key.
const signatureDomain = "steward spec signature v1"

// Message is what a worker's signature covers: its path, its kind and its
// driver blocks (defaults filled in), as canonical JSON (keys sorted; a JSON round trip first,
// so a spec read from YAML and the same spec decoded by a workflow give
// the same bytes).
func Message(path string, n spec.Node) ([]byte, error) {
	type signed struct {
		Path    string         `json:"path"`
		Kind    string         `json:"kind"`
		Stub    *spec.Stub     `json:"stub,omitempty"`
		Process map[string]any `json:"process,omitempty"`
		HTTP    map[string]any `json:"http,omitempty"`
	}
	n = n.Resolved() // what the host receives: defaults filled in
	return canonical(signatureDomain, signed{Path: path, Kind: n.Kind, Stub: n.Stub, Process: n.Process, HTTP: n.HTTP})
}

// Signed fleets. A worker of a fleet (instances, or hosts its supervisor
// places it on) is rendered by its supervisor for each instance and host,
// which its operator cannot sign one by one. Its signature covers its
// template instead: the worker's path as written (tree/web, not
// tree/web-3), its kind, its hosts, the vars it inherits and its driver
// blocks before their templates run (FleetMessage). The worker sends the
// template with each start (ActionRequest.Template); the host verifies the
// template's signature, renders it for the instance and host the action
// names, and admits the spec only if it is that rendering (VerifyFleet).

// fleetSignatureDomain separates a fleet template's signature from a
// worker's: one cannot stand for the other.
const fleetSignatureDomain = "steward fleet spec signature v1"

// FleetMessage is what a fleet worker's signature covers (n unrendered,
// as its supervisor hands it down: vars inherited, hosts inherited).
func FleetMessage(path string, n spec.Node) ([]byte, error) {
	type signed struct {
		Path    string            `json:"path"`
		Kind    string            `json:"kind"`
		Hosts   []string          `json:"hosts,omitempty"`
		Vars    map[string]string `json:"vars,omitempty"`
		Stub    *spec.Stub        `json:"stub,omitempty"`
		Process map[string]any    `json:"process,omitempty"`
		HTTP    map[string]any    `json:"http,omitempty"`
	}
	return canonical(fleetSignatureDomain, signed{Path: path, Kind: n.Kind, Hosts: n.Hosts, Vars: n.Vars, Stub: n.Stub, Process: n.Process, HTTP: n.HTTP})
}

// canonical is domain, a zero byte and v as canonical JSON.
func canonical[T any](domain string, v T) ([]byte, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var again T
	if err := json.Unmarshal(raw, &again); err != nil {
		return nil, err
	}
	canon, err := json.Marshal(again)
	if err != nil {
		return nil, err
	}
	return append([]byte(domain+"\x00"), canon...), nil
}

// KeyID names a public key in signatures and messages.
func KeyID(pub ed25519.PublicKey) string {
	sum := sha256.Sum256(pub)
	return hex.EncodeToString(sum[:8])
}

// Sign returns the signature of worker n at path.
func Sign(key ed25519.PrivateKey, path string, n spec.Node) (string, error) {
	msg, err := Message(path, n)
	if err != nil {
		return "", err
	}
	return signMessage(key, msg), nil
}

func signMessage(key ed25519.PrivateKey, msg []byte) string {
	pub := key.Public().(ed25519.PublicKey)
	return "ed25519:" + KeyID(pub) + ":" + base64.StdEncoding.EncodeToString(ed25519.Sign(key, msg))
}

// Verify checks n's signature at path against the trusted keys.
func Verify(trusted []ed25519.PublicKey, path string, n spec.Node) error {
	return checkSignature(trusted, path, n.Signature, func() ([]byte, error) { return Message(path, n) })
}

// VerifyFleet checks the spec n of a fleet's worker at path: template is
// the worker's spec before its supervisor rendered it (nil: none came), its
// signature must verify at the path as written, n must be the instance and
// host the path and the template's hosts allow, and n must be the
// template rendered for them.
func VerifyFleet(trusted []ed25519.PublicKey, path string, n spec.Node, template *spec.Node) error {
	refuse := func(format string, a ...any) error {
		return &Refusal{Rule: "signature", Msg: fmt.Sprintf(format, a...)}
	}
	if template == nil {
		return refuse("the spec of %s is a fleet's, and came without its signed template", path)
	}
	written := path
	if n.Instance != nil {
		suffix := "-" + strconv.Itoa(*n.Instance)
		if !strings.HasSuffix(path, suffix) {
			return refuse("the spec of %s names instance %d, which is not its path's", path, *n.Instance)
		}
		written = strings.TrimSuffix(path, suffix)
	}
	if !samePlace(n, *template) {
		return refuse("the spec of %s is not placed as its template is", path)
	}
	if len(template.Hosts) > 0 && !slices.Contains(template.Hosts, n.PlacedOn) {
		return refuse("the spec of %s is placed on host %q, which its signed hosts do not list", path, n.PlacedOn)
	}
	t := *template
	if err := checkSignature(trusted, path, t.Signature, func() ([]byte, error) { return FleetMessage(written, t) }); err != nil {
		return err
	}
	r, ps := spec.Render(t, "")
	if len(ps) > 0 {
		return refuse("the template of %s does not render: %v", path, ps)
	}
	want, err := Message(path, r)
	if err != nil {
		return refuse("the spec of %s cannot be encoded: %v", path, err)
	}
	got, err := Message(path, n)
	if err != nil {
		return refuse("the spec of %s cannot be encoded: %v", path, err)
	}
	if !bytes.Equal(want, got) {
		return refuse("the spec of %s is not its signed template's rendering: it was changed after it was signed", path)
	}
	return nil
}

func samePlace(a, b spec.Node) bool {
	if (a.Instance == nil) != (b.Instance == nil) || (a.Instance != nil && *a.Instance != *b.Instance) {
		return false
	}
	return a.PlacedOn == b.PlacedOn
}

// checkSignature checks signature (of the spec at path) against the
// trusted keys and the message msg returns.
func checkSignature(trusted []ed25519.PublicKey, path, signature string, msg func() ([]byte, error)) error {
	if signature == "" {
		return &Refusal{Rule: "signature", Msg: fmt.Sprintf("the spec of %s is not signed, and this host runs only signed specs (--trusted-keys)", path)}
	}
	parts := strings.Split(signature, ":")
	if len(parts) != 3 || parts[0] != "ed25519" {
		return &Refusal{Rule: "signature", Msg: fmt.Sprintf("the signature of %s is malformed (want ed25519:KEYID:SIG)", path)}
	}
	sig, err := base64.StdEncoding.DecodeString(parts[2])
	if err != nil || len(sig) != ed25519.SignatureSize {
		return &Refusal{Rule: "signature", Msg: fmt.Sprintf("the signature of %s is malformed (bad signature bytes)", path)}
	}
	var key ed25519.PublicKey
	for _, k := range trusted {
		if KeyID(k) == parts[1] {
			key = k
			break
		}
	}
	if key == nil {
		return &Refusal{Rule: "signature", Msg: fmt.Sprintf("the spec of %s is signed by key %s, which this host does not trust", path, parts[1])}
	}
	m, err := msg()
	if err != nil {
		return &Refusal{Rule: "signature", Msg: fmt.Sprintf("the spec of %s cannot be encoded: %v", path, err)}
	}
	if !ed25519.Verify(key, m, sig) {
		return &Refusal{Rule: "signature", Msg: fmt.Sprintf("the spec of %s does not match its signature by key %s: it was changed after it was signed", path, parts[1])}
	}
	return nil
}

// GenerateKey writes a new key pair: prefix (the private key, mode 0600)
// and prefix.pub. It never overwrites a file.
func GenerateKey(prefix string) (ed25519.PublicKey, error) {
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, err
	}
	privDER, err := x509.MarshalPKCS8PrivateKey(priv)
	if err != nil {
		return nil, err
	}
	pubDER, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		return nil, err
	}
	if err := writeNew(prefix, 0o600, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: privDER})); err != nil {
		return nil, err
	}
	if err := writeNew(prefix+".pub", 0o644, pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pubDER})); err != nil {
		os.Remove(prefix) // nothing half-made
		return nil, err
	}
	return pub, nil
}

func writeNew(file string, mode os.FileMode, data []byte) error {
	f, err := os.OpenFile(file, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		os.Remove(file)
		return err
	}
	return f.Close()
}

// LoadPrivateKey reads a private key written by GenerateKey (or openssl
// genpkey -algorithm ed25519). A key file others can read is refused.
func LoadPrivateKey(file string) (ed25519.PrivateKey, error) {
	st, err := os.Stat(file)
	if err != nil {
		return nil, err
	}
	if st.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("%s: private key readable by others (mode %v); chmod 600 it", file, st.Mode().Perm())
	}
	return readKey[ed25519.PrivateKey](file, "PRIVATE KEY", x509.ParsePKCS8PrivateKey)
}

// LoadPublicKeys reads public keys, one PEM file each.
func LoadPublicKeys(files []string) ([]ed25519.PublicKey, error) {
	var out []ed25519.PublicKey
	for _, f := range files {
		k, err := readKey[ed25519.PublicKey](f, "PUBLIC KEY", x509.ParsePKIXPublicKey)
		if err != nil {
			return nil, err
		}
		out = append(out, k)
	}
	if len(out) == 0 {
		return nil, errors.New("no trusted key given")
	}
	return out, nil
}

// readKey reads the Ed25519 key of a PEM file's block of type typ.
func readKey[K any](file, typ string, parse func([]byte) (any, error)) (K, error) {
	var zero K
	block, err := readPEM(file, typ)
	if err != nil {
		return zero, err
	}
	k, err := parse(block)
	if err != nil {
		return zero, fmt.Errorf("%s: %w", file, err)
	}
	ek, ok := k.(K)
	if !ok {
		return zero, fmt.Errorf("%s: not an Ed25519 key", file)
	}
	return ek, nil
}

func readPEM(file, typ string) ([]byte, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	block, _ := pem.Decode(data)
	if block == nil || block.Type != typ {
		return nil, fmt.Errorf("%s: no PEM %q block", file, typ)
	}
	return block.Bytes, nil
}

// SignTree signs every worker of a tree as its host will receive it: with
// the vars its supervisors hand down (spec.Effective) and its templates
// rendered; a fleet's worker (instances, or hosts) as its template
// (FleetMessage). It returns the tree with each worker's Signature set,
// and leaves its input alone.
func SignTree(key ed25519.PrivateKey, root spec.Node) (spec.Node, error) {
	return signNode(key, "", root, spec.Effective(root), nil)
}

func signNode(key ed25519.PrivateKey, prefix string, n, effective spec.Node, parent *spec.Node) (spec.Node, error) {
	path := n.Name
	if prefix != "" {
		path = prefix + "/" + n.Name
	}
	if !n.IsSupervisor() {
		template := effective
		if parent != nil {
			template = spec.InheritFleet(*parent, template) // as Expand hands it down
		}
		if n.Instances > 0 || len(template.Hosts) > 0 {
			if _, ps := spec.Render(template, ""); len(ps) > 0 {
				return n, fmt.Errorf("%s: %v", path, ps)
			}
			msg, err := FleetMessage(path, template)
			if err != nil {
				return n, fmt.Errorf("%s: %w", path, err)
			}
			n.Signature = signMessage(key, msg)
			return n, nil
		}
		rendered, ps := spec.Render(effective, "")
		if len(ps) > 0 {
			return n, fmt.Errorf("%s: %v", path, ps)
		}
		sig, err := Sign(key, path, rendered)
		if err != nil {
			return n, fmt.Errorf("%s: %w", path, err)
		}
		n.Signature = sig
		return n, nil
	}
	kids := make([]spec.Node, len(n.Children))
	for i, c := range n.Children {
		signed, err := signNode(key, path, c, effective.Children[i], &effective)
		if err != nil {
			return n, err
		}
		kids[i] = signed
	}
	n.Children = kids
	return n, nil
}
