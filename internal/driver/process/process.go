//go:build unix

// Package process is the process driver of docs/contract.md: it runs a worker as
// a local OS process on the host whose worker serves the action (routing by
// `host` happens before the driver: it only ever runs processes locally).
//
// The command runs without a shell, with the environment, identity and
// limits of identity.go (prepare) and Dir as its working directory, in a
// session and process group of its own. The driver runs the file the
// command resolves to, every link followed (admission.Resolve; under a
// host policy, the file the policy checked right there), with argv[0] as
// the spec writes it; so do exec probes (resolved at the start) and a
// reload's exec. It writes its stdout and stderr
// itself to one log file per workflow under the log directory the worker
// is given (its name: the workflow ID with '/' and other unsafe characters
// replaced by '_', cut, plus a hash of the exact ID and ".log"; see
// logfile.go), which the driver rotates by size and keeps within a
// number of files and an age (logrotate.go).
//
// Start waits StartSeconds (default 1s), or for the ready probe to pass
// (probe.go): a process that ends sooner is a failed start, a retryable
// error carrying its exit status and the last lines of its log. A command
// that cannot be run at all (not found, not executable, a missing working
// directory) is driver.Permanent. The instance identifier is
// "proc/<pid>/<start ticks>@<workflowID>": pid and start time name the
// process for good (adopt.go).
//
// Stop sends the stop signal (SIGTERM by default) to the group, waits until
// shortly before the context's deadline (the stop timeout; DefaultStopGrace
// without one), then sends SIGKILL. When the group leader ends for any
// reason, what is left of its group is killed, so a restart never races a
// leftover child for a port.
//
// A process outlives the worker that started it, and the next worker of
// the host adopts it (adopt.go). One with dieWithWorker is started with
// Pdeathsig SIGKILL instead. Linux sends that signal when the *thread*
// that forked the child exits, not the process, and the Go runtime may
// retire threads; so every process is forked from one goroutine locked to
// its OS thread for the driver's whole life.
//
// An exit is pushed through the Notifier as soon as the process ends,
// unless our own Stop (or Close) ended it. An instance this driver neither
// holds nor can adopt (it ended while no worker watched it) observes as
// Crashed ("gone") so the workflow starts it again, and stopping it
// succeeds at once: the driver never signals a pid whose start time is not
// the instance's, since pids are reused.
//
// Limitations: a descendant that left the process group (setsid,
// daemonizing) is not reached by the group kill at stop or exit, nor by
// Pdeathsig, which the kernel also clears when the child execs a
// set-user-ID or set-group-ID binary. The package builds on Unix only;
// Pdeathsig and adoption work on Linux only (see sysproc_*.go).
package process

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"sync"
	"syscall"
	"time"

	"go.uber.org/zap"

	"github.com/steward-sh/steward/internal/admission"
	"github.com/steward-sh/steward/internal/cgroup"
	"github.com/steward-sh/steward/internal/driver"
	"github.com/steward-sh/steward/internal/spec"
)

// DefaultStopGrace is how long Stop waits after SIGTERM when its context
// has no deadline.
const DefaultStopGrace = 10 * time.Second

// tailLines is how many lines of output a failed start reports.
const tailLines = 10

