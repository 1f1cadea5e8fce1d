//go:build linux

package process

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
	"go.uber.org/zap/zaptest"

	"github.com/steward-sh/steward/internal/driver"
	"github.com/steward-sh/steward/internal/spec"
)

const helperEnv = "STEWARD_PROCESS_TEST_HELPER"

func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == JobShimArg { // this binary as a job's shim
		os.Exit(RunJobShim(os.Args[2:]))
	}
	if os.Getenv(helperEnv) == "1" {
		helperMain()
		return
	}
	goleak.VerifyTestMain(m)
}

// helperMain is the worker stand-in of TestOrphanFree and
// TestSurvivesItsWorker: it starts `sleep 60` through the driver (dying
// with it when STEWARD_PROCESS_TEST_DIE is set; recorded in
// STEWARD_PROCESS_TEST_STATE), prints its instance, and waits to be killed.
func helperMain() {
	d := New("", nil, nil)
	d.StateDir = os.Getenv("STEWARD_PROCESS_TEST_STATE")
	d.KeepOnClose = true
	id, err := d.Start(context.Background(), req("helper", map[string]any{
		"command": "sleep", "args": []string{"60"}, "startSeconds": "100ms",
		"dieWithWorker": os.Getenv("STEWARD_PROCESS_TEST_DIE") != "",
	}))
	if err != nil {
		fmt.Println("ERR", err)
		os.Exit(1)
	}
	fmt.Printf("PID %s\n", id)
	for {
		time.Sleep(time.Minute)
	}
}

// recorder is a Notifier that keeps the exits it is given.
type recorder struct{ ch chan pushed }

type pushed struct {
	wfID string
	exit driver.Exit
}

func newRecorder() *recorder { return &recorder{ch: make(chan pushed, 16)} }

func (r *recorder) NotifyExit(_ context.Context, wfID string, e driver.Exit) error {
	r.ch <- pushed{wfID, e}
	return nil
}

func req(wfID string, cfg map[string]any) driver.Request {
	return driver.Request{WorkflowID: wfID, Path: wfID, Spec: spec.Node{Kind: spec.KindProcess, Process: cfg}, Attempt: 1}
}

func need(t *testing.T, names ...string) {
	t.Helper()
	for _, n := range names {
		if _, err := exec.LookPath(n); err != nil {
			t.Skipf("%s not available: %v", n, err)
		}
	}
}

func newDriver(t *testing.T, n driver.Notifier) (*Driver, string) {
	t.Helper()
	dir := t.TempDir()
	d := New(dir, n, zaptest.NewLogger(t))
	t.Cleanup(d.Close)
	return d, dir
}

func pidOf(instance string) int {
	parts := strings.Split(instance, "/")
	if len(parts) < 3 {
		return 0
	}
	pid, _ := strconv.Atoi(parts[1])
	return pid
}

// alive reports whether pid is a live (not zombie) process.
func alive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 || i+2 >= len(s) {
		return false
	}
	state := s[i+2]
	return state != 'Z' && state != 'X'
}

// groupGone reports whether no live (non-zombie) process is left in the
// process group pgid. Zombies count as gone: a grandchild reparented to an
// init that does not reap stays a zombie in its group.
func groupGone(pgid int) bool {
	if errors.Is(syscall.Kill(-pgid, 0), syscall.ESRCH) {
		return true
	}
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, path := range stats {
		b, err := os.ReadFile(path)
		if err != nil {
			continue
		}
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+1:]) // state ppid pgrp ...
		if len(f) >= 3 && f[2] == strconv.Itoa(pgid) && f[0] != "Z" && f[0] != "X" {
			return false
		}
	}
	return true
}

func eventuallyGroupGone(t *testing.T, pgid int) {
	t.Helper()
	require.Eventually(t, func() bool { return groupGone(pgid) }, 5*time.Second, 10*time.Millisecond,
		"process group %d still has live members", pgid)
}

func sleepCfg() map[string]any {
	return map[string]any{"command": "sleep", "args": []string{"60"}, "startSeconds": "200ms"}
}

