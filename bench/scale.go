package main

import (
	"context"
	"fmt"
	"os"
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
// the CPU of the worker and the server over o.idleFor with all of it idle.
func scale(ctx context.Context, c client.Client, o options, res Result, workerPid int) error {
	began := time.Now()
	if err := rawLoops(ctx, c, "raw-scale", o.scale, 1); err != nil {
		return err
	}
	rawSecs := time.Since(began).Seconds()
	res["scale_raw_start_seconds"] = round(rawSecs)
	tree := fleet("bench-scale", o.scale, 100)
	res["scale_workers"] = o.scale
	began = time.Now()
	if err := applyAndWait(ctx, c, tree, 60*time.Minute); err != nil {
		return err
	}
	res["scale_apply_seconds"] = round(time.Since(began).Seconds())
	res["scale_apply_ratio"] = round(time.Since(began).Seconds() / rawSecs)
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
	time.Sleep(o.idleFor)
	w1, s1 := cpuSeconds(workerPid), cpuSeconds(serverPid)
	res["scale_idle_worker_cpu_percent"] = round(100 * (w1 - w0) / o.idleFor.Seconds())
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
