package main

// The steps that measure steward beside the raw baselines: throughput, cost
// per action, latency, apply and idle, and their helpers.

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"fmt"
	"math"
	"os"
	"strings"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/client"

	"github.com/steward-sh/steward/internal/admission"
	"github.com/steward-sh/steward/internal/spec"
	"github.com/steward-sh/steward/internal/treestatus"
	"github.com/steward-sh/steward/workflows"
)

func throughput(ctx context.Context, c client.Client, o options, res Result, metricsURL, rawMetricsURL string, workerPid int) error {
	// Raw: 10 workflows x 200 activities. The server's CPU per action says
	// what each side costs the server (the bottleneck here).
	serverPid := o.serverPid
	per := 2000 / pool
	began := time.Now()
	cpu0 := cpuSeconds(serverPid)
	stopRaw := sampling(50*time.Millisecond, rawPoolUtilization) // the raw pool's utilization meanwhile
	err := rawLoops(ctx, c, "raw-loop", pool, per)
	res["raw_pool_utilization_zero_delay"] = round(mean(stopRaw()))
	if err != nil {
		return err
	}
	rawSecs := time.Since(began).Seconds()
	raw := float64(per*pool) / rawSecs
	res["raw_activity_throughput"] = round(raw)
	res["raw_server_cpu_ms_per_action"] = round(1000 * (cpuSeconds(serverPid) - cpu0) / float64(per*pool))
	res["raw_server_cpu_percent_under_load"] = round(100 * (cpuSeconds(serverPid) - cpu0) / rawSecs)

	// Raw entities: as many as steward's fleet, one action per signal,
	// driven like the rollouts below (chunks of pool with a barrier).
	rounds := int(math.Ceil(2000 / float64(o.fleet)))
	// entityPhase starts o.fleet raw entities of workflow wf, drives each
	// rounds times with drive, and writes the phase's figures under prefix
	// (the task p99 over the workflow types wfTypes); it returns the
	// actions a second.
	entityPhase := func(prefix string, wfTypes []string, wf any, drive func(context.Context, client.Client, []string, int, int) error, switches bool) (float64, error) {
		ids, err := startEntitiesOf(ctx, c, wf, strings.ReplaceAll(prefix, "_", "-"), o.fleet, rounds)
		if err != nil {
			return 0, err
		}
		began := time.Now()
		cpu0 := cpuSeconds(serverPid)
		var types []string
		for _, t := range wfTypes {
			types = append(types, `workflow_type="`+t+`"`)
		}
		ticks := histogramWindow(scraper(rawMetricsURL), taskLatency, types...)
		countSwitches := switchMeter(os.Getpid()) // this process runs the raw side's worker
		if err := drive(ctx, c, ids, rounds, pool); err != nil {
			return 0, err
		}
		secs := time.Since(began).Seconds()
		if switches {
			countSwitches(res, prefix, rounds*o.fleet)
		}
		res[prefix+"_tick_p99_ms"] = ticks()
		perSec := float64(rounds*o.fleet) / secs
		res[prefix+"_throughput"] = round(perSec)
		res[prefix+"_server_cpu_ms_per_action"] = round(1000 * (cpuSeconds(serverPid) - cpu0) / float64(rounds*o.fleet))
		return perSec, nil
	}
	rawEntity, err := entityPhase("raw_entity", []string{"RawOnSignal"}, RawOnSignal, driveEntities, true)
	if err != nil {
		return err
	}
	// Raw Update entities: the same actions, each asked by an Update that
	// returns when it ended (steward's protocol without steward's code).
	rawUpdate, err := entityPhase("raw_update_entity", []string{"RawOnUpdate"}, RawOnUpdate, driveUpdateEntities, false)
	if err != nil {
		return err
	}

	// steward: rollout restarts of the fleet, chunk 10, until 2,000 actions.
	root := fleet("bench-fleet", o.fleet, 20)
	if err := applyAndWait(ctx, c, root, 5*time.Minute); err != nil {
		return err
	}
	targets := leafPaths(root)
	stop := sampling(250*time.Millisecond, stewardPoolUtilization(metricsURL))
	began = time.Now()
	cpu0 = cpuSeconds(serverPid)
	// The workflow task p99 of this load alone, beside the raw entities'
	// under theirs: every steward task (worker, supervisor, rollout), and
	// the workers' (the tick, the entity's peer).
	stewardTicks := histogramWindow(scraper(metricsURL), taskLatency, "")
	workerTicks := histogramWindow(scraper(metricsURL), taskLatency, `workflow_type="WorkerWorkflow"`)
	workerSwitches := switchMeter(workerPid)
	for i := range rounds {
		id := workflows.RolloutID("bench-fleet")
		run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: id, TaskQueue: workflows.TaskQueue,
			WorkflowIDReusePolicy: enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE},
			workflows.RolloutWorkflow, workflows.RolloutInput{Path: "bench-fleet", Op: workflows.RolloutRestart, Targets: targets, Chunk: pool})
		if err != nil {
			return fmt.Errorf("rollout %d: %w", i, err)
		}
		var st workflows.RolloutStatus
		if err := run.Get(ctx, &st); err != nil {
			return err
		}
		if st.Succeeded != len(targets) {
			return fmt.Errorf("rollout %d: %d of %d succeeded", i, st.Succeeded, len(targets))
		}
	}
	samples := stop()
	secs := time.Since(began).Seconds()
	workerSwitches(res, "steward_worker", rounds*len(targets))
	res["tick_p99_ms_throughput"] = stewardTicks()
	res["tick_p99_ms_throughput_WorkerWorkflow"] = workerTicks()
	res["tick_ratio_p99_entity"] = ratio(res["tick_p99_ms_throughput"], res["raw_entity_tick_p99_ms"])
	res["tick_ratio_p99_update_entity"] = ratio(res["tick_p99_ms_throughput"], res["raw_update_entity_tick_p99_ms"])
	steward := float64(rounds*len(targets)) / secs
	res["steward_action_throughput"] = round(steward)
	res["steward_server_cpu_ms_per_action"] = round(1000 * (cpuSeconds(serverPid) - cpu0) / float64(rounds*len(targets)))
	res["steward_server_cpu_percent_under_load"] = round(100 * (cpuSeconds(serverPid) - cpu0) / secs)
	res["throughput_ratio"] = round(steward / raw)
	res["throughput_ratio_entity"] = round(steward / rawEntity)
	res["throughput_ratio_update_entity"] = round(steward / rawUpdate)
	res["pool_utilization_zero_delay"] = round(mean(samples))

	// Two more ways to learn an action's end without Update, raw, after
	// steward's part so that what they leave the server to do does not
	// weigh on its figures.
	// Raw reply entities: the same actions, each asked by a signal on
	// behalf of a raw rollout workflow and answered by a signal back to it
	// (the tasks of both counted, as steward's rollouts' tasks are): a
	// protocol without Update by which the asker still learns each end.
	rawReply, err := entityPhase("raw_reply_entity", []string{"RawOnSignalReply", "RawReplyRollout"}, RawOnSignalReply, driveReplyEntities, false)
	if err != nil {
		return err
	}
	res["raw_reply_entity_tick_ratio_p99_entity"] = ratio(res["raw_reply_entity_tick_p99_ms"], res["raw_entity_tick_p99_ms"])
	res["raw_reply_entity_throughput_ratio_entity"] = round(rawReply / rawEntity)
	// Raw query entities: the signal entities asked again, each action's
	// end learnt by polling a query (its answers are tasks too, counted).
	rawQuery, err := entityPhase("raw_query_entity", []string{"RawOnSignal"}, RawOnSignal, driveQueryEntities, false)
	if err != nil {
		return err
	}
	res["raw_query_entity_tick_ratio_p99_entity"] = ratio(res["raw_query_entity_tick_p99_ms"], res["raw_entity_tick_p99_ms"])
	res["raw_query_entity_throughput_ratio_entity"] = round(rawQuery / rawEntity)
	return nil
}

