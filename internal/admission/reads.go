package admission

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/ecdh"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"fmt"
	"time"
)

// Signed reads.
//
// A host that requires signatures (--trusted-keys) answers a read of what
// it holds (a service's log, its usage) only when an operator's key signed
// the request, and seals the answer so that only that request's maker can
// open it: the read passes through a short workflow whose history a
// namespace reader can see, and its answer must not be readable there.
//
// The request carries a ReadAuth: the key's ID, the time it was made and
// an X25519 public key of the reader's (ephemeral: one per request), all
// signed with the request itself. The host checks the signature and that
// the request is no older than ReadWindow (nor from further in the
// future), then seals its answer to the reader's key (Seal: X25519 with a
// key of the host's own for this answer, SHA-256 of the shared secret as an
// AES-256-GCM key). A request replayed within the window gets an answer
// only its maker can open.

// readDomain separates a read's signature from a spec's.
const readDomain = "steward read v1"

// ReadWindow is how old (or how far ahead of the host's clock) a signed
// read may be.
const ReadWindow = 2 * time.Minute

// ReadAuth is an operator's signature of a read request.
type ReadAuth struct {
	KeyID    string `json:"keyId"`
	IssuedAt int64  `json:"issuedAt"` // Unix milliseconds
	ReplyKey []byte `json:"replyKey"` // X25519 public key the answer is sealed to
	Sig      []byte `json:"sig"`
}

// Reader signs reads with an operator's key and opens their answers.
type Reader struct {
	Key ed25519.PrivateKey
	// Now is the clock (nil: time.Now).
	Now func() time.Time
}

// Sign signs request (what the host will check; its auth field left out)
// and returns the auth to send with it and the key that opens its answer.
func (r *Reader) Sign(kind string, request any) (ReadAuth, *ecdh.PrivateKey, error) {
	reply, err := ecdh.X25519().GenerateKey(rand.Reader)
	if err != nil {
		return ReadAuth{}, nil, err
	}
	now := time.Now
	if r.Now != nil {
		now = r.Now
	}
	a := ReadAuth{KeyID: KeyID(r.Key.Public().(ed25519.PublicKey)), IssuedAt: now().UnixMilli(), ReplyKey: reply.PublicKey().Bytes()}
	msg, err := readMessage(kind, request, a)
	if err != nil {
		return ReadAuth{}, nil, err
	}
	a.Sig = ed25519.Sign(r.Key, msg)
	return a, reply, nil
}

func readMessage(kind string, request any, a ReadAuth) ([]byte, error) {
	type signed struct {
		Kind     string `json:"kind"`
		Request  any    `json:"request"`
		KeyID    string `json:"keyId"`
		IssuedAt int64  `json:"issuedAt"`
		ReplyKey []byte `json:"replyKey"`
	}
	return canonical(readDomain, signed{Kind: kind, Request: request, KeyID: a.KeyID, IssuedAt: a.IssuedAt, ReplyKey: a.ReplyKey})
}

// VerifyRead checks a read's auth (nil: none came) against the trusted
// keys at now; request is the request as signed (its auth left out).
func VerifyRead(trusted []ed25519.PublicKey, kind string, request any, a *ReadAuth, now time.Time) error {
	refuse := func(format string, args ...any) error {
		return &Refusal{Rule: "signature", Msg: fmt.Sprintf(format, args...)}
	}
	if a == nil {
		return refuse("this host answers only signed reads (--trusted-keys): sign it with the operator's key (--sign-key, or STEWARD_SIGN_KEY)")
	}
	key := trustedKey(trusted, a.KeyID)
	if key == nil {
		return refuse("the read is signed by key %s, which this host does not trust", a.KeyID)
	}
	issued := time.UnixMilli(a.IssuedAt)
	if age := now.Sub(issued); age > ReadWindow || age < -ReadWindow {
		return refuse("the read was signed at %s, more than %s from this host's clock (%s)", issued.UTC().Format(time.RFC3339), ReadWindow, now.UTC().Format(time.RFC3339))
	}
	if len(a.ReplyKey) != 32 {
		return refuse("the read's reply key is malformed")
	}
	msg, err := readMessage(kind, request, *a)
	if err != nil {
		return refuse("the read cannot be encoded: %v", err)
	}
	if !ed25519.Verify(key, msg, a.Sig) {
		return refuse("the read does not match its signature by key %s", a.KeyID)
	}
	return nil
}

// Sealed is an answer only its reader can open.
type Sealed struct {
	HostKey []byte `json:"hostKey"` // the host's X25519 public key for this answer
	Nonce   []byte `json:"nonce"`
	Box     []byte `json:"box"` // AES-256-GCM of the answer
}

// Seal seals plain to the reader's X25519 public key.
func Seal(replyKey, plain []byte) (*Sealed, error) {
	peer, err := ecdh.X25519().NewPublicKey(replyKey)
	if err != nil {
		return nil, err
	}
	mine, err := ecdh.X25519().GenerateKey(rand.Reader)
	if err != nil {
		return nil, err
	}
	aead, err := sealer(mine, peer, mine.PublicKey().Bytes(), replyKey)
	if err != nil {
		return nil, err
	}
	nonce := make([]byte, aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return nil, err
	}
	return &Sealed{HostKey: mine.PublicKey().Bytes(), Nonce: nonce, Box: aead.Seal(nil, nonce, plain, nil)}, nil
}

// Open opens an answer sealed to reply.
func Open(reply *ecdh.PrivateKey, s *Sealed) ([]byte, error) {
	if s == nil {
		return nil, errors.New("no sealed answer")
	}
	peer, err := ecdh.X25519().NewPublicKey(s.HostKey)
	if err != nil {
		return nil, err
	}
	aead, err := sealer(reply, peer, s.HostKey, reply.PublicKey().Bytes())
	if err != nil {
		return nil, err
	}
	if len(s.Nonce) != aead.NonceSize() {
		return nil, errors.New("sealed answer: bad nonce")
	}
	plain, err := aead.Open(nil, s.Nonce, s.Box, nil)
	if err != nil {
		return nil, errors.New("sealed answer: it does not open with this read's key")
	}
	return plain, nil
}

// sealer is AES-256-GCM under SHA-256(domain, shared secret, host key,
// reader key).
func sealer(priv *ecdh.PrivateKey, peer *ecdh.PublicKey, hostKey, readerKey []byte) (cipher.AEAD, error) {
	shared, err := priv.ECDH(peer)
	if err != nil {
		return nil, err
	}
	h := sha256.New()
	h.Write([]byte(readDomain + " seal\x00"))
	h.Write(shared)
	h.Write(hostKey)
	h.Write(readerKey)
	block, err := aes.NewCipher(h.Sum(nil))
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(block)
}
