package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/client"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/steward-sh/steward/internal/treestatus"
	"github.com/steward-sh/steward/workflows"
)

// scale starts o.scale raw workflows of one activity each, then applies a
// tree of o.scale stub workers in groups of 100 (100 x 100 by default) and
// waits until all run; assembles the root's status both ways; reports the
// largest history event of the root and of one group and the worker's
// memory; restarts every worker by one rollout at chunk 200; and measures
// the CPU of the worker and the server over o.idleFor with all of it idle,
// with what the worker's garbage collector did meanwhile (its Go metrics,
// read from workerMetrics): at 4,000 workers most of the idle worker's CPU
// was the collector marking the workflows it keeps in its cache (Go forces
// a collection every two minutes), so the cycles it ran and the live
// objects it marks are read beside the CPU (docs/benchmarks.md).
func scale(ctx context.Context, c client.Client, o options, res Result, workerPid int, workerMetrics func() ([]family, error)) error {
	// Other trees first, as on an operator's server (issue 25: the
	// starvation showed after a 100-worker tree was rolled out twice).
	small := writeFleet("bench-scale-small", 100, 100)
	if _, err := starterRun(o, 10*time.Minute, "apply", "-f", small, "--wait"); err != nil {
		return err
	}
	for range 2 {
		if _, err := starterRun(o, 10*time.Minute, "rollout", "restart", "bench-scale-small", "--chunk", "20", "-o", "json"); err != nil {
			return err
		}
	}
	began := time.Now()
	if err := rawLoops(ctx, c, "raw-scale", o.scale, 1); err != nil {
		return err
	}
	rawSecs := time.Since(began).Seconds()
	res["scale_raw_start_seconds"] = round(rawSecs)
	tree := fleet("bench-scale", o.scale, 100)
	res["scale_workers"] = o.scale
	// The operator's own commands: `starter apply --wait`, and `starter
	// status` of the root every 10 s while it runs (each must answer, in
	// 10 s at most: scale_status_failures counts those that did not).
	applied := make(chan error, 1)
	began = time.Now()
	go func() {
		_, err := starterRun(o, 60*time.Minute, "apply", "-f", writeFleet(tree.Name, o.scale, 100), "--wait", "--timeout", "10m")
		applied <- err
	}()
	var applyErr error
	statusCalls, statusFailures, statusMax := 0, 0, 0.0
	for done := false; !done; {
		select {
		case applyErr = <-applied:
			done = true
			continue
		case <-time.After(10 * time.Second):
		}
		t0 := time.Now()
		_, err := starterRun(o, 10*time.Second, "status", tree.Name, "-o", "json")
		took := time.Since(t0).Seconds()
		statusCalls++
		statusMax = max(statusMax, took)
		if err != nil {
			statusFailures++
			fmt.Fprintln(os.Stderr, "bench: scale: status during the apply:", err)
		}
	}
	if applyErr != nil {
		return fmt.Errorf("scale: apply --wait: %w", applyErr)
	}
	res["scale_apply_seconds"] = round(time.Since(began).Seconds())
	res["scale_apply_wait_ratio"] = round(time.Since(began).Seconds() / rawSecs)
	res["scale_status_calls"] = statusCalls
	res["scale_status_failures"] = statusFailures
	res["scale_status_max_seconds"] = round(statusMax)
	// starter status: the supervisors' records (its default above 1,000
	// workers), and every worker asked too (--exact).
	q := func(ctx context.Context, id string) (workflows.Status, error) { return query(ctx, c, id) }
	began = time.Now()
	st, err := treestatus.Assemble(ctx, tree.Name, q, treestatus.Options{})
	if err != nil {
		return err
	}
	res["scale_status_seconds"] = round(time.Since(began).Seconds())
	began = time.Now()
	if _, err := treestatus.Assemble(ctx, tree.Name, q, treestatus.Options{Leaves: true}); err != nil {
		return err
	}
	res["scale_status_exact_seconds"] = round(time.Since(began).Seconds())
	if at, total := st.AtDesired(); total != o.scale || at != total {
		return fmt.Errorf("scale: %d/%d at desired state", at, total)
	}
	res["scale_root_max_event_bytes"] = largestEvent(allRuns(ctx, c, tree.Name))
	res["scale_group_max_event_bytes"] = largestEvent(allRuns(ctx, c, tree.Name+"/"+tree.Children[0].Name))
	res["scale_worker_rss_mib"] = rssMiB(workerPid)

	targets := leafPaths(tree)
	began = time.Now()
	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: workflows.RolloutID(tree.Name), TaskQueue: workflows.TaskQueue},
		workflows.RolloutWorkflow, workflows.RolloutInput{Path: tree.Name, Op: workflows.RolloutRestart, Targets: targets, Chunk: 200})
	if err != nil {
		return err
	}
	var rs workflows.RolloutStatus
	if err := run.Get(ctx, &rs); err != nil {
		return err
	}
	if rs.Succeeded != len(targets) {
		return fmt.Errorf("scale rollout: %d of %d succeeded", rs.Succeeded, len(targets))
	}
	res["scale_rollout_targets_per_second"] = round(float64(len(targets)) / time.Since(began).Seconds())

	time.Sleep(10 * time.Second) // let the rollout's last tasks settle
	serverPid := o.serverPid
	w0, s0 := cpuSeconds(workerPid), cpuSeconds(serverPid)
	gc0 := sumOf(workerMetrics, "go_gc_duration_seconds_count", "")
	time.Sleep(o.idleFor)
	w1, s1 := cpuSeconds(workerPid), cpuSeconds(serverPid)
	res["scale_idle_worker_cpu_percent"] = round(100 * (w1 - w0) / o.idleFor.Seconds())
	res["scale_idle_worker_gc_cycles"] = sumOf(workerMetrics, "go_gc_duration_seconds_count", "") - gc0
	res["scale_idle_worker_heap_objects"] = sumOf(workerMetrics, "go_memstats_heap_objects", "")
	// The SDK reports its cache's size under every workflow type it saw.
	if cached := maxOf(workerMetrics, "temporal_sticky_cache_size"); cached > 0 {
		res["scale_idle_worker_cached_workflows"] = cached
		res["scale_idle_worker_heap_objects_per_cached_workflow"] = round(res["scale_idle_worker_heap_objects"].(float64) / cached)
	}
	if serverPid > 0 {
		res["scale_idle_server_cpu_percent"] = round(100 * (s1 - s0) / o.idleFor.Seconds())
	}
	return nil
}

