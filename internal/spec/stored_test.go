package spec

import (
	"bytes"
	"compress/gzip"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestCompressRoundTrip(t *testing.T) {
	n := Node{Name: "shop", Children: []Node{{Name: "db", Kind: KindStub, Stub: &Stub{}}}}
	b, err := Compress(n)
	require.NoError(t, err)
	back, err := Decompress(b)
	require.NoError(t, err)
	require.Equal(t, Digest(n), Digest(back))
	_, err = Decompress([]byte("not gzip"))
	require.ErrorContains(t, err, "a kept spec")
}

// A kept spec is recorded by whoever may signal a tree's revisions: a
// small gzip that expands past any tree is refused, not read into memory.
func TestDecompress_AGzipBombIsRefused(t *testing.T) {
	var buf bytes.Buffer
	z := gzip.NewWriter(&buf)
	chunk := bytes.Repeat([]byte(" "), 1<<20)
	for range MaxKeptBytes>>20 + 2 {
		_, err := z.Write(chunk)
		require.NoError(t, err)
	}
	require.NoError(t, z.Close())
	require.Less(t, buf.Len(), 64<<10, "small as sent")
	_, err := Decompress(buf.Bytes())
	require.ErrorContains(t, err, "not a tree's")
}
