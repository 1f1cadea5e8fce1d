// Command bench measures steward side by side with raw Temporal on one dev
// server (`make bench`): the same pool size, the same server, in one run, so
// that the ratios mean something on a noisy machine. It prints a table with
// the goals beside the figures and writes bench/<timestamp>.json.
//
// Scenarios (each on its own task queue; see docs/benchmarks.md; -only
// runs some of them):
//   - cost: the history events and workflow tasks one action costs the
//     server on each side, summed over every workflow involved (raw: one
//     workflow of 100 activities, and 100 raw entities of one signalled
//     action each in chunks of 10; steward: one rollout restart of 100
//     workers in 10 supervisors under a root at chunk 10, the rollout
//     included).
//   - throughput: raw, 10 workflows running 200 no-op activities each; raw
//     entities, 100 workflows that run one no-op activity per signal,
//     driven 20 rounds in chunks of 10 with a barrier (as rollouts drive
//     steward); steward, 20 rollout restarts of 100 stub workers (delay 0)
//     at chunk 10: 2,000 actions each way, pool size 10. With it the
//     server's CPU per action.
//   - signal to action: a signal, then the start of the activity it causes,
//     from the server's own event times in the history (300 samples each).
//   - history: the longest worker history after the restarts.
//   - pool: the pool's utilization while saturated (40 or more actions of
//     500 ms at a time against 10 slots), each side.
//   - apply 1,000: a tree of 1,000 stub workers until all run, beside 1,000
//     raw workflows that each run one activity, and beside a raw tree of
//     child workflows of the same shape (a root, groups of 50, leaves that
//     each run one activity and tell their parent: apply_ratio_children),
//     with the events each cost;
//     then CPU over 60 s with the 1,000 idle.
//   - scale: a 100-worker tree applied and rolled out twice (other trees
//     first, as on an operator's server), -scale (10,000) raw workflows of
//     one activity, then a tree of as many stub workers, 100 supervisors
//     of 100, applied with `starter apply --wait` while `starter status`
//     reads it every 10 s (each call must answer within 10 s); the
//     whole tree's status assembled both ways (supervisors only, starter
//     status's default above 1,000 workers, and every worker asked); the
//     largest history event of the root and of a group; the worker's
//     memory; one rollout restart of all at chunk 200; idle CPU of worker
//     and server over -idle-for.
//   - upgrade: the worker and starter of the last release (5b9cb0e, built
//     from this repository's history) apply a tree of 1,000 stub workers;
//     the worker is replaced by this build and `starter upgrade --wait`
//     moves every workflow onto it: how long it took, and how many
//     services restarted (their instance or restart counts changed).
//   - update: a spec change of 1,000 stub workers under one supervisor at
//     maxParallel 50 (`starter apply --wait`) against a rollout restart of
//     them at chunk 50, the most workers down at once, and a bad change of
//     100 workers at maxParallel 10 with autoRevert: how long until
//     reverted, and how many workers it reached.
//   - kill: a process service (sleep, backoff 100ms) killed with -9, -kills
//     (20) times: how long until it runs again (a new instance, read by
//     query), for a process the worker started; then -kills services,
//     adopted by a worker started after a kill -9 of the one that started
//     them (after the server's 5 s sticky timeout), each killed once.
//     Run last: it restarts the steward worker (the task latencies are
//     read before it).
//   - workflow task latency p99 (the SDK's histogram) for both sides, and
//     per steward workflow type.
//   - through every step: the oldest task of steward's shared workflow
//     queue, sampled every 2 s (max_workflow_backlog_age_seconds; a starved
//     queue's waited minutes).
//
// -eager turns on eager activity dispatch on both sides (the server's
// dynamic config, the raw worker, and the steward worker's --eager-actions).
//
// -address runs the same scenarios against a server that already runs (a
// cluster of scripts/cluster.sh, say) instead of a dev server of its own:
// the server's CPU is measured only with -server-pid, and the bench
// terminates the workflows of its runs there, before and after.
package main

import (
	"bufio"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/steward-sh/steward/internal/admission"
	"github.com/steward-sh/steward/internal/spec"
	"github.com/steward-sh/steward/internal/telemetry"
	"github.com/steward-sh/steward/internal/temporalclient"
	"github.com/steward-sh/steward/internal/treestatus"
	"github.com/steward-sh/steward/workflows"
)

const (
	rawQueue = "bench-raw"
	pool     = 10
)

type options struct {
	temporal, workerBin, out    string
	starterBin                  string
	address, namespace          string
	addr, ns                    string // the server the bench runs on
	serverPid                   int
	fleet, idle, samples, scale int
	kills                       int
	only, compression           string
	workerArgs                  string
	eager                       bool
	idleFor                     time.Duration
}

