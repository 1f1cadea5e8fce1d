//go:build linux

package process

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/zap/zaptest"

	"github.com/steward-sh/steward/internal/driver"
	"github.com/steward-sh/steward/internal/spec"
)

// The defect: tree "a" with child "b_c" (workflow a/b_c) and tree "a_b"
// with child "c" (workflow a_b/c) both wrote a_b_c.log and the record
// a_b_c.json (and named their cgroups alike): after a worker restart only
// one was adopted, the other was started again beside its orphan.
func TestLogAndRecordNamesOfAB_CAndA_BCDiffer(t *testing.T) {
	d := New("", nil, nil)
	t.Cleanup(d.Close)
	d.StateDir = "/state"
	require.Equal(t, legacyStem("a/b_c"), legacyStem("a_b/c"), "the legacy layout: one name for both")

	ids := []string{"a/b_c", "a_b/c", "a_b_c", "a/b/c", "a.b.c", "", "_", "x/é", "x/è", strings.Repeat("a/", 500), strings.Repeat("a_", 500), strings.Repeat("é", 1000)}
	seen := map[string]string{}
	for _, id := range ids {
		stem := fileStem(id)
		require.Equal(t, stem, fileStem(id), "stable")
		if other, ok := seen[stem]; ok {
			t.Fatalf("%q and %q share the stem %q", id, other, stem)
		}
		seen[stem] = id
		require.True(t, strings.HasPrefix(stem, legacyStem(id)[:min(len(legacyStem(id)), stemReadableMax)]+"+"), "readable: %q", stem)
		require.NotContains(t, stem, "/")
		require.NotEqual(t, legacyStem(id), stem, "never a legacy name")
		for _, name := range []string{logName(id) + ".1", filepath.Base(d.recordPath(id)) + ".tmp", stem + ".0123abcd"} {
			require.LessOrEqual(t, len(name), 122, "%q (ID of %d bytes)", name, len(id))
		}
	}
	require.NotEqual(t, logName("a/b_c"), logName("a_b/c"))
	require.NotEqual(t, d.recordPath("a/b_c"), d.recordPath("a_b/c"))
	require.True(t, strings.HasPrefix(logName("a/b_c"), "a_b_c+"))

	// Through the driver: two processes, two logs, two records, each with
	// its own workflow; a restarted worker adopts both.
	need(t, "sh", "sleep")
	logs, state := t.TempDir(), t.TempDir()
	d1 := New(logs, nil, zaptest.NewLogger(t))
	d1.StateDir, d1.KeepOnClose = state, true
	t.Cleanup(d1.Close)
	inst := map[string]string{}
	for _, id := range []string{"a/b_c", "a_b/c"} {
		cfg := map[string]any{"command": "sh", "args": []string{"-c", "echo I am " + id + "; exec sleep 60"}, "startSeconds": "100ms"}
		got, err := d1.Start(context.Background(), req(id, cfg))
		require.NoError(t, err)
		inst[id] = got
		pid := pidOf(got)
		t.Cleanup(func() { signalGroup(pid, syscall.SIGKILL) })
	}
	for id, want := range inst {
		r, err := readRecord(d1.recordPath(id))
		require.NoError(t, err, id)
		require.Equal(t, id, r.WorkflowID)
		require.Equal(t, want, r.Instance)
		require.Equal(t, logName(id), r.LogFile)
		require.Eventually(t, func() bool {
			b, _ := os.ReadFile(LogPath(logs, id))
			return string(b) == "I am "+id+"\n"
		}, 5*time.Second, 10*time.Millisecond, "%s's log holds its output alone", id)
	}
	files, _ := filepath.Glob(filepath.Join(state, "*.json"))
	require.Len(t, files, 2)
	d1.Close() // the worker goes; its services stay

	d2, _, adopted, ended := recoverFrom(t, state)
	require.Equal(t, 2, adopted, "both adopted")
	require.Zero(t, ended)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for id, want := range inst {
		obs, err := d2.Observe(ctx, driver.Request{WorkflowID: id, Instance: want})
		require.NoError(t, err)
		require.Equal(t, driver.Running, obs, id)
	}
	// Stopping one leaves the other and its record alone.
	require.NoError(t, d2.Stop(ctx, driver.Request{WorkflowID: "a/b_c", Instance: inst["a/b_c"]}))
	require.False(t, alive(pidOf(inst["a/b_c"])))
	require.True(t, alive(pidOf(inst["a_b/c"])))
	gone(t, d2.recordPath("a/b_c"))
	r, err := readRecord(d2.recordPath("a_b/c"))
	require.NoError(t, err)
	require.Equal(t, inst["a_b/c"], r.Instance)
}