func TestParseConfig(t *testing.T) {
	c, err := ParseConfig(map[string]any{"command": "/bin/app"})
	require.NoError(t, err)
	require.Equal(t, Config{Command: "/bin/app", StartSeconds: time.Second, Host: "local", StopSignal: syscall.SIGTERM, SuccessExitCodes: []int{0}}, c)

	c, err = ParseConfig(map[string]any{
		"command": "app", "args": []any{"-a", "b"}, "env": map[string]any{"K": "v"},
		"dir": "/tmp", "startSeconds": "250ms", "host": "db1",
	})
	require.NoError(t, err)
	require.Equal(t, Config{Command: "app", Args: []string{"-a", "b"}, Env: map[string]spec.Value{"K": spec.Literal("v")},
		Dir: "/tmp", StartSeconds: 250 * time.Millisecond, Host: "db1", StopSignal: syscall.SIGTERM, SuccessExitCodes: []int{0}}, c)

	c, err = ParseConfig(map[string]any{
		"command": "app", "stopSignal": "INT", "successExitCodes": []any{0, 3},
		"ready":  map[string]any{"http": "http://127.0.0.1:1/ready"},
		"health": map[string]any{"tcp": "127.0.0.1:1", "failureThreshold": 2},
	})
	require.NoError(t, err)
	require.Equal(t, syscall.SIGINT, c.StopSignal)
	require.Equal(t, []int{0, 3}, c.SuccessExitCodes)
	require.Equal(t, &Probe{HTTP: "http://127.0.0.1:1/ready", Interval: 500 * time.Millisecond}, c.Ready, "timeout: the start timeout's")
	require.Equal(t, &Probe{TCP: "127.0.0.1:1", Interval: 10 * time.Second, Timeout: 2 * time.Second, Threshold: 2}, c.Health)

	for name, m := range map[string]map[string]any{
		"nil":           nil,
		"no command":    {"args": []string{"x"}},
		"unknown field": {"command": "app", "logDir": "/tmp"},
		"bad duration":  {"command": "app", "startSeconds": "soon"},
		"number":        {"command": "app", "startSeconds": 5},
		"negative":      {"command": "app", "startSeconds": "-1s"},
		"wrong type":    {"command": "app", "args": "one two"},
		"env not map":   {"command": "app", "env": []string{"A=b"}},
	} {
		_, err := ParseConfig(m)
		require.Error(t, err, name)
	}
}

func TestLogName(t *testing.T) {
	require.Regexp(t, `^tree_web_api\+[0-9a-f]{16}\.log$`, logName("tree/web/api"))
	require.Regexp(t, `^_\+[0-9a-f]{16}\.log$`, logName(""))
	require.Regexp(t, `^\.\._etc_passwd\+[0-9a-f]{16}\.log$`, logName("../etc/passwd"))
	require.NotContains(t, logName("a/../../b"), "/")
	require.Equal(t, "tree_web_api.log", legacyLogName("tree/web/api"), "the layout of older workers")
	// The layout is a contract between a worker and the next (docs/operations.md's example).
	require.Equal(t, "demo_hello+656931a916f2414f.log", logName("demo/hello"))
	require.Equal(t, "shop_web+97375646b1deb3d2", fileStem("shop/web"))
}

func TestStartThenObserveRunning(t *testing.T) {
	t.Parallel()
	need(t, "sleep")
	d, _ := newDriver(t, nil)
	r := req("tree/a", sleepCfg())
	begin := time.Now()
	id, err := d.Start(context.Background(), r)
	require.NoError(t, err)
	require.GreaterOrEqual(t, time.Since(begin), 200*time.Millisecond, "start waits startSeconds")
	require.Regexp(t, `^proc/\d+/\d+@tree/a$`, id)
	require.True(t, alive(pidOf(id)))

	r.Instance = id
	obs, err := d.Observe(context.Background(), r)
	require.NoError(t, err)
	require.Equal(t, driver.Running, obs)
	require.Equal(t, 1, d.Running())

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	require.NoError(t, d.Stop(ctx, r))
	require.False(t, alive(pidOf(id)))
	obs, err = d.Observe(context.Background(), r)
	require.NoError(t, err)
	require.Equal(t, driver.Crashed, obs, "a stopped instance is no longer held")
	require.Zero(t, d.Running())
}

func TestFailedStartIsRetryable(t *testing.T) {
	t.Parallel()
	need(t, "sh")
	n := newRecorder()
	d, _ := newDriver(t, n)
	begin := time.Now()
	_, err := d.Start(context.Background(), req("tree/fails", map[string]any{
		"command": "sh", "args": []string{"-c", "echo starting; echo 'cannot bind port' >&2; exit 3"},
		"startSeconds": "5s",
	}))
	require.Error(t, err)
	require.False(t, driver.IsPermanent(err), "a failed start is retried: %v", err)
	require.Contains(t, err.Error(), "exit status 3")
	require.Contains(t, err.Error(), "cannot bind port", "the error carries the last output")
	require.Less(t, time.Since(begin), 4*time.Second, "a failed start does not wait out startSeconds")
	require.Zero(t, d.Running())
	d.Close()
	require.Empty(t, n.ch, "a failed start is an error, not a pushed exit")
}