func main() {
	var o options
	flag.StringVar(&o.temporal, "temporal", "bin/temporal", "the Temporal CLI (dev server)")
	flag.StringVar(&o.workerBin, "worker", "bin/worker", "the steward worker binary")
	flag.StringVar(&o.starterBin, "starter", "bin/starter", "the steward starter binary (the scale step applies and reads its tree with it)")
	flag.StringVar(&o.out, "out", "bench/results", "directory for the JSON result")
	flag.StringVar(&o.address, "address", "", "run against this Temporal server (host:port) instead of a dev server of its own; the bench ends what it started there")
	flag.StringVar(&o.namespace, "namespace", "default", "the namespace (with -address)")
	flag.IntVar(&o.serverPid, "server-pid", 0, "with -address: the server's PID, for its CPU (scripts/cluster.sh writes it to <cluster dir>/server.pid); 0: not measured")
	flag.IntVar(&o.fleet, "fleet", 100, "stub workers restarted by rollouts for the throughput")
	flag.IntVar(&o.idle, "idle", 1000, "workers of the apply and idle scenarios")
	flag.IntVar(&o.scale, "scale", 10000, "stub workers of the scale scenario (groups of 100)")
	flag.IntVar(&o.samples, "samples", 300, "signal-to-action samples each way")
	flag.IntVar(&o.kills, "kills", 20, "kill -9 samples of a process service, own and adopted")
	flag.DurationVar(&o.idleFor, "idle-for", 60*time.Second, "how long the idle CPU is measured")
	flag.StringVar(&o.only, "only", "", "run only these steps (comma-separated: cost,throughput,latency,history,pool,apply,scale,upgrade,update,failover,drain,console,controls,kill); the goals of steps not run show as missing")
	flag.BoolVar(&o.eager, "eager", false, "eager activity dispatch on both sides (the server's system.enableActivityEagerExecution, the raw worker's and the steward worker's --eager-actions)")
	flag.StringVar(&o.workerArgs, "worker-args", "", "more flags for every steward worker the bench starts, space-separated (an A/B run of a worker setting: -worker-args '--sticky-timeout 5s')")
	flag.StringVar(&o.compression, "grpc-compression", "gzip", "compression of gRPC requests on both sides: gzip (the SDK's default) or none")
	flag.Parse()
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

// Result is the JSON written to bench/<timestamp>.json.
type Result map[string]any

// rawEager: the raw workflows request eager dispatch (-eager).
var rawEager bool

func run(o options) error {
	rawEager = o.eager
	ctx := context.Background()
	addr, ns := o.address, o.namespace
	if addr == "" {
		server, err := testsuite.StartDevServer(ctx, testsuite.DevServerOptions{
			ExistingPath: o.temporal, LogLevel: "error",
			ClientOptions: &client.Options{Logger: quiet{}},
			ExtraArgs: []string{
				"--sqlite-pragma", "journal_mode=wal", "--sqlite-pragma", "synchronous=normal",
				"--dynamic-config-value", "history.transferProcessorMaxPollRPS=1000",
				"--dynamic-config-value", "history.timerProcessorMaxPollRPS=1000",
				"--dynamic-config-value", "history.timerProcessorMaxTimeShift=\"100ms\"",
				"--dynamic-config-value", "matching.numTaskqueueReadPartitions=1",
				"--dynamic-config-value", "matching.numTaskqueueWritePartitions=1",
				"--dynamic-config-value", fmt.Sprintf("system.enableActivityEagerExecution=%t", o.eager),
			},
		})
		if err != nil {
			return fmt.Errorf("dev server: %w", err)
		}
		defer server.Stop()
		addr, ns = server.FrontendHostPort(), "default"
		o.serverPid = devServerPid()
	}
	o.addr, o.ns = addr, ns
	c, _, err := temporalclient.Dial(temporalclient.Config{Address: addr, Namespace: ns, Compression: o.compression}, quiet{}, nil)
	if err != nil {
		return err
	}
	defer c.Close()
	if err := temporalclient.EnsureSearchAttributes(ctx, c, ns, workflows.SearchAttributeNames); err != nil {
		return err
	}
	if o.address != "" {
		// A server of its own dies with the bench; a shared one keeps what
		// the bench started unless it is ended: before (a run that was
		// interrupted) and after.
		if err := endBenchWorkflows(ctx, c); err != nil {
			return err
		}
	}

	// The raw side: a worker in this process, on its own queue, with the
	// same pool size and its own metrics.
	rawMetrics := telemetry.NewMetrics(func(error) {})
	defer rawMetrics.Close()
	rawAddr, err := rawMetrics.Serve("127.0.0.1:0")
	if err != nil {
		return err
	}
	rawMetricsURL := "http://" + rawAddr.String() + "/metrics"
	// Its client keeps the SDK's defaults where steward's worker does not
	// (the payload walk: temporalclient.PayloadVisitInline).
	rawClient, _, err := temporalclient.Dial(temporalclient.Config{Address: addr, Namespace: ns, Compression: o.compression}, quiet{}, rawMetrics.Handler)
	if err != nil {
		return err
	}
	defer rawClient.Close()
	// The raw worker polls as steward's does by default (autoscaling
	// workflow pollers, docs/operations.md "Workflow pollers"): with the
	// SDK's mixed pollers its raw tree of 1,000 child workflows took 16 s in
	// one run and 80 s in the next (the shared queue starved), which no
	// ratio can be read against.
	rw := worker.New(rawClient, rawQueue, worker.Options{MaxConcurrentActivityExecutionSize: pool, DisableEagerActivities: !o.eager,
		WorkflowTaskPollerBehavior: worker.NewPollerBehaviorAutoscaling(worker.PollerBehaviorAutoscalingOptions{
			InitialNumberOfPollers: 5, MinimumNumberOfPollers: 1, MaximumNumberOfPollers: 10})})
	rw.RegisterWorkflow(RawLoop)
	rw.RegisterWorkflow(RawOnSignal)
	rw.RegisterWorkflow(RawOnUpdate)
	rw.RegisterWorkflow(RawOnSignalReply)
	rw.RegisterWorkflow(RawReplyRollout)
	rw.RegisterWorkflow(RawTree)
	rw.RegisterWorkflow(RawGroup)
	rw.RegisterWorkflow(RawLeaf)
	rw.RegisterActivityWithOptions(Noop, activity.RegisterOptions{Name: "noop"})
	rw.RegisterActivityWithOptions(rawSignaller{rawClient}.SignalAll, activity.RegisterOptions{Name: "signalAll"})
	if err := rw.Start(); err != nil {
		return err
	}
	defer rw.Stop()

	// The steward side: the real worker binary.
	metricsAddr, err := freePort()
	if err != nil {
		return err
	}
	stateDir, err := os.MkdirTemp("", "steward-bench-state-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(stateDir)
	wargs := []string{"--address", addr, "--namespace", ns, "--pool-size", strconv.Itoa(pool), "--metrics", metricsAddr, "--log-level", "error", "--grpc-compression", o.compression,
		"--state-dir", stateDir}
	if o.eager {
		wargs = append(wargs, "--eager-actions")
	}
	wargs = append(wargs, strings.Fields(o.workerArgs)...)
	wcmd := exec.Command(o.workerBin, wargs...)
	wcmd.Stdout, wcmd.Stderr = os.Stderr, os.Stderr
	if err := wcmd.Start(); err != nil {
		return err
	}
	defer func() { _ = wcmd.Process.Signal(os.Interrupt); _ = wcmd.Wait() }()
	// swapWorker ends the worker (with -9 when kill is set, else as an
	// operator stops it) and starts bin in its place, with the same flags
	// and state directory: the kill step's adopted processes, the upgrade
	// step's older build.
	swapWorker := func(bin string, kill bool) error {
		if kill {
			_ = wcmd.Process.Kill()
		} else {
			_ = wcmd.Process.Signal(os.Interrupt)
		}
		_ = wcmd.Wait()
		next := exec.Command(bin, wargs...)
		next.Stdout, next.Stderr = os.Stderr, os.Stderr
		if err := next.Start(); err != nil {
			return err
		}
		wcmd = next
		return nil
	}
	restartWorker := func() error { return swapWorker(o.workerBin, true) }
	if o.address != "" {
		// Deferred after the worker's stop, so run before it.
		defer func() {
			if err := endBenchWorkflows(context.Background(), c); err != nil {
				fmt.Fprintln(os.Stderr, "bench: ending its workflows:", err)
			}
		}()
	}
	stewardMetrics := "http://" + metricsAddr + "/metrics"

	res := Result{"pool_size": pool, "date": time.Now().UTC().Format(time.RFC3339), "eager": o.eager, "grpc_compression": o.compression, "server": serverKind(o), "worker_args": o.workerArgs}
	step := func(name string, f func() error) error {
		fmt.Fprintf(os.Stderr, "bench: %s...\n", name)
		began := time.Now()
		err := f()
		fmt.Fprintf(os.Stderr, "bench: %s done in %s\n", name, time.Since(began).Round(100*time.Millisecond))
		return err
	}
	steps := []struct {
		key, name string
		f         func() error
	}{
		{"cost", "events and workflow tasks per action", func() error { return costPerAction(ctx, c, res) }},
		{"throughput", "throughput", func() error { return throughput(ctx, c, o, res, stewardMetrics, rawMetricsURL, wcmd.Process.Pid) }},
		{"latency", "signal to action", func() error { return latency(ctx, c, o, res) }},
		{"history", "history", func() error { return maxHistory(ctx, c, o, res) }},
		{"pool", "pool saturated", func() error { return poolSaturated(ctx, c, res, stewardMetrics) }},
		{"apply", "apply and idle", func() error { return applyAndIdle(ctx, c, o, res, wcmd.Process.Pid) }},
		{"scale", "scale", func() error { return scale(ctx, c, o, res, wcmd.Process.Pid, scraper(stewardMetrics)) }},
		{"upgrade", "upgrade from the last release", func() error { return upgradeStep(ctx, c, o, res, swapWorker) }},
		{"update", "rolling updates: a change of 1,000 workers, a bad change reverted", func() error { return updateStep(ctx, c, o, res) }},
		{"failover", "fleets: a host's loss to its instances running elsewhere", func() error { return failoverStep(ctx, c, o, res) }},
		{"drain", "fleets: a drain of 100 instances at maxParallel 10", func() error { return drainStep(ctx, c, o, res) }},
		{"console", "the web console in Chromium", func() error { return consoleStep(ctx, c, o, res) }},
		{"controls", "process controls: reload, usage sampling, out of memory", func() error { return controlsStep(ctx, c, o, res) }},
		{"kill", "kill -9 to running again", func() error { return killToRestart(ctx, c, o, res, restartWorker) }},
	}
	// The workflow task latencies, read before the kill step: it restarts
	// the steward worker, whose new process would count only its replays.
	tickRead := false
	readTicks := func() {
		if tickRead {
			return
		}
		tickRead = true
		res["raw_tick_p99_ms"] = p99ms(scraper(rawMetricsURL), taskLatency, "")
		res["tick_p99_ms"] = p99ms(scraper(stewardMetrics), taskLatency, "")
		res["tick_ratio_p99"] = ratio(res["tick_p99_ms"], res["raw_tick_p99_ms"])
		for _, wt := range []string{"WorkerWorkflow", "SupervisorWorkflow", "RolloutWorkflow"} {
			res["tick_p99_ms_"+wt] = p99ms(scraper(stewardMetrics), taskLatency, `workflow_type="`+wt+`"`)
		}
		// Tasks of workflows not in the worker's cache replay their whole
		// history (the worker's --workflow-cache).
		res["steward_sticky_cache_misses"] = sumOf(scraper(stewardMetrics), "temporal_sticky_cache_miss_total", "")
		res["steward_sticky_cache_forced_evictions"] = sumOf(scraper(stewardMetrics), "temporal_sticky_cache_total_forced_eviction_total", "")
	}
	// The shared workflow queue's backlog age through every step (issue
	// 25: a starved queue's oldest task waited minutes).
	// Each step's largest age too, to name the step that holds the goal.
	var backlogMu sync.Mutex
	backlogStep, backlogByStep := "", map[string]float64{}
	ticksByStep := map[string]float64{}
	stopBacklog := sampling(2*time.Second, func() (float64, bool) {
		qctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		h, err := telemetry.DescribeQueue(qctx, c, ns, workflows.TaskQueue, enumspb.TASK_QUEUE_TYPE_WORKFLOW)
		if err == nil {
			backlogMu.Lock()
			backlogByStep[backlogStep] = max(backlogByStep[backlogStep], round(h.BacklogAge.Seconds()))
			backlogMu.Unlock()
		}
		return h.BacklogAge.Seconds(), err == nil
	})
	for _, s := range steps {
		if o.only != "" && !slices.Contains(strings.Split(o.only, ","), s.key) {
			continue
		}
		if s.key == "kill" {
			readTicks()
		}
		backlogMu.Lock()
		backlogStep = s.key
		backlogMu.Unlock()
		// Each step's workflow task p99 (the worker process of the kill
		// step is a new one: its histograms start again).
		var ticks func() float64
		if s.key != "kill" {
			ticks = histogramWindow(scraper(stewardMetrics), taskLatency, "")
		}
		if err := step(s.name, s.f); err != nil {
			return err
		}
		if ticks != nil {
			if v := ticks(); !math.IsNaN(v) {
				ticksByStep[s.key] = v
			}
		}
	}
	if len(ticksByStep) > 0 {
		res["tick_p99_ms_by_step"] = ticksByStep
	}
	readTicks()
	if ages := stopBacklog(); len(ages) > 0 {
		res["max_workflow_backlog_age_seconds"] = round(slices.Max(ages))
		res["max_workflow_backlog_age_seconds_by_step"] = backlogByStep
	}
	if o.serverPid == 0 { // not measured: missing, not zero
		for k := range res {
			if strings.Contains(k, "server_cpu") {
				delete(res, k)
			}
		}
	}
	return report(o, res)
}

// serverKind names the server a result was measured on.
func serverKind(o options) string {
	if o.address == "" {
		return "dev server"
	}
	return "existing server at " + o.address + ", namespace " + o.namespace
}

// endBenchWorkflows ends, on a shared server, what a bench run started:
// every running workflow of its trees and rollouts (IDs bench-..., rollout:bench-...)
// and its raw workflows (types of its own) is terminated. Its trees hold
// stub workers only (nothing outside Temporal to stop), and terminating is
// far quicker than a tree's orderly stop of 10,000 workers.
func endBenchWorkflows(ctx context.Context, c client.Client) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Minute)
	defer cancel()
	const query = "ExecutionStatus='Running' AND (WorkflowType='RawLoop' OR WorkflowType='RawOnSignal' OR WorkflowType='RawOnUpdate' OR WorkflowType='RawOnSignalReply' OR WorkflowType='RawReplyRollout'" +
		" OR WorkflowId STARTS_WITH 'bench-' OR WorkflowId STARTS_WITH 'rollout:bench-')"
	for ended := 0; ; {
		page, err := c.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{Query: query, PageSize: 1000})
		if err != nil {
			return err
		}
		if len(page.Executions) == 0 {
			if ended > 0 {
				fmt.Fprintf(os.Stderr, "bench: ended %d workflows of bench runs\n", ended)
			}
			return nil
		}
		for _, e := range page.Executions {
			err := c.TerminateWorkflow(ctx, e.Execution.WorkflowId, e.Execution.RunId, "bench: ended")
			var nf *serviceerror.NotFound
			if err != nil && !errors.As(err, &nf) {
				return err
			}
			ended++
		}
		time.Sleep(time.Second) // visibility catches up
	}
}

