package integration

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Fault tests of a host's disk (docs/reliability.md): its log directory
// full, its state directory unwritable. A host worker of the test's own
// runs with the directory on a small tmpfs.

// mountTmpfs mounts a tmpfs of size at dir (created; mode 0755, as a
// worker's directory must be, not tmpfs's 1777), unmounted at the test's end; the test is skipped where this machine does not allow it
// (not root, no mount).
func mountTmpfs(t *testing.T, dir, size string) {
	t.Helper()
	require.NoError(t, os.MkdirAll(dir, 0o755))
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+size+",mode=0755", "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a tmpfs here: %v: %s", err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", "-l", dir).CombinedOutput(); err != nil {
			t.Logf("umount %s: %v: %s", dir, err, out)
		}
	})
}

// fill writes a file into dir until its filesystem is full.
func fill(t *testing.T, dir string) string {
	t.Helper()
	path := filepath.Join(dir, "filler")
	f, err := os.Create(path)
	require.NoError(t, err)
	defer f.Close()
	buf := make([]byte, 4096)
	for {
		if _, err := f.Write(buf); err != nil {
			require.True(t, errors.Is(err, syscall.ENOSPC), "filling %s: %v", dir, err)
			return path
		}
	}
}

// The log directory's disk is full: services start all the same, a
// killed one runs again, the worker stays up, and once space is back the
// services' output is kept again.
func TestFault_LogDirFull(t *testing.T) {
	needServer(t)
	const host, name = "it-logfull", "it-logfull"
	logs := filepath.Join(t.TempDir(), "logs")
	mountTmpfs(t, logs, "512k")
	filler := fill(t, logs)
	w, err := startWorker("worker-logfull", "--host", host, "--log-dir", logs)
	require.NoError(t, err)
	t.Cleanup(w.stop)
	args := []string{"4646.0", "4646.1"}
	var b strings.Builder
	fmt.Fprintf(&b, "name: %s\nchildren:\n", name)
	for i, arg := range args {
		// The shell writes a line a second and sleeps (sleep ARG: the
		// process oneProcessEach finds is the shell's child, so the
		// shell execs nothing: its own argv carries ARG).
		fmt.Fprintf(&b, "  - {name: w%d, kind: process, observe: {interval: 2s}, backoff: {initial: 100ms, max: 1s}, process: {host: %s, command: sh, args: [\"-c\", \"while :; do echo out-of-$0; sleep 1; done\", \"%s\"], startSeconds: 1s}}\n",
			i, host, arg)
	}
	r := starter(t, "apply", "-f", writeSpec(t, b.String()), "--wait", "--timeout", "2m")
	require.Equal(t, 0, r.code, r.stdout+r.stderr)
	t.Cleanup(func() { deleteTree(t, name) })

	st := status(t, name+"/w0")
	pid := pidOf(t, st.Instance)
	require.NoError(t, syscall.Kill(pid, syscall.SIGKILL))
	eventually(t, time.Minute, func() (bool, string) {
		st := status(t, name+"/w0")
		return st.State == "running" && st.Instance != "" && pidOf(t, st.Instance) != pid, fmt.Sprintf("%s %s", st.State, st.Instance)
	})
	select {
	case <-w.done:
		t.Fatal("the worker ended with its log directory full")
	default:
	}
	r = starter(t, "logs", name+"/w1")
	require.Equal(t, 0, r.code, "starter logs with the disk full: %s", r.stdout+r.stderr)

	require.NoError(t, os.Remove(filler))
	eventually(t, time.Minute, func() (bool, string) {
		r := starter(t, "logs", name+"/w1")
		return r.code == 0 && strings.Contains(r.stdout, "out-of-4646.1"), r.stdout + r.stderr
	})
}

// The state directory cannot be written (a read-only filesystem): a
// service's start cannot record its process for the next worker, and the
// start goes on all the same (docs/reliability.md). The worker is killed
// and another takes its place: it finds each service's process at its
// next observe and adopts it; none runs twice, none is left unowned,
// none restarted.
func TestFault_StateDirUnwritable(t *testing.T) {
	needServer(t)
	const host, name = "it-rostate", "it-rostate"
	state := filepath.Join(t.TempDir(), "state")
	mountTmpfs(t, state, "1m")
	if out, err := exec.Command("mount", "-o", "remount,ro", state).CombinedOutput(); err != nil {
		t.Skipf("cannot remount read-only: %v: %s", err, out)
	}
	require.Error(t, os.WriteFile(filepath.Join(state, "x"), nil, 0o644), "the state directory is read-only")
	flags := []string{"--host", host, "--state-dir", state}
	w, err := startWorker("worker-rostate", flags...)
	require.NoError(t, err)
	t.Cleanup(func() { w.stop() })
	args := []string{"4747.0", "4747.1"}
	var b strings.Builder
	fmt.Fprintf(&b, "name: %s\nchildren:\n", name)
	for i, arg := range args {
		fmt.Fprintf(&b, "  - {name: w%d, kind: process, observe: {interval: 2s}, process: {host: %s, command: sleep, args: [\"%s\"], startSeconds: 1s}}\n", i, host, arg)
	}
	r := starter(t, "apply", "-f", writeSpec(t, b.String()), "--wait", "--timeout", "2m")
	require.Equal(t, 0, r.code, r.stdout+r.stderr)
	t.Cleanup(func() { deleteTree(t, name) })
	require.Empty(t, oneProcessEach(t, address, name, args))
	b2, err := os.ReadFile(filepath.Join(workDir, "worker-rostate.log"))
	require.NoError(t, err)
	require.Contains(t, string(b2), "cannot record the process for the next worker", "the worker says why")
	before := map[int]int{}
	for i, arg := range args {
		before[i] = sleepsWithArg(arg)[0]
	}

	w.kill()
	w, err = startWorker("worker-rostate-2", flags...)
	require.NoError(t, err)
	eventually(t, 2*time.Minute, func() (bool, string) {
		if bad := oneProcessEach(t, address, name, args); bad != "" {
			return false, bad
		}
		st := status(t, name)
		at, total := st.AtDesired()
		return at == total && total == len(args), fmt.Sprintf("%d of %d at desired", at, total)
	})
	for i, arg := range args {
		require.Equal(t, before[i], sleepsWithArg(arg)[0], "w%d: the same process, adopted", i)
		st := status(t, fmt.Sprintf("%s/w%d", name, i))
		require.Zero(t, st.Restarts, "w%d: not restarted", i)
	}
}