// costPerAction counts what one action costs the server on each side: the
// history events and workflow tasks, summed over every workflow involved.
// Raw: one RawLoop of 100 activities; and 100 raw entities (RawOnSignal),
// one action each, in chunks of 10 with a barrier, as a rollout drives
// them. steward: one rollout restart of 100 stub workers in 10 supervisors
// under a root at chunk 10 (the rollout included), with no continue-as-new
// in between (the histories are short).
func costPerAction(ctx context.Context, c client.Client, res Result) error {
	const rawN = 100
	if err := rawLoops(ctx, c, "raw-cost", 1, rawN); err != nil {
		return err
	}
	raw := countEvents(ctx, c, []string{"raw-cost-0"})
	res["raw_events_per_action"] = round(float64(raw.total) / rawN)
	res["raw_workflow_tasks_per_action"] = round(float64(raw.tasks) / rawN)

	entities, err := startEntities(ctx, c, "raw-entity-cost", rawN, 2)
	if err != nil {
		return err
	}
	if err := driveEntities(ctx, c, entities, 1, pool); err != nil { // warm: the first signal also starts each
		return err
	}
	time.Sleep(time.Second)
	eBefore := countEvents(ctx, c, entities)
	if err := driveEntities(ctx, c, entities, 1, pool); err != nil {
		return err
	}
	time.Sleep(time.Second)
	eAfter := countEvents(ctx, c, entities)
	res["raw_entity_events_per_action"] = round(float64(eAfter.total-eBefore.total) / rawN)
	res["raw_entity_workflow_tasks_per_action"] = round(float64(eAfter.tasks-eBefore.tasks) / rawN)

	root := fleet("bench-cost", 100, 10)
	if err := applyAndWait(ctx, c, root, time.Minute); err != nil {
		return err
	}
	targets := leafPaths(root)
	ids := []string{root.Name}
	for _, g := range root.Children {
		ids = append(ids, root.Name+"/"+g.Name)
	}
	ids = append(ids, targets...)
	time.Sleep(2 * time.Second) // let the last reports of the apply land
	before := countEvents(ctx, c, ids)
	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: workflows.RolloutID(root.Name), TaskQueue: workflows.TaskQueue},
		workflows.RolloutWorkflow, workflows.RolloutInput{Path: root.Name, Op: workflows.RolloutRestart, Targets: targets, Chunk: 10})
	if err != nil {
		return err
	}
	if err := run.Get(ctx, nil); err != nil {
		return err
	}
	time.Sleep(2 * time.Second) // reports after the rollout's end
	after := countEvents(ctx, c, append(ids, workflows.RolloutID(root.Name)))
	n := float64(len(targets))
	res["steward_events_per_action"] = round(float64(after.total-before.total) / n)
	res["steward_workflow_tasks_per_action"] = round(float64(after.tasks-before.tasks) / n)
	byKind := map[string]float64{}
	for k, v := range after.byWorkflow {
		byKind[kindOf(k)] += float64(v - before.byWorkflow[k])
	}
	for k, v := range byKind {
		res["steward_events_per_action_"+k] = round(v / n)
	}
	types := map[string]float64{}
	for k, v := range after.byType {
		if d := v - before.byType[k]; d > 0 {
			types[k] = round(float64(d) / n)
		}
	}
	res["steward_event_types_per_action"] = types
	return nil
}