// ---- raw Temporal ----

// rawInFlight counts the raw side's activities running now.
var rawInFlight atomic.Int64

// rawDone counts the raw side's activities that ended.
var rawDone atomic.Int64

// Noop is the raw side's activity; it sleeps ms milliseconds (0: none).
func Noop(ctx context.Context, ms int) error {
	rawInFlight.Add(1)
	defer rawInFlight.Add(-1)
	defer rawDone.Add(1)
	if ms > 0 {
		select {
		case <-ctx.Done():
		case <-time.After(time.Duration(ms) * time.Millisecond):
		}
	}
	return nil
}

// RawInput is the input of the raw workflows.
type RawInput struct {
	N     int  // activities (RawLoop) or signals (RawOnSignal)
	Eager bool // request eager dispatch
	Ms    int  // how long each activity takes, in ms (0: a no-op)
}

// RawLoop runs N no-op activities one after the other.
func RawLoop(ctx workflow.Context, in RawInput) error {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: time.Minute, DisableEagerExecution: !in.Eager})
	for range in.N {
		if err := workflow.ExecuteActivity(ctx, "noop", in.Ms).Get(ctx, nil); err != nil {
			return err
		}
	}
	return nil
}

// RawOnSignal runs a no-op activity for each "go" signal, N times; its
// "done" query says how many ran.
func RawOnSignal(ctx workflow.Context, in RawInput) error {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: time.Minute, DisableEagerExecution: !in.Eager})
	done := 0
	if err := workflow.SetQueryHandler(ctx, "done", func() (int, error) { return done, nil }); err != nil {
		return err
	}
	ch := workflow.GetSignalChannel(ctx, "go")
	for range in.N {
		ch.Receive(ctx, nil)
		if err := workflow.ExecuteActivity(ctx, "noop", in.Ms).Get(ctx, nil); err != nil {
			return err
		}
		done++
	}
	return nil
}