func TestUnrunnableCommandIsPermanent(t *testing.T) {
	t.Parallel()
	need(t, "sleep")
	d, dir := newDriver(t, nil)
	notExec := filepath.Join(dir, "script.sh")
	require.NoError(t, os.WriteFile(notExec, []byte("#!/bin/sh\necho hi\n"), 0o644))
	noInterp := filepath.Join(dir, "junk")
	require.NoError(t, os.WriteFile(noInterp, []byte("not a program\x00\x01"), 0o755))

	for name, cfg := range map[string]map[string]any{
		"missing path":    {"command": "/nonexistent/bin/app"},
		"missing in PATH": {"command": "steward-no-such-command-xyz"},
		"not executable":  {"command": notExec},
		"a directory":     {"command": dir},
		"missing dir":     {"command": "sleep", "args": []string{"60"}, "dir": filepath.Join(dir, "nope")},
		"no exec format":  {"command": noInterp},
		"bad config":      {"command": "sleep", "bogus": true},
	} {
		_, err := d.Start(context.Background(), req("tree/"+name, cfg))
		require.Error(t, err, name)
		require.True(t, driver.IsPermanent(err), "%s: %v", name, err)
	}
	require.Zero(t, d.Running())
}

func TestGracefulStop(t *testing.T) {
	t.Parallel()
	need(t, "sleep")
	n := newRecorder()
	d, _ := newDriver(t, n)
	r := req("tree/graceful", sleepCfg())
	id, err := d.Start(context.Background(), r)
	require.NoError(t, err)
	r.Instance = id

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	begin := time.Now()
	require.NoError(t, d.Stop(ctx, r))
	require.Less(t, time.Since(begin), 5*time.Second, "SIGTERM ends sleep at once")
	require.False(t, alive(pidOf(id)))
	eventuallyGroupGone(t, pidOf(id))

	// Stopping again, or stopping what was never started, succeeds.
	require.NoError(t, d.Stop(ctx, r))
	require.NoError(t, d.Stop(ctx, req("tree/none", sleepCfg())))

	d.Close() // waits for any push in progress
	require.Empty(t, n.ch, "an exit caused by Stop is not pushed")
}

func TestForcedKillAtTimeout(t *testing.T) {
	t.Parallel()
	need(t, "sh", "sleep")
	n := newRecorder()
	d, _ := newDriver(t, n)
	r := req("tree/stubborn", map[string]any{
		"command": "sh", "args": []string{"-c", `trap "" TERM; echo ready; sleep 60`}, "startSeconds": "200ms",
	})
	id, err := d.Start(context.Background(), r)
	require.NoError(t, err)
	r.Instance = id

	ctx, cancel := context.WithTimeout(context.Background(), 1500*time.Millisecond)
	defer cancel()
	begin := time.Now()
	require.NoError(t, d.Stop(ctx, r))
	took := time.Since(begin)
	require.GreaterOrEqual(t, took, time.Second, "SIGTERM is ignored: stop waits for the grace period")
	require.Less(t, took, 1500*time.Millisecond, "SIGKILL comes before the stop timeout")
	require.NoError(t, ctx.Err(), "Stop returned before its deadline")
	require.False(t, alive(pidOf(id)))
	eventuallyGroupGone(t, pidOf(id)) // the sleep child is killed with its group

	d.Close()
	require.Empty(t, n.ch)
}

func TestExitPushedWithinOneSecond(t *testing.T) {
	t.Parallel()
	need(t, "sh", "sleep")
	for _, tc := range []struct {
		code   int
		normal bool
		obs    driver.Observation
	}{{1, false, driver.Crashed}, {0, true, driver.Exited}} {
		t.Run(strconv.Itoa(tc.code), func(t *testing.T) {
			t.Parallel()
			n := newRecorder()
			d, _ := newDriver(t, n)
			wf := "tree/exits" + strconv.Itoa(tc.code)
			r := req(wf, map[string]any{
				"command": "sh", "args": []string{"-c", fmt.Sprintf("sleep 0.3; exit %d", tc.code)},
				"startSeconds": "100ms",
			})
			id, err := d.Start(context.Background(), r)
			require.NoError(t, err)
			started := time.Now()
			select {
			case p := <-n.ch:
				require.Less(t, time.Since(started), time.Second)
				require.Equal(t, wf, p.wfID)
				require.Equal(t, id, p.exit.Instance)
				require.Equal(t, tc.normal, p.exit.Normal)
				require.Equal(t, fmt.Sprintf("exit status %d", tc.code), p.exit.Reason)
			case <-time.After(time.Second):
				t.Fatal("no exit pushed within 1s")
			}
			r.Instance = id
			obs, err := d.Observe(context.Background(), r)
			require.NoError(t, err)
			require.Equal(t, tc.obs, obs)
		})
	}
}