func kindOf(id string) string {
	switch {
	case strings.HasPrefix(id, "rollout:"):
		return "rollout"
	case strings.HasPrefix(id, "revisions:"), strings.HasPrefix(id, "revision:"):
		return "revisions"
	case strings.Count(id, "/") == 0:
		return "root"
	case strings.Count(id, "/") == 1:
		return "supervisor"
	}
	return "worker"
}

type eventCount struct {
	total, tasks int
	byWorkflow   map[string]int
	byType       map[string]int
}

// countEvents counts the events of the current runs of ids.
func countEvents(ctx context.Context, c client.Client, ids []string) eventCount {
	out := eventCount{byWorkflow: map[string]int{}, byType: map[string]int{}}
	for _, id := range ids {
		it := c.GetWorkflowHistory(ctx, id, "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
		for it.HasNext() {
			e, err := it.Next()
			if err != nil {
				break
			}
			out.total++
			out.byWorkflow[id]++
			out.byType[strings.TrimPrefix(e.GetEventType().String(), "EVENT_TYPE_")]++
			if e.GetEventType() == enumspb.EVENT_TYPE_WORKFLOW_TASK_COMPLETED {
				out.tasks++
			}
		}
	}
	return out
}

// poolSaturated measures the pool's utilization while more actions wait
// than it has slots: 40 at a time, each taking 500 ms, against 10 slots
// (slow enough that the pool, not the server, is the limit).
// Raw: 40 workflows of 5 such activities; steward: one rollout restart, all
// at once, of 120 stub workers whose actions take 500 ms (one rollout: its
// chunk barriers would idle the pool between chunks).
func poolSaturated(ctx context.Context, c client.Client, res Result, metricsURL string) error {
	const n, ms, fleetN = 40, 500, 120
	// Drop the ramp-up and the tail: the first and last 10 %.
	trimmedMean := func(v []float64) float64 { k := len(v) / 10; return round(mean(v[k : len(v)-k])) }
	stop := sampling(100*time.Millisecond, rawPoolUtilization)
	if err := rawLoopsOf(ctx, c, "raw-pool", n, RawInput{N: 5, Eager: rawEager, Ms: ms}); err != nil {
		return err
	}
	res["raw_pool_utilization_under_load"] = trimmedMean(stop())

	root := spec.Node{Name: "bench-pool"}
	for i := range fleetN {
		root.Children = append(root.Children, spec.Node{Name: fmt.Sprintf("w%03d", i), Kind: spec.KindStub,
			Stub: &spec.Stub{Delay: spec.Duration(ms * time.Millisecond)}, Observe: &spec.Observe{Interval: spec.Dur(time.Hour)}})
	}
	if err := applyAndWait(ctx, c, root, 5*time.Minute); err != nil {
		return err
	}
	targets := leafPaths(root)
	stop = sampling(100*time.Millisecond, stewardPoolUtilization(metricsURL))
	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: workflows.RolloutID(root.Name), TaskQueue: workflows.TaskQueue},
		workflows.RolloutWorkflow, workflows.RolloutInput{Path: root.Name, Op: workflows.RolloutRestart, Targets: targets, Chunk: fleetN})
	if err != nil {
		return err
	}
	if err := run.Get(ctx, nil); err != nil {
		return err
	}
	res["pool_utilization_under_load"] = trimmedMean(stop())
	return nil
}

