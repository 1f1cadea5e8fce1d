package process

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/steward-sh/steward/internal/driver"
	"github.com/steward-sh/steward/internal/spec"
)

func jobReq(wfID string, cfg map[string]any) driver.Request {
	r := req(wfID, cfg)
	r.Spec.Job = &spec.Job{Every: spec.Dur(time.Minute)}
	return r
}

// shimDriver is a driver with a state directory whose jobs run under the
// shim (this test binary, as the worker's own).
func shimDriver(t *testing.T) (*Driver, string, *recorder) {
	need(t, "sh")
	rec := newRecorder()
	d, dir := newDriver(t, rec)
	d.StateDir = filepath.Join(dir, "state")
	self, err := os.Executable()
	require.NoError(t, err)
	d.JobShim = self
	return d, dir, rec
}

// A job's process runs under the shim: its end is pushed with its exit
// code, its start tried again (running or ended) is the same process, and
// nothing of it is left in the state directory once its end is told.
func TestJobRunStartsOnceAndKeepsItsExitCode(t *testing.T) {
	d, dir, rec := shimDriver(t)
	count := filepath.Join(dir, "starts")
	r := jobReq("t/backup/run-1", map[string]any{"command": "sh", "args": []string{"-c", "echo x >> " + count + "; sleep 0.3; exit 5"}})

	id, err := d.Start(context.Background(), r)
	require.NoError(t, err)
	again, err := d.Start(context.Background(), r)
	require.NoError(t, err)
	require.Equal(t, id, again, "running: the same process")

	select {
	case p := <-rec.ch:
		require.Equal(t, "t/backup/run-1", p.wfID)
		require.Equal(t, id, p.exit.Instance)
		require.False(t, p.exit.Normal)
		require.NotNil(t, p.exit.Code)
		require.Equal(t, 5, *p.exit.Code)
		require.Contains(t, p.exit.Reason, "noted by its job shim")
	case <-time.After(10 * time.Second):
		t.Fatal("no exit pushed")
	}
	after, err := d.Start(context.Background(), r)
	require.NoError(t, err)
	require.Equal(t, id, after, "ended: still the same process, not a second run")
	b, err := os.ReadFile(count)
	require.NoError(t, err)
	require.Equal(t, 1, strings.Count(string(b), "x"), "the command ran once")
	require.Eventually(t, func() bool {
		left, _ := filepath.Glob(filepath.Join(d.StateDir, "*"))
		return len(left) == 0
	}, 5*time.Second, 50*time.Millisecond, "its record and exit file removed once its end is told")
}

// A job's start that fails before its process runs leaves no exit file.
func TestJobFailedStartLeavesNoExitFile(t *testing.T) {
	d, dir := newDriver(t, newRecorder())
	d.StateDir = filepath.Join(dir, "state")
	d.JobShim = "/nonexistent/steward-worker"
	_, err := d.Start(context.Background(), jobReq("t/j/run-1", map[string]any{"command": "/bin/true", "dir": filepath.Join(dir, "missing")}))
	require.Error(t, err)
	left, _ := filepath.Glob(filepath.Join(d.StateDir, "*.exit"))
	require.Empty(t, left)
}