func TestKilledProcessPushesCrash(t *testing.T) {
	t.Parallel()
	need(t, "sleep")
	n := newRecorder()
	d, _ := newDriver(t, n)
	id, err := d.Start(context.Background(), req("tree/victim", sleepCfg()))
	require.NoError(t, err)
	require.NoError(t, syscall.Kill(pidOf(id), syscall.SIGKILL))
	select {
	case p := <-n.ch:
		require.Equal(t, driver.Exit{Instance: id, Normal: false, Reason: "signal: killed"}, p.exit)
	case <-time.After(time.Second):
		t.Fatal("no exit pushed within 1s")
	}
}

func TestObserveUnknownInstanceIsCrashed(t *testing.T) {
	t.Parallel()
	d, _ := newDriver(t, nil)
	for _, id := range []string{"", "proc/1/1700000000000000000@tree/a", "garbage"} {
		r := req("tree/a", sleepCfg())
		r.Instance = id
		obs, err := d.Observe(context.Background(), r)
		require.NoError(t, err)
		require.Equal(t, driver.Crashed, obs, id)
	}
}

func TestRestart(t *testing.T) {
	t.Parallel()
	need(t, "sleep")
	n := newRecorder()
	d, _ := newDriver(t, n)
	r := req("tree/restart", sleepCfg())
	old, err := d.Start(context.Background(), r)
	require.NoError(t, err)
	r.Instance = old
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	id, err := d.Restart(ctx, r)
	require.NoError(t, err)
	require.NotEqual(t, old, id)
	require.False(t, alive(pidOf(old)))
	require.True(t, alive(pidOf(id)))
	r.Instance = id
	obs, err := d.Observe(ctx, r)
	require.NoError(t, err)
	require.Equal(t, driver.Running, obs)

	// Restart without an instance is a start: one process per service, so
	// the one still running is stopped first (not pushed as an exit).
	r.Instance = ""
	other, err := d.Restart(ctx, r)
	require.NoError(t, err)
	require.NotEqual(t, id, other)
	require.Eventually(t, func() bool { return !alive(pidOf(id)) }, 5*time.Second, 10*time.Millisecond)
	require.Equal(t, 1, d.Running())
	d.Close()
	require.Empty(t, n.ch)
}

// Regression (a forged exit): anyone with access to the namespace can
// signal a worker workflow an "exit" of its instance; the workflow then
// starts the service again. The start must not leave the old process
// running beside the new one (nor overwrite its record): it stops it
// first, as a stop does, and its end is not pushed as an exit.
func TestForgedExitThenStartLeavesOneProcess(t *testing.T) {
	t.Parallel()
	need(t, "sleep")
	n := newRecorder()
	d, _ := newDriver(t, n)
	d.StateDir = t.TempDir()
	r := req("plant/web", sleepCfg())
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	old, err := d.Start(ctx, r)
	require.NoError(t, err)
	require.True(t, alive(pidOf(old)))

	id, err := d.Start(ctx, r) // as after the forged exit
	require.NoError(t, err)
	require.NotEqual(t, old, id)
	require.Eventually(t, func() bool { return !alive(pidOf(old)) }, 5*time.Second, 10*time.Millisecond,
		"the first process of the workflow still runs")
	eventuallyGroupGone(t, pidOf(old))
	require.True(t, alive(pidOf(id)))
	require.Equal(t, 1, d.Running())
	rec, err := readRecord(d.recordPath("plant/web"))
	require.NoError(t, err)
	require.Equal(t, id, rec.Instance, "the record names the new instance")
	obs, err := d.Observe(ctx, driver.Request{WorkflowID: "plant/web", Instance: old})
	require.NoError(t, err)
	require.Equal(t, driver.Crashed, obs)
	require.Empty(t, n.ch, "the stop of the old one is not an exit")
}

