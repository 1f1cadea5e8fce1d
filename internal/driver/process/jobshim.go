package process

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"syscall"

	"github.com/steward-sh/steward/internal/driver"
)

// A job's process keeps its exit code across its worker's end.
//
// A service's process outlives its worker, and the next worker adopts it:
// it is no longer that worker's child, so its exit code is not known. A
// service's end is a crash or an exit either way; a job's run succeeds or
// fails by its exit code. So a job's command runs under a shim, the
// worker's own binary (Driver.JobShim) run as JobShimArg: the shim starts
// the command as its child, waits for it, writes how it ended to a file of
// the state directory (an open file it inherits, so it needs no right to
// the directory), and exits with the command's exit code. The worker that
// started it sees that exit code as its child's; a worker that adopted it
// reads the file when it ends. The shim runs as the command's user, in its
// directory, environment, process group and cgroup; signals to the group
// (a stop) reach the command, and the shim goes on to note its end.

// JobShimArg, as the first argument of the worker's binary, runs it as a
// job's shim: JobShimArg FD PATH ARGV0 ARGS...
const JobShimArg = "__steward-job-shim"

// jobExit is what the shim writes.
type jobExit struct {
	Code   int    `json:"code"` // -1: a signal ended it
	Reason string `json:"reason"`
}

// RunJobShim is the shim's main: it returns the exit code to exit with.
// args are those after JobShimArg.
func RunJobShim(args []string) int {
	if len(args) < 3 {
		fmt.Fprintln(os.Stderr, "steward job shim: usage: "+JobShimArg+" FD PATH ARGV0 [ARGS...]")
		return 125
	}
	fd, err := strconv.Atoi(args[0])
	if err != nil || fd < 3 {
		fmt.Fprintln(os.Stderr, "steward job shim: bad file descriptor", args[0])
		return 125
	}
	out := os.NewFile(uintptr(fd), "exit")
	syscall.CloseOnExec(fd) // the command does not inherit it
	// Handled (not ignored: an ignored signal stays ignored in the
	// command): the group's signals are the command's to act on.
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP, syscall.SIGQUIT, syscall.SIGUSR1, syscall.SIGUSR2)
	go func() {
		for range sigs { // the command, in the same group, has them too
		}
	}()
	cmd := exec.Command(args[1], args[3:]...)
	cmd.Args[0] = args[2]
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	err = cmd.Run()
	e := jobExit{Code: -1}
	var ee *exec.ExitError
	switch {
	case err == nil:
		e.Code, e.Reason = 0, "exit status 0"
	case errors.As(err, &ee):
		e.Code, e.Reason = ee.ExitCode(), ee.String()
	default:
		e.Code, e.Reason = 127, "cannot run: "+err.Error()
		fmt.Fprintln(os.Stderr, "steward job shim:", err)
	}
	b, _ := json.Marshal(e)
	_, _ = out.Write(b)
	_ = out.Close()
	if e.Code < 0 {
		if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return 128 + int(ws.Signal())
		}
		return 125
	}
	return e.Code
}

// exitPath is where the shim of workflow wfID's job writes its end.
func (d *Driver) exitPath(wfID string) string { return d.recordPath(wfID) + ".exit" }

// shimmed wraps cmd in the job shim, when this driver has one and keeps
// records: the exit file to pass the shim (nil: not shimmed). The file
// descriptor the shim is told is set by passExitFile, once every other
// file the command inherits is known.
func (d *Driver) shimmed(wfID string, cmd *exec.Cmd) (*os.File, error) {
	if d.JobShim == "" || d.StateDir == "" {
		return nil, nil
	}
	path := d.exitPath(wfID)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("process: the job's exit file: %w", err)
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o600)
	if err != nil {
		return nil, fmt.Errorf("process: the job's exit file: %w", err)
	}
	cmd.Args = append([]string{cmd.Args[0], JobShimArg, "", cmd.Path}, cmd.Args...)
	cmd.Path = d.JobShim
	return f, nil
}

// passExitFile adds the exit file to what cmd inherits and tells the shim
// its descriptor.
func passExitFile(cmd *exec.Cmd, f *os.File) {
	fd := 3 + len(cmd.ExtraFiles)
	cmd.ExtraFiles = append(cmd.ExtraFiles, f)
	for i, a := range cmd.Args {
		if a == JobShimArg && i+1 < len(cmd.Args) {
			cmd.Args[i+1] = strconv.Itoa(fd)
			return
		}
	}
}

