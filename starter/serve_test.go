package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	commonpb "go.temporal.io/api/common/v1"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/steward-sh/steward/internal/console"
	"github.com/steward-sh/steward/internal/encryption"
	"github.com/steward-sh/steward/internal/treestatus"
)

// noKeepAlive is an HTTP client that keeps no connection open (goleak).
var noKeepAlive = &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 10 * time.Second}

// call sends method path to addr with the Host header host (and the
// headers given as name, value pairs), and returns the status and body.
func call(t *testing.T, method, addr, host, path, body string, headers ...string) (int, string, http.Header) {
	t.Helper()
	req, err := http.NewRequest(method, "http://"+addr+path, strings.NewReader(body))
	require.NoError(t, err)
	req.Host = host
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := noKeepAlive.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), resp.Header
}

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	require.NoError(t, os.WriteFile(p, []byte(content), 0o600))
	return p
}

// runCodecServer runs `starter codec-server args...` in this process until
// the test ends, and returns the address it serves on and its output.
func runCodecServer(t *testing.T, key string, args ...string) (addr string, out *bytes.Buffer) {
	t.Helper()
	g := &globals{}
	g.conn.EncryptionKeyFiles = key
	cmd := codecServerCmd(g)
	cmd.SetArgs(append([]string{"--listen", "127.0.0.1:0"}, args...))
	r, w := io.Pipe()
	cmd.SetOut(w)
	cmd.SetErr(io.Discard)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- cmd.ExecuteContext(ctx); w.Close() }()
	t.Cleanup(func() {
		cancel()
		require.NoError(t, <-done)
	})
	line, err := bufio.NewReader(r).ReadString('\n')
	require.NoError(t, err)
	go func() { _, _ = io.Copy(io.Discard, r) }()
	rest, ok := strings.CutPrefix(line, "codec server on http://")
	require.True(t, ok, line)
	addr, _, _ = strings.Cut(rest, " ")
	return addr, bytes.NewBufferString(line)
}

// The codec server, as `starter codec-server` runs it: it answers its own
// names only (421 to a rebinding name, even a preflight), needs the token
// of --token-file on /decode and /encode (never printed), and answers the
// Web UI's preflight with Authorization allowed, without the token.
func TestCodecServerCommand(t *testing.T) {
	key := writeFile(t, "key", strings.Repeat("5a", 32)+"\n")
	addr, out := runCodecServer(t, key, "--token-file", writeFile(t, "token", "  c0dec-t0ken \n"),
		"--ui-origin", "http://localhost:8233", "--allowed-hosts", "codec.example.com")
	_, port, err := net.SplitHostPort(addr)
	require.NoError(t, err)
	require.NotContains(t, out.String(), "c0dec-t0ken")

	codec, err := encryption.Load(key)
	require.NoError(t, err)
	enc, err := codec.DataConverter().ToPayload("hello")
	require.NoError(t, err)
	b, err := protojson.Marshal(&commonpb.Payloads{Payloads: []*commonpb.Payload{enc}})
	require.NoError(t, err)
	body := string(b)

	for _, c := range []struct {
		host, auth string
		code       int
	}{
		{"evil.example:" + port, "Bearer c0dec-t0ken", http.StatusMisdirectedRequest},
		{"evil.example", "Bearer c0dec-t0ken", http.StatusMisdirectedRequest},
		{"127.0.0.1:1", "Bearer c0dec-t0ken", http.StatusMisdirectedRequest},
		{"127.0.0.1:" + port, "", http.StatusUnauthorized},
		{"127.0.0.1:" + port, "Bearer wrong", http.StatusUnauthorized},
		{"127.0.0.1:" + port, "Bearer c0dec-t0ken", http.StatusOK},
		{"localhost:" + port, "Bearer c0dec-t0ken", http.StatusOK},
		{"[::1]:" + port, "Bearer c0dec-t0ken", http.StatusOK},
		{"codec.example.com", "Bearer c0dec-t0ken", http.StatusOK},
	} {
		code, text, _ := call(t, "POST", addr, c.host, "/decode", body, "Content-Type", "application/json", "Authorization", c.auth)
		require.Equal(t, c.code, code, "%+v: %s", c, text)
		switch c.code {
		case http.StatusOK:
			var decoded commonpb.Payloads
			require.NoError(t, protojson.Unmarshal([]byte(text), &decoded))
			require.Equal(t, `"hello"`, string(decoded.Payloads[0].Data))
		case http.StatusMisdirectedRequest:
			require.Contains(t, text, "--allowed-hosts")
			require.NotContains(t, text, "hello")
		}
	}

	// The Web UI's preflight: no token in it; Authorization allowed.
	code, _, h := call(t, "OPTIONS", addr, "127.0.0.1:"+port, "/decode", "", "Origin", "http://localhost:8233",
		"Access-Control-Request-Method", "POST", "Access-Control-Request-Headers", "authorization,content-type,x-namespace")
	require.Equal(t, http.StatusOK, code)
	require.Equal(t, "http://localhost:8233", h.Get("Access-Control-Allow-Origin"))
	require.Contains(t, h.Get("Access-Control-Allow-Headers"), "Authorization")
	code, _, h = call(t, "OPTIONS", addr, "evil.example:"+port, "/decode", "", "Origin", "http://evil.example:"+port,
		"Access-Control-Request-Method", "POST")
	require.Equal(t, http.StatusMisdirectedRequest, code)
	require.Empty(t, h.Get("Access-Control-Allow-Origin"))
}