// Driver is the process driver. Its zero value is not usable: call New.
type Driver struct {
	// Logs is the host's log policy (logrotate.go; a zero field: its
	// default). Set it before the first Start.
	Logs LogPolicy

	// JobShim is the worker's own binary, which runs a job's command as
	// its shim (jobshim.go; "": none, and a job's process adopted by a
	// later worker ends with its exit code unknown).
	JobShim string

	// StateDir, when set, keeps a record of every process that outlives
	// its worker (adopt.go): the next worker of the host adopts what still
	// runs and reports what ended. Set it before Recover and the first
	// Start.
	StateDir string
	// KeepOnClose: Close leaves running the processes that outlive their
	// worker (the worker sets it; tests and tools leave it false: Close
	// kills every process, as at a crash with dieWithWorker).
	KeepOnClose bool
	// AdoptRecordedOnly: a stop or an observe of an instance this driver
	// does not hold takes it over only when StateDir's record of its
	// workflow names it (a host with a policy or trusted keys: the
	// instance in a request could name any process). Otherwise it is taken
	// over when its pid and start time match.
	AdoptRecordedOnly bool
	// Policy is the host's command policy (worker --policy; nil: none).
	// The activities check a spec against it before an action; the driver
	// checks again what it is about to run, where it runs it: the file a
	// program resolves to (which it then runs, never the spec's string
	// again) and the names of the environment it assembles (an envFile's
	// are known only here). Set it before the first Start.
	Policy *admission.Policy

	logDir   string
	notifier driver.Notifier
	log      *zap.Logger
	// quit ends the watchers of adopted processes and the log rotator.
	quit chan struct{}

	// spawn carries forks to the goroutine locked to its thread.
	spawnMu     sync.Mutex
	spawn       chan spawnReq
	spawnClosed bool

	// endedJobs are the job runs' processes that ended, by workflow (the
	// last maxEndedJobs, oldest first in endedOrder): a start of the same
	// run tried again finds its process there (under mu).
	endedJobs  map[string]endedRun
	endedOrder []string
	// endedProcs are the services' processes that ended and are still in
	// procs (for an observe of their outcome), oldest first: past
	// maxEndedProcs the oldest is forgotten (under mu).
	endedProcs []string

	recMu   sync.Mutex           // the records in StateDir
	rotMu   sync.Mutex           // log rotations and indexes
	samples map[string]logSample // by log path, under rotMu

	mu     sync.Mutex
	procs  map[string]*proc
	usage  map[string]*usageOf // by workflow ID (usage.go)
	closed bool
	wg     sync.WaitGroup
}

// proc is one process this driver started or adopted.
type proc struct {
	id   string
	wfID string
	// exitFile is where a job's shim notes its command's end (jobshim.go);
	// job: the process is a job's run (forgotten once it ends: no start
	// of its workflow comes after it).
	exitFile string
	job      bool
	// awaited: a RunJob activity waits for its end (Driver.Run), which is
	// then its answer, not pushed (under Driver.mu).
	awaited bool
	cmd     *exec.Cmd // nil for an adopted process (not our child)
	pid     int
	ticks   uint64        // its start time (clock ticks since boot): pid + ticks identify it
	exited  chan struct{} // closed (under Driver.mu) when the process ended
	// dieWithWorker: Close kills it (and Pdeathsig did, on a crash).
	dieWithWorker bool

	// stopSignal is what a stop sends first; success the normal exits;
	// health its health probe (nil: none), kept in its record.
	stopSignal syscall.Signal
	success    []int
	health     *Probe

	// Guarded by Driver.mu.
	exit     driver.Exit
	obs      driver.Observation
	started  bool // its start succeeded: an exit from now on is pushed
	stopping bool // we are ending it: its exit is not pushed
	// unhealthy: its health probe failed too often and the driver ended
	// it; the reason is its exit's (a crash, pushed).
	unhealthy string

	// notify is its notification socket (process.notify; nil: none), and
	// watchdog its watchdog period (0: none).
	notify     *notifier
	notifyName string // kept in its record even when no socket is bound
	watchdog   time.Duration
	// cgroup is its group (process.resources; nil: none), memoryMax the
	// group's memory limit, restartOnMemory the memory it is restarted
	// over (0: never).
	cgroup          *cgroup.Group
	memoryMax       int64
	restartOnMemory int64
	// logPath is the log file it writes ("": none), rotated while it runs:
	// LogPath, or the legacy name for a process an older worker started
	// (logfile.go).
	logPath string
	// logs is its service's log policy (process.logs; zero: the host's).
	logs LogPolicy
}

type spawnReq struct {
	cmd  *exec.Cmd
	done chan error
}

