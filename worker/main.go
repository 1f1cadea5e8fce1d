// Command worker hosts steward's workflows and a share of the global action
// pool: it polls the shared task queue for workflow tasks and for actions,
// running at most --pool-size actions at once. Run more of them, on more
// machines, to scale out. It also serves its host's own task queue
// (--host), where actions that must run on this machine are sent.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	_ "net/http/pprof"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"go.uber.org/zap"

	"github.com/steward-sh/steward/activities"
	"github.com/steward-sh/steward/internal/admission"
	"github.com/steward-sh/steward/internal/buildinfo"
	"github.com/steward-sh/steward/internal/driver"
	"github.com/steward-sh/steward/internal/driver/httpdrv"
	"github.com/steward-sh/steward/internal/driver/process"
	"github.com/steward-sh/steward/internal/driver/stub"
	"github.com/steward-sh/steward/internal/spec"
	"github.com/steward-sh/steward/internal/telemetry"
	"github.com/steward-sh/steward/internal/temporalclient"
	"github.com/steward-sh/steward/internal/treestatus"
	"github.com/steward-sh/steward/internal/workerid"
	"github.com/steward-sh/steward/workflows"
)

var hostPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)

type options struct {
	conn                            temporalclient.Config
	host, metrics, logLevel, logDir string
	stateDir, pprof                 string
	poolSize, workflowCache         int
	workflowPollers, actionPollers  int
	pollerScaling                   string
	actionPollerScaling             string
	eagerActions                    bool
	policy, trustedKeys             string
	guard                           *admission.Guard
	usageInterval, stickyTimeout    time.Duration
	orphanSweep                     time.Duration
	logs                            process.LogPolicy
}

// sizeFlag is a flag of a size in bytes written as a spec writes one
// (10Mi, 512Ki, 1G: spec.Size).
type sizeFlag struct{ v *int64 }

func (f sizeFlag) String() string {
	if f.v == nil {
		return ""
	}
	return spec.FormatSize(*f.v)
}

func (f sizeFlag) Set(s string) error {
	n, err := spec.Size(s).Bytes()
	if err != nil {
		return err
	}
	*f.v = n
	return nil
}

// ageFlag is a flag of a duration that may be written in days (30d:
// spec.ParseDuration).
type ageFlag struct{ v *time.Duration }

func (f ageFlag) String() string {
	if f.v == nil {
		return ""
	}
	if *f.v%(24*time.Hour) == 0 && *f.v > 0 {
		return fmt.Sprintf("%dd", *f.v/(24*time.Hour))
	}
	return f.v.String()
}

func (f ageFlag) Set(s string) error {
	d, err := spec.ParseDuration(s)
	if err != nil {
		return err
	}
	if d < spec.MinLogAge {
		return fmt.Errorf("%s is less than 1m", d)
	}
	*f.v = d
	return nil
}

