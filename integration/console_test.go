package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"
)

// consoleProc runs `starter console` against the test server until the
// test ends.
func consoleProc(t *testing.T, args ...string) (base string, out *lockedBuffer) {
	t.Helper()
	addr, err := freePort()
	require.NoError(t, err)
	cmd := exec.Command(starterBin, append([]string{"console", "--listen", addr, "--interval", "500ms", "--web-ui", "http://" + address}, args...)...)
	cmd.Env = append(os.Environ(), "TEMPORAL_ADDRESS="+address)
	out = &lockedBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
	})
	base = "http://" + addr
	eventually(t, 30*time.Second, func() (bool, string) {
		resp, err := http.Get(base + "/api/config")
		if err != nil {
			return false, err.Error()
		}
		resp.Body.Close()
		// 401: serving, with a read token (--read-token-file).
		return resp.StatusCode == 200 || resp.StatusCode == http.StatusUnauthorized, resp.Status
	})
	return base, out
}

// waitPage waits (with a deadline) until the page's element at selector
// has text containing want.
func waitPage(t *testing.T, ctx context.Context, selector, want string) string {
	t.Helper()
	var text string
	eventually(t, time.Minute, func() (bool, string) {
		var nodes int
		if err := chromedp.Run(ctx, chromedp.Evaluate(fmt.Sprintf(`document.querySelectorAll(%q).length`, selector), &nodes)); err != nil {
			return false, err.Error()
		}
		if nodes == 0 {
			return false, "no " + selector
		}
		if err := chromedp.Run(ctx, chromedp.Text(selector, &text, chromedp.ByQuery)); err != nil {
			return false, err.Error()
		}
		return strings.Contains(text, want), fmt.Sprintf("%s: no %q in %.500q", selector, want, text)
	})
	return text
}

func clickOn(t *testing.T, ctx context.Context, selector string) {
	t.Helper()
	require.NoError(t, chromedp.Run(ctx, chromedp.Click(selector, chromedp.ByQuery)))
}