// gone waits for a record file to be removed (a process's end is handled
// just after Stop returns).
func gone(t *testing.T, path string) {
	t.Helper()
	require.Eventually(t, func() bool {
		_, err := os.Stat(path)
		return os.IsNotExist(err)
	}, 5*time.Second, 10*time.Millisecond, "%s still there", path)
}

// noRecords waits for a state directory to hold no record.
func noRecords(t *testing.T, state string) {
	t.Helper()
	require.Eventually(t, func() bool {
		files, _ := filepath.Glob(filepath.Join(state, "*.json"))
		return len(files) == 0
	}, 5*time.Second, 10*time.Millisecond, "records left in %s", state)
}

// detachedSleep runs `sleep 60` in a session of its own, as a service an
// earlier worker left running, and returns its pid and start time.
func detachedSleep(t *testing.T) (int, uint64) {
	t.Helper()
	need(t, "sleep")
	cmd := exec.Command("sleep", "60")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	require.NoError(t, cmd.Start())
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() { signalGroup(cmd.Process.Pid, syscall.SIGKILL); <-done })
	ticks, err := startTicks(cmd.Process.Pid)
	require.NoError(t, err)
	return cmd.Process.Pid, ticks
}

// legacyRecordJSON is a record as a worker of release 5b9cb0e (and every
// one up to the names of logfile.go) wrote it, under its legacy name.
func legacyRecordJSON(wfID string, pid int, ticks uint64) (instance, body string) {
	instance = fmt.Sprintf("proc/%d/%d@%s", pid, ticks, wfID)
	return instance, fmt.Sprintf(`{"workflowId":%q,"instance":%q,"pid":%d,"ticks":%d,"stopSignal":15,"successExitCodes":[0]}`, wfID, instance, pid, ticks)
}

// A record an older worker left under its legacy name is adopted by a
// newer worker for the workflow it names inside, moved to that workflow's
// own name; the service goes on writing its legacy log, which the driver
// rotates and `starter logs` reads until the service writes a log of the
// new layout.
func TestLegacyRecordAdoptedAndMovedToItsOwnName(t *testing.T) {
	pid, ticks := detachedSleep(t)
	state, logs := t.TempDir(), t.TempDir()
	id, body := legacyRecordJSON("a_b/c", pid, ticks)
	legacy := filepath.Join(state, "a_b_c.json")
	require.NoError(t, os.WriteFile(legacy, []byte(body), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(logs, "a_b_c.log"), []byte("old output\n"), 0o644))

	rec := newRecorder()
	d := New(logs, rec, zaptest.NewLogger(t))
	t.Cleanup(d.Close)
	d.StateDir, d.KeepOnClose = state, true
	n, err := d.Recover(context.Background())
	require.NoError(t, err)
	adopted, ended := n.Adopted, n.Ended
	require.Equal(t, 1, adopted)
	require.Zero(t, ended)
	_, err = os.Stat(legacy)
	require.ErrorIs(t, err, os.ErrNotExist, "moved")
	r, err := readRecord(d.recordPath("a_b/c"))
	require.NoError(t, err)
	require.Equal(t, "a_b/c", r.WorkflowID)
	require.Equal(t, id, r.Instance)
	require.Equal(t, "a_b_c.log", r.LogFile, "it writes its legacy log still")
	d.mu.Lock()
	p := d.procs[id]
	d.mu.Unlock()
	require.NotNil(t, p)
	require.Equal(t, filepath.Join(logs, "a_b_c.log"), p.logPath, "the log that is rotated is the one it writes")

	// Its log as `starter logs` reads it: the legacy one, while there is
	// no log of the new layout.
	text, _, err := TailLog(logs, "a_b/c", 10)
	require.NoError(t, err)
	require.Equal(t, "old output\n", string(text))

	// A next worker adopts it from the moved record, as it was.
	d.Close()
	d2, _, adopted, _ := recoverFrom(t, state)
	require.Equal(t, 1, adopted)
	d2.mu.Lock()
	require.Equal(t, filepath.Join(d2.logDir, "a_b_c.log"), d2.procs[id].logPath)
	d2.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	require.NoError(t, d2.Stop(ctx, driver.Request{WorkflowID: "a_b/c", Instance: id}))
	require.False(t, alive(pid))
	noRecords(t, state)
}