// Run awaits a job's end itself: the end is its answer and is not pushed;
// run again, or adopted, it is the same process's end (the command ran
// once); a run to adopt this host does not know is ErrRunUnknown; a wait
// given up (its context ended) leaves the end to be pushed.
func TestJobRunAwaitedIsNotPushed(t *testing.T) {
	d, dir, rec := shimDriver(t)
	count := filepath.Join(dir, "starts")
	r := jobReq("t/backup/run-1", map[string]any{"command": "sh", "args": []string{"-c", "echo x >> " + count + "; exit 4"}})

	e, err := d.Run(context.Background(), r, false)
	require.NoError(t, err)
	require.NotNil(t, e.Code)
	require.Equal(t, 4, *e.Code)
	require.False(t, e.Normal)
	again, err := d.Run(context.Background(), r, false)
	require.NoError(t, err)
	require.Equal(t, e.Instance, again.Instance, "run again: the same process's end")
	adopted, err := d.Run(context.Background(), r, true)
	require.NoError(t, err)
	require.Equal(t, e.Instance, adopted.Instance)
	b, err := os.ReadFile(count)
	require.NoError(t, err)
	require.Equal(t, 1, strings.Count(string(b), "x"), "the command ran once")
	select {
	case p := <-rec.ch:
		t.Fatalf("an awaited end was pushed too: %+v", p)
	default:
	}

	_, err = d.Run(context.Background(), jobReq("t/backup/run-2", map[string]any{"command": "true"}), true)
	require.ErrorIs(t, err, driver.ErrRunUnknown, "adopt never starts")

	slow := jobReq("t/backup/run-3", map[string]any{"command": "sh", "args": []string{"-c", "sleep 0.5; exit 0"}})
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err = d.Run(ctx, slow, false)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	select {
	case p := <-rec.ch:
		require.Equal(t, "t/backup/run-3", p.wfID)
		require.True(t, p.exit.Normal)
	case <-time.After(10 * time.Second):
		t.Fatal("a wait given up: its end was not pushed")
	}
}

// A job's process that ended while no worker ran: the next worker's
// Recover reports its end (its exit code, the shim's note) and remembers
// it, so that the run's next attempt, adopting, gets that end instead of
// ErrRunUnknown (TestJobRunSurvivesAWorkerKill, the run of version 2).
func TestJobEndedWhileNoWorkerRanIsKnownToTheNextOnesAdopt(t *testing.T) {
	d, _, _ := shimDriver(t)
	d.KeepOnClose = true // as a worker's: its processes outlive it
	// (Long enough that the driver is closed before it ends, on a loaded
	// machine too: ended before, its end was pushed and its record gone.)
	r := jobReq("t/backup/run-1", map[string]any{"command": "sh", "args": []string{"-c", "sleep 2; exit 7"}})
	id, err := d.Start(context.Background(), r)
	require.NoError(t, err)
	d.Close() // the worker gone: the process runs on, its record stays
	pid := pidOf(id)
	require.Eventually(t, func() bool { return !alive(pid) }, 10*time.Second, 20*time.Millisecond)
	// (And its end seen by the closed driver's own wait, which logs: done
	// with the test's logger before the test ends.)
	require.Eventually(t, func() bool { return d.endedJob(r.WorkflowID) != "" }, 10*time.Second, 20*time.Millisecond)

	next, rec, adopted, ended := recoverFrom(t, d.StateDir)
	require.Zero(t, adopted)
	require.Equal(t, 1, ended)
	select {
	case p := <-rec.ch:
		require.NotNil(t, p.exit.Code, p.exit.Reason)
		require.Equal(t, 7, *p.exit.Code)
	case <-time.After(5 * time.Second):
		t.Fatal("its end was not reported")
	}
	e, err := next.Run(context.Background(), r, true)
	require.NoError(t, err)
	require.Equal(t, id, e.Instance)
	require.NotNil(t, e.Code)
	require.Equal(t, 7, *e.Code)
}

// Regression (attack review): a job run that passed its timeout, or was
// cancelled (`overlap: cancelOther`, `temporal workflow cancel`), gave up
// its wait (Run) and asked a stop that names no instance, and the stop did
// nothing: the run was recorded stopped while its process ran on beside
// the schedule's next run. The stop of a job's run stops its live process.
func TestJobRunGivenUpIsStoppedByItsStop(t *testing.T) {
	d, _, _ := shimDriver(t)
	r := jobReq("t/backup/run-9", map[string]any{"command": "sleep", "args": []string{"30"}})
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	_, err := d.Run(ctx, r, false)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	live := d.live(r.WorkflowID)
	require.Len(t, live, 1, "still running once its wait is given up")
	pid := live[0].pid

	require.NoError(t, d.Stop(context.Background(), r), "a stop naming no instance (the run's, after its timeout)")
	require.Empty(t, d.live(r.WorkflowID), "its process is stopped")
	require.Error(t, syscall.Kill(pid, 0), "pid %d is gone", pid)
}
