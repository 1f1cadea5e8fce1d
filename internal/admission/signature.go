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
	"math"
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

// trustedKey is the key of trusted whose ID is id (nil: none).
func trustedKey(trusted []ed25519.PublicKey, id string) ed25519.PublicKey {
	for _, k := range trusted {
		if KeyID(k) == id {
			return k
		}
	}
	return nil
}

// KeyID names a public key in signatures and messages.
func KeyID(pub ed25519.PublicKey) string {
	sum := sha256.Sum256(pub)
	return hex.EncodeToString(sum[:8])
}

// Sign returns the version 1 signature of worker n at path, as the release
// before signed (hosts still take it, as revision 0; SignTree signs version 2).
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

// signatureDomainV2 and fleetSignatureDomainV2 separate version 2's
// messages from version 1's and from each other.
const (
	signatureDomainV2      = "steward spec signature v2"
	fleetSignatureDomainV2 = "steward fleet spec signature v2"
)

// MessageV2 is what a version 2 signature of a worker covers: Message's
// fields and the revision.
func MessageV2(path string, revision int64, n spec.Node) ([]byte, error) {
	type signed struct {
		Path     string         `json:"path"`
		Revision int64          `json:"revision"`
		Kind     string         `json:"kind"`
		Stub     *spec.Stub     `json:"stub,omitempty"`
		Process  map[string]any `json:"process,omitempty"`
		HTTP     map[string]any `json:"http,omitempty"`
		// Job: a job's block (a service's message is as before it).
		Job *spec.Job `json:"job,omitempty"`
	}
	n = n.Resolved()
	return canonical(signatureDomainV2, signed{Path: path, Revision: revision, Kind: n.Kind, Stub: n.Stub, Process: n.Process, HTTP: n.HTTP, Job: n.Job})
}

// FleetMessageV2 is what a version 2 signature of a fleet's template
// covers: FleetMessage's fields, the revision and the instance count (0: a
// fleet by hosts alone).
func FleetMessageV2(path string, revision int64, instances int, n spec.Node) ([]byte, error) {
	type signed struct {
		Path      string            `json:"path"`
		Revision  int64             `json:"revision"`
		Instances int               `json:"instances"`
		Kind      string            `json:"kind"`
		Hosts     []string          `json:"hosts,omitempty"`
		Vars      map[string]string `json:"vars,omitempty"`
		Stub      *spec.Stub        `json:"stub,omitempty"`
		Process   map[string]any    `json:"process,omitempty"`
		HTTP      map[string]any    `json:"http,omitempty"`
	}
	return canonical(fleetSignatureDomainV2, signed{Path: path, Revision: revision, Instances: instances, Kind: n.Kind, Hosts: n.Hosts, Vars: n.Vars, Stub: n.Stub, Process: n.Process, HTTP: n.HTTP})
}

// Verify checks n's signature at path against the trusted keys, and
// returns it (its revision: 0 for version 1).
func Verify(trusted []ed25519.PublicKey, path string, n spec.Node) (Signature, error) {
	sig, err := ParseSignature(path, n.Signature)
	if err != nil {
		return sig, err
	}
	if sig.Version == 2 && sig.Instances != 0 {
		return sig, &Refusal{Rule: "signature", Msg: fmt.Sprintf("the spec of %s carries a fleet's signature, and is not a fleet's", path)}
	}
	if n.IsJob() && sig.Version != 2 {
		// Version 1 does not cover a job's block: a service's signature
		// would run as a job (any number of runs, each a process).
		return sig, &Refusal{Rule: "signature", Msg: fmt.Sprintf("the spec of %s is a job's, and its signature (version %d) does not cover its job block: sign it again (starter apply --sign-key)", path, sig.Version)}
	}
	return sig, sig.check(trusted, path, func() ([]byte, error) {
		if sig.Version == 1 {
			return Message(path, n)
		}
		return MessageV2(path, sig.Revision, n)
	})
}