// The console in real Chromium: the tree with a root's children and a
// collapsed healthy group's roll-up, a change pushed to the open page, a
// node's panel with a line of its log, and an action refused without the
// token and done with it. The token read from a file is never printed.
func TestConsoleInChromium(t *testing.T) {
	needServer(t)
	exe := chromium(t)
	r := starter(t, "apply", "-f", writeSpec(t, `
name: it-console
children:
  - name: web
    kind: process
    process: {command: /bin/sh, args: ["-c", "echo hello from the console test; exec sleep 300"], startSeconds: 200ms}
  - name: grp
    children:
      - {name: a, kind: stub}
      - {name: b, kind: stub}
      - {name: c, kind: stub}
`), "--wait")
	require.Equal(t, 0, r.code, r.stdout+r.stderr)
	t.Cleanup(func() { deleteTree(t, "it-console") })

	tokenFile := filepath.Join(t.TempDir(), "token")
	require.NoError(t, os.WriteFile(tokenFile, []byte("  s3cret-console-token \n"), 0o600))
	readTokenFile := filepath.Join(t.TempDir(), "read-token")
	require.NoError(t, os.WriteFile(readTokenFile, []byte("s3cret-read-token\n"), 0o600))
	base, out := consoleProc(t, "--allow-actions", "--token-file", tokenFile, "--read-token-file", readTokenFile)

	// The page takes the read token from its address (and drops it from
	// there): its reads send it, and so does its event stream.
	ctx := newBrowser(t, exe)
	require.NoError(t, chromedp.Run(ctx, chromedp.EmulateViewport(1400, 800), chromedp.Navigate(base+"/?token=s3cret-read-token")))
	// The page's Content-Security-Policy refuses nothing it does (each
	// render from here on would report an inline style).
	require.NoError(t, chromedp.Run(ctx, chromedp.Evaluate(`window.cspViolations = [];
		document.addEventListener("securitypolicyviolation", (e) => window.cspViolations.push(e.violatedDirective + " " + e.blockedURI)); true`, nil)))
	waitPage(t, ctx, `tr[data-path="it-console/web"]`, "running")
	grp := waitPage(t, ctx, `tr[data-path="it-console/grp"]`, "3 running")
	t.Logf("roll-up row: %s", grp)
	waitPage(t, ctx, "#conn", "live")
	var search string
	require.NoError(t, chromedp.Run(ctx, chromedp.Evaluate(`location.search`, &search)))
	require.Empty(t, search, "the read token is dropped from the address bar")
	// A row is indented by its depth (a class of app.css: the CSP refuses
	// a style attribute).
	var pads []float64
	require.NoError(t, chromedp.Run(ctx, chromedp.Evaluate(`["it-console", "it-console/web"].map((p) =>
		parseFloat(getComputedStyle(document.querySelector('tr[data-path="' + p + '"] td')).paddingLeft))`, &pads)))
	require.Len(t, pads, 2)
	require.Greater(t, pads[1], pads[0]+10, "a child's row is indented below its root's: %v", pads)
	var hidden int
	require.NoError(t, chromedp.Run(ctx, chromedp.Evaluate(`document.querySelectorAll('tr[data-path^="it-console/grp/"]').length`, &hidden)))
	require.Zero(t, hidden, "a healthy group below a root is collapsed to its roll-up")

	// A change reaches the open page (pushed, not reloaded).
	stopped := time.Now()
	r = starter(t, "stop", "it-console/grp/a")
	require.Equal(t, 0, r.code, r.stderr)
	waitPage(t, ctx, `tr[data-path="it-console/grp"] [data-count="stopped"]`, "1 stopped")
	t.Logf("stop to the page: %s", time.Since(stopped).Round(10*time.Millisecond))

	// The panel of the process service shows its log.
	clickOn(t, ctx, `tr[data-path="it-console/web"] .name`)
	waitPage(t, ctx, "#panel-state", "running")
	waitPage(t, ctx, "#panel-log", "hello from the console test")

	// An action without the token is refused; with it, done.
	clickOn(t, ctx, `#panel-actions button[data-action="restart"]`)
	waitPage(t, ctx, "#confirm-text", "restart it-console/web?")
	clickOn(t, ctx, "#confirm-yes")
	waitPage(t, ctx, "#action-result", "refused (401)")
	require.Equal(t, 0, status(t, "it-console/web").ManualRestarts)
	require.NoError(t, chromedp.Run(ctx, chromedp.SetValue("#token", "s3cret-console-token", chromedp.ByQuery)))
	clickOn(t, ctx, `#panel-actions button[data-action="restart"]`)
	clickOn(t, ctx, "#confirm-yes")
	waitPage(t, ctx, "#action-result", "done: restart it-console/web")
	eventually(t, time.Minute, func() (bool, string) {
		st := status(t, "it-console/web")
		return st.ManualRestarts == 1 && st.State == "running", fmt.Sprintf("%+v", st)
	})
	// The row is the supervisor's record (counters as of the worker's last
	// report); the open panel asks the node itself.
	waitPage(t, ctx, "#panel-fields", "1 manual")

	var violations []string
	require.NoError(t, chromedp.Run(ctx, chromedp.Evaluate(`window.cspViolations`, &violations)))
	require.Empty(t, violations, "the page breaks its own Content-Security-Policy")

	if file := os.Getenv("STEWARD_CONSOLE_SCREENSHOT"); file != "" {
		var png []byte
		require.NoError(t, chromedp.Run(ctx, chromedp.FullScreenshot(&png, 100)))
		require.NoError(t, os.WriteFile(file, png, 0o644))
	}
	require.NotContains(t, out.String(), "s3cret-console-token", "a token read from a file is never printed or logged")
	require.NotContains(t, out.String(), "s3cret-read-token", "a token read from a file is never printed or logged")
}

