package admission

import (
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
	s := signed{Path: path, Kind: n.Kind, Stub: n.Stub, Process: n.Process, HTTP: n.HTTP}
	raw, err := json.Marshal(s)
	if err != nil {
		return nil, err
	}
	var again signed
	if err := json.Unmarshal(raw, &again); err != nil {
		return nil, err
	}
	canon, err := json.Marshal(again)
	if err != nil {
		return nil, err
	}
	return append([]byte(signatureDomain+"\x00"), canon...), nil
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
	pub := key.Public().(ed25519.PublicKey)
	return "ed25519:" + KeyID(pub) + ":" + base64.StdEncoding.EncodeToString(ed25519.Sign(key, msg)), nil
}

// Verify checks n's signature at path against the trusted keys.
func Verify(trusted []ed25519.PublicKey, path string, n spec.Node) error {
	if n.Signature == "" {
		return &Refusal{Rule: "signature", Msg: fmt.Sprintf("the spec of %s is not signed, and this host runs only signed specs (--trusted-keys)", path)}
	}
	parts := strings.Split(n.Signature, ":")
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
	msg, err := Message(path, n)
	if err != nil {
		return &Refusal{Rule: "signature", Msg: fmt.Sprintf("the spec of %s cannot be encoded: %v", path, err)}
	}
	if !ed25519.Verify(key, msg, sig) {
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
// rendered. It returns the tree with each worker's Signature set, and
// leaves its input alone.
func SignTree(key ed25519.PrivateKey, root spec.Node) (spec.Node, error) {
	return signNode(key, "", root, spec.Effective(root))
}

func signNode(key ed25519.PrivateKey, prefix string, n, effective spec.Node) (spec.Node, error) {
	path := n.Name
	if prefix != "" {
		path = prefix + "/" + n.Name
	}
	if n.Instances > 0 || len(effective.Hosts) > 0 {
		// A signature covers one worker at one path, rendered for one host.
		return n, fmt.Errorf("%s: a signed spec cannot have instances or hosts yet (sign each worker on its own, with process.host)", path)
	}
	if !n.IsSupervisor() {
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
		signed, err := signNode(key, path, c, effective.Children[i])
		if err != nil {
			return n, err
		}
		kids[i] = signed
	}
	n.Children = kids
	return n, nil
}