// shimExit is the end the shim of a job's process wrote (false: none, as
// for a process without a shim or a shim killed before it wrote).
func shimExit(path, instance string, success []int) (driver.Exit, driver.Observation, bool) {
	if path == "" {
		return driver.Exit{}, "", false
	}
	b, err := os.ReadFile(path)
	var e jobExit
	if err != nil || json.Unmarshal(b, &e) != nil {
		return driver.Exit{}, "", false
	}
	exit := driver.Exit{Instance: instance, Reason: e.Reason + " (noted by its job shim)"}
	if e.Code >= 0 {
		code := e.Code
		exit.Code = &code
		exit.Normal = isSuccess(code, success)
	}
	if exit.Normal {
		return exit, driver.Exited, true
	}
	return exit, driver.Crashed, true
}

// isSuccess: code is one of success (0 when none given).
func isSuccess(code int, success []int) bool {
	if len(success) == 0 {
		return code == 0
	}
	for _, s := range success {
		if s == code {
			return true
		}
	}
	return false
}

// maxEndedJobs bounds the ended job runs a driver remembers (a start tried
// again comes within its activity's retries: seconds to minutes).
const maxEndedJobs = 4096

// endedRun is a job run's process that ended: its instance and its end.
type endedRun struct {
	id   string
	exit driver.Exit
}

// noteEndedJobLocked forgets a job's process that ended (nothing starts
// its workflow again) and remembers its instance and end for a start of
// the same run tried again, or an adopt. d.mu is held.
func (d *Driver) noteEndedJobLocked(p *proc) {
	if d.procs[p.id] == p {
		delete(d.procs, p.id)
	}
	d.rememberEndedLocked(p.wfID, p.id, p.exit)
}

// rememberEndedLocked remembers that workflow wfID's job process id ended
// as exit (a start of the run tried again, or an adopt, finds it), the
// last maxEndedJobs of them. d.mu is held.
func (d *Driver) rememberEndedLocked(wfID, id string, exit driver.Exit) {
	if d.endedJobs == nil {
		d.endedJobs = map[string]endedRun{}
	}
	if _, known := d.endedJobs[wfID]; !known {
		d.endedOrder = append(d.endedOrder, wfID)
	}
	d.endedJobs[wfID] = endedRun{id: id, exit: exit}
	for len(d.endedOrder) > maxEndedJobs {
		delete(d.endedJobs, d.endedOrder[0])
		d.endedOrder = d.endedOrder[1:]
	}
}

// endedJob is the instance of workflow wfID's job process that ended, if
// this driver remembers one ("" otherwise).
func (d *Driver) endedJob(wfID string) string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.endedJobs[wfID].id
}

// Run starts the job's run r (or with adopt only finds it) and waits for
// its end (driver.Runner). Its end is its answer: it is not pushed, unless
// ctx ends first (then the end is pushed as any is).
func (d *Driver) Run(ctx context.Context, r driver.Request, adopt bool) (driver.Exit, error) {
	if !r.Spec.IsJob() {
		return driver.Exit{}, driver.Permanent(fmt.Errorf("process: %s is not a job: only a job's run is awaited", r.Path))
	}
	id := ""
	if adopt {
		if live := d.live(r.WorkflowID); len(live) > 0 { // adopted from its record if need be
			id = live[0].id
		}
	} else {
		c, err := ParseConfig(r.Spec.Process)
		if err != nil {
			return driver.Exit{}, driver.Permanent(err)
		}
		if id, err = d.start(ctx, r, c, true); err != nil {
			return driver.Exit{}, err
		}
	}
	return d.waitEnd(ctx, r.WorkflowID, id)
}

// waitEnd waits for the end of workflow wfID's job process id (any of its
// job's, for "": one that ended), marked awaited meanwhile.
func (d *Driver) waitEnd(ctx context.Context, wfID, id string) (driver.Exit, error) {
	d.mu.Lock()
	p := d.procs[id]
	if p == nil {
		e, ok := d.endedJobs[wfID]
		d.mu.Unlock()
		if ok && (id == "" || e.id == id) {
			return e.exit, nil
		}
		return driver.Exit{}, driver.ErrRunUnknown
	}
	p.awaited = true
	d.mu.Unlock()
	select {
	case <-p.exited:
	case <-ctx.Done():
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	select {
	case <-p.exited: // (its end, not pushed: awaited when it came)
		return p.exit, nil
	default:
		p.awaited = false // its end, to come, is pushed
		return driver.Exit{}, ctx.Err()
	}
}