func main() {
	if len(os.Args) > 1 && os.Args[1] == process.JobShimArg {
		// This binary as a job's shim (internal/driver/process/jobshim.go).
		os.Exit(process.RunJobShim(os.Args[2:]))
	}
	var o options
	config, version := registerFlags(flag.CommandLine, &o)
	flag.Parse()
	if *version {
		fmt.Println(buildinfo.ID())
		return
	}
	if *config != "" {
		if err := process.SecureFile(*config, false); err != nil {
			fmt.Fprintln(os.Stderr, "worker: --config:", err)
			os.Exit(2)
		}
		if err := applyConfig(flag.CommandLine, *config); err != nil {
			fmt.Fprintln(os.Stderr, "worker:", err)
			os.Exit(2)
		}
	}
	if flag.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "worker: unexpected arguments %q (flags only)\n", flag.Args())
		os.Exit(2)
	}
	if o.poolSize < 1 {
		fmt.Fprintln(os.Stderr, "worker: --pool-size must be >= 1")
		os.Exit(2)
	}
	if o.workflowCache < 1 {
		fmt.Fprintln(os.Stderr, "worker: --workflow-cache must be >= 1")
		os.Exit(2)
	}
	if o.stickyTimeout < time.Second {
		fmt.Fprintf(os.Stderr, "worker: --sticky-timeout must be >= 1s, not %s\n", o.stickyTimeout)
		os.Exit(2)
	}
	if o.workflowPollers < 2 {
		fmt.Fprintf(os.Stderr, "worker: --workflow-pollers must be >= 2, not %d\n", o.workflowPollers)
		os.Exit(2)
	}
	if o.logs.Keep < 1 || o.logs.Keep > spec.MaxLogKeep {
		fmt.Fprintf(os.Stderr, "worker: --log-keep must be from 1 to %d, not %d\n", spec.MaxLogKeep, o.logs.Keep)
		os.Exit(2)
	}
	if o.logs.MaxSize < spec.MinLogSize {
		fmt.Fprintf(os.Stderr, "worker: --log-max-size must be at least 4Ki, not %d bytes\n", o.logs.MaxSize)
		os.Exit(2)
	}
	if o.actionPollers < 1 {
		fmt.Fprintf(os.Stderr, "worker: --action-pollers must be >= 1, not %d\n", o.actionPollers)
		os.Exit(2)
	}
	if o.actionPollerScaling != pollerAutoscaling && o.actionPollerScaling != pollerFixed {
		fmt.Fprintf(os.Stderr, "worker: --action-poller-scaling %q: use %s or %s\n", o.actionPollerScaling, pollerAutoscaling, pollerFixed)
		os.Exit(2)
	}
	if o.pollerScaling != pollerAutoscaling && o.pollerScaling != pollerFixed {
		fmt.Fprintf(os.Stderr, "worker: --workflow-poller-scaling %q: use %s or %s\n", o.pollerScaling, pollerAutoscaling, pollerFixed)
		os.Exit(2)
	}
	if c := o.conn.Compression; c != temporalclient.CompressionGzip && c != temporalclient.CompressionNone {
		fmt.Fprintf(os.Stderr, "worker: --grpc-compression %q: use gzip or none\n", c)
		os.Exit(2)
	}
	if o.conn.PayloadVisitConcurrency < 0 {
		fmt.Fprintf(os.Stderr, "worker: --payload-visit-concurrency must be >= 0, not %d\n", o.conn.PayloadVisitConcurrency)
		os.Exit(2)
	}
	// (After the flags' own checks: a mistake in a flag is named first;
	// before any of them is read.)
	if err := checkTrustedFiles(o); err != nil {
		fmt.Fprintln(os.Stderr, "worker:", err)
		os.Exit(2)
	}
	if _, err := o.conn.Options(); err != nil { // the codec's keys, TLS and API key files
		fmt.Fprintln(os.Stderr, "worker:", err)
		os.Exit(2)
	}
	if o.orphanSweep < time.Second {
		fmt.Fprintf(os.Stderr, "worker: --orphan-sweep must be at least 1s, not %s\n", o.orphanSweep)
		os.Exit(2)
	}
	if o.usageInterval < 0 || o.usageInterval > 0 && o.usageInterval < time.Second {
		fmt.Fprintf(os.Stderr, "worker: --usage-interval must be 0 (never) or at least 1s, not %s\n", o.usageInterval)
		os.Exit(2)
	}
	if !hostPattern.MatchString(o.host) {
		fmt.Fprintf(os.Stderr, "worker: --host %q: use letters, digits, '.', '_' and '-'\n", o.host)
		os.Exit(2)
	}
	guard, err := loadGuard(o.policy, o.trustedKeys)
	if err != nil {
		fmt.Fprintln(os.Stderr, "worker:", err)
		os.Exit(2)
	}
	o.guard = guard
	if opts, err := o.conn.Options(); err == nil && temporalclient.Plaintext(opts) && os.Geteuid() == 0 && len(guard.Trusted) == 0 {
		// (A warning, not a refusal: the dev server of `make run` is
		// plaintext on loopback.)
		fmt.Fprintf(os.Stderr, "worker: warning: root, without TLS to %s and without --trusted-keys: whoever answers at that address (any local user who binds the port before the server does, at boot or while it restarts) can have this worker run what the policy allows; see docs/security.md\n", opts.HostPort)
	}
	if o.stateDir == "" {
		o.stateDir = filepath.Join(os.TempDir(), "steward", "state")
	}
	o.stateDir = filepath.Join(o.stateDir, o.host) // one directory per host: each adopts its own
	// The records and revisions there, and the logs, are written as this
	// worker's user (root) and trusted when read back: no other user may
	// change them (process.SecureDir).
	if err := process.SecureStateDir(o.stateDir, 0o700); errors.As(err, new(*process.NotMadeError)) {
		// (Unwritable: its starts go unrecorded; docs/reliability.md.)
		fmt.Fprintln(os.Stderr, "worker: warning: --state-dir:", err)
	} else if err != nil {
		fmt.Fprintln(os.Stderr, "worker: --state-dir:", err)
		os.Exit(2)
	}
	if err := process.SecureDir(o.logDir, 0o750); err != nil {
		fmt.Fprintln(os.Stderr, "worker: --log-dir:", err)
		os.Exit(2)
	}
	// The logs are written, rotated and read through the directory as it
	// was checked, not its name: a group that may write a directory above
	// it (Ubuntu's /var/log) could swap it for one of its own.
	anchored, err := process.AnchorDir(o.logDir)
	if err != nil {
		fmt.Fprintln(os.Stderr, "worker: --log-dir:", err)
		os.Exit(2)
	}
	o.logDir = anchored
	guard.Host = o.host
	if len(guard.Trusted) > 0 {
		// The signed revisions this host has run: a replayed older one is refused.
		if guard.Revisions, err = admission.OpenRevisions(o.stateDir); err != nil {
			fmt.Fprintln(os.Stderr, "worker:", err)
			os.Exit(2)
		}
	}
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "worker:", err)
		os.Exit(1)
	}
}

