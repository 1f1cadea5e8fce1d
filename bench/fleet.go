package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/steward-sh/steward/workflows"
)

// Fleets (docs/fleet.md), on worker processes of their own, each with its
// own --host, beside the bench's main worker.

// hostWorker is a worker process of one host.
type hostWorker struct {
	host string
	args []string
	bin  string
	cmd  *exec.Cmd
}

func startHostWorker(o options, addr, host, stateDir string) (*hostWorker, error) {
	w := hostWorkerOf(o, addr, host, stateDir)
	return w, w.start()
}

// hostWorkerOf is the worker of host, not started, with extra arguments
// (the later of two same flags wins).
func hostWorkerOf(o options, addr, host, stateDir string, extra ...string) *hostWorker {
	w := &hostWorker{host: host, bin: o.workerBin, args: []string{"--address", addr, "--namespace", o.ns, "--host", host,
		"--metrics", "", "--log-level", "error", "--state-dir", stateDir, "--pool-size", "20"}}
	w.args = append(w.args, strings.Fields(o.workerArgs)...)
	w.args = append(w.args, extra...)
	return w
}

func (w *hostWorker) start() error {
	w.cmd = exec.Command(w.bin, w.args...)
	w.cmd.Stdout, w.cmd.Stderr = os.Stderr, os.Stderr
	return w.cmd.Start()
}

// kill ends the worker with -9 (its stub services die with it).
func (w *hostWorker) kill() {
	_ = w.cmd.Process.Kill()
	_ = w.cmd.Wait()
}

func (w *hostWorker) stop() {
	_ = w.cmd.Process.Signal(os.Interrupt)
	_ = w.cmd.Wait()
}

// fleetWorkers starts a worker for each host, and returns them with their
// stop.
func fleetWorkers(o options, hosts ...string) (map[string]*hostWorker, func(), error) {
	dir, err := os.MkdirTemp("", "steward-bench-fleet-")
	if err != nil {
		return nil, nil, err
	}
	ws := map[string]*hostWorker{}
	stop := func() {
		for _, w := range ws {
			w.stop()
		}
		os.RemoveAll(dir)
	}
	for _, h := range hosts {
		w, err := startHostWorker(o, o.addr, h, dir)
		if err != nil {
			stop()
			return nil, nil, err
		}
		ws[h] = w
	}
	return ws, stop, nil
}

// fleetChildren is the children of root as their supervisor last heard of
// them (its status query: the fields a drain and a failover look at).
func fleetChildren(ctx context.Context, c client.Client, root string) ([]workflows.Status, error) {
	qctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	v, err := c.QueryWorkflow(qctx, root, "", workflows.QueryStatus)
	if err != nil {
		return nil, err
	}
	var st workflows.Status
	if err := v.Get(&st); err != nil {
		return nil, err
	}
	return st.Children, nil
}

func hostUp(ctx context.Context, c client.Client, host string) bool {
	qctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	v, err := c.QueryWorkflow(qctx, workflows.HostID(host), "", workflows.QueryHost)
	var hv workflows.HostView
	return err == nil && v.Get(&hv) == nil && hv.State == workflows.HostUp
}

// failoverStep: 10 stub instances over three hosts with reschedule.after
// 5s; ten times, the host with the most instances has its worker killed
// (its stub services die with it), and the time from the kill until every
// instance runs on another host is a sample (failover_seconds_p99: the
// largest of the ten, with failover_after_seconds; one that has not happened
// a minute later counts in failover_failures). Every look at the
// tree during the step counts the instances running:
// fleet_overcount_moments is the looks that counted more than ten.
func failoverStep(ctx context.Context, c client.Client, o options, res Result) error {
	const name, n, after = "bench-failover", 10, 5
	hosts := []string{"fa", "fb", "fc"}
	ws, stop, err := fleetWorkers(o, hosts...)
	if err != nil {
		return err
	}
	defer stop()
	for _, h := range hosts {
		if err := waitUntil(ctx, time.Minute, func() bool { return hostUp(ctx, c, h) }); err != nil {
			return fmt.Errorf("failover: host %s never up: %w", h, err)
		}
	}
	spec := fmt.Sprintf("name: %s\nhosts: [%s]\nreschedule: {after: %ds}\nchildren:\n  - {name: web, kind: stub, instances: %d, stub: {delay: 0s}, observe: {interval: 1h}}\n",
		name, strings.Join(hosts, ", "), after, n)
	if _, err := starterRun(o, 5*time.Minute, "apply", "-f", writeTemp(name, spec), "--wait", "--timeout", "3m"); err != nil {
		return fmt.Errorf("failover: apply: %w", err)
	}
	defer func() { _, _ = starterRun(o, 5*time.Minute, "delete", name) }()
	overcount := 0
	look := func() (map[string]int, error) {
		kids, err := fleetChildren(ctx, c, name)
		if err != nil {
			return nil, err
		}
		running, per := 0, map[string]int{}
		for _, k := range kids {
			if k.State == "running" {
				running++
				per[k.Host]++
			}
		}
		if running > n {
			overcount++
		}
		return per, nil
	}
	var samples []float64
	failed := 0
	for range 10 {
		per, err := look()
		if err != nil {
			return err
		}
		victim := hosts[0]
		for _, h := range hosts {
			if per[h] > per[victim] {
				victim = h
			}
		}
		ws[victim].kill()
		killed := time.Now()
		var last map[string]int
		if err := waitUntil(ctx, time.Minute, func() bool {
			per, err := look()
			last = per
			total := 0
			for _, v := range per {
				total += v
			}
			return err == nil && per[victim] == 0 && total == n
		}); err != nil {
			// A failover that did not happen is a figure, not the end of
			// the bench: it counts, and its sample is the wait.
			failed++
			fmt.Fprintf(os.Stderr, "bench: failover of %s did not happen within a minute (running by host: %v)\n", victim, last)
		} else {
			fmt.Fprintf(os.Stderr, "bench: failover of %s: %.1fs\n", victim, time.Since(killed).Seconds())
		}
		samples = append(samples, time.Since(killed).Seconds())
		if err := ws[victim].start(); err != nil {
			return err
		}
		if err := waitUntil(ctx, time.Minute, func() bool { return hostUp(ctx, c, victim) }); err != nil {
			return fmt.Errorf("failover: %s never back: %w", victim, err)
		}
	}
	slices.Sort(samples)
	fmt.Fprintf(os.Stderr, "bench: failover samples (s): %v\n", roundAll(samples))
	res["failover_after_seconds"] = after
	res["failover_seconds_p99"] = round(samples[len(samples)-1])
	res["failover_seconds_median"] = round(samples[len(samples)/2])
	res["fleet_overcount_moments"] = overcount
	res["failover_failures"] = failed
	return nil
}

