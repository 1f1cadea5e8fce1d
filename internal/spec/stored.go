package spec

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
)

// Digest is a short digest of a node as written (its JSON: the same node
// gives the same digest on every machine): what a supervisor compares to
// tell a changed child, and what a revision names its spec by.
func Digest(n Node) string {
	b, _ := json.Marshal(n)
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:12])
}

// Compress is a node as a revision keeps it: its JSON, gzip-compressed (a
// 10,000-worker tree of a megabyte keeps in tens of kilobytes).
func Compress(n Node) ([]byte, error) {
	b, err := json.Marshal(n)
	if err != nil {
		return nil, err
	}
	var out bytes.Buffer
	z := gzip.NewWriter(&out)
	if _, err := z.Write(b); err != nil {
		return nil, err
	}
	if err := z.Close(); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

// MaxKeptBytes bounds what Decompress expands: a kept spec is a tree of at
// most MaxTreeBytes as its JSON, and anyone who may signal a tree's
// revisions can record one (a megabyte of gzip expands to a gigabyte).
const MaxKeptBytes = 4 * MaxTreeBytes

// Decompress reads back what Compress wrote (at most MaxKeptBytes of JSON).
func Decompress(b []byte) (Node, error) {
	z, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		return Node{}, fmt.Errorf("a kept spec: %w", err)
	}
	raw, err := io.ReadAll(io.LimitReader(z, MaxKeptBytes+1))
	if err != nil {
		return Node{}, fmt.Errorf("a kept spec: %w", err)
	}
	if len(raw) > MaxKeptBytes {
		return Node{}, fmt.Errorf("a kept spec of more than %s expanded: not a tree's (at most %s)", FormatSize(MaxKeptBytes), FormatSize(MaxTreeBytes))
	}
	var n Node
	if err := json.Unmarshal(raw, &n); err != nil {
		return Node{}, fmt.Errorf("a kept spec: %w", err)
	}
	return n, nil
}