// The same after a worker restart without Recover: the process an earlier
// worker started is not held, but its record names it; the start stops it
// first instead of overwriting its record while it runs.
func TestForgedExitThenStartStopsTheRecordedProcess(t *testing.T) {
	state := t.TempDir()
	old, kill := runHelper(t, "STEWARD_PROCESS_TEST_STATE="+state)
	pid := pidOf(old)
	t.Cleanup(func() { signalGroup(pid, syscall.SIGKILL) })
	kill()
	require.True(t, alive(pid))
	_, wfID, _ := strings.Cut(old, "@")

	n := newRecorder()
	d, _ := newDriver(t, n)
	d.StateDir = state
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	id, err := d.Start(ctx, req(wfID, sleepCfg()))
	require.NoError(t, err)
	require.NotEqual(t, old, id)
	require.Eventually(t, func() bool { return !alive(pid) }, 5*time.Second, 10*time.Millisecond,
		"the recorded process of the workflow still runs")
	require.True(t, alive(pidOf(id)))
	require.Equal(t, 1, d.Running())
	rec, err := readRecord(d.recordPath(wfID))
	require.NoError(t, err)
	require.Equal(t, id, rec.Instance, "the record names the new instance")
	require.Empty(t, n.ch, "the stop of the old one is not an exit")
}

func TestStartHonoursContext(t *testing.T) {
	t.Parallel()
	need(t, "sleep")
	d, _ := newDriver(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	begin := time.Now()
	_, err := d.Start(ctx, req("tree/slow", map[string]any{
		"command": "sleep", "args": []string{"60"}, "startSeconds": "30s",
	}))
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.Less(t, time.Since(begin), 5*time.Second)
	require.Zero(t, d.Running(), "an abandoned start leaves no process")
}

func TestCloseKillsChildren(t *testing.T) {
	t.Parallel()
	need(t, "sh", "sleep")
	n := newRecorder()
	d, _ := newDriver(t, n)
	var pids []int
	for i, cfg := range []map[string]any{
		sleepCfg(),
		{"command": "sh", "args": []string{"-c", `trap "" TERM; sleep 60 & wait`}, "startSeconds": "200ms"},
	} {
		id, err := d.Start(context.Background(), req(fmt.Sprintf("tree/c%d", i), cfg))
		require.NoError(t, err)
		pids = append(pids, pidOf(id))
	}
	d.Close()
	for _, pid := range pids {
		require.False(t, alive(pid))
		eventuallyGroupGone(t, pid)
	}
	require.Empty(t, n.ch, "exits caused by Close are not pushed")
	_, err := d.Start(context.Background(), req("tree/late", sleepCfg()))
	require.Error(t, err, "no start after Close")
	d.Close() // twice is fine
}

func TestLogFileGetsOutput(t *testing.T) {
	t.Parallel()
	need(t, "sh", "sleep")
	d, dir := newDriver(t, nil)
	work := t.TempDir()
	r := req("tree/web/api", map[string]any{
		"command":      "sh",
		"args":         []string{"-c", `echo "out $STEWARD_TEST_VAR $(pwd)"; echo "err line" >&2; exec sleep 60`},
		"env":          map[string]string{"STEWARD_TEST_VAR": "hello"},
		"dir":          work,
		"startSeconds": "100ms",
	})
	_, err := d.Start(context.Background(), r)
	require.NoError(t, err)
	path := LogPath(dir, "tree/web/api")
	require.True(t, strings.HasPrefix(filepath.Base(path), "tree_web_api+"), path)
	require.Eventually(t, func() bool {
		b, _ := os.ReadFile(path)
		return strings.Contains(string(b), "out hello "+work) && strings.Contains(string(b), "err line")
	}, 5*time.Second, 20*time.Millisecond)
}

// A full log is copied to its ".1" backup and truncated: the service keeps
// appending to the same file (it holds it open), from its start again.
func TestLogRotatesByCopyAndTruncate(t *testing.T) {
	d, dir := newDriver(t, nil)
	d.Logs.MaxSize = 100
	id, err := d.Start(context.Background(), req("rot", map[string]any{
		"command": "sh", "args": []string{"-c", `i=0; while :; do i=$((i+1)); echo "line $i"; sleep 0.01; done`}, "startSeconds": "100ms",
	}))
	require.NoError(t, err)
	path := LogPath(dir, "rot")
	require.Eventually(t, func() bool { st, err := os.Stat(path); return err == nil && st.Size() >= 100 }, 5*time.Second, 10*time.Millisecond)
	d.rotate(path, d.hostLogs())
	old, err := os.ReadFile(path + ".1")
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(old), 100)
	require.True(t, strings.HasPrefix(string(old), "line 1\n"))
	require.Eventually(t, func() bool {
		b, _ := os.ReadFile(path)
		return len(b) > 0 && b[0] == 'l' && !strings.HasPrefix(string(b), "line 1\n")
	}, 5*time.Second, 10*time.Millisecond, "the service goes on writing at the start of the truncated file")
	require.True(t, alive(pidOf(id)))
}