// New returns a process driver that writes logs under logDir (empty: output
// is discarded, except the tail kept for start errors) and pushes exits
// through n (nil: no push).
func New(logDir string, n driver.Notifier, log *zap.Logger) *Driver {
	if log == nil {
		log = zap.NewNop()
	}
	servicesGetDefaultSignals()
	d := &Driver{
		logDir:   logDir,
		samples:  map[string]logSample{},
		notifier: n,
		log:      log,
		spawn:    make(chan spawnReq),
		procs:    map[string]*proc{},
		quit:     make(chan struct{}),
	}
	d.wg.Add(2)
	go d.spawner()
	go d.rotator()
	return d
}

// spawner forks every process from one OS thread, which lives as long as
// the driver: Pdeathsig fires when the forking thread exits.
func (d *Driver) spawner() {
	defer d.wg.Done()
	// Never unlocked: when this goroutine returns (at Close, after every
	// child is dead) the runtime retires the thread with it.
	runtime.LockOSThread()
	for req := range d.spawn {
		req.done <- req.cmd.Start()
	}
}

// Start runs the command and waits StartSeconds for it to stay up.
func (d *Driver) Start(ctx context.Context, r driver.Request) (string, error) {
	c, err := ParseConfig(r.Spec.Process)
	if err != nil {
		return "", driver.Permanent(err)
	}
	return d.start(ctx, r, c, false)
}

// Stop ends the instance: SIGTERM to its group, SIGKILL shortly before the
// context's deadline. An instance this driver does not hold is not running
// (see the package comment), so stopping it succeeds.
func (d *Driver) Stop(ctx context.Context, r driver.Request) error {
	if r.Instance == "" && r.Spec.IsJob() {
		// A job run's stop after its timeout or its cancel: the run that
		// awaited it (Run) gave up its wait and names no instance. The
		// run's workflow is its own (one per run), so its live process is
		// the one to stop; a stop that did nothing here left it running
		// beside the schedule's next run.
		return d.stopLive(ctx, r, false)
	}
	p := d.held(r)
	d.mu.Lock()
	if p != nil {
		p.stopping = true
	}
	d.mu.Unlock()
	if p == nil {
		return nil
	}
	if err := d.terminate(ctx, p); err != nil {
		return err
	}
	d.forget(p)
	return nil
}

// Restart stops the instance (if any) and starts a new one.
func (d *Driver) Restart(ctx context.Context, r driver.Request) (string, error) {
	c, err := ParseConfig(r.Spec.Process)
	if err != nil {
		return "", driver.Permanent(err)
	}
	if r.Instance != "" {
		if err := d.Stop(ctx, r); err != nil {
			return "", err
		}
	}
	return d.start(ctx, r, c, false)
}

// Observe reports Running while the process runs, Exited or Crashed once it
// ended, and Crashed for an instance this driver does not hold.
func (d *Driver) Observe(ctx context.Context, r driver.Request) (driver.Observation, error) {
	p := d.held(r)
	d.mu.Lock()
	defer d.mu.Unlock()
	if p == nil {
		return driver.Crashed, nil
	}
	select {
	case <-p.exited:
		return p.obs, nil
	default:
		return driver.Running, nil
	}
}

// Close stops watching: it kills the process groups that die with their
// worker (all of them unless KeepOnClose), waits for them and for exit
// pushes in progress, and stops the spawning thread. The others keep
// running, recorded in StateDir for the next worker. Exits caused by Close
// are not pushed. Start fails after Close.
func (d *Driver) Close() {
	d.mu.Lock()
	if d.closed {
		d.mu.Unlock()
		return
	}
	d.closed = true
	var kill []*proc
	for _, p := range d.procs {
		p.stopping = true
		select {
		case <-p.exited:
			continue // ended already: its pid may be another's by now
		default:
		}
		// Without a start time (not Linux) a process cannot be adopted:
		// it does not outlive its worker either.
		if !d.KeepOnClose || p.dieWithWorker || p.ticks == 0 {
			kill = append(kill, p)
		}
	}
	d.mu.Unlock()
	for _, p := range kill {
		signalGroup(p.pid, syscall.SIGKILL)
	}
	for _, p := range kill {
		select {
		case <-p.exited: // the watchers see the end before quit closes
		case <-time.After(5 * time.Second):
			d.log.Warn("process: still running after SIGKILL", zap.String("instance", p.id))
		}
	}
	close(d.quit)
	// The notification sockets of the processes left running: the next
	// worker binds them again when it adopts them.
	d.mu.Lock()
	for _, p := range d.procs {
		if p.notify != nil {
			p.notify.close()
		}
	}
	d.mu.Unlock()
	d.spawnMu.Lock()
	if !d.spawnClosed {
		d.spawnClosed = true
		close(d.spawn)
	}
	d.spawnMu.Unlock()
	d.wg.Wait()
}