// drainStep: 100 stub instances, all on host da (placed there first; a
// second host db added after, nothing moves by itself), drained at
// maxParallel 10 (`starter drain da --wait`), against a `starter rollout
// restart` of the same instances at chunk 10 in the same run
// (drain_ratio_100, drain_seconds_100, drain_rollout_seconds_100); the most
// instances down at once during the drain, from their journals
// (drain_max_down_100).
func drainStep(ctx context.Context, c client.Client, o options, res Result) error {
	const name = "bench-drain"
	_, stop, err := fleetWorkers(o, "da", "db")
	if err != nil {
		return err
	}
	defer stop()
	for _, h := range []string{"da", "db"} {
		if err := waitUntil(ctx, time.Minute, func() bool { return hostUp(ctx, c, h) }); err != nil {
			return fmt.Errorf("drain: host %s never up: %w", h, err)
		}
	}
	spec := func(hosts string) string {
		return writeTemp(name, fmt.Sprintf("name: %s\nhosts: [%s]\nupdate: {maxParallel: 10}\nintensity: {maxRestarts: 5000, period: 1m}\nchildren:\n  - {name: web, kind: stub, instances: 100, stub: {delay: 0s}, observe: {interval: 1h}}\n", name, hosts))
	}
	if _, err := starterRun(o, 10*time.Minute, "apply", "-f", spec("da"), "--wait", "--timeout", "5m"); err != nil {
		return fmt.Errorf("drain: apply: %w", err)
	}
	defer func() { _, _ = starterRun(o, 5*time.Minute, "delete", name) }()
	if _, err := starterRun(o, 10*time.Minute, "apply", "-f", spec("da, db"), "--wait", "--timeout", "5m"); err != nil {
		return fmt.Errorf("drain: apply with db: %w", err)
	}
	began := time.Now()
	if _, err := starterRun(o, 10*time.Minute, "rollout", "restart", name, "--chunk", "10"); err != nil {
		return fmt.Errorf("drain: rollout: %w", err)
	}
	res["drain_rollout_seconds_100"] = round(time.Since(began).Seconds())
	began = time.Now()
	if _, err := starterRun(o, 10*time.Minute, "drain", "da", "--wait", "--timeout", "8m"); err != nil {
		return fmt.Errorf("drain: %w", err)
	}
	ended := time.Now()
	res["drain_seconds_100"] = round(ended.Sub(began).Seconds())
	res["drain_ratio_100"] = ratio(res["drain_seconds_100"], res["drain_rollout_seconds_100"])
	kids, err := fleetChildren(ctx, c, name)
	if err != nil {
		return err
	}
	paths := make([]string, len(kids))
	for i, k := range kids {
		paths[i] = k.Path
	}
	down, err := mostDown(ctx, c, paths, began, ended)
	if err != nil {
		return err
	}
	res["drain_max_down_100"] = down
	left := 0
	for _, k := range kids {
		if k.Host == "da" {
			left++
		}
	}
	if left > 0 {
		return fmt.Errorf("drain: %d instances still on da after drain --wait", left)
	}
	_, _ = starterRun(o, time.Minute, "undrain", "da")
	return nil
}

func roundAll(xs []float64) []float64 {
	out := make([]float64, len(xs))
	for i, x := range xs {
		out[i] = round(x)
	}
	return out
}

// waitUntil polls cond every 100 ms until it holds, within.
func waitUntil(ctx context.Context, within time.Duration, cond func() bool) error {
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			return fmt.Errorf("not within %s", within)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
	return nil
}
