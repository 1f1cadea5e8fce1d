package integration

import (
	"encoding/json"
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

	"github.com/steward-sh/steward/internal/release"
	"github.com/steward-sh/steward/workflows"
)

// A tree applied by the last release keeps running when its workers are
// replaced by this build and `starter upgrade` runs: no delete, no
// re-apply, no service restarted (same PIDs, restarts unchanged), every
// workflow on this build, and the tree working afterwards (restart,
// rollout, re-apply of the same file restarts nothing).
func TestUpgradeFromTheLastRelease(t *testing.T) {
	needServer(t)
	oldWorker, oldStarter, addr := fromRelease(t, release.Last)
	state := filepath.Join(t.TempDir(), "state")
	workerFlags := []string{"--host", "it-upgrade", "--state-dir", state}
	tree := writeSpec(t, `name: it-up
children:
  - name: svc
    kind: process
    process: {command: sleep, args: ["600"], startSeconds: 200ms, host: it-upgrade}
  - name: g
    strategy: one_for_all
    children:
      - {name: a, kind: stub, stub: {delay: 0s}}
      - {name: b, kind: stub, stub: {delay: 0s}, dependsOn: [a]}
`)
	old, err := startWorkerBin(oldWorker, "worker-upgrade-old", addr, workerFlags...)
	require.NoError(t, err)
	r := runAt(t, oldStarter, addr, 3*time.Minute, "apply", "-f", tree, "--wait")
	require.Equal(t, 0, r.code, r.stdout+r.stderr)
	// A manual restart and a rollout under the old build: counters that must
	// survive the upgrade.
	r = runAt(t, oldStarter, addr, time.Minute, "restart", "it-up/g/a")
	require.Equal(t, 0, r.code, r.stderr)
	statusAt := func() workflows.Status {
		t.Helper()
		r := runAt(t, starterBin, addr, time.Minute, "status", "it-up", "--exact", "true", "-o", "json")
		require.Equal(t, 0, r.code, r.stderr)
		var st workflows.Status
		require.NoError(t, json.Unmarshal([]byte(r.stdout), &st))
		return st
	}
	var before workflows.Status
	eventually(t, time.Minute, func() (bool, string) {
		before = statusAt()
		a, _ := before.Find("it-up/g/a")
		at, total := before.AtDesired()
		return a.ManualRestarts == 1 && at == total, fmt.Sprintf("a: %d manual restarts; %d/%d", a.ManualRestarts, at, total)
	})
	svc, _ := before.Find("it-up/svc")
	pid := pidOf(t, svc.Instance)
	require.True(t, alive(pid))

	// Replace the worker: the service outlives it and the new one adopts it.
	old.stop()
	w, err := startWorkerBin(workerBin, "worker-upgrade-new", addr, workerFlags...)
	require.NoError(t, err)
	t.Cleanup(w.stop)

	r = runAt(t, starterBin, addr, 6*time.Minute, "upgrade", "--wait", "--timeout", "5m", "-o", "json")
	require.Equal(t, 0, r.code, r.stdout+r.stderr)
	var res struct {
		Total    int            `json:"total"`
		Upgraded int            `json:"upgraded"`
		Builds   map[string]int `json:"builds"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &res), r.stdout)
	build := strings.TrimSpace(runAt(t, starterBin, addr, time.Minute, "version").stdout)
	require.NotEmpty(t, build)
	require.Equal(t, 5, res.Total, "the root, svc, g, a and b")
	require.Equal(t, res.Total, res.Upgraded)
	require.Equal(t, map[string]int{build: 5}, res.Builds)
	require.Contains(t, r.stderr, "upgrade: 0 of 5 workflows on build "+build, "progress on stderr")

	after := statusAt()
	for _, p := range []string{"it-up/svc", "it-up/g/a", "it-up/g/b"} {
		b, _ := before.Find(p)
		a, ok := after.Find(p)
		require.True(t, ok, p)
		require.Equal(t, "running", a.State, p)
		require.Equal(t, b.Restarts, a.Restarts, "%s: no automatic restart", p)
		require.Equal(t, b.ManualRestarts, a.ManualRestarts, "%s: no manual restart", p)
		require.Equal(t, b.Instance, a.Instance, "%s: the same instance", p)
	}
	svc, _ = after.Find("it-up/svc")
	require.Equal(t, pid, pidOf(t, svc.Instance), "the service was not restarted")
	require.True(t, alive(pid))

	// The tree works on the new build: restart, rollout, re-apply.
	r = runAt(t, starterBin, addr, time.Minute, "restart", "it-up/g/b")
	require.Equal(t, 0, r.code, r.stderr)
	eventually(t, time.Minute, func() (bool, string) {
		b, _ := statusAt().Find("it-up/g/b")
		return b.ManualRestarts == 1 && b.State == "running", fmt.Sprintf("%+v", b)
	})
	r = runAt(t, starterBin, addr, 3*time.Minute, "rollout", "restart", "it-up/g", "--chunk", "1", "-o", "json")
	require.Equal(t, 0, r.code, r.stdout+r.stderr)
	var ro workflows.RolloutStatus
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &ro))
	require.Equal(t, 2, ro.Succeeded)
	r = runAt(t, starterBin, addr, time.Minute, "apply", "-f", tree, "--dry-run", "-o", "json")
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, `"changed": []`, "the file the old build applied compares equal")
	r = runAt(t, starterBin, addr, 3*time.Minute, "apply", "-f", tree, "--wait")
	require.Equal(t, 0, r.code, r.stdout+r.stderr)
	final := statusAt()
	svc, _ = final.Find("it-up/svc")
	require.Equal(t, pid, pidOf(t, svc.Instance), "a re-apply of the same file restarts nothing")
	require.Equal(t, 0, svc.Restarts+svc.ManualRestarts)

	r = runAt(t, starterBin, addr, 2*time.Minute, "delete", "it-up")
	require.Equal(t, 0, r.code, r.stderr)
	eventually(t, time.Minute, func() (bool, string) { return !alive(pid), "the service stops with its tree" })
}

// A worker swap on one machine: `starter upgrade --wait` waited about 75 s
// for the server to forget the polls of a worker that had already exited
// (77 s on the demo tree, docs/upgrading.md). A worker of another build
// that ran where the starter runs and has exited is gone at once; while it
// runs, the upgrade refuses.
func TestUpgradeAfterAWorkerSwapOnOneMachineDoesNotWait(t *testing.T) {
	needServer(t)
	other := otherBuildWorker(t)
	addr, _ := ownServer(t)
	flags := []string{"--host", "it-swap", "--state-dir", filepath.Join(t.TempDir(), "state")}
	old, err := startWorkerBin(other, "worker-swap-other-build", addr, flags...)
	require.NoError(t, err)
	eventually(t, time.Minute, func() (bool, string) {
		r := runAt(t, starterBin, addr, time.Minute, "upgrade")
		return r.code == 1 && strings.Contains(r.stderr, "workers of another build poll"), r.stdout + r.stderr
	})
	old.stop()
	w, err := startWorkerBin(workerBin, "worker-swap-this-build", addr, flags...)
	require.NoError(t, err)
	t.Cleanup(w.stop)
	r := runAt(t, starterBin, addr, 3*time.Minute, "upgrade", "--wait", "--timeout", "2m", "-o", "json")
	require.Equal(t, 0, r.code, r.stdout+r.stderr)
	require.NotContains(t, r.stderr, "workers of other builds still poll", "the exited worker of the other build is gone at once")
	build := strings.TrimSpace(runAt(t, starterBin, addr, time.Minute, "version").stdout)
	var res struct {
		Total, Upgraded int
	}
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &res), r.stdout)
	require.Equal(t, res.Total, res.Upgraded, "every workflow (the host's) on build %s", build)
}

// otherBuildWorker builds this checkout's worker with one comment added to
// its workflow code: the same code under another build.
func otherBuildWorker(t *testing.T) string {
	t.Helper()
	repo, err := filepath.Abs("..")
	require.NoError(t, err)
	dir := t.TempDir()
	src := filepath.Join(dir, "src")
	require.NoError(t, os.MkdirAll(src, 0o755))
	out, err := exec.Command("bash", "-c", fmt.Sprintf("tar -C %q --exclude=./.git --exclude=./bin -c . | tar -x -C %q", repo, src)).CombinedOutput()
	require.NoError(t, err, string(out))
	f, err := os.OpenFile(filepath.Join(src, "workflows", "names.go"), os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.WriteString("\n// another build\n")
	require.NoError(t, errors.Join(err, f.Close()))
	bin := filepath.Join(dir, "worker")
	cmd := exec.Command("go", "build", "-o", bin, "./worker")
	cmd.Dir = src
	out, err = cmd.CombinedOutput()
	require.NoError(t, err, string(out))
	return bin
}

// A tree signed by the release before (version 1 signatures) keeps running
// on a host of this build that trusts the key: its service outlives the
// worker swap and the upgrade, a crash is restarted under its version 1
// signature, and re-signing it with this build's starter (version 2, with
// revisions) restarts nothing; a second re-sign keeps every signature.
func TestSignedTreeOfTheReleaseBeforeKeepsRunningAndReSigningRestartsNothing(t *testing.T) {
	needServer(t)
	oldWorker, oldStarter, addr := fromRelease(t, release.SignedV1)
	key := keygen(t)
	state := filepath.Join(t.TempDir(), "state")
	workerFlags := []string{"--host", "it-sup", "--state-dir", state, "--trusted-keys", key + ".pub"}
	tree := writeSpec(t, `name: it-sup
children:
  - name: svc
    kind: process
    process: {command: sleep, args: ["600"], startSeconds: 200ms, host: it-sup}
    observe: {interval: 1s}
`)
	old, err := startWorkerBin(oldWorker, "worker-sup-old", addr, workerFlags...)
	require.NoError(t, err)
	r := runAt(t, oldStarter, addr, 3*time.Minute, "apply", "-f", tree, "--sign-key", key, "--wait")
	require.Equal(t, 0, r.code, r.stdout+r.stderr)
	svcStatus := func() workflows.Status {
		t.Helper()
		r := runAt(t, starterBin, addr, time.Minute, "status", "it-sup/svc", "-o", "json")
		require.Equal(t, 0, r.code, r.stderr)
		var st workflows.Status
		require.NoError(t, json.Unmarshal([]byte(r.stdout), &st))
		return st
	}
	before := svcStatus()
	require.Equal(t, "running", before.State)
	pid := pidOf(t, before.Instance)

	old.stop()
	w, err := startWorkerBin(workerBin, "worker-sup-new", addr, workerFlags...)
	require.NoError(t, err)
	t.Cleanup(w.stop)
	r = runAt(t, starterBin, addr, 6*time.Minute, "upgrade", "--wait", "--timeout", "5m")
	require.Equal(t, 0, r.code, r.stdout+r.stderr)
	st := svcStatus()
	require.Equal(t, before.Instance, st.Instance, "the service outlived the swap and the upgrade")
	require.True(t, alive(pid))

	// A crash: restarted under its version 1 signature.
	require.NoError(t, syscall.Kill(pid, syscall.SIGKILL))
	eventually(t, time.Minute, func() (bool, string) {
		st = svcStatus()
		return st.State == "running" && st.Instance != before.Instance && st.Restarts == before.Restarts+1, fmt.Sprintf("%+v", st)
	})
	restarted := st

	// Re-signed by this build: version 2 signatures, no restart.
	r = runAt(t, starterBin, addr, 3*time.Minute, "apply", "-f", tree, "--sign-key", key, "--wait")
	require.Equal(t, 0, r.code, r.stdout+r.stderr)
	st = svcStatus()
	require.Equal(t, restarted.Instance, st.Instance, "re-signing restarts nothing")
	require.Equal(t, restarted.Restarts, st.Restarts)
	require.Equal(t, restarted.ManualRestarts, st.ManualRestarts)
	// Another re-sign keeps the version 2 signatures: nothing to change.
	r = runAt(t, starterBin, addr, time.Minute, "apply", "-f", tree, "--sign-key", key, "--dry-run", "-o", "json")
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, `"changed": []`, "a re-sign of the same file changes no signature")
	// And the service still restarts under its new signature.
	r = runAt(t, starterBin, addr, time.Minute, "restart", "it-sup/svc")
	require.Equal(t, 0, r.code, r.stderr)
	eventually(t, time.Minute, func() (bool, string) {
		st = svcStatus()
		return st.State == "running" && st.ManualRestarts == restarted.ManualRestarts+1, fmt.Sprintf("%+v", st)
	})
	r = runAt(t, starterBin, addr, 2*time.Minute, "delete", "it-sup")
	require.Equal(t, 0, r.code, r.stderr)
	eventually(t, time.Minute, func() (bool, string) { return !alive(pidOf(t, st.Instance)), "the service stops with its tree" })
}

// fromRelease builds commit's worker and starter (internal/release) and
// gives the test a server of its own.
func fromRelease(t *testing.T, commit string) (oldWorker, oldStarter, addr string) {
	t.Helper()
	repo, err := filepath.Abs("..")
	require.NoError(t, err)
	oldWorker, oldStarter, err = release.Build(repo, commit, t.TempDir())
	require.NoError(t, err)
	addr, _ = ownServer(t)
	return oldWorker, oldStarter, addr
}