// sampling reads a value every period until stop, which returns what it
// read (a read that fails is skipped).
func sampling(every time.Duration, read func() (float64, bool)) (stop func() []float64) {
	done := make(chan struct{})
	out := make(chan []float64)
	go func() {
		var v []float64
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-done:
				out <- v
				return
			case <-t.C:
				if x, ok := read(); ok {
					v = append(v, x)
				}
			}
		}
	}()
	return func() []float64 { close(done); return <-out }
}

// rawPoolUtilization is the share of the raw side's slots busy now.
func rawPoolUtilization() (float64, bool) { return float64(rawInFlight.Load()) / pool, true }

// stewardPoolUtilization reads the steward worker's pool gauge.
func stewardPoolUtilization(metricsURL string) func() (float64, bool) {
	return func() (float64, bool) {
		return gaugeValue(scraper(metricsURL), "steward_worker_pool_utilization", `task_queue="steward"`)
	}
}

func latency(ctx context.Context, c client.Client, o options, res Result) error {
	// Raw.
	run, err := rawStart(ctx, c, "raw-signal", RawOnSignal, RawInput{N: o.samples, Eager: rawEager})
	if err != nil {
		return err
	}
	for i := range o.samples {
		if err := c.SignalWorkflow(ctx, "raw-signal", "", "go", nil); err != nil {
			return err
		}
		waitFor(func() bool {
			v, err := c.QueryWorkflow(ctx, "raw-signal", "", "done")
			var n int
			return err == nil && v.Get(&n) == nil && n >= i+1
		})
	}
	if err := run.Get(ctx, nil); err != nil {
		return err
	}
	raw := signalToStart(ctx, c, "raw-signal", "")
	// steward: restart signals to one stub worker.
	w := spec.Node{Name: "bench-signal", Children: []spec.Node{{Name: "w", Kind: spec.KindStub, Observe: &spec.Observe{Interval: spec.Dur(time.Hour)}}}}
	if err := applyAndWait(ctx, c, w, time.Minute); err != nil {
		return err
	}
	for i := range o.samples {
		if err := c.SignalWorkflow(ctx, "bench-signal/w", "", workflows.SignalRestart, nil); err != nil {
			return err
		}
		waitFor(func() bool {
			st, err := query(ctx, c, "bench-signal/w")
			return err == nil && st.ManualRestarts >= i+1 && st.State == "running"
		})
	}
	steward := signalToStart(ctx, c, "bench-signal/w", "restart")
	res["raw_signal_to_activity_p50_ms"], res["raw_signal_to_activity_p99_ms"] = pct(raw, 50), pct(raw, 99)
	res["steward_signal_to_action_p50_ms"], res["steward_signal_to_action_p99_ms"] = pct(steward, 50), pct(steward, 99)
	res["latency_samples"] = min(len(raw), len(steward))
	res["latency_ratio_p99"] = ratio(res["steward_signal_to_action_p99_ms"], res["raw_signal_to_activity_p99_ms"])
	return nil
}