// RawOnUpdate runs a no-op activity for each "go" Update, N times: the
// Update's handler runs the activity and returns once it is done, so the
// caller learns the action's end from the Update, as a rollout does from
// a steward worker. Two coroutines while an Update runs (the main one
// waiting, the handler), as in a steward worker: the raw floor of
// steward's protocol, beside RawOnSignal's floor of one action per
// signal.
func RawOnUpdate(ctx workflow.Context, in RawInput) error {
	opts := workflow.ActivityOptions{StartToCloseTimeout: time.Minute, DisableEagerExecution: !in.Eager}
	done := 0
	if err := workflow.SetUpdateHandler(ctx, "go", func(ctx workflow.Context) error {
		if err := workflow.ExecuteActivity(workflow.WithActivityOptions(ctx, opts), "noop", in.Ms).Get(ctx, nil); err != nil {
			return err
		}
		done++
		return nil
	}); err != nil {
		return err
	}
	return workflow.Await(ctx, func() bool { return done >= in.N && workflow.AllHandlersFinished(ctx) })
}

// RawOnSignalReply runs a no-op activity for each "go" signal, N times,
// and answers each by a "done" signal to the workflow that sent it (its
// payload: that workflow's ID): the cheapest protocol by which a
// rollout learns an action's end without Update or polls, beside
// RawOnSignal (no answer) and RawOnUpdate (the answer by Update).
func RawOnSignalReply(ctx workflow.Context, in RawInput) error {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: time.Minute, DisableEagerExecution: !in.Eager})
	ch := workflow.GetSignalChannel(ctx, "go")
	for range in.N {
		var from string
		ch.Receive(ctx, &from)
		if err := workflow.ExecuteActivity(ctx, "noop", in.Ms).Get(ctx, nil); err != nil {
			return err
		}
		if err := workflow.SignalExternalWorkflow(ctx, from, "", "done", workflow.GetInfo(ctx).WorkflowExecution.ID).Get(ctx, nil); err != nil {
			return err
		}
	}
	return nil
}