// On a host with a policy (AdoptRecordedOnly) a record under the legacy
// name that Recover has not moved is found by a stop of its workflow.
func TestLegacyRecordAdoptedOnAHostWithAPolicy(t *testing.T) {
	pid, ticks := detachedSleep(t)
	state := t.TempDir()
	id, body := legacyRecordJSON("a/b_c", pid, ticks)
	require.NoError(t, os.WriteFile(filepath.Join(state, "a_b_c.json"), []byte(body), 0o644))
	d, _ := newDriver(t, nil)
	d.StateDir, d.AdoptRecordedOnly = state, true
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	obs, err := d.Observe(ctx, driver.Request{WorkflowID: "a/b_c", Instance: id})
	require.NoError(t, err)
	require.Equal(t, driver.Running, obs, "adopted from its legacy record")
	_, err = os.Stat(filepath.Join(state, "a_b_c.json"))
	require.ErrorIs(t, err, os.ErrNotExist, "rewritten under its own name")
	_, err = os.Stat(d.recordPath("a/b_c"))
	require.NoError(t, err)
	require.NoError(t, d.Stop(ctx, driver.Request{WorkflowID: "a/b_c", Instance: id}))
	require.False(t, alive(pid))
	noRecords(t, state)
}

// A record file holds the workflow ID it was written for; whoever finds it
// by name for another workflow neither adopts, overwrites nor removes it.
// A start whose record would go over another workflow's is refused,
// naming both.
func TestRecordOfAnotherWorkflowNeverTouched(t *testing.T) {
	need(t, "sleep")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	sleeps := func(id string) driver.Request { return req(id, sleepCfg()) }
	unchanged := func(t *testing.T, path, want string) {
		t.Helper()
		b, err := os.ReadFile(path)
		require.NoError(t, err, path)
		require.Equal(t, want, string(b), path)
	}

	t.Run("under the legacy name", func(t *testing.T) {
		// a_b_c.json is a_b/c's: an older worker's, with its process running.
		pid, ticks := detachedSleep(t)
		state := t.TempDir()
		_, body := legacyRecordJSON("a_b/c", pid, ticks)
		legacy := filepath.Join(state, "a_b_c.json")
		require.NoError(t, os.WriteFile(legacy, []byte(body), 0o644))
		d, _ := newDriver(t, nil)
		d.StateDir, d.AdoptRecordedOnly = state, true

		// a/b_c names a_b/c's process as its own: nothing is taken over.
		forged := driver.Request{WorkflowID: "a/b_c", Instance: fmt.Sprintf("proc/%d/%d@a/b_c", pid, ticks), Spec: spec.Node{Kind: spec.KindProcess, Process: sleepCfg()}}
		obs, err := d.Observe(ctx, forged)
		require.NoError(t, err)
		require.Equal(t, driver.Crashed, obs)
		require.NoError(t, d.Stop(ctx, forged))
		require.True(t, alive(pid), "a_b/c's process was not signalled")
		unchanged(t, legacy, body)

		// a/b_c starts, runs and stops under its own name.
		id, err := d.Start(ctx, sleeps("a/b_c"))
		require.NoError(t, err)
		unchanged(t, legacy, body)
		r, err := readRecord(d.recordPath("a/b_c"))
		require.NoError(t, err)
		require.Equal(t, id, r.Instance)
		require.NoError(t, d.Stop(ctx, driver.Request{WorkflowID: "a/b_c", Instance: id}))
		gone(t, d.recordPath("a/b_c"))
		unchanged(t, legacy, body)
		require.True(t, alive(pid))

		// The ends of a/b_c's processes remove nothing of a_b/c's.
		d.unrecord(&proc{wfID: "a/b_c", id: fmt.Sprintf("proc/%d/%d@a_b/c", pid, ticks)})
		unchanged(t, legacy, body)
	})

	t.Run("under its own name", func(t *testing.T) {
		// X's record file holds Y's record (two IDs of one name: a hash
		// collision, or a file moved by hand).
		pid, ticks := detachedSleep(t)
		state := t.TempDir()
		d, _ := newDriver(t, nil)
		d.StateDir = state
		_, body := legacyRecordJSON("Y", pid, ticks)
		path := d.recordPath("X")
		require.NoError(t, os.WriteFile(path, []byte(body), 0o644))

		_, err := d.Start(ctx, sleeps("X"))
		require.Error(t, err)
		require.True(t, driver.IsPermanent(err), "%v", err)
		require.Contains(t, err.Error(), `"X"`)
		require.Contains(t, err.Error(), `"Y"`)
		require.Zero(t, d.Running(), "nothing started")
		unchanged(t, path, body)

		// Neither a record written nor one removed for X touches it.
		p := &proc{wfID: "X", id: "proc/1/1@X", pid: 1, ticks: 1}
		d.record(p, false)
		unchanged(t, path, body)
		d.unrecord(p)
		unchanged(t, path, body)
		d.unrecord(&proc{wfID: "X", id: fmt.Sprintf("proc/%d/%d@Y", pid, ticks)})
		unchanged(t, path, body)

		// Nor a stop of X on a host with a policy.
		d.AdoptRecordedOnly = true
		require.NoError(t, d.Stop(ctx, driver.Request{WorkflowID: "X", Instance: fmt.Sprintf("proc/%d/%d@X", pid, ticks)}))
		require.True(t, alive(pid))
		unchanged(t, path, body)
	})
}