func maxHistory(ctx context.Context, c client.Client, o options, res Result) error {
	longest := 0
	for _, p := range leafPaths(fleet("bench-fleet", o.fleet, 20)) {
		d, err := c.DescribeWorkflowExecution(ctx, p, "")
		if err != nil {
			return err
		}
		longest = max(longest, int(d.GetWorkflowExecutionInfo().GetHistoryLength()))
	}
	res["max_history_events"] = longest
	return nil
}

func applyAndIdle(ctx context.Context, c client.Client, o options, res Result, workerPid int) error {
	// Raw: n workflows that each run one activity.
	began := time.Now()
	cpu := cpuMeter(o.serverPid, os.Getpid())
	if err := rawLoops(ctx, c, "raw-one", o.idle, 1); err != nil {
		return err
	}
	rawSecs := time.Since(began).Seconds()
	res[fmt.Sprintf("raw_start_%d_seconds", o.idle)] = round(rawSecs)
	cpu(res, "raw_start_%s_cpu_seconds")
	// steward: a tree of n stub workers until all run.
	began = time.Now()
	cpu = cpuMeter(o.serverPid, workerPid)
	if err := applyAndWait(ctx, c, fleet("bench-idle", o.idle, 50), 30*time.Minute); err != nil {
		return err
	}
	secs := time.Since(began).Seconds()
	cpu(res, "apply_%s_cpu_seconds")
	res[fmt.Sprintf("apply_%d_seconds", o.idle)] = round(secs)
	res["apply_ratio"] = round(secs / rawSecs)
	// The fair floor: raw child workflows in the same tree shape.
	treeTook, err := rawTreeStart(ctx, c, "raw-tree", o.idle, 50)
	if err != nil {
		return err
	}
	res[fmt.Sprintf("raw_children_start_%d_seconds", o.idle)] = round(treeTook.Seconds())
	res["apply_ratio_children"] = round(secs / treeTook.Seconds())
	// What each started worker cost the server, beside a raw workflow.
	var rawIDs []string
	for i := range o.idle {
		rawIDs = append(rawIDs, fmt.Sprintf("raw-one-%d", i))
	}
	tree := fleet("bench-idle", o.idle, 50)
	ids := []string{tree.Name}
	for _, g := range tree.Children {
		ids = append(ids, tree.Name+"/"+g.Name)
	}
	ids = append(ids, leafPaths(tree)...)
	rc, sc := countEvents(ctx, c, rawIDs), countEvents(ctx, c, ids)
	res["raw_start_events_per_workflow"] = round(float64(rc.total) / float64(o.idle))
	res["apply_events_per_worker"] = round(float64(sc.total) / float64(o.idle))
	res["apply_workflow_tasks_per_worker"] = round(float64(sc.tasks) / float64(o.idle))
	byKind := map[string]float64{}
	for id, n := range sc.byWorkflow {
		byKind[kindOf(id)] += float64(n)
	}
	res["apply_events_per_worker_by_kind"] = map[string]float64{"root": round(byKind["root"] / float64(o.idle)),
		"supervisor": round(byKind["supervisor"] / float64(o.idle)), "worker": round(byKind["worker"] / float64(o.idle))}
	// Idle CPU: let the start-up settle, then measure.
	time.Sleep(10 * time.Second)
	serverPid := o.serverPid
	w0, s0 := cpuSeconds(workerPid), cpuSeconds(serverPid)
	time.Sleep(o.idleFor)
	w1, s1 := cpuSeconds(workerPid), cpuSeconds(serverPid)
	res[fmt.Sprintf("idle_worker_cpu_percent_%d", o.idle)] = round(100 * (w1 - w0) / o.idleFor.Seconds())
	if serverPid > 0 {
		res[fmt.Sprintf("idle_server_cpu_percent_%d", o.idle)] = round(100 * (s1 - s0) / o.idleFor.Seconds())
	}
	return applySigned(ctx, c, o, res)
}

