//go:build browser

// The Web UI check, in a real browser: `make test-browser` (headless
// Chromium, driven by chromedp). It needs Chromium (Debian's package
// chromium), which a fresh machine does not have, so it is not part of
// `make test`.
package integration

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"
)

func init() { withUI = true }

// browse opens page in headless Chromium and waits (with a deadline) until
// its text contains want.
func browse(t *testing.T, ctx context.Context, page, want string) {
	t.Helper()
	require.NoError(t, chromedp.Run(ctx, chromedp.Navigate("http://"+uiAddr+page)))
	waitPage(t, ctx, "body", want)
}

// A person can find a steward workflow in the Web UI by its state (search
// attributes), and see its state on the workflow's page; after a stop, the
// same filter by state finds it stopped.
func TestBrowserWebUIShowsAndFiltersStewardState(t *testing.T) {
	needServer(t)
	exe := chromium(t)
	r := starter(t, "apply", "-f", writeSpec(t, `
name: it-ui
children:
  - {name: web, kind: stub, observe: {interval: 1h}}
`), "--wait")
	require.Equal(t, 0, r.code, r.stdout+r.stderr)
	t.Cleanup(func() { deleteTree(t, "it-ui") })

	ctx := newBrowser(t, exe)

	list := func(state string) string {
		return "/namespaces/default/workflows?query=" + url.QueryEscape(fmt.Sprintf(`StewardPath="it-ui/web" AND StewardState="%s"`, state))
	}
	browse(t, ctx, list("running"), "it-ui/web")

	runID, _ := describe(t, "it-ui/web")
	browse(t, ctx, "/namespaces/default/workflows/"+url.PathEscape("it-ui/web")+"/"+runID+"/search-attributes", `"StewardState": "running"`)

	r = starter(t, "stop", "it-ui/web")
	require.Equal(t, 0, r.code, r.stderr)
	waitState(t, "it-ui/web", "stopped", time.Minute)
	browse(t, ctx, list("stopped"), "it-ui/web")
}

// With payloads encrypted, the Web UI shows a workflow's input (its spec)
// and a query's answer (its state transitions) decoded,
// through the codec server the dev server's UI is configured with
// (--ui-codec-endpoint); the history itself holds ciphertext (see
// TestEncryptedPayloads).
func TestBrowserWebUIDecodesEncryptedPayloads(t *testing.T) {
	needServer(t)
	exe := chromium(t)
	const ns = "encrypted-ui"
	r := temporalCLI(t, "operator", "namespace", "create", "-n", ns)
	require.True(t, r.code == 0 || strings.Contains(r.stderr, "already"), r.stderr)
	eventually(t, time.Minute, func() (bool, string) {
		r := temporalCLI(t, "workflow", "list", "-n", ns, "--limit", "1")
		return r.code == 0, r.stderr
	})
	w, err := startWorker("worker-encrypted-ui", "--namespace", ns, "--encryption-key-file", codecKey)
	require.NoError(t, err)
	t.Cleanup(w.stop)
	const marker = "decoded-marker-81f2"
	r = starter(t, "--namespace", ns, "--encryption-key-file", codecKey, "apply", "-f", writeSpec(t, `
name: it-ui-enc
children:
  - name: p
    kind: process
    process: {command: sleep, args: ["300"], startSeconds: 200ms, env: {NOTE: `+marker+`}}
`), "--wait")
	require.Equal(t, 0, r.code, r.stdout+r.stderr)
	t.Cleanup(func() { starter(t, "--namespace", ns, "--encryption-key-file", codecKey, "delete", "it-ui-enc") })
	runID := temporalCLI(t, "workflow", "describe", "-n", ns, "-w", "it-ui-enc/p", "-o", "json")
	require.Equal(t, 0, runID.code, runID.stderr)
	id := between(runID.stdout, `"runId": "`, `"`)
	require.NotEmpty(t, id, runID.stdout)

	ctx := newBrowser(t, exe)
	browse(t, ctx, "/namespaces/"+ns+"/workflows/"+url.PathEscape("it-ui-enc/p")+"/"+id+"/history", marker)
	// Its state, as a query answers it (encrypted by the worker): the
	// Queries tab runs the first query type, history (the journal of
	// transitions), and shows the answer decoded.
	browse(t, ctx, "/namespaces/"+ns+"/workflows/"+url.PathEscape("it-ui-enc/p")+"/"+id+"/query", "Run Query")
	require.NoError(t, chromedp.Run(ctx, chromedp.Click(`//button[contains(normalize-space(.), "Run Query")]`, chromedp.BySearch)))
	var text string
	eventually(t, time.Minute, func() (bool, string) {
		if err := chromedp.Run(ctx, chromedp.Text("body", &text, chromedp.ByQuery)); err != nil {
			return false, err.Error()
		}
		return strings.Contains(text, `"state": "running"`) && strings.Contains(text, `"reason": "started"`), fmt.Sprintf("no decoded answer in %.3000s", text)
	})
}

// between is the text of s after the first from, up to the next to.
func between(s, from, to string) string {
	_, rest, ok := strings.Cut(s, from)
	if !ok {
		return ""
	}
	v, _, _ := strings.Cut(rest, to)
	return v
}