// RawReplyRollout asks its targets, chunk at a time, by an activity that
// signals each (as steward's chunk activity asks its targets, so that the
// signals sent write no event here), and waits for every target's "done"
// signal before the next chunk: a rollout over RawOnSignalReply entities.
func RawReplyRollout(ctx workflow.Context, targets []string, chunk int) error {
	me := workflow.GetInfo(ctx).WorkflowExecution.ID
	done := workflow.GetSignalChannel(ctx, "done")
	// One attempt: a retry would signal some targets twice.
	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: time.Minute,
		RetryPolicy: &temporal.RetryPolicy{MaximumAttempts: 1}})
	for from := 0; from < len(targets); from += chunk {
		part := targets[from:min(from+chunk, len(targets))]
		if err := workflow.ExecuteActivity(actx, "signalAll", part, me).Get(ctx, nil); err != nil {
			return err
		}
		for range part {
			done.Receive(ctx, nil) // no timer here (its events would weigh); the driver's deadline
		}
	}
	return nil
}

// rawSignaller holds the raw side's signalling activity.
type rawSignaller struct{ c client.Client }

// SignalAll sends each of ids the "go" signal with from, the asking
// workflow's ID.
func (r rawSignaller) SignalAll(ctx context.Context, ids []string, from string) error {
	for _, id := range ids {
		if err := r.c.SignalWorkflow(ctx, id, "", "go", from); err != nil {
			return err
		}
	}
	return nil
}

// driveReplyEntities runs rounds RawReplyRollouts over the entities, one
// after the other, chunk entities at a time.
func driveReplyEntities(ctx context.Context, c client.Client, ids []string, rounds, chunk int) error {
	for i := range rounds {
		run, err := rawStart(ctx, c, fmt.Sprintf("raw-reply-rollout-%d", i), RawReplyRollout, ids, chunk)
		if err == nil {
			// a minute a chunk, as the other drivers allow
			rctx, cancel := context.WithTimeout(ctx, time.Duration(len(ids)/chunk+1)*time.Minute)
			err = run.Get(rctx, nil)
			cancel()
		}
		if err != nil {
			return fmt.Errorf("raw reply rollout %d: %w", i, err)
		}
	}
	return nil
}

// driveUpdateEntities sends every RawOnUpdate entity rounds Updates, chunk
// entities at a time, each waited for until its action ended: the next
// chunk goes once every Update of the one before returned (a rollout's
// chunk).
func driveUpdateEntities(ctx context.Context, c client.Client, ids []string, rounds, chunk int) error {
	return inChunks(ids, rounds, chunk, func(from int, part []string) error {
		errs := make([]error, len(part))
		var wg sync.WaitGroup
		for i, id := range part {
			wg.Go(func() {
				h, err := c.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{WorkflowID: id, UpdateName: "go",
					WaitForStage: client.WorkflowUpdateStageCompleted})
				if err == nil {
					err = h.Get(ctx, nil)
				}
				errs[i] = err
			})
		}
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			return fmt.Errorf("raw update entities: chunk at %d: %w", from, err)
		}
		return nil
	})
}

// inChunks calls drive with ids chunk at a time, rounds times over, one
// chunk after the other (drive returns once its chunk is done: a
// rollout's barrier); from is the chunk's first index.
func inChunks(ids []string, rounds, chunk int, drive func(from int, part []string) error) error {
	for range rounds {
		for from := 0; from < len(ids); from += chunk {
			if err := drive(from, ids[from:min(from+chunk, len(ids))]); err != nil {
				return err
			}
		}
	}
	return nil
}