func TestGraceFor(t *testing.T) {
	require.Equal(t, DefaultStopGrace, graceFor(context.Background()))
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	g := graceFor(ctx)
	require.Greater(t, g, 800*time.Millisecond)
	require.Less(t, g, 950*time.Millisecond)
	ctx2, cancel2 := context.WithTimeout(context.Background(), time.Minute)
	defer cancel2()
	require.InDelta(t, float64(58*time.Second), float64(graceFor(ctx2)), float64(100*time.Millisecond))
	done, cancel3 := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancel3()
	require.Zero(t, graceFor(done))
}

// TestOrphanFree kills -9 a process that started `sleep 60` through the
// driver and checks that the sleep dies with it (Pdeathsig).
func TestOrphanFree(t *testing.T) {
	t.Parallel()
	id, kill := runHelper(t, "STEWARD_PROCESS_TEST_DIE=1")
	pid := pidOf(id)
	require.True(t, alive(pid), "the helper's sleep runs")
	kill()
	require.Eventually(t, func() bool { return !alive(pid) }, 5*time.Second, 20*time.Millisecond,
		"sleep %d outlived its worker", pid)
}

// runHelper runs helperMain in a child process and returns the instance of
// the process it started, and a kill -9 of the helper.
func runHelper(t *testing.T, env ...string) (string, func()) {
	t.Helper()
	need(t, "sleep")
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$", "-test.count=1")
	cmd.Env = append(append(os.Environ(), helperEnv+"=1"), env...)
	cmd.Stderr = os.Stderr
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	lines := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if strings.HasPrefix(sc.Text(), "PID ") || strings.HasPrefix(sc.Text(), "ERR ") {
				lines <- sc.Text()
				break
			}
		}
		close(lines)
		_, _ = io.Copy(io.Discard, stdout)
	}()
	var line string
	select {
	case line = <-lines:
	case <-time.After(30 * time.Second):
		t.Fatal("helper did not report its child")
	}
	require.True(t, strings.HasPrefix(line, "PID "), line)
	return strings.TrimPrefix(line, "PID "), func() {
		require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
		_ = cmd.Wait()
	}
}

// A process outlives its worker's kill -9 by default; the next worker
// adopts it from its record (same pid, no start), watches it and reports
// its end at once; a recorded pid whose start time differs (reused) is
// never signalled.
func TestSurvivesItsWorkerAndIsAdopted(t *testing.T) {
	state := t.TempDir()
	id, kill := runHelper(t, "STEWARD_PROCESS_TEST_STATE="+state)
	pid := pidOf(id)
	t.Cleanup(func() { signalGroup(pid, syscall.SIGKILL) })
	kill()
	require.True(t, alive(pid), "the service outlives its worker")

	// A stale record of a reused pid: this test's own process, with a start
	// time that is not its own.
	stale := fmt.Sprintf("proc/%d/%d@stale", os.Getpid(), 1)
	plantRecord(t, state, record{WorkflowID: "stale", Instance: stale, PID: os.Getpid(), Ticks: 1, StopSignal: int(syscall.SIGKILL)})

	d, rec, adopted, ended := recoverFrom(t, state)
	require.Equal(t, 1, adopted)
	require.Equal(t, 1, ended, "the reused pid's record ends (we are alive: nothing was signalled)")
	select {
	case p := <-rec.ch:
		require.Equal(t, "stale", p.wfID)
		require.Contains(t, p.exit.Reason, "ended while no worker served this host")
	case <-time.After(5 * time.Second):
		t.Fatal("the ended record was not reported")
	}
	obs, err := d.Observe(context.Background(), driver.Request{Instance: id})
	require.NoError(t, err)
	require.Equal(t, driver.Running, obs)
	require.Equal(t, 1, d.Running())

	// Its end is seen at once, exit code unknown.
	require.NoError(t, syscall.Kill(pid, syscall.SIGKILL))
	select {
	case p := <-rec.ch:
		require.Equal(t, id, p.exit.Instance)
		require.False(t, p.exit.Normal)
		require.Contains(t, p.exit.Reason, "exit code unknown")
	case <-time.After(10 * time.Second):
		t.Fatal("the adopted process's end was not reported")
	}
	require.Eventually(t, func() bool {
		files, _ := filepath.Glob(filepath.Join(state, "*.json"))
		return len(files) == 0
	}, 5*time.Second, 10*time.Millisecond, "records of ended processes are removed, once their end is reported")
}

