package main

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/steward-sh/steward/internal/spec"
)

// stickyWait covers the server's sticky schedule-to-start timeout (5 s):
// the first workflow task after a worker's kill -9 waits for it before it
// goes to another worker, whatever steward does.
const stickyWait = 6 * time.Second

// killToRestart measures how long a process service takes from a kill -9
// to running again (a new instance, its state read by query), with a 100ms
// backoff: for a process the worker started, and for processes it adopted
// from the worker before it (killed with -9 and started again once; the
// samples are taken once the workflows' tasks reach the new worker).
func killToRestart(ctx context.Context, c client.Client, o options, res Result, restartWorker func() error) error {
	jitter := 0.0
	// Many restarts in a minute, on purpose: the intensity must not give up.
	// o.kills services: the first for the samples of processes the worker
	// started (killed again and again), every one for a sample of an
	// adopted process after a single restart of the worker.
	tree := spec.Node{Name: "bench-kill", Intensity: &spec.Intensity{MaxRestarts: 1000, Period: spec.Dur(time.Minute)}}
	for i := range max(o.kills, 1) {
		tree.Children = append(tree.Children, spec.Node{
			Name: fmt.Sprintf("svc%02d", i), Kind: spec.KindProcess,
			Process: map[string]any{"command": "sleep", "args": []any{"300"}, "startSeconds": "100ms"},
			Backoff: &spec.Backoff{Initial: spec.Dur(100 * time.Millisecond), Max: spec.Dur(100 * time.Millisecond), Jitter: &jitter},
			Observe: &spec.Observe{Interval: spec.Dur(time.Hour)},
		})
	}
	if err := applyAndWait(ctx, c, tree, time.Minute); err != nil {
		return err
	}
	defer func() {
		_ = c.CancelWorkflow(context.Background(), "bench-kill", "")
		waitFor(func() bool {
			d, err := c.DescribeWorkflowExecution(context.Background(), "bench-kill", "")
			return err == nil && d.GetWorkflowExecutionInfo().GetCloseTime() != nil
		})
	}()
	sample := func(id string) (float64, error) { return killToRunning(ctx, c, id) }
	var own, adopted []float64
	for range o.kills {
		ms, err := sample("bench-kill/svc00")
		if err != nil {
			return err
		}
		own = append(own, ms)
	}
	// One restart: the new worker adopts every service the one before
	// started; each is then killed once.
	if err := restartWorker(); err != nil {
		return err
	}
	time.Sleep(stickyWait)
	for _, svc := range tree.Children {
		ms, err := sample("bench-kill/" + svc.Name)
		if err != nil {
			return err
		}
		adopted = append(adopted, ms)
	}
	res["kill_to_running_own_p50_ms"], res["kill_to_running_own_p99_ms"] = pct(own, 50), pct(own, 99)
	res["kill_to_running_adopted_p50_ms"], res["kill_to_running_adopted_p99_ms"] = pct(adopted, 50), pct(adopted, 99)
	res["kill_samples"] = o.kills
	res["kill_backoff_ms"] = 100
	return nil
}

// instancePid reads the pid of a process instance ("proc/<pid>/...").
func instancePid(instance string) (int, error) {
	parts := strings.Split(instance, "/")
	if len(parts) < 3 || parts[0] != "proc" {
		return 0, fmt.Errorf("not a process instance: %q", instance)
	}
	return strconv.Atoi(parts[1])
}