// applySigned is the apply of the same tree signed by an operator's key
// (signing included, as `starter apply --sign-key` does it) beside another
// unsigned one, each with the same trees present: apply_signed_ratio.
func applySigned(ctx context.Context, c client.Client, o options, res Result) error {
	_, key, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return err
	}
	began := time.Now()
	if err := applyAndWait(ctx, c, fleet("bench-unsigned", o.idle, 50), 30*time.Minute); err != nil {
		return err
	}
	unsigned := time.Since(began).Seconds()
	began = time.Now()
	signed, err := admission.SignTree(key, fleet("bench-signed", o.idle, 50), time.Now().UnixMilli(), nil)
	if err != nil {
		return err
	}
	res[fmt.Sprintf("sign_%d_ms", o.idle)] = ms(time.Since(began))
	if err := applyAndWait(ctx, c, signed, 30*time.Minute); err != nil {
		return err
	}
	secs := time.Since(began).Seconds()
	res[fmt.Sprintf("apply_unsigned_%d_seconds", o.idle)] = round(unsigned)
	res[fmt.Sprintf("apply_signed_%d_seconds", o.idle)] = round(secs)
	res["apply_signed_ratio"] = round(secs / unsigned)
	return nil
}

// ---- helpers ----

// cpuMeter reads the CPU time of the server and of a worker process now;
// the function it returns records what each spent since, under key (with
// %s for "server" and "worker"). The server's is left out when its PID is
// unknown.
func cpuMeter(serverPid, workerPid int) func(res Result, key string) {
	s0, w0 := cpuSeconds(serverPid), cpuSeconds(workerPid)
	return func(res Result, key string) {
		if serverPid > 0 {
			res[fmt.Sprintf(key, "server")] = round(cpuSeconds(serverPid) - s0)
		}
		res[fmt.Sprintf(key, "worker")] = round(cpuSeconds(workerPid) - w0)
	}
}

func fleet(name string, n, per int) spec.Node {
	root := spec.Node{Name: name, Intensity: &spec.Intensity{MaxRestarts: 1000, Period: spec.Dur(time.Minute)}}
	for g := 0; g*per < n; g++ {
		sup := spec.Node{Name: fmt.Sprintf("g%02d", g)}
		for i := g * per; i < min(n, (g+1)*per); i++ {
			sup.Children = append(sup.Children, spec.Node{Name: fmt.Sprintf("w%04d", i), Kind: spec.KindStub,
				Observe: &spec.Observe{Interval: spec.Dur(time.Hour)}})
		}
		root.Children = append(root.Children, sup)
	}
	return root
}