// Running returns how many processes this driver holds that still run.
func (d *Driver) Running() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	n := 0
	for _, p := range d.procs {
		select {
		case <-p.exited:
		default:
			n++
		}
	}
	return n
}

func (d *Driver) start(ctx context.Context, r driver.Request, c Config, await bool) (string, error) {
	wfID := r.WorkflowID
	if err := ctx.Err(); err != nil {
		return "", err
	}
	// Its record's file must not be another workflow's (adopt.go): refused
	// before anything runs.
	if err := d.recordOwner(wfID); err != nil {
		return "", err
	}
	// A job's run starts its process once: a start tried again (its
	// activity's worker died after the process began, or its answer was
	// lost) is that process, running or ended (its end is told as any is).
	if r.Spec.IsJob() {
		if live := d.live(wfID); len(live) > 0 {
			return live[0].id, nil
		}
		if id := d.endedJob(wfID); id != "" {
			return id, nil
		}
	}
	// Exactly one process per service: one of this workflow that still
	// runs is stopped before the new one starts.
	if err := d.stopEarlier(ctx, r); err != nil {
		return "", err
	}
	// The files to run: the command's, and its probes' (a probe runs in
	// the worker's directory), resolved and checked once, here.
	prog, err := d.program("command", c.Command, c.Dir)
	if err != nil {
		return "", err
	}
	for _, probe := range []struct {
		field string
		p     *Probe
	}{{"process.ready.exec", c.Ready}, {"process.health.exec", c.Health}} {
		if probe.p != nil && len(probe.p.Exec) > 0 {
			if probe.p.Path, err = d.program("probe command ("+probe.field+")", probe.p.Exec[0], ""); err != nil {
				return "", err
			}
		}
	}
	cmd := command(context.Background(), prog, append([]string{c.Command}, c.Args...))
	if cmd.Err != nil {
		return "", classify(c.Command, cmd.Err)
	}
	l, err := prepare(c, cmd, d.Policy)
	if err != nil {
		return "", err
	}
	if cr := l.credential; cr != nil {
		for _, p := range []*Probe{c.Ready, c.Health} {
			if p != nil {
				p.Cred = &Credential{UID: cr.Uid, GID: cr.Gid, Groups: cr.Groups}
				p.Dir = cmp.Or(c.Dir, "/")
			}
		}
	}
	cmd.Env = l.env
	cmd.Dir = c.Dir
	if l.path != "" {
		cmd.Path, cmd.Args = l.path, l.args
	}
	job := r.Spec.IsJob()
	var exitFile *os.File
	forked := false
	if job {
		if exitFile, err = d.shimmed(wfID, cmd); err != nil {
			return "", err
		}
		if exitFile != nil {
			defer exitFile.Close() // the shim holds its own copy
			defer func() {
				if !forked { // a start that failed leaves no exit file behind
					_ = os.Remove(exitFile.Name())
				}
			}()
		}
	}
	var nt *notifier
	notifyName := ""
	if c.Notify {
		name, err := newNotifyName()
		notifyName = name
		if err == nil {
			nt, err = listenNotify(name)
		}
		if err != nil {
			return "", err
		}
		cmd.Env = append(cmd.Env, notifyEnv(name, c.Watchdog)...)
	}
	var group *cgroup.Group
	var place func(int) error
	abandon := func() {
		if nt != nil {
			nt.close()
		}
	}
	if c.Resources != nil {
		var drop func()
		group, place, drop, err = cgroupStart(wfID, c.Resources, cmd)
		if err != nil {
			abandon()
			return "", err
		}
		closeNotify := abandon
		abandon = func() { closeNotify(); drop() }
	}
	out, err := d.openLog(wfID, c.Logs)
	if err != nil {
		abandon()
		return "", fmt.Errorf("process: log file: %w", err)
	}
	// The service writes its log file itself (never a pipe to this worker,
	// which it outlives).
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = sysProcAttr(c.DieWithWorker)
	cmd.SysProcAttr.Credential = l.credential
	if exitFile != nil {
		passExitFile(cmd, exitFile)
	}

	err = d.fork(cmd)
	out.Close() // the child holds its own copy
	if err != nil {
		abandon()
		return "", classify(c.Command, err)
	}
	forked = true
	startedAt := time.Now()
	pid := cmd.Process.Pid
	if place != nil {
		if err := place(pid); err != nil {
			signalGroup(pid, syscall.SIGKILL)
			_ = cmd.Wait()
			abandon()
			return "", err
		}
	}
	ticks, _ := startTicks(pid)
	p := &proc{
		id:              fmt.Sprintf("proc/%d/%d@%s", pid, ticks, wfID),
		wfID:            wfID,
		cmd:             cmd,
		pid:             pid,
		ticks:           ticks,
		exited:          make(chan struct{}),
		dieWithWorker:   c.DieWithWorker,
		stopSignal:      c.StopSignal,
		success:         c.SuccessExitCodes,
		health:          c.Health,
		notify:          nt,
		notifyName:      notifyName,
		watchdog:        c.Watchdog,
		cgroup:          group,
		memoryMax:       c.MemoryMax,
		restartOnMemory: c.RestartOnMemory,
		logs:            c.Logs,
	}
	if d.logDir != "" {
		p.logPath = LogPath(d.logDir, wfID)
	}
	if nt != nil {
		go nt.serve(pid)
	}
	d.mu.Lock()
	if d.closed {
		d.mu.Unlock()
		signalGroup(p.pid, syscall.SIGKILL)
		_ = cmd.Wait()
		abandon()
		return "", errors.New("process: driver closed")
	}
	// A job's process runs to completion: its start is its fork, and its
	// end, however soon, is reported as any exit is (its run waits for it).
	p.started, p.job, p.awaited = job, job, job && await
	if exitFile != nil {
		p.exitFile = exitFile.Name()
	}
	d.procs[p.id] = p
	d.mu.Unlock()
	// Recorded from its fork, as starting: a worker killed during the start
	// leaves a record, and the next one ends that process (the start is
	// retried) instead of leaving it unsupervised. A job's, as started: the
	// next worker adopts it (its run's start, tried again, takes it).
	d.record(p, !job)
	go d.wait(p) // not in d.wg: a process that outlives the worker outlives this goroutine's worker too
	d.log.Debug("process: started", zap.String("instance", p.id), zap.String("command", c.Command))
	if job {
		return p.id, nil
	}

	if c.Notify {
		if err := d.awaitNotifyReady(ctx, p, c); err != nil {
			return "", err
		}
	}
	if c.Ready != nil {
		if err := d.awaitReady(ctx, p, c); err != nil {
			return "", err
		}
	} else if !c.Notify {
		timer := time.NewTimer(c.StartSeconds)
		defer timer.Stop()
		select {
		case <-p.exited:
		case <-timer.C:
		case <-ctx.Done():
			d.kill(p)
			return "", fmt.Errorf("process: start of %s abandoned: %w", c.Command, ctx.Err())
		}
	}

	d.mu.Lock()
	select {
	case <-p.exited:
		exit := p.exit
		d.mu.Unlock()
		d.forget(p)
		period := fmt.Sprintf("startSeconds %s", c.StartSeconds)
		switch {
		case c.Ready != nil:
			period = "before its readiness probe passed"
		case c.Notify:
			period = "before it sent READY=1"
		}
		msg := fmt.Sprintf("process: %s ended within its start period (%s after start, %s): %s",
			c.Command, time.Since(startedAt).Round(time.Millisecond), period, exit.Reason)
		if tail := d.tail(wfID); tail != "" {
			msg += "; last output:\n" + tail
		}
		return "", errors.New(msg)
	default:
	}
	p.started = true
	if c.Health != nil && !d.closed {
		d.wg.Add(1)
		go d.watchHealth(p, c.Health)
	}
	if p.notify != nil && p.watchdog > 0 && !d.closed {
		d.wg.Add(1)
		go d.watchWatchdog(p, p.watchdog)
	}
	// Forget this workflow's earlier instances that ended: an unknown
	// instance observes as Crashed anyway, and this bounds the map.
	for id, q := range d.procs {
		if q.wfID == wfID && q != p {
			select {
			case <-q.exited:
				delete(d.procs, id)
			default:
			}
		}
	}
	d.mu.Unlock()
	d.record(p, false)
	return p.id, nil
}

