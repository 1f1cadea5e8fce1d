package console

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/steward-sh/steward/internal/spec"
	"github.com/steward-sh/steward/internal/treestatus"
)

// fakeSource is a tree that the test changes by hand, and a log of the
// actions asked.
type fakeSource struct {
	mu    sync.Mutex
	trees []treestatus.Status
	acts  []string
}

func (f *fakeSource) set(state string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.trees = []treestatus.Status{{Path: "t", Kind: "supervisor", State: "running", Desired: "running", Children: []treestatus.Status{
		{Path: "t/a", Kind: "stub", State: state, Desired: "running"},
		{Path: "t/b", Kind: "stub", State: "running", Desired: "running"},
	}}}
}

func (f *fakeSource) Trees(context.Context) ([]treestatus.Status, bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.trees, true, nil
}

func (f *fakeSource) Status(_ context.Context, path string) (treestatus.Status, error) {
	if path == "missing" {
		return treestatus.Status{}, errors.New("no workflow at \"missing\"")
	}
	return treestatus.Status{Path: path, State: "running"}, nil
}

func (f *fakeSource) Node(context.Context, string) (NodeInfo, error) {
	return NodeInfo{History: json.RawMessage(`[]`)}, nil
}

func (f *fakeSource) Log(_ context.Context, _, from string, follow bool) (LogChunk, error) {
	return LogChunk{Text: "line\n", Next: "1"}, nil
}

func (f *fakeSource) Act(_ context.Context, action, path string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.acts = append(f.acts, action+" "+path)
	return nil
}

func serve(t *testing.T, opts Options) (*httptest.Server, *fakeSource, context.CancelFunc) {
	t.Helper()
	src := &fakeSource{}
	src.set("running")
	w := NewWatch(src, 20*time.Millisecond)
	ctx, cancel := context.WithCancel(context.Background())
	go w.Run(ctx)
	srv := httptest.NewServer(New(src, w, opts))
	t.Cleanup(func() { srv.Close(); cancel() })
	return srv, src, cancel
}

func do(t *testing.T, method, url, token, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	require.NoError(t, err)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	var b strings.Builder
	_, _ = bufio.NewReader(resp.Body).WriteTo(&b)
	return resp.StatusCode, b.String()
}

func TestActions_NeedAllowAndTheToken(t *testing.T) {
	srv, src, _ := serve(t, Options{})
	code, body := do(t, "POST", srv.URL+"/api/actions", "tok", `{"action":"stop","path":"t/a"}`)
	require.Equal(t, http.StatusForbidden, code, body)
	require.Contains(t, body, "--allow-actions")

	var logged []string
	srv, src, _ = serve(t, Options{AllowActions: true, Token: "tok", Log: func(f string, a ...any) { logged = append(logged, f) }})
	for _, c := range []struct {
		token, body string
		code        int
	}{
		{"", `{"action":"stop","path":"t/a"}`, http.StatusUnauthorized},
		{"wrong", `{"action":"stop","path":"t/a"}`, http.StatusUnauthorized},
		{"tok", `{"action":"explode","path":"t/a"}`, http.StatusBadRequest},
		{"tok", `{"action":"stop"}`, http.StatusBadRequest},
		{"tok", `{"action":"stop","path":"t/a","extra":1}`, http.StatusBadRequest},
		{"tok", `not json`, http.StatusBadRequest},
		{"tok", `{"action":"stop","path":"t/a"}`, http.StatusOK},
		{" tok ", `{"action":"rollout-restart","path":"t"}`, http.StatusOK},
	} {
		code, body := do(t, "POST", srv.URL+"/api/actions", c.token, c.body)
		require.Equal(t, c.code, code, "%+v: %s", c, body)
	}
	require.Equal(t, []string{"stop t/a", "rollout-restart t"}, src.acts)
	for _, l := range logged {
		require.NotContains(t, l, "tok", "the token is never logged")
	}
}