func leafPaths(root spec.Node) []string {
	var out []string
	var walk func(prefix string, n spec.Node)
	walk = func(prefix string, n spec.Node) {
		p := n.Name
		if prefix != "" {
			p = prefix + "/" + n.Name
		}
		if !n.IsSupervisor() {
			out = append(out, p)
			return
		}
		for _, ch := range n.Children {
			walk(p, ch)
		}
	}
	walk("", root)
	return out
}

func applyAndWait(ctx context.Context, c client.Client, root spec.Node, within time.Duration) error {
	_, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: root.Name, TaskQueue: workflows.TaskQueue},
		workflows.SupervisorWorkflow, workflows.SupervisorInput{Path: root.Name, Spec: root, Generation: 1})
	if err != nil {
		return err
	}
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) {
		if st, err := treestatus.Assemble(ctx, root.Name, func(ctx context.Context, id string) (workflows.Status, error) {
			return query(ctx, c, id)
		}, treestatus.Options{}); err == nil {
			if at, total := st.AtDesired(); at == total && total == root.Workers() {
				return nil
			}
		}
		time.Sleep(250 * time.Millisecond)
	}
	return fmt.Errorf("%s: not all running within %s", root.Name, within)
}

func query(ctx context.Context, c client.Client, id string) (workflows.Status, error) {
	var st workflows.Status
	v, err := c.QueryWorkflow(ctx, id, "", workflows.QueryStatus)
	if err == nil {
		err = v.Get(&st)
	}
	return st, err
}

func waitFor(cond func() bool) {
	deadline := time.Now().Add(time.Minute)
	for !cond() && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
}

// signalToStart pairs each signal with the start of the next activity
// (of the given type, "" for any) and returns the delays in ms, from the
// server's own event times. A workflow that continued as new is followed
// through its runs.
func signalToStart(ctx context.Context, c client.Client, id, activityType string) []float64 {
	var out []float64
	var pending time.Time
	scheduled := map[int64]string{}
	for _, e := range allRuns(ctx, c, id) {
		switch e.GetEventType() {
		case enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED:
			if pending.IsZero() {
				pending = e.GetEventTime().AsTime()
			}
		case enumspb.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
			scheduled[e.GetEventId()] = e.GetActivityTaskScheduledEventAttributes().GetActivityType().GetName()
		case enumspb.EVENT_TYPE_ACTIVITY_TASK_STARTED:
			name := scheduled[e.GetActivityTaskStartedEventAttributes().GetScheduledEventId()]
			if !pending.IsZero() && (activityType == "" || strings.HasSuffix(strings.ToLower(name), activityType)) {
				out = append(out, float64(e.GetEventTime().AsTime().Sub(pending).Microseconds())/1000)
				pending = time.Time{}
			}
		}
	}
	return out
}

func allRuns(ctx context.Context, c client.Client, id string) []*historypb.HistoryEvent {
	// The current run's history follows continue-as-new back through the
	// first run ID in its chain: walk from the first execution forward.
	var out []*historypb.HistoryEvent
	d, err := c.DescribeWorkflowExecution(ctx, id, "")
	if err != nil {
		return nil
	}
	first := d.GetWorkflowExecutionInfo().GetFirstRunId()
	runID := first
	for runID != "" {
		it := c.GetWorkflowHistory(ctx, id, runID, false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
		next := ""
		for it.HasNext() {
			e, err := it.Next()
			if err != nil {
				break
			}
			out = append(out, e)
			if a := e.GetWorkflowExecutionContinuedAsNewEventAttributes(); a != nil {
				next = a.GetNewExecutionRunId()
			}
		}
		runID = next
	}
	return out
}
