package encryption

import (
	"bytes"
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/sdk/converter"
	"google.golang.org/protobuf/encoding/protojson"
)

func keyFile(t *testing.T, b byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "key")
	require.NoError(t, os.WriteFile(p, []byte(hex.EncodeToString(bytes.Repeat([]byte{b}, 32))+"\n"), 0o600))
	return p
}

func TestRoundTripHidesThePlainText(t *testing.T) {
	c, err := Load(keyFile(t, 1))
	require.NoError(t, err)
	dc := c.DataConverter()
	p, err := dc.ToPayload(map[string]string{"token": "s3cret"})
	require.NoError(t, err)
	require.NotContains(t, string(p.Data), "s3cret")
	require.Equal(t, Encoding, string(p.Metadata[converter.MetadataEncoding]))
	var back map[string]string
	require.NoError(t, dc.FromPayload(p, &back))
	require.Equal(t, "s3cret", back["token"])
}

func TestRotatedKeysStillDecrypt(t *testing.T) {
	old, err := Load(keyFile(t, 1))
	require.NoError(t, err)
	p, err := old.DataConverter().ToPayload("written with the old key")
	require.NoError(t, err)

	rotated, err := Load(keyFile(t, 2), keyFile(t, 1))
	require.NoError(t, err)
	var s string
	require.NoError(t, rotated.DataConverter().FromPayload(p, &s))
	require.Equal(t, "written with the old key", s)
	q, err := rotated.DataConverter().ToPayload("new")
	require.NoError(t, err)
	require.Equal(t, KeyID(bytes.Repeat([]byte{2}, 32)), string(q.Metadata[MetadataKeyID]), "the first key encrypts")

	newOnly, err := Load(keyFile(t, 2))
	require.NoError(t, err)
	err = newOnly.DataConverter().FromPayload(p, &s)
	require.ErrorContains(t, err, "not among the keys given")
}

func TestPlainPayloadsPassThrough(t *testing.T) {
	c, err := Load(keyFile(t, 1))
	require.NoError(t, err)
	plain, err := converter.GetDefaultDataConverter().ToPayload("plain json")
	require.NoError(t, err)
	out, err := c.Decode([]*commonpb.Payload{plain})
	require.NoError(t, err)
	require.Same(t, plain, out[0])
}

func TestTamperedPayloadFails(t *testing.T) {
	c, err := Load(keyFile(t, 1))
	require.NoError(t, err)
	p, err := c.DataConverter().ToPayload("x")
	require.NoError(t, err)
	p.Data[len(p.Data)-1] ^= 1
	_, err = c.Decode([]*commonpb.Payload{p})
	require.ErrorContains(t, err, "does not decrypt")
}

func TestBadKeyFilesAreNamed(t *testing.T) {
	dir := t.TempDir()
	short := filepath.Join(dir, "short")
	require.NoError(t, os.WriteFile(short, []byte("abcd\n"), 0o600))
	nothex := filepath.Join(dir, "nothex")
	require.NoError(t, os.WriteFile(nothex, []byte(strings.Repeat("zz", 32)), 0o600))
	_, err := Load(short)
	require.EqualError(t, err, "encryption key file "+short+": want 32 bytes as 64 hex characters (openssl rand -hex 32), found 4 characters")
	_, err = Load(nothex)
	require.EqualError(t, err, "encryption key file "+nothex+": want 32 bytes as 64 hex characters (openssl rand -hex 32), found 64 characters that are not all hex")
	_, err = Load(filepath.Join(dir, "missing"))
	require.ErrorContains(t, err, "encryption key file "+filepath.Join(dir, "missing"))
}

// The codec server decodes what the codec encoded, passes plain payloads
// through, and answers the Web UI's CORS preflight for its origin only.
func TestCodecServer(t *testing.T) {
	c, err := Load(keyFile(t, 1))
	require.NoError(t, err)
	srv := httptest.NewServer(Handler(c, "http://ui.example:8233", ""))
	defer srv.Close()
	enc, err := c.DataConverter().ToPayload(map[string]string{"state": "running"})
	require.NoError(t, err)
	plain, err := converter.GetDefaultDataConverter().ToPayload("plain")
	require.NoError(t, err)
	body, err := protojson.Marshal(&commonpb.Payloads{Payloads: []*commonpb.Payload{enc, plain}})
	require.NoError(t, err)
	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/decode", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Origin", "http://ui.example:8233")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Equal(t, "http://ui.example:8233", resp.Header.Get("Access-Control-Allow-Origin"))
	var out commonpb.Payloads
	var buf bytes.Buffer
	_, _ = buf.ReadFrom(resp.Body)
	require.NoError(t, protojson.Unmarshal(buf.Bytes(), &out))
	require.Len(t, out.Payloads, 2)
	require.JSONEq(t, `{"state":"running"}`, string(out.Payloads[0].Data))
	require.Equal(t, `"plain"`, string(out.Payloads[1].Data))

	pre, _ := http.NewRequest(http.MethodOptions, srv.URL+"/decode", nil)
	pre.Header.Set("Origin", "http://evil.example")
	resp2, err := http.DefaultClient.Do(pre)
	require.NoError(t, err)
	resp2.Body.Close()
	require.Empty(t, resp2.Header.Get("Access-Control-Allow-Origin"), "another origin gets no CORS grant")
}