// Without a record (a lost state directory), an action that names the
// instance adopts it: the stop stops it.
func TestAdoptedOnStopWithoutARecord(t *testing.T) {
	id, kill := runHelper(t)
	pid := pidOf(id)
	t.Cleanup(func() { signalGroup(pid, syscall.SIGKILL) })
	kill()
	require.True(t, alive(pid))
	d, _ := newDriver(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	require.NoError(t, d.Stop(ctx, driver.Request{Instance: id, Spec: spec.Node{Kind: spec.KindProcess, Process: sleepCfg()}}))
	require.False(t, alive(pid))
	// A made-up instance (wrong start time) is not adopted: nothing to stop.
	require.NoError(t, d.Stop(ctx, driver.Request{Instance: fmt.Sprintf("proc/%d/1@x", os.Getpid())}))
}

// Regression (a review of the host policy): on a host with a policy or
// trusted keys a request that merely names an instance (any process of the
// host: pid and start time are in /proc) takes nothing over, so a forged
// stop neither signals it nor runs the request's probe; a recorded one of
// the asking workflow is taken over as its record says.
func TestAdoptRecordedOnlyTakesOverNothingUnrecorded(t *testing.T) {
	id, kill := runHelper(t)
	pid := pidOf(id)
	t.Cleanup(func() { signalGroup(pid, syscall.SIGKILL) })
	kill()
	require.True(t, alive(pid))
	state := t.TempDir()
	d, _ := newDriver(t, nil)
	d.StateDir, d.AdoptRecordedOnly = state, true
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	proof := filepath.Join(t.TempDir(), "ran")
	cfg := sleepCfg()
	cfg["health"] = map[string]any{"exec": []any{"/bin/sh", "-c", "touch " + proof}, "interval": "1ms"}
	_, wfID, _ := strings.Cut(id, "@")
	forged := driver.Request{WorkflowID: wfID, Instance: id, Spec: spec.Node{Kind: spec.KindProcess, Process: cfg}}
	require.NoError(t, d.Stop(ctx, forged))
	obs, err := d.Observe(ctx, forged)
	require.NoError(t, err)
	require.Equal(t, driver.Crashed, obs, "not held, not taken over")
	require.True(t, alive(pid), "nothing was signalled")
	_, err = os.Stat(proof)
	require.ErrorIs(t, err, os.ErrNotExist, "the request's probe never ran")

	ticks, err := startTicks(pid)
	require.NoError(t, err)
	plantRecord(t, state, record{WorkflowID: wfID, Instance: id, PID: pid, Ticks: ticks, StopSignal: int(syscall.SIGTERM), Success: []int{0}})
	require.NoError(t, d.Stop(ctx, driver.Request{WorkflowID: "someone-else", Instance: id}))
	require.True(t, alive(pid), "another workflow's request takes nothing over")
	require.NoError(t, d.Stop(ctx, forged))
	require.False(t, alive(pid), "the recorded instance of the asking workflow is stopped")
}

// A process recorded as starting (its worker died during its start) is
// ended by the next worker: its start is retried, and it must not run on
// unsupervised beside the new copy.
func TestRecoverEndsAProcessWhoseStartWasCutShort(t *testing.T) {
	need(t, "sleep")
	cmd := exec.Command("sleep", "60")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	require.NoError(t, cmd.Start())
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() { _ = cmd.Process.Kill(); <-done })
	ticks, err := startTicks(cmd.Process.Pid)
	require.NoError(t, err)
	state := t.TempDir()
	id := fmt.Sprintf("proc/%d/%d@cut", cmd.Process.Pid, ticks)
	plantRecord(t, state, record{WorkflowID: "cut", Instance: id, PID: cmd.Process.Pid, Ticks: ticks, Starting: true})

	_, _, adopted, ended := recoverFrom(t, state)
	require.Zero(t, adopted)
	require.Zero(t, ended, "not an end to report: its start never succeeded")
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("the process whose start was cut short still runs")
	}
	files, _ := filepath.Glob(filepath.Join(state, "*.json"))
	require.Empty(t, files)
}

// plantRecord writes a process record into a state directory, as a worker
// before this one would have left it (under the legacy name: logfile.go).
func plantRecord(t *testing.T, state string, r record) {
	t.Helper()
	b, err := json.Marshal(r)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(state, legacyStem(r.WorkflowID)+".json"), b, 0o644))
}

// recoverFrom runs a new driver's Recover over a state directory.
func recoverFrom(t *testing.T, state string) (d *Driver, rec *recorder, adopted, ended int) {
	t.Helper()
	rec = newRecorder()
	d, _ = newDriver(t, rec)
	d.StateDir = state
	n, err := d.Recover(context.Background())
	require.NoError(t, err)
	return d, rec, n.Adopted, n.Ended
}