// checkTrustedFiles holds each file the worker trusts (its policy, the keys
// and CA it trusts, its client configuration) or proves itself with (a TLS
// key, an API key, an encryption key), wherever it is named (a flag, the
// environment, the client configuration's profile), to process.SecureFile:
// one another local user could change would let them decide what the
// worker runs as its user (root).
func checkTrustedFiles(o options) error {
	check := func(f temporalclient.TrustedFile) error {
		if err := process.SecureFile(f.Path, f.Secret); err != nil {
			return fmt.Errorf("%s: %w", f.From, err)
		}
		return nil
	}
	if err := o.conn.TrustedFiles(check); err != nil {
		return err
	}
	for _, f := range []struct{ from, list string }{{"--policy", o.policy}, {"--trusted-keys", o.trustedKeys}} {
		for _, file := range strings.Split(f.list, ",") {
			if file = strings.TrimSpace(file); file != "" {
				if err := check(temporalclient.TrustedFile{From: f.from, Path: file}); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

func run(o options) error {
	zl, err := telemetry.NewLogger(o.logLevel)
	if err != nil {
		return err
	}
	defer zl.Sync() //nolint:errcheck
	metrics := telemetry.NewMetrics(func(err error) { zl.Warn("metrics", zap.Error(err)) })
	defer metrics.Close()
	if o.metrics != "" {
		// A port someone else holds leaves the worker without metrics,
		// not down (its services unsupervised): it binds when it can.
		if err := metrics.ServeWhenFree(o.metrics, 10*time.Second,
			func(err error) {
				zl.Error("metrics not served: another process holds the address; trying again every 10s", zap.Error(err))
			},
			func(addr net.Addr) { zl.Info("serving metrics", zap.String("url", "http://"+addr.String()+"/metrics")) }); err != nil {
			return err
		}
	}
	if o.pprof != "" {
		ln, err := net.Listen("tcp", o.pprof)
		if err != nil {
			return fmt.Errorf("--pprof: %w", err)
		}
		defer ln.Close()
		// net/http/pprof registers on the default mux; it refuses a profile
		// or trace longer than the write timeout, so none holds the
		// profiler (and a connection) for long.
		srv := telemetry.OperatorServer(http.DefaultServeMux, 65*time.Second)
		go func() { _ = srv.Serve(telemetry.LimitConns(ln)) }()
		zl.Info("serving profiles", zap.String("url", "http://"+ln.Addr().String()+"/debug/pprof/"))
	}
	c, namespace, err := temporalclient.Dial(o.conn, telemetry.NewSDKLogger(zl), metrics.Handler)
	if err != nil {
		return err
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	err = temporalclient.EnsureSearchAttributes(ctx, c, namespace, workflows.SearchAttributeNames)
	cancel()
	if err != nil {
		return err
	}

	notifier := temporalclient.ExitNotifier(c, workflows.SignalExit)
	stubDriver := stub.New(notifier, zl)
	defer stubDriver.Close()
	// The processes it starts outlive this worker (but those with
	// dieWithWorker): the next worker of this host adopts them from the
	// records in --state-dir, and reports at once those that ended meanwhile.
	processDriver := process.New(o.logDir, notifier, zl)
	processDriver.StateDir = o.stateDir
	processDriver.Logs = o.logs
	processDriver.KeepOnClose = true
	if self, err := os.Executable(); err == nil {
		processDriver.JobShim = self // a job's exit code outlives this worker
	} else {
		zl.Warn("process: no job shim (a job's run adopted by the next worker ends with its exit code unknown)", zap.Error(err))
	}
	processDriver.AdoptRecordedOnly = !o.guard.Open()
	if o.guard != nil {
		// Checked again where the driver runs a program and assembles an
		// environment (an envFile's names are known only there).
		processDriver.Policy = o.guard.Policy
	}
	defer processDriver.Close()
	rctx, rcancel := context.WithTimeout(context.Background(), 30*time.Second)
	recovered, err := processDriver.Recover(rctx)
	rcancel()
	if err != nil {
		zl.Warn("process: recovery", zap.Error(err))
	}
	// A process whose workflow closed (its service deleted while this
	// host's worker was away) is stopped, not held unsupervised.
	processDriver.WatchOrphans(temporalclient.WorkflowRuns(c), o.orphanSweep)
	if recovered.Rebooted > 0 {
		zl.Warn("process: this host rebooted since its last worker: its services are started again", zap.Int("services", recovered.Rebooted),
			zap.Time("bootedAt", process.CurrentBoot().At))
	}
	if recovered.Adopted+recovered.Ended > 0 {
		zl.Info("process: recovered the services of this host", zap.Int("adopted", recovered.Adopted), zap.Int("endedMeanwhile", recovered.Ended),
			zap.Int("endedByReboot", recovered.Rebooted), zap.String("stateDir", o.stateDir))
	}
	if o.usageInterval > 0 {
		metrics.Registry.MustRegister(telemetry.ServiceUsage{Host: o.host, Samples: func() map[string]treestatus.Usage { return processDriver.Usage() }})
		uctx, stopSampling := context.WithCancel(context.Background())
		defer stopSampling()
		go sampleUsage(uctx, processDriver, o.usageInterval, zl)
	}
	httpDriver := httpdrv.New(nil)
	httpDriver.Log = zl
	if o.guard.Policy != nil {
		httpDriver.CheckRedirect = o.guard.Policy.Redirect // each hop a URL the policy lists
		httpDriver.ReadFile = o.guard.Policy.ReadFile      // only the files it lists, as checked
	}
	defer httpDriver.Close()
	acts := &activities.Activities{Drivers: map[string]driver.Driver{
		spec.KindStub: stubDriver, spec.KindProcess: processDriver, spec.KindHTTP: httpDriver,
	}, Metrics: metrics.Handler, PoolSize: o.poolSize,
		Slow: func(ctx context.Context, workflowID string, seq int64) error {
			return c.SignalWorkflow(ctx, workflowID, "", workflows.SignalSlow, seq)
		},
		Signal: func(ctx context.Context, workflowID, name string, arg any) error {
			return c.SignalWorkflow(ctx, workflowID, "", name, arg)
		},
		Update: func(ctx context.Context, workflowID, updateID, name string, arg any) error {
			h, err := c.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{
				WorkflowID: workflowID, UpdateID: updateID, UpdateName: name, Args: []any{arg},
				WaitForStage: client.WorkflowUpdateStageCompleted,
			})
			if err != nil {
				return err
			}
			return h.Get(ctx, nil)
		},
		Guard: o.guard, Log: func(msg string, kv ...any) { zl.Sugar().Warnw(msg, kv...) }}
	announceGuard(zl, o.guard, o.host)
	reporter := &activities.Reporter{Send: func(ctx context.Context, parent string, r treestatus.ChildReport) error {
		return c.SignalWorkflow(ctx, parent, "", workflows.SignalChild, r)
	}, Gather: activities.ReportGather}
	acts.Report = reporter.Report
	// A succeeded action gives its slot back before its report goes out,
	// and completes by its task token (activities/report_async.go).
	acts.Complete, acts.Heartbeat = c.CompleteActivity, c.RecordActivityHeartbeat
	defer activities.WaitReports(acts) // after the workers stop (deferred below), before the client closes
	qctx, stopQueueSize := context.WithCancel(context.Background())
	defer stopQueueSize()
	go telemetry.ReportQueueSize(qctx, c, namespace, metrics.Handler, 10*time.Second,
		workflows.TaskQueue, workflows.HostTaskQueue(o.host))

	// A workflow not in the cache replays its whole history at its next
	// task; at the SDK's default (10,000) a fleet of 10,000 workers plus
	// its supervisors evicts in a cycle, and a rollout replays each target.
	worker.SetStickyWorkflowCacheSize(o.workflowCache)
	opts := worker.Options{
		MaxConcurrentActivityExecutionSize: o.poolSize,
		// Actions go through the task queue, the pool shared by all workers;
		// --eager-actions lets one skip the queue when this process has a
		// free slot (it is a member of the pool too: fewer round trips, the
		// same limit per process).
		DisableEagerActivities: !o.eagerActions,
		// Let in-flight actions finish (or see their cancellation) on shutdown.
		WorkerStopTimeout: 10 * time.Second,
		// A task for a workflow cached by a worker that was killed waits
		// this long on its sticky queue (the server keeps sending there
		// for 10 s after its last poll) before any worker may take it.
		StickyScheduleToStartTimeout: o.stickyTimeout,
		// The build ends the identity the server lists for each poller:
		// `starter upgrade` refuses while a worker of another build polls.
		Identity: workerid.New(buildinfo.ID()),
	}
	setWorkflowPollers(&opts, o.pollerScaling, o.workflowPollers)
	setActionPollers(&opts, o.actionPollerScaling, o.actionPollers)
	w := worker.New(c, workflows.TaskQueue, opts)
	w.RegisterWorkflow(workflows.WorkerWorkflow)
	w.RegisterWorkflow(workflows.SupervisorWorkflow)
	w.RegisterWorkflow(workflows.RolloutWorkflow)
	w.RegisterWorkflow(workflows.LogsWorkflow)
	w.RegisterWorkflow(workflows.ServicesWorkflow)
	w.RegisterWorkflow(workflows.RevisionsWorkflow)
	w.RegisterWorkflow(workflows.RevisionSpecWorkflow)
	w.RegisterWorkflow(workflows.HostWorkflow)
	w.RegisterWorkflow(workflows.JobWorkflow)
	w.RegisterWorkflow(workflows.JobRunWorkflow)
	w.RegisterActivityWithOptions(acts, activity.RegisterOptions{Name: activities.Prefix})

	// The control queue: a rollout's chunks and a supervisor's look at its
	// children, with slots of their own (a chunk waits for the actions it
	// asked for: in the pool it would hold a slot they need).
	controlOpts := opts
	controlOpts.DisableWorkflowWorker = true
	controlOpts.MaxConcurrentActivityExecutionSize = 100
	cw := worker.New(c, workflows.ControlQueue, controlOpts)
	cw.RegisterActivityWithOptions(&activities.Control{Client: c, Namespace: namespace, Guard: o.guard}, activity.RegisterOptions{Name: activities.Prefix})
	if err := cw.Start(); err != nil {
		return fmt.Errorf("control task queue: %w", err)
	}
	defer cw.Stop()

	hostOpts := opts
	hostOpts.DisableWorkflowWorker = true
	hw := worker.New(c, workflows.HostTaskQueue(o.host), hostOpts)
	hw.RegisterActivityWithOptions(acts, activity.RegisterOptions{Name: activities.Prefix})
	hw.RegisterActivityWithOptions(&activities.Logs{Dir: o.logDir, Trusted: o.guard.Trusted}, activity.RegisterOptions{Name: activities.Prefix})
	hw.RegisterActivityWithOptions(&activities.Services{Host: processDriver, Trusted: o.guard.Trusted}, activity.RegisterOptions{Name: activities.Prefix})
	hw.RegisterActivityWithOptions(&activities.Host{Info: activities.HostInfo{
		Name: o.host, Address: hostAddress(), Build: buildinfo.ID(), PID: os.Getpid(), UpSince: time.Now().UTC(),
		BootedAt: process.CurrentBoot().At}}, activity.RegisterOptions{Name: activities.Prefix})
	if err := hw.Start(); err != nil {
		return fmt.Errorf("host task queue: %w", err)
	}
	defer hw.Stop()
	// The host's workflow (liveness, drain: workflows/host.go): started
	// if it does not run, woken onto this build if it does. Not a reason
	// to stop: a server that refuses it now (search attributes not yet
	// registered on a new cluster, say) is asked again until it takes it.
	hctx, stopHost := context.WithCancel(context.Background())
	defer stopHost()
	go func() {
		for wait := time.Second; ; wait = min(2*wait, 30*time.Second) {
			_, err := c.SignalWithStartWorkflow(hctx, workflows.HostID(o.host), workflows.SignalHostWake, nil,
				activities.HostStartOptions(workflows.HostID(o.host), workflows.TaskQueue, o.host, buildinfo.ID()), activities.HostWorkflowType, activities.HostStart{Name: o.host, Version: workflows.HostVersion})
			if err == nil || hctx.Err() != nil {
				return
			}
			zl.Warn("host workflow: not started yet; trying again", zap.String("host", o.host), zap.Error(err), zap.Duration("in", wait))
			select {
			case <-hctx.Done():
				return
			case <-time.After(wait):
			}
		}
	}()

	zl.Info("steward worker starting", zap.String("address", o.conn.Address), zap.String("namespace", namespace),
		zap.String("taskQueue", workflows.TaskQueue), zap.String("hostTaskQueue", workflows.HostTaskQueue(o.host)),
		zap.Int("poolSize", o.poolSize), zap.String("build", buildinfo.ID()), zap.String("workflowPollerScaling", o.pollerScaling), zap.Int("workflowPollers", o.workflowPollers), zap.String("actionPollerScaling", o.actionPollerScaling), zap.Int("actionPollers", o.actionPollers))
	// Run returns on SIGINT or SIGTERM, after stopping the worker gracefully.
	if err := w.Run(worker.InterruptCh()); err != nil {
		return err
	}
	zl.Info("steward worker stopped")
	return nil
}

// sampleUsage samples the process services' usage every interval until
// ctx ends (one read of /proc each time, whatever their number).
func sampleUsage(ctx context.Context, d *process.Driver, every time.Duration, zl *zap.Logger) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		if err := d.SampleUsage(time.Now()); err != nil {
			zl.Warn("process: usage", zap.Error(err))
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// hostAddress is the first global unicast address of this machine's
// interfaces ("" when it has none): what `starter hosts` shows.
func hostAddress() string {
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return ""
	}
	for _, a := range addrs {
		if ip, ok := a.(*net.IPNet); ok && ip.IP.IsGlobalUnicast() {
			return ip.IP.String()
		}
	}
	return ""
}

// registerFlags defines the worker's flags on fs, into o; --config and
// --version are returned.
func registerFlags(fs *flag.FlagSet, o *options) (config *string, version *bool) {
	fs.StringVar(&o.conn.Address, "address", "", "Temporal frontend address (default: TEMPORAL_ADDRESS, the profile's, or localhost:7233)")
	fs.StringVar(&o.conn.Namespace, "namespace", "", "Temporal namespace (default: TEMPORAL_NAMESPACE, the profile's, or default)")
	fs.StringVar(&o.conn.Profile, "profile", "", "profile of the temporal CLI's config file, temporal.toml (default: TEMPORAL_PROFILE or default)")
	fs.StringVar(&o.conn.Compression, "grpc-compression", "gzip", "compression of requests to Temporal: gzip or none (none saves CPU on both sides when the server is near)")
	fs.IntVar(&o.conn.PayloadVisitConcurrency, "payload-visit-concurrency", temporalclient.PayloadVisitInline, "goroutines the SDK may use to walk one workflow task's payloads (for external storage, which steward does not use): 1 walks them on the task's own goroutine; 0 is the SDK's default (a goroutine per payload, 8 at once), slower under load (docs/benchmarks.md)")
	fs.StringVar(&o.conn.EncryptionKeyFiles, "encryption-key-file", "", "encrypt every payload with AES-256-GCM: key files of 64 hex characters (openssl rand -hex 32), comma-separated, the first encrypts and all decrypt (default: "+temporalclient.EncryptionKeyEnv+")")
	fs.IntVar(&o.poolSize, "pool-size", 10, "actions this process runs at once (its share of the global pool)")
	fs.IntVar(&o.workflowCache, "workflow-cache", 50000, "workflows this process keeps in memory between their tasks (the SDK's sticky cache; about 90 KiB each, measured with 10,000 stub workers): keep it above the workers, supervisors and rollouts it hosts, or tasks replay whole histories")
	fs.IntVar(&o.workflowPollers, "workflow-pollers", 10, "the most workflow-task polls this process holds open on each of its two workflow queues, the shared one and its own sticky one (>= 2)")
	fs.IntVar(&o.actionPollers, "action-pollers", 8, "the most polls for actions this process holds open on each of its activity queues (the pool's, its host's, the control queue's; >= 1; a poll waits for a free slot; a host cut off from the server loses as many tasks as it has polls open, until they expire)")
	fs.StringVar(&o.actionPollerScaling, "action-poller-scaling", pollerAutoscaling, "how many action polls are open: autoscaling (from 2, down to 1 while the queue is idle, up to --action-pollers while it has a backlog, as the server suggests) or fixed (--action-pollers all the time)")
	fs.StringVar(&o.pollerScaling, "workflow-poller-scaling", pollerAutoscaling, "how workflow pollers are shared between the shared queue and the sticky one: autoscaling (each queue keeps at least one poll open, more as its backlog asks) or fixed (the SDK's mixed pollers, which poll only the sticky queue while it has a backlog and can starve the shared one: docs/operations.md, \"Workflow pollers\")")
	fs.DurationVar(&o.stickyTimeout, "sticky-timeout", 2*time.Second, "how long a workflow task waits on this process's sticky queue before any worker may take it (replaying the history): a killed worker's workflows wait this long for their next task, on the failover path of a fleet (docs/fleet.md); the SDK's default is 5s")
	fs.StringVar(&o.host, "host", "local", "name of this machine: the worker also serves the task queue of actions bound to it")
	fs.StringVar(&o.metrics, "metrics", "127.0.0.1:9090", "serve Prometheus metrics (the SDK's and steward's) on this address; empty: off")
	fs.BoolVar(&o.eagerActions, "eager-actions", false, "let the server hand an action straight to the process whose workflow task scheduled it, when it has a free slot (needs the server's system.enableActivityEagerExecution)")
	fs.StringVar(&o.logLevel, "log-level", "info", "log level: debug, info, warn, error")
	fs.StringVar(&o.logDir, "log-dir", filepath.Join(os.TempDir(), "steward", "logs"), "directory for the stdout/stderr logs of supervised processes")
	o.logs = process.LogPolicy{MaxSize: process.DefaultLogMaxBytes, Keep: process.DefaultLogKeep, MaxAge: process.DefaultLogMaxAge}
	fs.Var(sizeFlag{&o.logs.MaxSize}, "log-max-size", "a service's log is rotated when it reaches this size (10Mi, 512Ki, 1G); a service's process.logs.maxSize overrides it")
	fs.IntVar(&o.logs.Keep, "log-keep", o.logs.Keep, "rotated files kept per service log (the newest as written, older ones gzip-compressed); a service's process.logs.keep overrides it")
	fs.Var(ageFlag{&o.logs.MaxAge}, "log-max-age", "a log file not written for this long is removed (30d, 12h; the file a running service writes never is); a service's process.logs.maxAge overrides it")
	fs.StringVar(&o.stateDir, "state-dir", "", "directory for the records of the processes this host's worker started, which outlive it: the next worker of the host adopts them (kept in DIR/<host>; default: <temp dir>/steward/state)")
	fs.StringVar(&o.pprof, "pprof", "", "serve Go's profiles (net/http/pprof) on this address, e.g. 127.0.0.1:6060; empty: off")
	fs.StringVar(&o.policy, "policy", "", "this host's policy (YAML: commands, users, groups, env, secrets, secretEnv, urls, dirs): a process, an http worker or a notification that names what it does not allow is refused before anything runs (docs/security.md); empty: any command a spec names runs as this worker's user")
	fs.StringVar(&o.trustedKeys, "trusted-keys", "", "Ed25519 public keys (PEM files, comma-separated; starter keygen writes them): every process start and http action on this host needs a spec signed by one of them for its own workflow (starter apply --sign-key), no older than the host has run, and every log or usage read a request signed by one (--sign-key on logs, status, top, console)")
	fs.DurationVar(&o.orphanSweep, "orphan-sweep", process.OrphanSweepEvery, "how often this host looks for processes whose workflow closed (a service deleted while this worker was away): one seen so at two looks in a row is stopped")
	fs.DurationVar(&o.usageInterval, "usage-interval", 10*time.Second, "how often this host samples the CPU and memory of its process services (one read of /proc for all of them; starter status and top, and the steward_service_* metrics, show the last sample); 0: never")
	fs.StringVar(&o.conn.TLSCert, "tls-cert", "", "client certificate (PEM) for mutual TLS to Temporal, with --tls-key (default: TEMPORAL_TLS_*, the profile's)")
	fs.StringVar(&o.conn.TLSKey, "tls-key", "", "the client certificate's private key (PEM)")
	fs.StringVar(&o.conn.TLSCA, "tls-ca", "", "the CA (PEM) that signed the server's certificate (default: the system's)")
	fs.StringVar(&o.conn.TLSServerName, "tls-server-name", "", "the name the server's certificate must carry (default: the address's host)")
	fs.StringVar(&o.conn.APIKeyFile, "api-key-file", "", "a file holding an API key for Temporal (Temporal Cloud; default: TEMPORAL_API_KEY, the profile's)")
	config = fs.String("config", "", "a YAML file whose keys are these flags' names (and tls: {cert, key, ca, serverName}, apiKey: {file}); a flag on the command line wins (docs/operations.md)")
	version = fs.Bool("version", false, "print this worker's build and exit")
	return config, version
}