// With a token, /encode and /decode need it (Bearer, 401 otherwise, with
// the CORS grant so the UI sees the 401); the browser's preflight needs
// none and allows the Authorization header.
func TestCodecServerToken(t *testing.T) {
	c, err := Load(keyFile(t, 1))
	require.NoError(t, err)
	srv := httptest.NewServer(Handler(c, "http://ui.example:8233", "s3cret"))
	defer srv.Close()
	enc, err := c.DataConverter().ToPayload("hello")
	require.NoError(t, err)
	body, err := protojson.Marshal(&commonpb.Payloads{Payloads: []*commonpb.Payload{enc}})
	require.NoError(t, err)
	for _, tc := range []struct {
		path, auth string
		code       int
	}{
		{"/decode", "", http.StatusUnauthorized},
		{"/decode", "Bearer wrong", http.StatusUnauthorized},
		{"/decode", "Bearer s3cre", http.StatusUnauthorized},
		{"/decode", "Basic s3cret", http.StatusUnauthorized},
		{"/decode", "s3cret", http.StatusUnauthorized},
		{"/encode", "", http.StatusUnauthorized},
		{"/decode", "Bearer s3cret", http.StatusOK},
		{"/encode", "Bearer s3cret", http.StatusOK},
	} {
		req, _ := http.NewRequest(http.MethodPost, srv.URL+tc.path, bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Origin", "http://ui.example:8233")
		if tc.auth != "" {
			req.Header.Set("Authorization", tc.auth)
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		var buf bytes.Buffer
		_, _ = buf.ReadFrom(resp.Body)
		resp.Body.Close()
		require.Equal(t, tc.code, resp.StatusCode, "%+v: %s", tc, buf.String())
		require.Equal(t, "http://ui.example:8233", resp.Header.Get("Access-Control-Allow-Origin"), "%+v", tc)
		if tc.code == http.StatusUnauthorized {
			require.Contains(t, resp.Header.Get("WWW-Authenticate"), "Bearer")
			require.NotContains(t, buf.String(), "s3cret")
			continue
		}
		var out commonpb.Payloads
		require.NoError(t, protojson.Unmarshal(buf.Bytes(), &out))
		require.Len(t, out.Payloads, 1)
	}

	// The preflight a browser sends before a POST with Authorization: no
	// credentials in it, and a grant of the header in the answer.
	pre, _ := http.NewRequest(http.MethodOptions, srv.URL+"/decode", nil)
	pre.Header.Set("Origin", "http://ui.example:8233")
	pre.Header.Set("Access-Control-Request-Method", "POST")
	pre.Header.Set("Access-Control-Request-Headers", "authorization,content-type,x-namespace")
	resp, err := http.DefaultClient.Do(pre)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Equal(t, "http://ui.example:8233", resp.Header.Get("Access-Control-Allow-Origin"))
	require.Equal(t, "true", resp.Header.Get("Access-Control-Allow-Credentials"))
	require.Contains(t, resp.Header.Get("Access-Control-Allow-Methods"), "POST")
	allowed := strings.ToLower(resp.Header.Get("Access-Control-Allow-Headers"))
	for _, h := range []string{"authorization", "content-type", "x-namespace"} {
		require.Contains(t, allowed, h)
	}
}

// Regression (attack review): the codec server read a request's body
// whole, unbounded (the SDK's handler), so a POST of endless bytes (from
// any web page, where no token is set) ran it out of memory. A body past
// MaxRequestBytes is refused, and the server reads no more of it.
func TestCodecServer_AnEndlessBodyIsRefused(t *testing.T) {
	c, err := Load(keyFile(t, 1))
	require.NoError(t, err)
	srv := httptest.NewServer(Handler(c, "", ""))
	defer srv.Close()
	sent := &spaces{}
	sent.left.Store(2 * MaxRequestBytes)
	resp, err := http.Post(srv.URL+"/decode", "application/json", sent)
	if err == nil { // (the server may close the connection before the client has sent it all)
		defer resp.Body.Close()
		require.NotEqual(t, http.StatusOK, resp.StatusCode)
	}
	left := sent.left.Load()
	require.Positive(t, left, "the server stopped reading: %d of %d bytes were sent", 2*MaxRequestBytes-left, 2*MaxRequestBytes)
}

// spaces reads as left spaces (a JSON body that never ends, as far as a
// server that stops at its bound can tell). left is atomic: the client's
// transport may still be reading the body after Post has returned the
// server's early answer (the race detector caught it in CI).
type spaces struct{ left atomic.Int64 }

func (s *spaces) Read(p []byte) (int, error) {
	left := s.left.Load()
	if left <= 0 {
		return 0, io.EOF
	}
	n := min(int64(len(p)), left)
	for i := range p[:n] {
		p[i] = ' '
	}
	s.left.Add(-n)
	return int(n), nil
}
