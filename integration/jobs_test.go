package integration

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/steward-sh/steward/internal/treestatus"
	"github.com/steward-sh/steward/workflows"
)

// jobStatus is a job's status, asked until it answers with its job block.
func jobStatus(t *testing.T, path string) (workflows.Status, error) {
	t.Helper()
	st, err := tryStatus(t, path)
	if err == nil && st.Job == nil {
		err = fmt.Errorf("%s answers without a job block (state %s)", path, st.State)
	}
	return st, err
}

// scheduleDescribe is `temporal schedule describe` of id as JSON; ok
// false when there is no such schedule.
func scheduleDescribe(t *testing.T, id string) (map[string]any, bool) {
	t.Helper()
	r := temporalCLI(t, "schedule", "describe", "--schedule-id", id, "-o", "json")
	if r.code != 0 {
		return nil, false
	}
	var d map[string]any
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &d), r.stdout)
	return d, true
}

// A periodic job is a Temporal Schedule whose ID is its path, and each run
// a workflow that runs its process to completion on its host: runs that
// succeed are counted; a failing job with pauseOnFailure has its schedule
// paused after its first failed run, its exit code recorded; a job removed
// by a re-apply has its schedule deleted.
func TestJobsOnSchedules(t *testing.T) {
	needServer(t)
	tree := func(withJobs bool) string {
		s := "name: it-jobs\nchildren:\n  - {name: keep, kind: stub}\n"
		if withJobs {
			s += `  - name: tick
    kind: process
    process: {command: sh, args: ["-c", "echo ran $$"]}
    job: {every: 2s}
  - name: broken
    kind: process
    process: {command: sh, args: ["-c", "echo failing >&2; exit 3"]}
    retry: {maxAttempts: 1}
    job: {every: 2s, pauseOnFailure: true}
`
		}
		return s
	}
	r := starter(t, "apply", "-f", writeSpec(t, tree(true)), "--wait", "--timeout", "2m")
	require.Equal(t, 0, r.code, r.stdout+r.stderr)
	t.Cleanup(func() { starter(t, "delete", "it-jobs") })

	// The schedule is there under the job's path.
	d, ok := scheduleDescribe(t, "it-jobs/tick")
	require.True(t, ok, "no schedule it-jobs/tick")
	require.Contains(t, fmt.Sprint(d), "JobRunWorkflow")

	// Runs succeed, one after the other.
	var st workflows.Status
	eventually(t, 90*time.Second, func() (bool, string) {
		var err error
		if st, err = jobStatus(t, "it-jobs/tick"); err != nil {
			return false, err.Error()
		}
		return st.Job.Runs >= 2 && st.Job.LastRun != nil && st.Job.LastRun.Outcome == treestatus.RunSucceeded,
			fmt.Sprintf("runs %d, last %+v", st.Job.Runs, st.Job.LastRun)
	})
	require.Equal(t, "running", st.State, st.Reason)
	require.Zero(t, st.Job.Failures)
	last := st.Job.LastRun
	require.True(t, strings.HasPrefix(last.ID, "it-jobs/tick/run-"), last.ID)
	require.NotNil(t, last.ExitCode)
	require.Equal(t, 0, *last.ExitCode)
	require.False(t, last.StartedAt.IsZero() || last.EndedAt.IsZero() || last.EndedAt.Before(last.StartedAt), "%+v", last)

	// The failing job: failed, exit code 3, its schedule paused.
	eventually(t, 90*time.Second, func() (bool, string) {
		var err error
		if st, err = jobStatus(t, "it-jobs/broken"); err != nil {
			return false, err.Error()
		}
		return st.Job.LastRun != nil, fmt.Sprintf("state %s", st.State)
	})
	require.Equal(t, "failed", st.State, st.Reason)
	require.Equal(t, treestatus.RunFailed, st.Job.LastRun.Outcome)
	require.NotNil(t, st.Job.LastRun.ExitCode)
	require.Equal(t, 3, *st.Job.LastRun.ExitCode)
	eventually(t, 30*time.Second, func() (bool, string) {
		d, ok := scheduleDescribe(t, "it-jobs/broken")
		return ok && strings.Contains(fmt.Sprint(d), "paused:true"), fmt.Sprint(d)
	})

	// starter jobs: both, with their schedules; tick's next run ahead,
	// broken paused after its failure.
	r = starter(t, "jobs", "it-jobs", "-o", "json")
	require.Equal(t, 0, r.code, r.stderr)
	var jobs []struct {
		Path     string             `json:"path"`
		Schedule string             `json:"schedule"`
		Paused   bool               `json:"paused"`
		NextRun  *time.Time         `json:"nextRun"`
		LastRun  *treestatus.JobRun `json:"lastRun"`
		Running  bool               `json:"running"`
		Skipped  int                `json:"skipped"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &jobs), r.stdout)
	require.Len(t, jobs, 2, r.stdout)
	require.Equal(t, "it-jobs/broken", jobs[0].Path)
	require.True(t, jobs[0].Paused, r.stdout)
	require.Equal(t, "it-jobs/tick", jobs[1].Path)
	require.Equal(t, "every 2s", jobs[1].Schedule)
	require.False(t, jobs[1].Paused)
	require.NotNil(t, jobs[1].NextRun, r.stdout)
	require.NotNil(t, jobs[1].LastRun, r.stdout)

	// starter runs: newest first, each with its outcome, exit code and host.
	r = starter(t, "runs", "it-jobs/tick", "-o", "json", "--limit", "2")
	require.Equal(t, 0, r.code, r.stderr)
	var runs []treestatus.JobRun
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &runs), r.stdout)
	require.Len(t, runs, 2, r.stdout)
	require.False(t, runs[0].StartedAt.Before(runs[1].StartedAt), "newest first: %s", r.stdout)
	for _, run := range runs {
		if run.Outcome == treestatus.RunRunning {
			continue
		}
		require.Equal(t, treestatus.RunSucceeded, run.Outcome, r.stdout)
		require.NotNil(t, run.ExitCode, r.stdout)
		require.NotEmpty(t, run.Host, r.stdout)
	}

	// starter run --wait: 0 for a run that succeeds, 1 for one that fails;
	// the failed run's output is in its log.
	r = starter(t, "run", "it-jobs/tick", "--wait", "--timeout", "1m")
	require.Equal(t, 0, r.code, r.stdout+r.stderr)
	require.Contains(t, r.stdout, "succeeded")
	r = starter(t, "run", "it-jobs/broken", "--wait", "--timeout", "1m")
	require.Equal(t, 1, r.code, r.stdout+r.stderr)
	require.Contains(t, r.stderr, "failed")
	var failedRun string
	for _, line := range strings.Split(r.stdout, "\n") {
		if f := strings.Fields(line); len(f) > 0 && strings.HasPrefix(f[0], "it-jobs/broken/run-now-") {
			failedRun = f[0]
		}
	}
	require.NotEmpty(t, failedRun, r.stdout)
	r = starter(t, "logs", "it-jobs/broken", "--run", failedRun)
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, "failing")
	r = starter(t, "logs", "it-jobs/broken", "--run", "it-jobs/tick/run-x")
	require.Equal(t, 2, r.code, "a run of another job: %s", r.stdout+r.stderr)

	// Removed by a re-apply: the schedules are gone.
	r = starter(t, "apply", "-f", writeSpec(t, tree(false)), "--wait", "--timeout", "2m")
	require.Equal(t, 0, r.code, r.stdout+r.stderr)
	eventually(t, 60*time.Second, func() (bool, string) {
		_, tick := scheduleDescribe(t, "it-jobs/tick")
		_, broken := scheduleDescribe(t, "it-jobs/broken")
		return !tick && !broken, fmt.Sprintf("schedules left: tick %v, broken %v", tick, broken)
	})
}

// A once job runs once per generation of its spec, and a sibling that
// dependsOn it starts only after its run succeeded.
func TestOnceJobOrdersItsDependent(t *testing.T) {
	needServer(t)
	r := starter(t, "apply", "-f", writeSpec(t, `
name: it-once
children:
  - name: migrate
    kind: process
    process: {command: sh, args: ["-c", "sleep 2; echo migrated"]}
    job: {once: true}
  - name: web
    kind: process
    process: {command: sleep, args: ["300"]}
    dependsOn: [migrate]
`), "--wait", "--timeout", "2m")
	require.Equal(t, 0, r.code, r.stdout+r.stderr)
	t.Cleanup(func() { starter(t, "delete", "it-once") })

	var mig workflows.Status
	eventually(t, 60*time.Second, func() (bool, string) {
		var err error
		if mig, err = jobStatus(t, "it-once/migrate"); err != nil {
			return false, err.Error()
		}
		return mig.Completed, fmt.Sprintf("migrate %s (%s)", mig.State, mig.Reason)
	})
	require.NotNil(t, mig.Job.LastRun)
	require.Equal(t, treestatus.RunSucceeded, mig.Job.LastRun.Outcome)
	require.Equal(t, "it-once/migrate/run-g1", mig.Job.LastRun.ID)
	web := waitState(t, "it-once/web", "running", 60*time.Second)
	require.False(t, web.Since.Before(mig.Job.LastRun.EndedAt), "web running since %s, before migrate ended at %s", web.Since, mig.Job.LastRun.EndedAt)
	require.Equal(t, 1, mig.Job.Runs)
}