// VerifyFleet checks the spec n of a fleet's worker at path: template is
// the worker's spec before its supervisor rendered it (nil: none came), its
// signature must verify at the path as written, n must be the instance and
// host the path and the template's hosts allow (and, for a version 2
// signature, an instance within the signed count), and n must be the
// template rendered for them. It returns the template's signature.
func VerifyFleet(trusted []ed25519.PublicKey, path string, n spec.Node, template *spec.Node) (Signature, error) {
	refuse := func(format string, a ...any) (Signature, error) {
		return Signature{}, &Refusal{Rule: "signature", Msg: fmt.Sprintf(format, a...)}
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
	switch {
	case len(template.Hosts) > 0 && !slices.Contains(template.Hosts, n.PlacedOn):
		return refuse("the spec of %s is placed on host %q, which its signed hosts do not list", path, n.PlacedOn)
	case len(template.Hosts) == 0 && n.PlacedOn != "":
		// A fleet with no hosts (instances only) runs on its process's
		// host, which the signature covers; a supervisor never places it.
		// placedOn is not signed: set by hand, it made a signed spec of
		// host db1 run on host web2.
		return refuse("the spec of %s is placed on host %q, and its template is signed with no hosts", path, n.PlacedOn)
	}
	t := *template
	sig, err := ParseSignature(path, t.Signature)
	if err != nil {
		return sig, err
	}
	if sig.Version == 2 {
		switch {
		case sig.Instances > 0 && n.Instance == nil:
			return refuse("the spec of %s is not an instance, and its template is signed as %d instances", path, sig.Instances)
		case sig.Instances == 0 && n.Instance != nil:
			return refuse("the spec of %s is instance %d, and its template is signed as no instances", path, *n.Instance)
		case n.Instance != nil && (*n.Instance < 0 || *n.Instance >= sig.Instances):
			return refuse("the spec of %s is instance %d, beyond the %d instances its template is signed as", path, *n.Instance, sig.Instances)
		}
	}
	if err := sig.check(trusted, path, func() ([]byte, error) {
		if sig.Version == 1 {
			return FleetMessage(written, t)
		}
		return FleetMessageV2(written, sig.Revision, sig.Instances, t)
	}); err != nil {
		return sig, err
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
	return sig, nil
}

func samePlace(a, b spec.Node) bool {
	if (a.Instance == nil) != (b.Instance == nil) || (a.Instance != nil && *a.Instance != *b.Instance) {
		return false
	}
	return a.PlacedOn == b.PlacedOn
}

// checkSignature checks a version 1 signature (of the spec at path)
// against the trusted keys and the message msg returns.
func checkSignature(trusted []ed25519.PublicKey, path, signature string, msg func() ([]byte, error)) error {
	sig, err := ParseSignature(path, signature)
	if err != nil {
		return err
	}
	return sig.check(trusted, path, msg)
}

// Signature is a signature as a spec carries it, parsed.
//
// Version 1 ("ed25519:KEYID:SIG") covers a worker's path and driver blocks
// (Message, FleetMessage). Version 2 ("ed25519.v2:KEYID:REVISION:INSTANCES:SIG")
// covers the same and its revision (a number that only grows from one
// signing to the next: a host refuses a revision older than the ones it has
// run, RevisionStore) and, for a fleet's template, its instance count
// (MessageV2, FleetMessageV2). REVISION and INSTANCES ride in the clear
// and are signed: changing either breaks the signature.
type Signature struct {
	Version   int
	KeyID     string
	Revision  int64
	Instances int
	sig       []byte
}

// sigPrefixV2 starts a version 2 signature.
const sigPrefixV2 = "ed25519.v2"

// ParseSignature parses the signature of the spec at path ("": none, a
// refusal that says the host wants one).
func ParseSignature(path, signature string) (Signature, error) {
	malformed := func(why string) error {
		return &Refusal{Rule: "signature", Msg: fmt.Sprintf("the signature of %s is malformed (%s)", path, why)}
	}
	if signature == "" {
		return Signature{}, &Refusal{Rule: "signature", Msg: fmt.Sprintf("the spec of %s is not signed, and this host runs only signed specs (--trusted-keys)", path)}
	}
	parts := strings.Split(signature, ":")
	var s Signature
	switch {
	case len(parts) == 3 && parts[0] == "ed25519":
		s.Version = 1
	case len(parts) == 5 && parts[0] == sigPrefixV2:
		s.Version = 2
		rev, err := strconv.ParseInt(parts[2], 10, 64)
		if err != nil || rev < 0 {
			return s, malformed("bad revision")
		}
		n, err := strconv.Atoi(parts[3])
		if err != nil || n < 0 || n > spec.MaxChildren {
			return s, malformed("bad instance count")
		}
		s.Revision, s.Instances = rev, n
	default:
		return s, malformed("want ed25519:KEYID:SIG or " + sigPrefixV2 + ":KEYID:REVISION:INSTANCES:SIG")
	}
	s.KeyID = parts[1]
	sig, err := base64.StdEncoding.DecodeString(parts[len(parts)-1])
	if err != nil || len(sig) != ed25519.SignatureSize {
		return s, malformed("bad signature bytes")
	}
	s.sig = sig
	return s, nil
}

// check verifies s over the message msg returns with the trusted key s names.
func (s Signature) check(trusted []ed25519.PublicKey, path string, msg func() ([]byte, error)) error {
	key := trustedKey(trusted, s.KeyID)
	if key == nil {
		return &Refusal{Rule: "signature", Msg: fmt.Sprintf("the spec of %s is signed by key %s, which this host does not trust", path, s.KeyID)}
	}
	m, err := msg()
	if err != nil {
		return &Refusal{Rule: "signature", Msg: fmt.Sprintf("the spec of %s cannot be encoded: %v", path, err)}
	}
	if !ed25519.Verify(key, m, s.sig) {
		return &Refusal{Rule: "signature", Msg: fmt.Sprintf("the spec of %s does not match its signature by key %s: it was changed after it was signed", path, s.KeyID)}
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
// (FleetMessageV2), with its instance count. Signatures are version 2 at
// revision. A worker of previous (the tree as it runs; nil: none) whose
// version 2 signature by this key still covers it keeps that signature
// and its revision: a re-apply changes no signature of a worker it does
// not change (so a host's revision check and a dry run see the same
// spec), and a changed worker gets revision. It returns the tree with each
// worker's Signature set, and leaves its input alone.
func SignTree(key ed25519.PrivateKey, root spec.Node, revision int64, previous *spec.Node) (spec.Node, error) {
	s := signer{key: key, pub: key.Public().(ed25519.PublicKey), revision: revision, previous: map[string]string{}}
	if previous != nil {
		collectSignatures(s.previous, "", *previous)
	}
	return s.node("", root, spec.Effective(root), nil)
}

// signer signs the workers of one tree.
type signer struct {
	key      ed25519.PrivateKey
	pub      ed25519.PublicKey
	revision int64
	previous map[string]string // path: the signature it runs with
}

// treePath is the path of the node name under prefix ("": a root).
func treePath(prefix, name string) string {
	if prefix == "" {
		return name
	}
	return prefix + "/" + name
}

func collectSignatures(into map[string]string, prefix string, n spec.Node) {
	path := treePath(prefix, n.Name)
	if n.Signature != "" {
		into[path] = n.Signature
	}
	for _, c := range n.Children {
		collectSignatures(into, path, c)
	}
}

// keep is the previous signature of path if it is version 2, by this key,
// and verifies over msg at its own revision and instance count.
func (s signer) keep(path string, instances int, msg func(revision int64) ([]byte, error)) string {
	old, ok := s.previous[path]
	if !ok {
		return ""
	}
	sig, err := ParseSignature(path, old)
	if err != nil || sig.Version != 2 || sig.KeyID != KeyID(s.pub) || sig.Instances != instances || sig.Revision > s.revision {
		return ""
	}
	m, err := msg(sig.Revision)
	if err != nil || !ed25519.Verify(s.pub, m, sig.sig) {
		return ""
	}
	return old
}

func (s signer) sign(instances int, msg []byte) string {
	return sigPrefixV2 + ":" + KeyID(s.pub) + ":" + strconv.FormatInt(s.revision, 10) + ":" + strconv.Itoa(instances) + ":" +
		base64.StdEncoding.EncodeToString(ed25519.Sign(s.key, msg))
}

func (s signer) node(prefix string, n, effective spec.Node, parent *spec.Node) (spec.Node, error) {
	path := treePath(prefix, n.Name)
	if !n.IsSupervisor() {
		msg, instances, err := message(path, n, effective, parent)
		if err != nil {
			return n, err
		}
		if kept := s.keep(path, instances, msg); kept != "" {
			n.Signature = kept
			return n, nil
		}
		m, err := msg(s.revision)
		if err != nil {
			return n, fmt.Errorf("%s: %w", path, err)
		}
		n.Signature = s.sign(instances, m)
		return n, nil
	}
	kids := make([]spec.Node, len(n.Children))
	for i, c := range n.Children {
		signed, err := s.node(path, c, effective.Children[i], &effective)
		if err != nil {
			return n, err
		}
		kids[i] = signed
	}
	n.Children = kids
	return n, nil
}

// message is what the worker n at path is signed over, at a revision, and
// the instance count signed with it: a fleet's worker (instances, or
// hosts) as its template (FleetMessageV2; the count is signed beside the
// template: an instance's worker holds it cleared, Expand), any other as
// its host receives it, its templates rendered (MessageV2).
func message(path string, n, effective spec.Node, parent *spec.Node) (func(revision int64) ([]byte, error), int, error) {
	template := effective
	if parent != nil {
		template = spec.InheritFleet(*parent, template) // as Expand hands it down
	}
	if n.Instances > 0 || len(template.Hosts) > 0 {
		if _, ps := spec.Render(template, ""); len(ps) > 0 {
			return nil, 0, fmt.Errorf("%s: %v", path, ps)
		}
		return func(rev int64) ([]byte, error) { return FleetMessageV2(path, rev, n.Instances, template) }, n.Instances, nil
	}
	rendered, ps := spec.Render(effective, "")
	if len(ps) > 0 {
		return nil, 0, fmt.Errorf("%s: %v", path, ps)
	}
	return func(rev int64) ([]byte, error) { return MessageV2(path, rev, rendered) }, 0, nil
}

// SignedBy says whether every worker of the tree root carries a version 2
// signature by pub that covers it as SignTree signs it (nil), or names the
// first that does not. A tree read back from the namespace (a revision's
// kept spec, which anyone who may signal its revisions log can write) is
// signed anew only if it was signed by this key before: `starter revert`.
func SignedBy(pub ed25519.PublicKey, root spec.Node) error {
	s := signer{pub: pub, revision: math.MaxInt64, previous: map[string]string{}}
	collectSignatures(s.previous, "", root)
	return s.check("", root, spec.Effective(root), nil)
}

func (s signer) check(prefix string, n, effective spec.Node, parent *spec.Node) error {
	path := treePath(prefix, n.Name)
	if !n.IsSupervisor() {
		msg, instances, err := message(path, n, effective, parent)
		if err != nil {
			return err
		}
		if s.keep(path, instances, msg) == "" {
			return fmt.Errorf("%s carries no signature of key %s that covers it", path, KeyID(s.pub))
		}
		return nil
	}
	for i, c := range n.Children {
		if err := s.check(path, c, effective.Children[i], &effective); err != nil {
			return err
		}
	}
	return nil
}