// startEntities starts n raw entities (RawOnSignal) that each take signals
// signals, and returns their IDs.
func startEntities(ctx context.Context, c client.Client, prefix string, n, signals int) ([]string, error) {
	return startEntitiesOf(ctx, c, RawOnSignal, prefix, n, signals)
}

// startEntitiesOf starts n raw entities of workflow wf that each take
// calls calls, and returns their IDs.
func startEntitiesOf(ctx context.Context, c client.Client, wf any, prefix string, n, calls int) ([]string, error) {
	var ids []string
	for i := range n {
		id := fmt.Sprintf("%s-%d", prefix, i)
		if _, err := rawStart(ctx, c, id, wf, RawInput{N: calls, Eager: rawEager}); err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	return ids, nil
}

// driveQueryEntities sends every RawOnSignal entity rounds signals, chunk
// entities at a time, and learns each action's end by polling the
// entity's "done" query every queryPoll (no event; each poll a task on the
// entity's worker, counted in the same histogram, and a round trip
// through the server): the next chunk goes once every target of the one
// before answered.
func driveQueryEntities(ctx context.Context, c client.Client, ids []string, rounds, chunk int) error {
	asked := map[string]int{}
	return inChunks(ids, rounds, chunk, func(from int, part []string) error {
		errs := make([]error, len(part))
		var wg sync.WaitGroup
		for i, id := range part {
			asked[id]++
			want := asked[id]
			wg.Go(func() {
				if errs[i] = c.SignalWorkflow(ctx, id, "", "go", nil); errs[i] != nil {
					return
				}
				for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(queryPoll) {
					v, err := c.QueryWorkflow(ctx, id, "", "done")
					var done int
					if err == nil {
						err = v.Get(&done)
					}
					if err != nil || done >= want {
						errs[i] = err
						return
					}
				}
				errs[i] = fmt.Errorf("%s: not done within a minute", id)
			})
		}
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			return fmt.Errorf("raw query entities: chunk at %d: %w", from, err)
		}
		return nil
	})
}

// queryPoll is how often driveQueryEntities asks a target.
const queryPoll = 10 * time.Millisecond

// driveEntities sends every entity rounds signals, chunk entities at a
// time: the next chunk goes once every action of the one before has ended
// (the barrier of a rollout's chunks).
func driveEntities(ctx context.Context, c client.Client, ids []string, rounds, chunk int) error {
	return inChunks(ids, rounds, chunk, func(from int, part []string) error {
		want := rawDone.Load() + int64(len(part))
		for _, id := range part {
			if err := c.SignalWorkflow(ctx, id, "", "go", nil); err != nil {
				return err
			}
		}
		deadline := time.Now().Add(time.Minute)
		for rawDone.Load() < want {
			if time.Now().After(deadline) {
				return fmt.Errorf("raw entities: chunk at %d not done within a minute", from)
			}
			time.Sleep(time.Millisecond)
		}
		return nil
	})
}

// rawLoops starts n RawLoop workflows of per no-op activities each and
// waits for all of them.
func rawLoops(ctx context.Context, c client.Client, prefix string, n, per int) error {
	return rawLoopsOf(ctx, c, prefix, n, RawInput{N: per, Eager: rawEager})
}

func rawLoopsOf(ctx context.Context, c client.Client, prefix string, n int, in RawInput) error {
	var runs []client.WorkflowRun
	for i := range n {
		r, err := rawStart(ctx, c, fmt.Sprintf("%s-%d", prefix, i), RawLoop, in)
		if err != nil {
			return err
		}
		runs = append(runs, r)
	}
	for _, r := range runs {
		if err := r.Get(ctx, nil); err != nil {
			return err
		}
	}
	return nil
}

func rawStart(ctx context.Context, c client.Client, id string, wf any, args ...any) (client.WorkflowRun, error) {
	return c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: id, TaskQueue: rawQueue}, wf, args...)
}

// ---- scenarios ----

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

func pct(v []float64, p float64) float64 {
	if len(v) == 0 {
		return math.NaN()
	}
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	i := int(math.Ceil(p/100*float64(len(s)))) - 1
	return round(s[max(0, min(i, len(s)-1))])
}

func mean(v []float64) float64 {
	if len(v) == 0 {
		return math.NaN()
	}
	s := 0.0
	for _, x := range v {
		s += x
	}
	return s / float64(len(v))
}

func round(f float64) float64 { return math.Round(f*1000) / 1000 }

func ratio(a, b any) float64 {
	x, _ := a.(float64)
	y, _ := b.(float64)
	if y == 0 {
		return math.NaN()
	}
	return round(x / y)
}

func freePort() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

// ---- metrics ----

type family struct {
	name    string
	labels  string
	buckets []bucket
	value   float64
}

type bucket struct{ le, count float64 }

// taskLatency is the SDK's workflow task histogram: a task's time in the
// worker, from its poll's answer to its completion (local activities it
// waits for included).
const taskLatency = "temporal_workflow_task_execution_latency_seconds"

// scraper returns a function reading a /metrics page into families.
func scraper(url string) func() ([]family, error) {
	return func() ([]family, error) {
		resp, err := http.Get(url)
		if err != nil {
			return nil, err
		}
		defer resp.Body.Close()
		return parseText(bufio.NewScanner(resp.Body))
	}
}

func parseText(sc *bufio.Scanner) ([]family, error) {
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	var out []family
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		sp := strings.LastIndexByte(line, ' ')
		if sp < 0 {
			continue
		}
		v, err := strconv.ParseFloat(line[sp+1:], 64)
		if err != nil {
			continue
		}
		name, labels := line[:sp], ""
		if i := strings.IndexByte(name, '{'); i >= 0 {
			name, labels = name[:i], name[i:]
		}
		out = append(out, family{name: name, labels: labels, value: v})
	}
	return out, sc.Err()
}