// live lists the processes of workflow wfID that still run (one its
// record names is adopted first, if no worker of this process holds it).
func (d *Driver) live(wfID string) []*proc {
	if d.StateDir != "" {
		d.recMu.Lock()
		rec, _, found := d.recordOf(wfID)
		d.recMu.Unlock()
		if found && rec.Instance != "" {
			d.mu.Lock()
			_, holds := d.procs[rec.Instance]
			d.mu.Unlock()
			if !holds {
				_ = d.adopt(rec, true) // nil when it no longer runs
			}
		}
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	var live []*proc
	for _, p := range d.procs {
		if p.wfID != wfID {
			continue
		}
		select {
		case <-p.exited:
			continue
		default:
		}
		if p.ticks != 0 {
			if t, err := startTicks(p.pid); err != nil || t != p.ticks {
				continue // gone (its end is being seen), or its pid reused
			}
		}
		live = append(live, p)
	}
	return live
}

// stopEarlier stops, as a stop does (its stop signal, then SIGKILL when
// the spec's stop timeout runs out), every process of r's workflow that
// still runs: one this driver holds, and one its record in StateDir names
// (an earlier worker's, adopted now) that no Recover took over. A start
// asked while one runs means the workflow believes it ended, rightly or
// not (an exit signal anyone with access to the namespace can send): left
// running, it would run beside the new one, and its record, overwritten,
// would not let the next worker find it. Liveness is its pid and start
// time, as for adoption: a pid that is another process's by now is never
// signalled.
func (d *Driver) stopEarlier(ctx context.Context, r driver.Request) error {
	return d.stopLive(ctx, r, true)
}

// stopLive stops every live process of r's workflow (stopEarlier); warn:
// it is a start's, which found one it did not expect.
func (d *Driver) stopLive(ctx context.Context, r driver.Request, warn bool) error {
	wfID := r.WorkflowID
	live := d.live(wfID)
	d.mu.Lock()
	for _, p := range live {
		p.stopping = true
	}
	d.mu.Unlock()
	for _, p := range live {
		if warn {
			d.log.Warn(fmt.Sprintf("process: start of %s while its instance %s still runs: stopped it first (an exit report that was not the host's?)", wfID, p.id),
				zap.String("workflow", wfID), zap.String("instance", p.id))
		}
		timeout := spec.DefaultStopTimeout
		if t := r.Spec.Timeouts; t != nil && t.Stop.D() > 0 {
			timeout = t.Stop.D()
		}
		sctx, cancel := context.WithTimeout(ctx, timeout)
		err := d.terminate(sctx, p)
		cancel()
		if err != nil {
			what := "stop"
			if warn {
				what = "start"
			}
			return fmt.Errorf("process: %s of %s: its instance %s still runs: %w", what, wfID, p.id, err)
		}
		d.forget(p)
	}
	return nil
}

// fork starts cmd on the spawning thread.
func (d *Driver) fork(cmd *exec.Cmd) error {
	d.spawnMu.Lock()
	defer d.spawnMu.Unlock()
	if d.spawnClosed {
		return errors.New("process: driver closed")
	}
	req := spawnReq{cmd: cmd, done: make(chan error, 1)}
	d.spawn <- req
	return <-req.done
}

// wait records the process's end, kills what is left of its group, and
// pushes the exit unless we ended it.
func (d *Driver) wait(p *proc) {
	err := p.cmd.Wait()
	signalGroup(p.pid, syscall.SIGKILL) // leftover children
	exit, obs := describe(p.id, p.cmd.ProcessState, err, p.success)
	if e, o, ok := shimExit(p.exitFile, p.id, p.success); ok {
		exit, obs = e, o // the command's own end (a signal's too), not its shim's
	}
	d.ended(p, exit, obs)
}

// ended records the end of p (started or adopted), forgets its record, and
// pushes the exit unless we ended it.
func (d *Driver) ended(p *proc, exit driver.Exit, obs driver.Observation) {
	d.mu.Lock()
	if oom := oomReason(p); oom != "" && !exit.Normal {
		exit.Reason, obs = oom, driver.Crashed
	} else if p.unhealthy != "" {
		exit.Normal, exit.Reason, obs = false, p.unhealthy, driver.Crashed
	}
	p.exit, p.obs = exit, obs
	// Logged before its end is seen (p.exited): whoever waits for that
	// (Stop, Close, Run, a failed start) knows that this goroutine is done
	// with the logger (a test's logger, used after its test ended, is a
	// data race: make test failed on it once).
	d.log.Debug("process: ended", zap.String("instance", p.id), zap.String("reason", exit.Reason))
	close(p.exited)
	if p.job {
		d.noteEndedJobLocked(p)
	} else {
		d.keepEndedLocked(p)
	}
	if p.notify != nil {
		p.notify.close()
	}
	if p.cgroup != nil && !d.closed {
		// (As this worker closes, the record stays: the next worker reads
		// its OOM count and removes it.)
		d.removeCgroup(p.cgroup)
	}
	closed := d.closed
	push := p.started && !p.stopping && !p.awaited && !closed && d.notifier != nil
	if push {
		d.wg.Add(1)
	}
	d.mu.Unlock()
	// What ends as this worker closes stays recorded (the next worker
	// reports its end), and so does an end this worker could not report.
	if !push {
		if !closed {
			d.unrecord(p)
		}
		return
	}
	defer d.wg.Done()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := d.notifier.NotifyExit(ctx, p.wfID, exit); err != nil {
		d.log.Warn("process: could not push exit", zap.String("workflow", p.wfID), zap.String("instance", p.id), zap.Error(err))
		return
	}
	d.unrecord(p)
}

// maxEndedProcs bounds the services' processes that ended and are kept
// for an observe of how they ended (Exited or Crashed; a forgotten one
// observes as Crashed). An observe comes within the worker's observe
// interval of an end; the entry of a service that is never started here
// again (deleted while it crashed, moved away, started by hand) had been
// kept, with its command and its environment, for as long as the worker ran.
var maxEndedProcs = 1024 // (a variable for its test)

// keepEndedLocked notes that p ended, and forgets the oldest ended
// processes past maxEndedProcs. d.mu is held.
func (d *Driver) keepEndedLocked(p *proc) {
	d.endedProcs = append(d.endedProcs, p.id)
	for len(d.endedProcs) > maxEndedProcs {
		id := d.endedProcs[0]
		d.endedProcs = slices.Delete(d.endedProcs, 0, 1)
		if q := d.procs[id]; q != nil {
			select {
			case <-q.exited:
				delete(d.procs, id)
			default: // (an instance ID is never reused: not reached)
			}
		}
	}
}

// terminate sends SIGTERM to the group, then SIGKILL when the grace period
// allowed by ctx runs out, and waits for the process to end.
func (d *Driver) terminate(ctx context.Context, p *proc) error {
	select {
	case <-p.exited:
		return nil
	default:
	}
	signalGroup(p.pid, p.stopSignal)
	grace := time.NewTimer(graceFor(ctx))
	defer grace.Stop()
	select {
	case <-p.exited:
		return nil
	case <-grace.C:
	case <-ctx.Done():
	}
	d.log.Info("process: no exit after the stop signal, killing", zap.String("instance", p.id), zap.String("signal", p.stopSignal.String()))
	signalGroup(p.pid, syscall.SIGKILL)
	// SIGKILL cannot be caught; bound the wait only against a process stuck
	// in the kernel, whatever is left of ctx.
	select {
	case <-p.exited:
		return nil
	case <-time.After(5 * time.Second):
		return fmt.Errorf("process: %s still running after SIGKILL", p.id)
	}
}

// graceFor is how long to wait after SIGTERM: until shortly before ctx's
// deadline (a tenth of the time left, at most 2s, is kept for SIGKILL and
// the reply).
func graceFor(ctx context.Context) time.Duration {
	deadline, ok := ctx.Deadline()
	if !ok {
		return DefaultStopGrace
	}
	left := time.Until(deadline)
	if left <= 0 {
		return 0
	}
	return left - min(left/10, 2*time.Second)
}

// forget drops p from the driver's instances.
func (d *Driver) forget(p *proc) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.procs[p.id] == p {
		delete(d.procs, p.id)
	}
}

