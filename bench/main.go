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
	"context"
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/worker"

	"github.com/steward-sh/steward/internal/telemetry"
	"github.com/steward-sh/steward/internal/temporalclient"
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
	jobsDuration                time.Duration
	// The soak's (-only soak): how long, the pace of its operations (1:
	// the schedule), how often it samples; its worker's log dir
	// and its server's database file, measured.
	soakDuration, soakSample time.Duration
	soakPace                 float64
	// soakHostCache bounds each soak host worker's sticky cache, so that
	// it is full before the slopes are taken (0: the worker's default).
	soakHostCache  int
	logDir, dbPath string
	// restartCmd restarts a server of -address (the soak's server fault;
	// "": none); dbDir is where that server's database keeps its files
	// (its size sampled; "": not); serverPidFile holds that
	// server's PID (its RSS sampled; read again after each restart).
	restartCmd, dbDir string
	serverPidFile     string
}

func main() {
	if soakExec() {
		return
	}
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
	flag.DurationVar(&o.jobsDuration, "jobs-duration", 3*time.Minute, "how long the jobs step runs its 100 jobs (and as long the raw schedules); the issue's figure: 10m")
	flag.StringVar(&o.only, "only", "", "run only these steps (comma-separated: cost,throughput,latency,history,pool,apply,scale,upgrade,update,failover,drain,console,controls,kill,jobs; soak runs only when named); the goals of steps not run show as missing")
	flag.DurationVar(&o.soakDuration, "duration", 2*time.Hour, "how long the soak runs (-only soak), after its tree first reached its desired state")
	flag.Float64Var(&o.soakPace, "soak-pace", 1, "the soak's operations and faults come this many times as far apart as the issue's schedule (0.2: five times as often, for a short look)")
	flag.DurationVar(&o.soakSample, "soak-sample", time.Minute, "how often the soak samples its figures")
	flag.IntVar(&o.soakHostCache, "soak-host-cache", 400, "each soak host worker's --workflow-cache: small enough that the caches are full within the soak's first 15 minutes, so that the slopes taken after them show a leak and not a cache filling up to every workflow of the tree (0: the worker's default, 50,000)")
	flag.BoolVar(&o.eager, "eager", false, "eager activity dispatch on both sides (the server's system.enableActivityEagerExecution, the raw worker's and the steward worker's --eager-actions)")
	flag.StringVar(&o.workerArgs, "worker-args", "", "more flags for every steward worker the bench starts, space-separated (an A/B run of a worker setting: -worker-args '--sticky-timeout 5s')")
	flag.StringVar(&o.restartCmd, "restart-cmd", "", "with -address: a shell command that restarts the server (the soak's server restarts: 'scripts/cluster.sh down && scripts/cluster.sh up')")
	flag.StringVar(&o.serverPidFile, "server-pid-file", "", "with -address: a file holding the server's PID, read at each soak sample for its RSS (a cluster's: <cluster dir>/server.pid)")
	flag.StringVar(&o.dbDir, "db-dir", "", "with -address: the directory of the server's database, whose size the soak samples (a cluster's: <cluster dir>/pgdata)")
	flag.StringVar(&o.compression, "grpc-compression", "gzip", "compression of gRPC requests on both sides: gzip (the SDK's default) or none")
	soakCSV := flag.String("soak-slopes", "", "print the slopes (with their 95 % intervals) of this soak CSV as JSON, and run nothing")
	flag.Parse()
	if *soakCSV != "" {
		if err := printSoakSlopes(*soakCSV); err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			os.Exit(1)
		}
		return
	}
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
	// restartServer stops the bench's own dev server and starts it again
	// on its address and database file (the jobs step's fault): nil when
	// the server is not the bench's, or keeps no file (only -only jobs
	// gives it one: the other steps' figures are of a server in memory).
	var restartServer func() error
	if addr == "" {
		devOpts := testsuite.DevServerOptions{
			ExistingPath: o.temporal, LogLevel: "error",
			ClientOptions: &client.Options{Logger: quiet{}},
			ExtraArgs: []string{
				"--sqlite-pragma", "journal_mode=wal", "--sqlite-pragma", "synchronous=normal",
				"--dynamic-config-value", "history.transferProcessorMaxPollRPS=1000",
				"--dynamic-config-value", "history.timerProcessorMaxPollRPS=1000",
				"--dynamic-config-value", "history.timerProcessorMaxTimeShift=\"100ms\"",
				"--dynamic-config-value", "matching.numTaskqueueReadPartitions=1",
				"--dynamic-config-value", "matching.numTaskqueueWritePartitions=1",
				// As scripts/run.sh and cluster.sh: Schedules start up to 200
				// runs a second (30 by default: docs/jobs.md).
				"--dynamic-config-value", "worker.schedulerNamespaceStartWorkflowRPS=200",
				"--dynamic-config-value", fmt.Sprintf("system.enableActivityEagerExecution=%t", o.eager),
			},
		}
		if o.only == "jobs" || o.only == "soak" {
			dir, err := os.MkdirTemp("", "bench-server-")
			if err != nil {
				return err
			}
			defer os.RemoveAll(dir)
			devOpts.DBFilename = filepath.Join(dir, "temporal.db")
			o.dbPath = devOpts.DBFilename
		}
		server, err := testsuite.StartDevServer(ctx, devOpts)
		if err != nil {
			return fmt.Errorf("dev server: %w", err)
		}
		defer func() { _ = server.Stop() }()
		addr, ns = server.FrontendHostPort(), "default"
		o.serverPid = devServerPid()
		if devOpts.DBFilename != "" {
			restartServer = func() error {
				if err := server.Stop(); err != nil {
					return fmt.Errorf("dev server stop: %w", err)
				}
				opts := devOpts
				opts.ClientOptions = &client.Options{Logger: quiet{}, HostPort: addr}
				next, err := testsuite.StartDevServer(ctx, opts)
				if err != nil {
					return fmt.Errorf("dev server restart: %w", err)
				}
				server = next
				return nil
			}
		}
	}
	if o.address != "" && o.restartCmd != "" {
		restartServer = func() error {
			cmd := exec.Command("sh", "-c", o.restartCmd)
			cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
			if err := cmd.Run(); err != nil {
				return fmt.Errorf("%s: %w", o.restartCmd, err)
			}
			return nil
		}
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
	rw.RegisterWorkflow(RawOneActivity)
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
	o.logDir = filepath.Join(stateDir, "logs")
	wargs := []string{"--address", addr, "--namespace", ns, "--pool-size", strconv.Itoa(pool), "--metrics", metricsAddr, "--log-level", "error", "--grpc-compression", o.compression,
		"--state-dir", stateDir, "--log-dir", o.logDir}
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
		{"jobs", "jobs: 100 on schedules, a kill -9 halfway, beside raw schedules", func() error { return jobsStep(ctx, c, o, res, restartWorker, restartServer) }},
		{"soak", "soak: a thousand workers for hours, under operations and faults", func() error {
			return soakStep(ctx, c, o, res, restartWorker, restartServer, func() int { return wcmd.Process.Pid }, stewardMetrics, stateDir)
		}},
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
		named := slices.Contains(strings.Split(o.only, ","), s.key)
		if (o.only != "" || s.key == "soak") && !named {
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
