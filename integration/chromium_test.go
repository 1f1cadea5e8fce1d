package integration

import (
	"context"
	"os/exec"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// chromium is the Chromium to drive, or the test is skipped saying how to
// install it (Debian: apt-get install chromium).
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Skip("no Chromium on PATH (Debian: apt-get install chromium)")
	return ""
}

// newBrowser starts headless Chromium for the test (4 minutes at most).
func newBrowser(t *testing.T, exe string) context.Context {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(exe), chromedp.NoSandbox)
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelCtx := chromedp.NewContext(actx)
	ctx, cancel := context.WithTimeout(ctx, 4*time.Minute)
	t.Cleanup(func() { cancel(); cancelCtx(); cancelAlloc() })
	return ctx
}
