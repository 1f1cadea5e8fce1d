package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"time"

	"github.com/chromedp/chromedp"
	"go.temporal.io/sdk/client"

	"github.com/steward-sh/steward/workflows"
)

// consoleStep measures `starter console` in real Chromium on a tree of
// o.scale stub workers (the scale step's, when it ran): the first paint of
// the page with its collapsed roll-ups, the expansion of a group of 100,
// how long a change takes to reach the open page (10 stops and starts of a
// worker, signalled directly), and the console process's CPU at rest with
// the page open. Without Chromium the step says so and records nothing.
func consoleStep(ctx context.Context, c client.Client, o options, res Result) error {
	exe := ""
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			exe = p
			break
		}
	}
	if exe == "" {
		fmt.Fprintln(os.Stderr, "bench: console: no Chromium on PATH (Debian: apt-get install chromium): skipped")
		res["console_skipped"] = "no Chromium"
		return nil
	}
	root := "bench-scale"
	if _, err := c.DescribeWorkflowExecution(ctx, root, ""); err != nil {
		if _, err := starterRun(o, 60*time.Minute, "apply", "-f", writeFleet(root, o.scale, 100), "--wait", "--timeout", "10m"); err != nil {
			return err
		}
	}
	addr, err := freePort()
	if err != nil {
		return err
	}
	cmd := exec.Command(o.starterBin, "--address", o.addr, "--namespace", o.ns, "console", "--listen", addr, "--interval", "1s")
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		return err
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	base := "http://" + addr
	for deadline := time.Now().Add(30 * time.Second); ; {
		resp, err := http.Get(base + "/api/config")
		if err == nil {
			resp.Body.Close()
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("console: not serving: %w", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	// The watch's first look, so that the page does not wait for it.
	if resp, err := http.Get(base + "/api/tree"); err == nil {
		resp.Body.Close()
	}

	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(exe), chromedp.NoSandbox)
	actx, cancelAlloc := chromedp.NewExecAllocator(ctx, opts...)
	defer cancelAlloc()
	bctx, cancelB := chromedp.NewContext(actx)
	defer cancelB()
	bctx, cancelT := context.WithTimeout(bctx, 15*time.Minute)
	defer cancelT()
	if err := chromedp.Run(bctx, chromedp.EmulateViewport(1400, 900), chromedp.Navigate("about:blank")); err != nil {
		return err
	}
	// waitFor polls the page (every 10 ms) until expr is true.
	waitFor := func(expr string, within time.Duration) error {
		deadline := time.Now().Add(within)
		for {
			var ok bool
			if err := chromedp.Run(bctx, chromedp.Evaluate(expr, &ok)); err == nil && ok {
				return nil
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("console: %s not true within %s", expr, within)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	group := root + "/g00"
	began := time.Now()
	if err := chromedp.Run(bctx, chromedp.Navigate(base+"/")); err != nil {
		return err
	}
	if err := waitFor(fmt.Sprintf(`!!document.querySelector('tr[data-path="%s"] [data-count]')`, group), 2*time.Minute); err != nil {
		return err
	}
	res[fmt.Sprintf("console_first_paint_ms_%d", o.scale)] = ms(time.Since(began))
	if err := waitFor(`document.getElementById("conn").textContent === "live"`, time.Minute); err != nil {
		return err
	}

	began = time.Now()
	if err := chromedp.Run(bctx, chromedp.Click(fmt.Sprintf(`[data-toggle="%s"]`, group), chromedp.ByQuery)); err != nil {
		return err
	}
	if err := waitFor(fmt.Sprintf(`document.querySelectorAll('tr[data-path^="%s/"]').length === 100`, group), time.Minute); err != nil {
		return err
	}
	res["console_expand_ms"] = ms(time.Since(began))

	// A change reaches the open page: a worker of another group stopped
	// and started again, its group's roll-up watched.
	worker := leafOf(ctx, c, root+"/g01")
	if worker == "" {
		return errors.New("console: no worker under " + root + "/g01")
	}
	stoppedShown := fmt.Sprintf(`!!document.querySelector('tr[data-path="%s/g01"] [data-count="stopped"]')`, root)
	var lat []float64
	for i := range 10 {
		desired, shown := "stopped", stoppedShown
		if i%2 == 1 {
			desired, shown = "running", "!("+stoppedShown+")"
		}
		t0 := time.Now()
		if err := c.SignalWorkflow(ctx, worker, "", workflows.SignalDesired, desired); err != nil {
			return err
		}
		if err := waitFor(shown, time.Minute); err != nil {
			return err
		}
		lat = append(lat, float64(time.Since(t0).Milliseconds()))
	}
	slices.Sort(lat)
	res["console_update_ms_p99"] = lat[len(lat)-1] // 10 samples: the largest
	res["console_update_ms_p50"] = lat[len(lat)/2]

	// At rest, the page open.
	time.Sleep(5 * time.Second)
	c0 := cpuSeconds(cmd.Process.Pid)
	rest := 60 * time.Second
	time.Sleep(rest)
	res[fmt.Sprintf("console_server_cpu_percent_%d", o.scale)] = round(100 * (cpuSeconds(cmd.Process.Pid) - c0) / rest.Seconds())
	if f := os.Getenv("STEWARD_BENCH_CONSOLE_SHOT"); f != "" {
		var png []byte
		if err := chromedp.Run(bctx, chromedp.CaptureScreenshot(&png)); err == nil {
			_ = os.WriteFile(filepath.Clean(f), png, 0o644)
		}
	}
	return nil
}

func ms(d time.Duration) float64 { return float64(d.Milliseconds()) }

// leafOf is the first worker listed under a group (its children's IDs).
func leafOf(ctx context.Context, c client.Client, group string) string {
	v, err := c.QueryWorkflow(ctx, group, "", workflows.QueryStatus)
	if err != nil {
		return ""
	}
	var st workflows.Status
	if v.Get(&st) != nil || len(st.Children) == 0 {
		return ""
	}
	return st.Children[0].Path
}