// Without --token-file, the codec server needs no token (as before), and
// still answers its own names only.
func TestCodecServerCommandWithoutToken(t *testing.T) {
	key := writeFile(t, "key", strings.Repeat("5a", 32))
	addr, _ := runCodecServer(t, key)
	_, port, _ := net.SplitHostPort(addr)
	code, text, _ := call(t, "POST", addr, "127.0.0.1:"+port, "/encode", `{"payloads":[]}`, "Content-Type", "application/json")
	require.Equal(t, http.StatusOK, code, text)
	code, _, _ = call(t, "POST", addr, "rebind.example:"+port, "/encode", `{"payloads":[]}`, "Content-Type", "application/json")
	require.Equal(t, http.StatusMisdirectedRequest, code)
}

// Bad token files and host names are bad input (exit 2) naming the file
// or the entry, before anything listens or dials.
func TestServerFlagsBadInput(t *testing.T) {
	key := writeFile(t, "key", strings.Repeat("5a", 32))
	empty := writeFile(t, "empty-token", " \n\t\n")
	missing := filepath.Join(t.TempDir(), "missing")
	for _, c := range []struct {
		console bool
		args    []string
		want    string
	}{
		{false, []string{"--token-file", empty}, "--token-file " + empty + " is empty"},
		{false, []string{"--token-file", missing}, missing},
		{false, []string{"--allowed-hosts", "http://x.example"}, "--allowed-hosts"},
		{true, []string{"--read-token-file", empty}, "--read-token-file " + empty + " is empty"},
		{true, []string{"--read-token-file", missing}, missing},
		{true, []string{"--token-file", empty}, "--token-file " + empty + " is empty"},
		{true, []string{"--allowed-hosts", "a.example,x/y"}, "--allowed-hosts"},
	} {
		g := &globals{}
		g.conn.EncryptionKeyFiles = key
		g.conn.Address = "127.0.0.1:1" // never dialled
		cmd := codecServerCmd(g)
		if c.console {
			cmd = consoleCmd(g)
		}
		cmd.SetArgs(append([]string{"--listen", "127.0.0.1:0"}, c.args...))
		cmd.SetOut(io.Discard)
		cmd.SetErr(io.Discard)
		err := cmd.Execute()
		var ee *exitError
		require.True(t, errors.As(err, &ee), "%+v: %v", c, err)
		require.Equal(t, 2, ee.code, "%+v: %v", c, err)
		require.ErrorContains(t, err, c.want)
	}
}

// consoleTree is a console Source of one small tree.
type consoleTree struct{}

func (consoleTree) Trees(context.Context) ([]treestatus.Status, bool, error) {
	return []treestatus.Status{{Path: "t", Kind: "supervisor", State: "running", Desired: "running",
		Children: []treestatus.Status{{Path: "t/a", Kind: "stub", State: "running", Desired: "running"}}}}, true, nil
}

func (consoleTree) Status(_ context.Context, path string) (treestatus.Status, error) {
	return treestatus.Status{Path: path, State: "running"}, nil
}

func (consoleTree) Node(context.Context, string) (console.NodeInfo, error) {
	return console.NodeInfo{}, nil
}

func (consoleTree) Log(context.Context, string, string, bool) (console.LogChunk, error) {
	return console.LogChunk{Text: "a line of the log\n"}, nil
}

func (consoleTree) Act(context.Context, string, string) error { return nil }

// The console as `starter console` serves it (serveHTTP: the Host check,
// then the console), on a real listener: a rebinding name gets 421 and
// none of the trees or logs; its own names get them.
func TestConsoleServesItsOwnNamesOnly(t *testing.T) {
	for _, listen := range []string{"127.0.0.1:0", "0.0.0.0:0"} {
		t.Run(listen, func(t *testing.T) {
			ln, err := net.Listen("tcp", listen)
			require.NoError(t, err)
			check, err := hostChecker(listen, ln, "console.example.com")
			require.NoError(t, err)
			ctx, cancel := context.WithCancel(context.Background())
			w := console.NewWatch(consoleTree{}, 50*time.Millisecond)
			watched := make(chan struct{})
			go func() { w.Run(ctx); close(watched) }()
			done := make(chan error, 1)
			go func() {
				done <- serveHTTP(ctx, ln, check, console.New(consoleTree{}, w, console.Options{ReadToken: "r34d"}), "console")
			}()
			t.Cleanup(func() {
				cancel()
				require.NoError(t, <-done)
				<-watched
			})
			_, port, _ := net.SplitHostPort(ln.Addr().String())
			addr := "127.0.0.1:" + port

			for _, host := range []string{"evil.example:" + port, "evil.example", "127.0.0.1.evil.example:" + port, "127.0.0.1:" + port + "0"} {
				for _, path := range []string{"/", "/app.js", "/api/tree", "/api/logs?path=t/a", "/api/events?token=r34d"} {
					code, body, _ := call(t, "GET", addr, host, path, "", "Authorization", "Bearer r34d")
					require.Equal(t, http.StatusMisdirectedRequest, code, "%s %s: %s", host, path, body)
					require.Contains(t, body, "--allowed-hosts")
					require.NotContains(t, body, "a line of the log")
					require.NotContains(t, body, `"path":"t/a"`)
				}
			}
			for _, host := range []string{"127.0.0.1:" + port, "localhost:" + port, "[::1]:" + port, "console.example.com"} {
				code, body, _ := call(t, "GET", addr, host, "/api/logs?path=t/a", "", "Authorization", "Bearer r34d")
				require.Equal(t, http.StatusOK, code, "%s: %s", host, body)
				require.Contains(t, body, "a line of the log")
				code, body, _ = call(t, "GET", addr, host, "/api/logs?path=t/a", "")
				require.Equal(t, http.StatusUnauthorized, code, "%s: %s", host, body)
			}
		})
	}
}