// The real `starter console` answers only its own names (a web page of a
// rebinding name gets 421, not the trees), and with --read-token-file
// every read needs the read token: Bearer, or ?token= on the event stream.
func TestConsoleRefusesOtherHostsAndNeedsTheReadToken(t *testing.T) {
	needServer(t)
	readTokenFile := filepath.Join(t.TempDir(), "read-token")
	require.NoError(t, os.WriteFile(readTokenFile, []byte(" r34d-t0ken\n"), 0o600))
	base, out := consoleProc(t, "--read-token-file", readTokenFile, "--allowed-hosts", "console.example.com")
	port := base[strings.LastIndexByte(base, ':')+1:]
	get := func(path, host, token string) (int, string) {
		req, err := http.NewRequest("GET", base+path, nil)
		require.NoError(t, err)
		if host != "" {
			req.Host = host
		}
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	for _, host := range []string{"evil.example:" + port, "evil.example", "127.0.0.1:1"} {
		for _, path := range []string{"/", "/api/tree", "/api/config"} {
			code, body := get(path, host, "r34d-t0ken")
			require.Equal(t, http.StatusMisdirectedRequest, code, "%s %s: %s", host, path, body)
			require.Contains(t, body, "--allowed-hosts")
		}
	}
	for _, host := range []string{"", "localhost:" + port, "console.example.com"} {
		code, body := get("/api/tree", host, "")
		require.Equal(t, http.StatusUnauthorized, code, "%s: %s", host, body)
		code, body = get("/api/tree", host, "wrong")
		require.Equal(t, http.StatusUnauthorized, code, "%s: %s", host, body)
		code, body = get("/api/tree", host, "r34d-t0ken")
		require.Equal(t, http.StatusOK, code, "%s: %s", host, body)
		require.Contains(t, body, `"trees"`)
	}
	code, _ := get("/", "", "")
	require.Equal(t, http.StatusOK, code, "the page itself needs no token")

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, c := range []struct {
		query string
		code  int
	}{{"", http.StatusUnauthorized}, {"?token=wrong", http.StatusUnauthorized}, {"?token=r34d-t0ken", http.StatusOK}} {
		req, err := http.NewRequestWithContext(ctx, "GET", base+"/api/events"+c.query, nil)
		require.NoError(t, err)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		require.Equal(t, c.code, resp.StatusCode, c.query)
		if c.code == http.StatusOK {
			require.Equal(t, "text/event-stream", resp.Header.Get("Content-Type"))
		}
		resp.Body.Close()
	}
	require.NotContains(t, out.String(), "r34d-t0ken", "the read token is never printed or logged")
}

// The console's API without a browser: actions need the token and
// --allow-actions; status is `status -o json`; events are pushed.
func TestConsoleAPI(t *testing.T) {
	needServer(t)
	r := starter(t, "apply", "-f", writeSpec(t, `
name: it-console-api
children:
  - {name: a, kind: stub}
`), "--wait")
	require.Equal(t, 0, r.code, r.stdout+r.stderr)
	t.Cleanup(func() { deleteTree(t, "it-console-api") })
	readOnly, _ := consoleProc(t)
	post := func(base, token, body string) int {
		req, err := http.NewRequest("POST", base+"/api/actions", strings.NewReader(body))
		require.NoError(t, err)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		return resp.StatusCode
	}
	require.Equal(t, http.StatusForbidden, post(readOnly, "x", `{"action":"stop","path":"it-console-api/a"}`), "read-only refuses every action")

	base, out := consoleProc(t, "--allow-actions")
	token := ""
	eventually(t, 10*time.Second, func() (bool, string) {
		for _, l := range strings.Split(out.String(), "\n") {
			if t, ok := strings.CutPrefix(l, "token: "); ok {
				token = strings.TrimSpace(t)
			}
		}
		return token != "", out.String()
	})
	require.Equal(t, http.StatusUnauthorized, post(base, "", `{"action":"stop","path":"it-console-api/a"}`))
	require.Equal(t, http.StatusUnauthorized, post(base, "wrong", `{"action":"stop","path":"it-console-api/a"}`))
	require.Equal(t, http.StatusBadRequest, post(base, token, `{"action":"explode","path":"it-console-api/a"}`))

	events := eventStream(t, base, 2*time.Minute)
	require.Equal(t, http.StatusOK, post(base, token, `{"action":"stop","path":"it-console-api/a"}`))
	got := events.waitFor(t, `"path":"it-console-api/a","state":"stopped"`, time.Minute)
	require.Contains(t, got, "data: {")

	resp2, err := http.Get(base + "/api/status?path=it-console-api")
	require.NoError(t, err)
	defer resp2.Body.Close()
	var st struct {
		Path     string `json:"path"`
		Children []struct {
			Path, State string
		} `json:"children"`
	}
	require.NoError(t, jsonDecode(resp2.Body, &st))
	require.Equal(t, "it-console-api", st.Path)
	require.Equal(t, "stopped", st.Children[0].State)
}

func jsonDecode(r interface{ Read([]byte) (int, error) }, v any) error {
	return json.NewDecoder(r).Decode(v)
}

// The console sees a change made elsewhere (the starter, not the console's
// own action, which pokes its watch) through the supervisor's history it
// follows, also after the supervisor continued as new: a look that no
// follow woke asks nothing but every 30 s, so each change must arrive well
// before that.
func TestConsoleFollowsSupervisorsAcrossRuns(t *testing.T) {
	needServer(t)
	r := starter(t, "apply", "-f", writeSpec(t, `
name: it-console-follow
children:
  - {name: a, kind: stub}
`), "--history-limit", "30", "--wait")
	require.Equal(t, 0, r.code, r.stdout+r.stderr)
	t.Cleanup(func() { deleteTree(t, "it-console-follow") })
	firstRun := runOf(t, "it-console-follow")
	base, _ := consoleProc(t, "--interval", "1m") // only a follow makes a look come sooner

	events := eventStream(t, base, 5*time.Minute)
	for i := range 6 {
		action, state := "stop", "stopped"
		if i%2 == 1 {
			action, state = "start", "running"
		}
		r := starter(t, action, "it-console-follow/a")
		require.Equal(t, 0, r.code, r.stderr)
		// Well before the 30 s full look, far above the follow's usual
		// fraction of a second.
		events.waitFor(t, fmt.Sprintf(`"path":"it-console-follow/a","state":"%s"`, state), 8*time.Second)
	}
	require.NotEqual(t, firstRun, runOf(t, "it-console-follow"), "the supervisor continued as new (history limit 30)")
}

// events is a console's /api/events stream, read as it comes.
type events struct{ chunks <-chan string }

// eventStream opens the console's event stream for at most within.
func eventStream(t *testing.T, base string, within time.Duration) events {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), within)
	t.Cleanup(cancel)
	req, err := http.NewRequestWithContext(ctx, "GET", base+"/api/events", nil)
	require.NoError(t, err)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	t.Cleanup(func() { resp.Body.Close() })
	require.Equal(t, "text/event-stream", resp.Header.Get("Content-Type"))
	chunks := make(chan string, 256)
	go func() {
		defer close(chunks)
		buf := make([]byte, 64<<10)
		for {
			n, err := resp.Body.Read(buf)
			if n > 0 {
				chunks <- string(buf[:n])
			}
			if err != nil {
				return
			}
		}
	}()
	return events{chunks}
}

// waitFor reads the stream until it holds want, failing after within; it
// returns what it read.
func (e events) waitFor(t *testing.T, want string, within time.Duration) string {
	t.Helper()
	var got strings.Builder
	deadline := time.After(within)
	for !strings.Contains(got.String(), want) {
		select {
		case c, ok := <-e.chunks:
			require.True(t, ok, "the stream ended: %s", got.String())
			got.WriteString(c)
		case <-deadline:
			t.Fatalf("no %s within %s: %s", want, within, got.String())
		}
	}
	return got.String()
}