func gaugeValue(get func() ([]family, error), name, label string) (float64, bool) {
	fs, err := get()
	if err != nil {
		return 0, false
	}
	for _, f := range fs {
		if f.name == name && strings.Contains(f.labels, label) {
			return f.value, true
		}
	}
	return 0, false
}

// sumOf adds up a metric over every label set that contains label.
func sumOf(get func() ([]family, error), name, label string) float64 {
	fs, _ := get()
	total := 0.0
	for _, f := range fs {
		if f.name == name && strings.Contains(f.labels, label) {
			total += f.value
		}
	}
	return total
}

// maxOf is the largest value of a metric over its label sets.
func maxOf(get func() ([]family, error), name string) float64 {
	fs, _ := get()
	most := 0.0
	for _, f := range fs {
		if f.name == name {
			most = max(most, f.value)
		}
	}
	return most
}

// p99ms estimates a histogram's 99th percentile, in ms, summed over every
// label set that contains label ("" for all), from its cumulative buckets.
func p99ms(get func() ([]family, error), name, label string) float64 {
	fs, _ := get()
	return quantileMs(cumulative(fs, name, label), 0.99)
}

// cumulative sums a histogram's cumulative bucket counts (by upper bound)
// over every label set that contains label.
func cumulative(fs []family, name, label string) map[float64]float64 {
	les := map[float64]float64{}
	for _, f := range fs {
		if f.name != name+"_bucket" || !strings.Contains(f.labels, label) {
			continue
		}
		i := strings.Index(f.labels, `le="`)
		if i < 0 {
			continue
		}
		rest := f.labels[i+4:]
		le, err := strconv.ParseFloat(rest[:strings.IndexByte(rest, '"')], 64)
		if err != nil {
			continue
		}
		les[le] += f.value
	}
	return les
}

// histogramWindow reads a histogram now; its end reads it again and
// estimates the 99th percentile, in ms, of what was observed in between
// (the difference of the two readings): a figure of one step alone.
func histogramWindow(get func() ([]family, error), name string, labels ...string) (end func() float64) {
	sum := func(fs []family) map[float64]float64 {
		les := map[float64]float64{}
		for _, l := range labels {
			for le, n := range cumulative(fs, name, l) {
				les[le] += n
			}
		}
		return les
	}
	fs, _ := get()
	before := sum(fs)
	return func() float64 {
		fs, _ := get()
		les := sum(fs)
		for le, n := range before {
			les[le] -= n
		}
		return quantileMs(les, 0.99)
	}
}

// quantileMs is the q quantile, in ms, of cumulative bucket counts whose
// bounds are in seconds, linear within the bucket it falls in, as
// Prometheus' histogram_quantile.
func quantileMs(les map[float64]float64, q float64) float64 {
	var bs []bucket
	for le, n := range les {
		bs = append(bs, bucket{le, n})
	}
	sort.Slice(bs, func(i, j int) bool { return bs[i].le < bs[j].le })
	if len(bs) == 0 || bs[len(bs)-1].count <= 0 {
		return math.NaN()
	}
	want := q * bs[len(bs)-1].count
	prevLe, prevN := 0.0, 0.0
	for _, b := range bs {
		if b.count >= want {
			if math.IsInf(b.le, 1) {
				return round(prevLe * 1000)
			}
			frac := (want - prevN) / math.Max(b.count-prevN, 1e-9)
			return round((prevLe + frac*(b.le-prevLe)) * 1000)
		}
		prevLe, prevN = b.le, b.count
	}
	return math.NaN()
}

// ---- processes ----

func cpuSeconds(pid int) float64 {
	if pid <= 0 {
		return 0
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	s := string(b)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
	if len(fields) < 13 {
		return 0
	}
	ut, _ := strconv.ParseFloat(fields[11], 64)
	st, _ := strconv.ParseFloat(fields[12], 64)
	return (ut + st) / 100 // clock ticks (USER_HZ = 100)
}

// switchMeter starts counting the context switches of process pid's
// threads (/proc/PID/task/*/status) and its CPU; the function it returns
// writes them per action under prefix: involuntary switches (the kernel
// took a CPU away from a running thread: on this machine's two cores, for
// the server's threads or another process's) and voluntary ones (a thread
// blocked), per action and per CPU millisecond of the process. They tell
// how often a task in flight can be set aside, which a task's p99 on a
// shared machine follows (docs/benchmarks.md).
func switchMeter(pid int) func(res Result, prefix string, actions int) {
	v0, i0 := ctxSwitches(pid)
	cpu0 := cpuSeconds(pid)
	return func(res Result, prefix string, actions int) {
		v1, i1 := ctxSwitches(pid)
		cpuMs := 1000 * (cpuSeconds(pid) - cpu0)
		res[prefix+"_cpu_ms_per_action"] = round(cpuMs / float64(actions))
		res[prefix+"_involuntary_switches_per_action"] = round((i1 - i0) / float64(actions))
		res[prefix+"_voluntary_switches_per_action"] = round((v1 - v0) / float64(actions))
		if cpuMs > 0 {
			res[prefix+"_involuntary_switches_per_cpu_ms"] = round((i1 - i0) / cpuMs)
		}
	}
}

// ctxSwitches sums the voluntary and involuntary context switches of
// every thread of process pid (0, 0 when it cannot be read).
func ctxSwitches(pid int) (voluntary, involuntary float64) {
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/status", pid))
	for _, t := range tasks {
		b, err := os.ReadFile(t)
		if err != nil {
			continue // the thread ended
		}
		for _, line := range strings.Split(string(b), "\n") {
			k, v, ok := strings.Cut(line, ":")
			if !ok {
				continue
			}
			n, _ := strconv.ParseFloat(strings.TrimSpace(v), 64)
			switch k {
			case "voluntary_ctxt_switches":
				voluntary += n
			case "nonvoluntary_ctxt_switches":
				involuntary += n
			}
		}
	}
	return voluntary, involuntary
}

// devServerPid finds the dev server this program started (a child
// `temporal server start-dev`).
func devServerPid() int {
	ents, _ := os.ReadDir("/proc")
	self := os.Getpid()
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cmd, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || !strings.Contains(string(cmd), "start-dev") {
			continue
		}
		if stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat")); err == nil {
			f := strings.Fields(string(stat)[strings.LastIndexByte(string(stat), ')')+2:])
			if len(f) > 1 && f[1] == strconv.Itoa(self) {
				return pid
			}
		}
	}
	return 0
}