// signalGroup signals the process group led by pid; a group that is gone
// is not an error.
func signalGroup(pid int, sig syscall.Signal) {
	if pid > 0 {
		_ = syscall.Kill(-pid, sig)
	}
}

// describe turns the end of a process into its exit and observation.
func describe(id string, st *os.ProcessState, err error, success []int) (driver.Exit, driver.Observation) {
	if st == nil {
		reason := "gone"
		if err != nil {
			reason = err.Error()
		}
		return driver.Exit{Instance: id, Reason: reason}, driver.Crashed
	}
	code := st.ExitCode() // -1 when a signal ended it
	normal := code >= 0 && slices.Contains(success, code)
	if len(success) == 0 {
		normal = st.Success()
	}
	exit := driver.Exit{Instance: id, Normal: normal, Reason: st.String()}
	if code >= 0 {
		exit.Code = &code
	}
	if exit.Normal {
		return exit, driver.Exited
	}
	return exit, driver.Crashed
}

// classify marks a start failure that retrying cannot fix as Permanent: a
// command that is missing or not executable, a missing or unusable working
// directory. Others (out of processes or memory) are retried.
// program is the file to run for a spec's program (its command, or a
// probe's or a reload's argv[0], taken from dir when relative): its
// canonical path, every link followed (admission.Resolve), which the
// caller runs instead of the spec's string, so that a link changed later
// does not change what runs. Under a policy that path must be allowed (a
// refusal, Permanent). Without one, a program that cannot be resolved is
// "": it is run as written, and the exec says why it fails.
func (d *Driver) program(what, name, dir string) (string, error) {
	path, err := d.Policy.Program(what, name, dir)
	switch {
	case err == nil:
		return path, nil
	case d.Policy != nil:
		return "", driver.Permanent(err)
	}
	return "", nil
}