// largestEvent is the size of the largest event as JSON (as `temporal
// workflow show -o json` prints it), leaving out the events that carry the
// spec as the operator wrote it: the first run's start, `spec` signals, and
// the start of a child with its part of the spec.
func largestEvent(events []*historypb.HistoryEvent) int {
	largest := 0
	for i, e := range events {
		switch {
		case i == 0 && e.GetEventType() == enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED,
			e.GetEventType() == enumspb.EVENT_TYPE_START_CHILD_WORKFLOW_EXECUTION_INITIATED,
			e.GetWorkflowExecutionSignaledEventAttributes().GetSignalName() == workflows.SignalSpec:
			continue
		}
		if b, err := protojson.Marshal(e); err == nil && len(b) > largest {
			largest = len(b)
		}
	}
	return largest
}

// rssMiB is a process's resident memory (Linux; 0 elsewhere).
func rssMiB(pid int) float64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmRSS:" {
			kb, _ := strconv.ParseFloat(f[1], 64)
			return round(kb / 1024)
		}
	}
	return 0
}

// writeFleet writes the spec of a tree of n stub workers in groups of per
// (actions of no delay) to a temporary file, for `starter apply -f`.
func writeFleet(name string, n, per int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "name: %s\nintensity: {maxRestarts: 1000, period: 1m}\nchildren:\n", name)
	for g := 0; g*per < n; g++ {
		fmt.Fprintf(&b, "  - name: g%02d\n    children:\n", g)
		for i := g * per; i < min(n, (g+1)*per); i++ {
			fmt.Fprintf(&b, "      - {name: w%04d, kind: stub, stub: {delay: 0s}, observe: {interval: 1h}}\n", i)
		}
	}
	return writeTemp(name, b.String())
}

// starterRun runs bin/starter against the bench's server, its output on
// the bench's stderr, and fails when it exits non-zero or outlives within.
func starterRun(o options, within time.Duration, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	cmd := exec.CommandContext(ctx, o.starterBin, append([]string{"--address", o.addr, "--namespace", o.ns}, args...)...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, os.Stderr
	err := cmd.Run()
	if err != nil {
		return out.String(), fmt.Errorf("starter %s: %w", strings.Join(args, " "), err)
	}
	return out.String(), nil
}