// ---- report ----

type goal struct {
	key, op string
	target  float64
}

var goals = []goal{
	{"throughput_ratio_entity", ">=", 0.8},
	{"throughput_ratio", ">=", 0.5},
	{"steward_events_per_action", "<=", 12},
	{"steward_workflow_tasks_per_action", "<=", 2.5},
	{"latency_ratio_p99", "<=", 1.5},
	{"apply_ratio", "<=", 1.5},
	{"scale_status_seconds", "<=", 10},
	{"scale_apply_wait_ratio", "<=", 1.5},
	{"scale_status_failures", "<=", 0},
	{"upgrade_seconds_1000", "<=", 60},
	{"tick_ratio_p99_entity", "<=", 1.5},
	{"apply_ratio_children", "<=", 1.2},
	// Signed specs (issue 47): the same apply, signed, beside an unsigned one.
	{"apply_signed_ratio", "<=", 1.1},
	{"upgrade_restarts_1000", "<=", 0},
	// Rolling updates: against a rollout restart of the same workers.
	{"update_ratio_1000", "<=", 1.2},
	{"update_max_down_1000", "<=", 50},
	{"revert_touched_100", "<=", 10},
	{"revert_seconds_100", "<=", 45}, // healthyDeadline 30 s + one batch
	// Fleets: failover within after (5 s) + 5 s; a drain against a rollout.
	{"failover_seconds_p99", "<=", 10},
	{"drain_ratio_100", "<=", 1.5},
	{"drain_max_down_100", "<=", 10},
	{"fleet_overcount_moments", "<=", 0},
	{"failover_failures", "<=", 0},
	{"scale_status_max_seconds", "<=", 10},
	{"max_workflow_backlog_age_seconds", "<=", 30},
	{"scale_idle_worker_cpu_percent", "<=", 2},
	{"scale_idle_server_cpu_percent", "<=", 5},
	{"scale_root_max_event_bytes", "<=", 64 << 10},
	{"scale_group_max_event_bytes", "<=", 128 << 10},
	{"max_history_events", "<=", 2000},
	{"idle_worker_cpu_percent_1000", "<=", 2},
	{"idle_server_cpu_percent_1000", "<=", 5},
	{"tick_ratio_p99", "<=", 1.5},
	{"pool_utilization_under_load", ">=", 0.8},
	// A killed process runs again within its backoff (100ms) + 1 s.
	{"kill_to_running_own_p99_ms", "<=", 1100},
	{"kill_to_running_adopted_p99_ms", "<=", 1100},
	// The console on a 10,000-worker tree, in Chromium.
	{"console_first_paint_ms_10000", "<=", 2000},
	{"console_expand_ms", "<=", 1000},
	{"console_update_ms_p99", "<=", 2000},
	{"console_server_cpu_percent_10000", "<=", 1},
	// Process controls.
	{"reload_p99_ms", "<=", 500},
	{"usage_cpu_percent_100", "<=", 1},
	{"oom_restart_ms", "<=", 1300}, // backoff 100 ms + 1.2 s
}

func report(o options, res Result) error {
	keys := make([]string, 0, len(res))
	for k := range res {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	fmt.Printf("%-36s %14s   %s\n", "figure", "value", "goal")
	for _, k := range keys {
		g := ""
		for _, gl := range goals {
			if gl.key == k {
				v, _ := toFloat(res[k])
				ok := (gl.op == ">=" && v >= gl.target) || (gl.op == "<=" && v <= gl.target)
				g = fmt.Sprintf("%s %g  %s", gl.op, gl.target, map[bool]string{true: "met", false: "NOT met"}[ok])
			}
		}
		fmt.Printf("%-36s %14v   %s\n", k, res[k], g)
	}
	if err := os.MkdirAll(o.out, 0o755); err != nil {
		return err
	}
	clean := Result{}
	for k, v := range res {
		if f, ok := v.(float64); ok && (math.IsNaN(f) || math.IsInf(f, 0)) {
			v = nil
		}
		clean[k] = v
	}
	b, err := json.MarshalIndent(clean, "", "  ")
	if err != nil {
		return err
	}
	path := filepath.Join(o.out, time.Now().UTC().Format("20060102T150405Z")+".json")
	fmt.Println("written:", path)
	return os.WriteFile(path, b, 0o644)
}

func toFloat(v any) (float64, bool) {
	switch x := v.(type) {
	case float64:
		return x, true
	case int:
		return float64(x), true
	}
	return 0, false
}

type quiet struct{}

func (quiet) Debug(string, ...any) {}
func (quiet) Info(string, ...any)  {}
func (quiet) Warn(string, ...any)  {}
func (quiet) Error(string, ...any) {}