// command is the command that runs argv: the file path (program's) with
// argv[0] as the spec writes it (a program such as busybox goes by its
// argv[0]), or, when path is "", argv[0] looked up as os/exec does. It
// ends with ctx (context.Background: never).
func command(ctx context.Context, path string, argv []string) *exec.Cmd {
	if path == "" {
		return exec.CommandContext(ctx, argv[0], argv[1:]...)
	}
	cmd := exec.CommandContext(ctx, path, argv[1:]...)
	cmd.Args[0] = argv[0]
	return cmd
}

func classify(command string, err error) error {
	err = fmt.Errorf("process: cannot run %s: %w", command, err)
	switch {
	case errors.Is(err, exec.ErrNotFound),
		errors.Is(err, exec.ErrDot),
		errors.Is(err, fs.ErrNotExist),
		errors.Is(err, fs.ErrPermission),
		errors.Is(err, syscall.ENOEXEC),
		errors.Is(err, syscall.ENOTDIR),
		errors.Is(err, syscall.EISDIR):
		return driver.Permanent(err)
	}
	return err
}

// kill ends a process whose start is abandoned: SIGKILL to its group, and
// the driver forgets it (its exit is not pushed).
func (d *Driver) kill(p *proc) {
	d.mu.Lock()
	p.stopping = true
	d.mu.Unlock()
	signalGroup(p.pid, syscall.SIGKILL)
	<-p.exited
	d.forget(p)
}