// A workflow's log as `starter logs` reads it: the log of the new layout,
// or the legacy one while only that exists.
func TestLogReadFallsBackToTheLegacyLog(t *testing.T) {
	dir := t.TempDir()
	legacy := filepath.Join(dir, "a_b_c.log")
	require.NoError(t, os.WriteFile(legacy, []byte("legacy 1\nlegacy 2\n"), 0o644))
	text, end, err := TailLog(dir, "a_b/c", 1)
	require.NoError(t, err)
	require.Equal(t, "legacy 2\n", string(text))
	appendTo(t, legacy, "legacy 3\n")
	text, pos, err := ReadLogFrom(dir, "a_b/c", end)
	require.NoError(t, err)
	require.Equal(t, "legacy 3\n", string(text), "a follow reads the legacy log")

	// Started again by a newer worker: its own log from now on.
	require.NoError(t, os.WriteFile(LogPath(dir, "a_b/c"), []byte("new 1\n"), 0o644))
	text, _, err = ReadLogFrom(dir, "a_b/c", pos)
	require.NoError(t, err)
	require.Equal(t, "new 1\n", string(text), "the follow goes on in the new file, from its start")
	text, _, err = TailLog(dir, "a_b/c", 10)
	require.NoError(t, err)
	require.Equal(t, "new 1\n", string(text))

	_, _, err = TailLog(dir, "a/x", 10)
	require.ErrorIs(t, err, ErrNoLog)
	require.Contains(t, err.Error(), LogPath(dir, "a/x"), "names the file of the new layout")
}