func TestAPI_StatusTreeLogsAndErrors(t *testing.T) {
	srv, _, _ := serve(t, Options{Namespace: "ns", WebUI: "http://ui"})
	code, body := do(t, "GET", srv.URL+"/api/status?path=t/a", "", "")
	require.Equal(t, 200, code)
	require.Contains(t, body, `"path":"t/a"`)
	code, body = do(t, "GET", srv.URL+"/api/status", "", "")
	require.Equal(t, 400, code, body)
	code, body = do(t, "GET", srv.URL+"/api/status?path=missing", "", "")
	require.Equal(t, http.StatusBadGateway, code)
	require.Contains(t, body, "no workflow")
	code, body = do(t, "GET", srv.URL+"/api/tree", "", "")
	require.Equal(t, 200, code)
	require.Contains(t, body, `"path":"t/b"`)
	code, body = do(t, "GET", srv.URL+"/api/logs?path=t/a&from=1", "", "")
	require.Equal(t, 200, code)
	require.JSONEq(t, `{"text":"line\n","next":"1"}`, body)
	code, body = do(t, "GET", srv.URL+"/api/config", "", "")
	require.Equal(t, 200, code)
	require.Contains(t, body, `"allowActions":false`)
	code, body = do(t, "GET", srv.URL+"/", "", "")
	require.Equal(t, 200, code)
	require.Contains(t, body, "steward console")
	code, _ = do(t, "GET", srv.URL+"/app.js", "", "")
	require.Equal(t, 200, code)
}

// Every page hears each change once, as one `data:` line of JSON with the
// node's full path and its new state.
func TestEvents_ChangesArePushed(t *testing.T) {
	srv, src, _ := serve(t, Options{})
	resp, err := http.Get(srv.URL + "/api/events")
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, "text/event-stream", resp.Header.Get("Content-Type"))
	lines := bufio.NewScanner(resp.Body)
	require.True(t, lines.Scan())
	require.Equal(t, ": connected", lines.Text())
	time.Sleep(50 * time.Millisecond) // nothing changes yet: nothing is sent
	src.set("failed")
	for lines.Scan() {
		l := lines.Text()
		if !strings.HasPrefix(l, "data: ") {
			continue
		}
		var c Change
		require.NoError(t, json.Unmarshal([]byte(strings.TrimPrefix(l, "data: ")), &c))
		require.Equal(t, "t/a", c.Path)
		require.Equal(t, "failed", c.State)
		require.Equal(t, "running", c.From)
		return
	}
	t.Fatal("no event")
}

func TestDiff_AppearedChangedAndGone(t *testing.T) {
	at := time.Now()
	prev := map[string]Change{"a": {Path: "a", State: "running", At: at}, "b": {Path: "b", State: "running", At: at}}
	cur := map[string]Change{"a": {Path: "a", State: "running", At: at.Add(time.Second)}, "c": {Path: "c", State: "starting"}}
	d := Diff(prev, cur, []string{"a", "c"})
	require.Len(t, d, 2)
	require.Equal(t, "c", d[0].Path)
	require.Equal(t, "", d[0].From, "appeared")
	require.Equal(t, Change{Path: "b", State: "gone", From: "running", Reason: "no longer in the tree", At: at}, d[1])
}