// A host that rebooted: the records of its previous boot name processes
// that no longer run, and their ends are reported at once as "host
// rebooted" (a record of this boot whose process is gone, or an older
// worker's record written before this boot, as before).
func TestRecoverReportsServicesEndedByAReboot(t *testing.T) {
	boot := CurrentBoot()
	if boot.ID == "" || boot.At.IsZero() {
		t.Skip("no boot ID or boot time in /proc here")
	}
	state := t.TempDir()
	gone := func(wf string) record {
		return record{WorkflowID: wf, Instance: fmt.Sprintf("proc/999999/1@%s", wf), PID: 999999, Ticks: 1}
	}
	earlier := gone("svc/earlier-boot")
	earlier.Boot = "00000000-0000-0000-0000-000000000000"
	plantRecord(t, state, earlier)
	this := gone("svc/this-boot")
	this.Boot = boot.ID
	plantRecord(t, state, this)
	plantRecord(t, state, gone("svc/older-worker")) // no boot: dated by its file
	old := filepath.Join(state, legacyStem("svc/older-worker")+".json")
	before := boot.At.Add(-time.Hour)
	require.NoError(t, os.Chtimes(old, before, before))

	_, rec, adopted, ended := recoverFrom(t, state)
	require.Zero(t, adopted)
	require.Equal(t, 3, ended)
	reasons := map[string]string{}
	for range 3 {
		p := <-rec.ch
		reasons[p.wfID] = p.exit.Reason
	}
	require.True(t, strings.HasPrefix(reasons["svc/earlier-boot"], "host rebooted (up since "), reasons["svc/earlier-boot"])
	require.True(t, strings.HasPrefix(reasons["svc/older-worker"], "host rebooted"), reasons["svc/older-worker"])
	require.Equal(t, "ended while no worker served this host (exit code unknown)", reasons["svc/this-boot"])
}

// A record carries the boot it was written in.
func TestRecordNamesItsBoot(t *testing.T) {
	need(t, "sleep")
	d, _ := newDriver(t, nil)
	d.StateDir = t.TempDir()
	_, err := d.Start(context.Background(), req("svc/booted", map[string]any{"command": "sleep", "args": []string{"60"}, "startSeconds": "50ms"}))
	require.NoError(t, err)
	b, err := os.ReadFile(d.recordPath("svc/booted"))
	require.NoError(t, err)
	var r record
	require.NoError(t, json.Unmarshal(b, &r))
	require.Equal(t, CurrentBoot().ID, r.Boot)
	require.NotEmpty(t, r.Boot)
}

// sessionOf is the session ID of pid (field 6 of /proc/PID/stat).
func sessionOf(t *testing.T, pid int) int {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	require.NoError(t, err)
	fields := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	sid, err := strconv.Atoi(fields[3]) // state, ppid, pgrp, session
	require.NoError(t, err)
	return sid
}

// Regression (attack review): a dieWithWorker service, an exec probe and a
// reload ran in the worker's session with only a group of their own: they
// kept the worker's terminal, and as their own user typed commands into
// the root shell that started the worker (TIOCSTI), or left their group
// for the worker's and could no longer be stopped. Each leads a session
// of its own now.
func TestProcess_ADieWithWorkerServiceLeadsItsOwnSession(t *testing.T) {
	d, _ := newDriver(t, nil)
	inst, err := d.Start(context.Background(), req("sess/w", map[string]any{"command": "sleep", "args": []string{"60"}, "startSeconds": "100ms", "dieWithWorker": true}))
	require.NoError(t, err)
	pid := pidOf(inst)
	require.Equal(t, pid, sessionOf(t, pid), "its own session")
	require.NotEqual(t, sessionOf(t, os.Getpid()), sessionOf(t, pid))
	require.True(t, sysProcAttr(true).Setsid && sysProcAttr(false).Setsid)
}

// Regression (attack review): adopted without a record (the state
// directory lost) or with an older worker's, a service's exec health probe
// had no credential and ran as the worker (root), in the worker's
// directory. It runs as the process it checks runs (procCredential).
func TestProcCredential_IsTheProcessOwn(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to start a process as another user")
	}
	cmd := exec.Command("sleep", "30")
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534, Groups: []uint32{65534}}}
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	cred, err := procCredential(cmd.Process.Pid)
	require.NoError(t, err)
	require.Equal(t, &Credential{UID: 65534, GID: 65534, Groups: []uint32{65534}}, cred)
	_, err = procCredential(1 << 30)
	require.Error(t, err, "no such process")
}
