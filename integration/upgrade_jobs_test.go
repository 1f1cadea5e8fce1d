package integration

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/steward-sh/steward/internal/release"
	"github.com/steward-sh/steward/internal/treestatus"
)

// A tree with a periodic job, applied by the release before (jobs of
// version 1), keeps running when its worker is replaced by this build and
// `starter upgrade` runs: the service is not restarted, no run of the job
// fails, and the job's runs from then on are of version 2 (one RunJob
// activity each), listed by `starter runs` beside the older ones.
func TestUpgradeJobsFromTheReleaseBefore(t *testing.T) {
	needServer(t)
	oldWorker, oldStarter, addr := fromRelease(t, release.JobsV1)
	flags := []string{"--host", "it-upjob", "--state-dir", filepath.Join(t.TempDir(), "state")}
	const arg = "4545.5"
	t.Cleanup(func() { // its state dir is its own: a failure leaves nothing running
		for _, pid := range sleepsWithArg(arg) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	tree := writeSpec(t, fmt.Sprintf(`name: it-upjob
children:
  - {name: svc, kind: process, process: {command: sleep, args: ["%s"], startSeconds: 200ms, host: it-upjob}}
  - {name: tick, kind: process, process: {command: "true", host: it-upjob}, job: {every: 2s}}
`, arg))
	old, err := startWorkerBin(oldWorker, "worker-upjob-old", addr, flags...)
	require.NoError(t, err)
	r := runAt(t, oldStarter, addr, 3*time.Minute, "apply", "-f", tree, "--wait")
	require.Equal(t, 0, r.code, r.stdout+r.stderr)
	runs := func() []treestatus.JobRun {
		r := runAt(t, starterBin, addr, time.Minute, "runs", "it-upjob/tick", "-o", "json", "--limit", "200")
		require.Equal(t, 0, r.code, r.stderr)
		var rs []treestatus.JobRun
		require.NoError(t, json.Unmarshal([]byte(r.stdout), &rs), r.stdout)
		return rs
	}
	succeededSince := func(since time.Time) (n int, ids []string, failed []string) {
		for _, run := range runs() {
			switch {
			case run.Outcome == treestatus.RunFailed || run.Outcome == treestatus.RunTimedOut:
				failed = append(failed, run.ID+": "+run.Reason)
			case run.Outcome == treestatus.RunSucceeded && run.StartedAt.After(since):
				n++
				ids = append(ids, run.ID)
			}
		}
		return n, ids, failed
	}
	eventually(t, time.Minute, func() (bool, string) {
		n, _, failed := succeededSince(time.Time{})
		return n >= 2 && len(failed) == 0, fmt.Sprintf("%d runs succeeded on the old build, failed: %v", n, failed)
	})
	pids := sleepsWithArg(arg)
	require.Len(t, pids, 1)

	old.stop()
	w, err := startWorkerBin(workerBin, "worker-upjob-new", addr, flags...)
	require.NoError(t, err)
	t.Cleanup(w.stop)
	r = runAt(t, starterBin, addr, 6*time.Minute, "upgrade", "--wait", "--timeout", "5m")
	require.Equal(t, 0, r.code, r.stdout+r.stderr)
	upgraded := time.Now()

	// The job's schedule is put again after its upgrade: the runs from
	// then on are of version 2 (one RunJob activity, no memo).
	eventually(t, time.Minute, func() (bool, string) {
		n, ids, failed := succeededSince(upgraded)
		if len(failed) > 0 || n == 0 {
			return false, fmt.Sprintf("%d runs succeeded since the upgrade, failed: %v", n, failed)
		}
		show := runAt(t, temporal, addr, time.Minute, "workflow", "show", "-w", ids[0], "--address", addr, "-o", "json")
		if show.code != 0 {
			return false, show.stderr
		}
		events := strings.ToLower(strings.ReplaceAll(show.stdout, "_", ""))
		return strings.Contains(show.stdout, "steward.RunJob") && !strings.Contains(events, "propertiesmodified"),
			ids[0] + " is not yet of version 2 (one RunJob activity, no memo)"
	})
	_, _, failed := succeededSince(time.Time{})
	require.Empty(t, failed, "no run failed across the upgrade")

	require.Equal(t, pids, sleepsWithArg(arg), "the service was not restarted")
	st, err := statusAt(t, addr, "it-upjob/svc")
	require.NoError(t, err)
	require.Equal(t, pids[0], pidOf(t, st.Instance))
	require.Zero(t, st.Restarts+st.ManualRestarts)
	job, err := statusAt(t, addr, "it-upjob/tick")
	require.NoError(t, err)
	require.Equal(t, "running", job.State, job.Reason)

	r = runAt(t, starterBin, addr, 2*time.Minute, "delete", "it-upjob")
	require.Equal(t, 0, r.code, r.stderr)
	eventually(t, time.Minute, func() (bool, string) { return len(sleepsWithArg(arg)) == 0, "the service stops with its tree" })
}
