// Package encryption is steward's payload codec: AES-256-GCM over every
// payload steward writes to Temporal (workflow inputs, signals, updates,
// query answers, activity inputs and results), so that a history, a
// status answer or the Web UI shows ciphertext to anyone without the key.
//
// A key is 32 random bytes, kept in a file as 64 hex characters (`openssl
// rand -hex 32`). Each encrypted payload carries the ID of its key (the
// first 16 hex characters of the key's SHA-256) in its metadata, so keys
// can rotate: the first key encrypts, every key given decrypts.
//
// What it does not cover: search attributes (they are what the Web UI and
// `temporal workflow list --query` filter by, so they stay readable: a
// node's path, kind and state), failure messages (steward's never hold a
// secret's value), and the event types and timing of a history.
package encryption

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"strings"

	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/sdk/converter"
	"google.golang.org/protobuf/proto"
)

// Metadata of an encrypted payload.
const (
	// Encoding marks a payload this codec encrypted.
	Encoding = "binary/encrypted"
	// MetadataKeyID names the key that encrypted it.
	MetadataKeyID = "encryption-key-id"
)

// Codec is a converter.PayloadCodec. Its zero value is not usable: call
// Load or New.
type Codec struct {
	current string // ID of the key that encrypts
	aeads   map[string]cipher.AEAD
}

var _ converter.PayloadCodec = (*Codec)(nil)

// Load reads the key files (the first encrypts; all decrypt). A file holds
// 64 hex characters (surrounding whitespace ignored); another content is an
// error naming the file, never its content.
func Load(files ...string) (*Codec, error) {
	if len(files) == 0 {
		return nil, fmt.Errorf("encryption: no key file")
	}
	keys := make([][]byte, 0, len(files))
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, fmt.Errorf("encryption key file %s: %w", f, err)
		}
		s := strings.TrimSpace(string(b))
		key, err := hex.DecodeString(s)
		if err != nil || len(key) != 32 {
			return nil, fmt.Errorf("encryption key file %s: want 32 bytes as 64 hex characters (openssl rand -hex 32), found %d characters%s",
				f, len(s), map[bool]string{true: " that are not all hex", false: ""}[err != nil])
		}
		keys = append(keys, key)
	}
	return New(keys...)
}

// New makes a codec of raw 32-byte keys (the first encrypts).
func New(keys ...[]byte) (*Codec, error) {
	c := &Codec{aeads: map[string]cipher.AEAD{}}
	for i, k := range keys {
		block, err := aes.NewCipher(k)
		if err != nil || len(k) != 32 {
			return nil, fmt.Errorf("encryption: key %d: want 32 bytes", i+1)
		}
		aead, err := cipher.NewGCM(block)
		if err != nil {
			return nil, err
		}
		id := KeyID(k)
		c.aeads[id] = aead
		if i == 0 {
			c.current = id
		}
	}
	return c, nil
}

// KeyID is the ID a key is known by in payload metadata.
func KeyID(key []byte) string {
	sum := sha256.Sum256(key)
	return hex.EncodeToString(sum[:])[:16]
}

// Encode encrypts each payload (whole: its metadata and data) with the
// current key; the result has a fresh random nonce before the ciphertext.
func (c *Codec) Encode(payloads []*commonpb.Payload) ([]*commonpb.Payload, error) {
	aead := c.aeads[c.current]
	out := make([]*commonpb.Payload, len(payloads))
	for i, p := range payloads {
		plain, err := proto.Marshal(p)
		if err != nil {
			return nil, fmt.Errorf("encryption: %w", err)
		}
		nonce := make([]byte, aead.NonceSize(), aead.NonceSize()+len(plain)+aead.Overhead())
		if _, err := rand.Read(nonce); err != nil {
			return nil, fmt.Errorf("encryption: %w", err)
		}
		out[i] = &commonpb.Payload{
			Metadata: map[string][]byte{
				converter.MetadataEncoding: []byte(Encoding),
				MetadataKeyID:              []byte(c.current),
			},
			Data: aead.Seal(nonce, nonce, plain, []byte(c.current)),
		}
	}
	return out, nil
}

// Decode decrypts the payloads this codec encrypted (with any of its keys)
// and passes others through unchanged (plain JSON written without a key).
func (c *Codec) Decode(payloads []*commonpb.Payload) ([]*commonpb.Payload, error) {
	out := make([]*commonpb.Payload, len(payloads))
	for i, p := range payloads {
		if string(p.GetMetadata()[converter.MetadataEncoding]) != Encoding {
			out[i] = p
			continue
		}
		id := string(p.GetMetadata()[MetadataKeyID])
		aead, ok := c.aeads[id]
		if !ok {
			return nil, fmt.Errorf("encryption: a payload was encrypted with key %q, which is not among the keys given (%s)", id, c.ids())
		}
		data := p.GetData()
		if len(data) < aead.NonceSize() {
			return nil, fmt.Errorf("encryption: a payload of key %q is too short", id)
		}
		plain, err := aead.Open(nil, data[:aead.NonceSize()], data[aead.NonceSize():], []byte(id))
		if err != nil {
			return nil, fmt.Errorf("encryption: a payload of key %q does not decrypt (altered, or another key of the same ID)", id)
		}
		var dec commonpb.Payload
		if err := proto.Unmarshal(plain, &dec); err != nil {
			return nil, fmt.Errorf("encryption: %w", err)
		}
		out[i] = &dec
	}
	return out, nil
}

func (c *Codec) ids() string {
	ids := make([]string, 0, len(c.aeads))
	ids = append(ids, c.current)
	for id := range c.aeads {
		if id != c.current {
			ids = append(ids, id)
		}
	}
	return strings.Join(ids, ", ")
}

// DataConverter wraps the SDK's default converter with the codec.
func (c *Codec) DataConverter() converter.DataConverter {
	return converter.NewCodecDataConverter(converter.GetDefaultDataConverter(), c)
}
