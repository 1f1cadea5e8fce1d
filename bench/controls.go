package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/steward-sh/steward/internal/cgroup"
	"github.com/steward-sh/steward/internal/driver"
	"github.com/steward-sh/steward/internal/driver/process"
	"github.com/steward-sh/steward/internal/spec"
	"github.com/steward-sh/steward/workflows"
)

// controlsStep measures the process controls (issue 29):
//
//   - reload_p99_ms: `starter reload --wait=false` of bin/hello until its
//     SIGHUP handler ran (it appends the time to a file), 20 samples, the
//     largest;
//   - usage_cpu_percent_100: the CPU the worker spends sampling 100
//     services every 10 s: a process driver in this process with 100
//     `sleep` services, 20 samples, this process's CPU time (rusage) over
//     the 200 s of sampling they stand for;
//   - oom_restart_ms: a service killed by the kernel for its memoryMax
//     (32Mi; backoff 100 ms, no jitter) from the end of its process until
//     it runs again, 10 samples, the largest (needs cgroups: root).
func controlsStep(ctx context.Context, c client.Client, o options, res Result) error {
	if err := reloadLatency(ctx, c, o, res); err != nil {
		return err
	}
	if err := usageCost(res); err != nil {
		return err
	}
	return oomRestart(ctx, c, res)
}

func reloadLatency(ctx context.Context, c client.Client, o options, res Result) error {
	hello, err := filepath.Abs(filepath.Join(filepath.Dir(o.starterBin), "hello"))
	if err != nil {
		return err
	}
	if _, err := os.Stat(hello); err != nil {
		return fmt.Errorf("controls: %s (make build): %w", hello, err)
	}
	addr, err := freePort()
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "steward-bench-reload-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	file := filepath.Join(dir, "reloads")
	tree := spec.Node{Name: "bench-reload", Children: []spec.Node{{
		Name: "hello", Kind: spec.KindProcess,
		Process: map[string]any{"command": hello, "args": []any{"--addr", addr, "--reload-file", file},
			"startSeconds": "300ms", "reload": map[string]any{"signal": "HUP"}},
		Observe: &spec.Observe{Interval: spec.Dur(time.Hour)},
	}}}
	if err := applyAndWait(ctx, c, tree, time.Minute); err != nil {
		return err
	}
	defer cancelTree(c, "bench-reload")
	lines := func() int {
		b, _ := os.ReadFile(file)
		return strings.Count(string(b), "\n")
	}
	var lat []float64
	for i := range 20 {
		began := time.Now()
		if _, err := starterRun(o, time.Minute, "reload", "bench-reload/hello", "--wait=false"); err != nil {
			return err
		}
		waitFor(func() bool { return lines() > i })
		if lines() <= i {
			return errors.New("controls: the reload did not reach hello's handler within a minute")
		}
		lat = append(lat, ms(time.Since(began)))
		// The workflow records the reload's end before the next one (a
		// reload asked while one runs is merged into it).
		waitFor(func() bool {
			st, err := query(ctx, c, "bench-reload/hello")
			return err == nil && st.Reloads == i+1 && st.LastAction.Name == "reload" && st.LastAction.Status != "running"
		})
	}
	slices.Sort(lat)
	res["reload_p99_ms"] = lat[len(lat)-1]
	res["reload_p50_ms"] = lat[len(lat)/2]
	return nil
}

// usageCost samples 100 services as the worker does, and reports the CPU
// it took as a share of one core at the worker's default interval (10 s).
func usageCost(res Result) error {
	d := process.New("", nil, nil)
	defer d.Close()
	for i := range 100 {
		r := driver.Request{WorkflowID: fmt.Sprintf("bench-usage/s%03d", i), Path: fmt.Sprintf("bench-usage/s%03d", i),
			Spec: spec.Node{Kind: spec.KindProcess, Process: map[string]any{"command": "sleep", "args": []any{"600"}, "startSeconds": "10ms"}}}
		if _, err := d.Start(context.Background(), r); err != nil {
			return err
		}
	}
	const samples = 20
	before := selfCPU()
	for range samples {
		if err := d.SampleUsage(time.Now()); err != nil {
			return err
		}
	}
	spent := selfCPU() - before
	if n := len(d.Usage()); n != 100 {
		return fmt.Errorf("controls: %d services sampled, not 100", n)
	}
	res["usage_cpu_percent_100"] = round(100 * spent.Seconds() / (samples * 10))
	res["usage_sample_ms_100"] = round(float64(spent.Microseconds()) / 1000 / samples)
	return nil
}

func selfCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func oomRestart(ctx context.Context, c client.Client, res Result) error {
	probe, err := cgroup.New("steward-bench-probe-"+strconv.Itoa(os.Getpid()), cgroup.Limits{MemoryMax: 64 << 20})
	if err != nil {
		fmt.Fprintf(os.Stderr, "bench: controls: no cgroups here (%v): oom_restart_ms skipped\n", err)
		res["oom_restart_skipped"] = err.Error()
		return nil
	}
	_ = probe.Remove()
	jitter := 0.0
	tree := spec.Node{Name: "bench-oom", Intensity: &spec.Intensity{MaxRestarts: 1000, Period: spec.Dur(time.Minute)}, Children: []spec.Node{{
		Name: "hog", Kind: spec.KindProcess,
		Process: map[string]any{"command": "sh", "args": []any{"-c", "sleep 1; head -c 300M /dev/zero | tail"},
			"startSeconds": "200ms", "resources": map[string]any{"memoryMax": "32Mi"}},
		Backoff: &spec.Backoff{Initial: spec.Dur(100 * time.Millisecond), Max: spec.Dur(100 * time.Millisecond), Jitter: &jitter},
		Observe: &spec.Observe{Interval: spec.Dur(time.Hour)},
	}}}
	if err := applyAndWait(ctx, c, tree, time.Minute); err != nil {
		return err
	}
	defer cancelTree(c, "bench-oom")
	var lat []float64
	for range 10 {
		var st workflows.Status
		waitFor(func() bool {
			s, err := query(ctx, c, "bench-oom/hog")
			st = s
			return err == nil && s.State == "running"
		})
		pid, err := instancePid(st.Instance)
		if err != nil {
			return err
		}
		waitFor(func() bool { return syscall.Kill(pid, 0) != nil })
		gone := time.Now()
		ok := false
		waitFor(func() bool {
			s, err := query(ctx, c, "bench-oom/hog")
			ok = err == nil && s.State == "running" && s.Instance != st.Instance
			return ok
		})
		if !ok {
			return fmt.Errorf("controls: the hog did not run again within a minute of its end")
		}
		lat = append(lat, ms(time.Since(gone)))
	}
	out, err := historyReasons(ctx, c, "bench-oom/hog")
	if err != nil {
		return err
	}
	if !strings.Contains(out, "out of memory (memoryMax 32Mi)") {
		return fmt.Errorf("controls: no out-of-memory reason in the hog's history: %s", out)
	}
	slices.Sort(lat)
	res["oom_restart_ms"] = lat[len(lat)-1]
	res["oom_restart_p50_ms"] = lat[len(lat)/2]
	return nil
}

// historyReasons is the reasons of a worker's journal, one a line.
func historyReasons(ctx context.Context, c client.Client, id string) (string, error) {
	v, err := c.QueryWorkflow(ctx, id, "", workflows.QueryHistory)
	if err != nil {
		return "", err
	}
	var entries []workflows.JournalEntry
	if err := v.Get(&entries); err != nil {
		return "", err
	}
	var b strings.Builder
	for _, e := range entries {
		b.WriteString(e.Reason + "\n")
	}
	return b.String(), nil
}

// cancelTree ends a bench tree and waits for its workflow to close.
func cancelTree(c client.Client, id string) {
	_ = c.CancelWorkflow(context.Background(), id, "")
	waitFor(func() bool {
		d, err := c.DescribeWorkflowExecution(context.Background(), id, "")
		return err == nil && d.GetWorkflowExecutionInfo().GetCloseTime() != nil
	})
}