// With a read token, every read of /api/ needs it (Bearer; ?token= only
// on the event stream, which a browser's EventSource opens without
// headers); the page's own files do not, and actions need the actions'
// token, not the read token. Without one, reads are open (above).
func TestReadToken(t *testing.T) {
	srv, src, _ := serve(t, Options{ReadToken: "r34d", AllowActions: true, Token: "act"})
	reads := []string{"/api/tree", "/api/status?path=t/a", "/api/node?path=t/a", "/api/logs?path=t/a", "/api/config"}
	for _, p := range reads {
		for _, tok := range []string{"", "wrong", "act", "r34"} {
			code, body := do(t, "GET", srv.URL+p, tok, "")
			require.Equal(t, http.StatusUnauthorized, code, "%s with %q: %s", p, tok, body)
			require.Contains(t, body, "?token=")
			require.NotContains(t, body, "r34d")
		}
		code, body := do(t, "GET", srv.URL+p, "r34d", "")
		require.Equal(t, http.StatusOK, code, "%s: %s", p, body)
		sep := "?"
		if strings.Contains(p, "?") {
			sep = "&"
		}
		code, _ = do(t, "GET", srv.URL+p+sep+"token=r34d", "", "")
		require.Equal(t, http.StatusUnauthorized, code, "%s: ?token= is for the event stream only", p)
	}
	for _, p := range []string{"/", "/index.html", "/app.js", "/app.css"} {
		code, _ := do(t, "GET", srv.URL+p, "", "")
		require.Equal(t, http.StatusOK, code, p)
	}

	events := func(query, token string) *http.Response {
		req, err := http.NewRequest("GET", srv.URL+"/api/events"+query, nil)
		require.NoError(t, err)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		t.Cleanup(func() { resp.Body.Close() })
		return resp
	}
	require.Equal(t, http.StatusUnauthorized, events("", "").StatusCode)
	require.Equal(t, http.StatusUnauthorized, events("?token=wrong", "").StatusCode)
	require.Equal(t, http.StatusUnauthorized, events("?token=", "").StatusCode)
	for _, resp := range []*http.Response{events("?token=r34d", ""), events("", "r34d")} {
		require.Equal(t, http.StatusOK, resp.StatusCode)
		lines := bufio.NewScanner(resp.Body)
		require.True(t, lines.Scan())
		require.Equal(t, ": connected", lines.Text())
	}

	code, body := do(t, "POST", srv.URL+"/api/actions", "r34d", `{"action":"stop","path":"t/a"}`)
	require.Equal(t, http.StatusUnauthorized, code, "the read token does not act: %s", body)
	code, body = do(t, "POST", srv.URL+"/api/actions", "act", `{"action":"stop","path":"t/a"}`)
	require.Equal(t, http.StatusOK, code, body)
	require.Equal(t, []string{"stop t/a"}, src.acts)
}

// The page and its Content-Security-Policy agree: the policy allows no
// inline script or style, and the page uses none (no style attribute in
// the HTML or in what app.js writes into it, no inline script or event
// handler); a row is indented by a class of app.css, one for each level a
// tree may have.
func TestPageKeepsToItsCSP(t *testing.T) {
	require.Contains(t, CSP, "default-src 'self'")
	require.NotContains(t, CSP, "unsafe-inline")
	require.NotContains(t, CSP, "unsafe-eval")
	srv, _, _ := serve(t, Options{})
	resp, err := http.Get(srv.URL + "/")
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, CSP, resp.Header.Get("Content-Security-Policy"))

	read := func(name string) string {
		b, err := web.ReadFile("web/" + name)
		require.NoError(t, err)
		return string(b)
	}
	html, js, css := read("index.html"), read("app.js"), read("app.css")
	styleAttr := regexp.MustCompile(`(?i)<[^>]*\sstyle\s*=|\bstyle\s*=\s*["'$]`)
	for name, text := range map[string]string{"index.html": html, "app.js": js} {
		require.Empty(t, styleAttr.FindAllString(text, -1), "%s writes a style attribute, which the CSP refuses", name)
		require.NotRegexp(t, `(?i)<style`, text, name)
		require.NotRegexp(t, `(?i)setAttribute\(\s*["']style|\.cssText|insertRule`, text, name)
		require.NotRegexp(t, `(?i)<[a-z][^>]*\son[a-z]+\s*=`, text, "%s: an inline event handler, which the CSP refuses", name)
		require.NotRegexp(t, `(?i)javascript:`, text, name)
	}
	for _, s := range regexp.MustCompile(`(?is)<script[^>]*>`).FindAllString(html, -1) {
		require.Contains(t, s, "src=", "no inline script")
	}

	// Every level a tree may have has its class; app.js caps at the last.
	levels := spec.MaxDepth
	for d := 0; d < levels; d++ {
		require.Regexp(t, fmt.Sprintf(`table\.tree td\.d%d \{ padding-left: [0-9.]+em; \}`, d), css)
	}
	require.NotContains(t, css, fmt.Sprintf("td.d%d ", levels))
	m := regexp.MustCompile(`function depth\(path\) \{ return Math\.min\(path\.split\("/"\)\.length - 1, (\d+)\); \}`).FindStringSubmatch(js)
	require.NotNil(t, m, "app.js's depth()")
	require.Equal(t, strconv.Itoa(levels-1), m[1])
	require.Contains(t, js, `<td class="d${depth(n.path)}">`)
}
