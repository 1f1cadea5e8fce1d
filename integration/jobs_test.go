package integration

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
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

	// The console's panel: the job's schedule, next run and runs, its
	// journal, and its newest run's output.
	base, _ := consoleProc(t)
	eventually(t, 30*time.Second, func() (bool, string) {
		resp, err := http.Get(base + "/api/node?path=it-jobs/tick")
		if err != nil {
			return false, err.Error()
		}
		defer resp.Body.Close()
		var info struct {
			History []any `json:"history"`
			Job     *struct {
				Schedule string     `json:"schedule"`
				NextRun  *time.Time `json:"nextRun"`
				Runs     int        `json:"runs"`
			} `json:"job"`
		}
		if err := json.NewDecoder(resp.Body).Decode(&info); err != nil {
			return false, err.Error()
		}
		return resp.StatusCode == 200 && info.Job != nil && info.Job.Schedule == "every 2s" && info.Job.NextRun != nil && info.Job.Runs > 0 && len(info.History) > 0,
			fmt.Sprintf("%s: %+v", resp.Status, info)
	})
	eventually(t, 30*time.Second, func() (bool, string) {
		resp, err := http.Get(base + "/api/logs?path=it-jobs/tick")
		if err != nil {
			return false, err.Error()
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode == 200 && strings.Contains(string(b), "ran"), fmt.Sprintf("%s: %.300s", resp.Status, b)
	})

	// starter start: the schedule that paused itself runs again.
	before := status(t, "it-jobs/broken").Job.Runs
	r = starter(t, "start", "it-jobs/broken")
	require.Equal(t, 0, r.code, r.stderr)
	eventually(t, 60*time.Second, func() (bool, string) {
		st, err := jobStatus(t, "it-jobs/broken")
		if err != nil {
			return false, err.Error()
		}
		return st.Job.Runs > before, fmt.Sprintf("%d runs, %d before the start", st.Job.Runs, before)
	})
	eventually(t, 30*time.Second, func() (bool, string) {
		d, ok := scheduleDescribe(t, "it-jobs/broken")
		return ok && strings.Contains(fmt.Sprint(d), "paused:true"), "paused again after its next failure: " + fmt.Sprint(d)
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

// A run's process outlives its worker: killed with -9 during the run, the
// next worker of the host adopts the process, and its exit code (noted by
// the job's shim) is the run's; the command ran once.
func TestJobRunSurvivesAWorkerKill(t *testing.T) {
	needServer(t)
	const host = "it-jobkill"
	w := guardedWorker(t, host)
	dir := t.TempDir()
	starts, release := filepath.Join(dir, "starts"), filepath.Join(dir, "release")
	r := starter(t, "apply", "-f", writeSpec(t, fmt.Sprintf(`
name: it-jobkill
children:
  - name: once
    kind: process
    process: {command: sh, args: ["-c", "echo $$ >> %s; while [ ! -e %s ]; do sleep 0.1; done; exit 7"], host: %s}
    job: {once: true}
`, starts, release, host)))
	require.Equal(t, 0, r.code, r.stdout+r.stderr)
	t.Cleanup(func() { starter(t, "delete", "it-jobkill") })
	eventually(t, time.Minute, func() (bool, string) {
		b, _ := os.ReadFile(starts)
		return len(b) > 0, "the run's process has not started"
	})
	w.kill()
	w2, err := startWorker(host+"-2", "--host", host)
	require.NoError(t, err)
	t.Cleanup(w2.stop)
	require.NoError(t, os.WriteFile(release, nil, 0o644)) // the process ends, under the next worker
	var st workflows.Status
	eventually(t, 90*time.Second, func() (bool, string) {
		var err error
		if st, err = jobStatus(t, "it-jobkill/once"); err != nil {
			return false, err.Error()
		}
		return st.Job.LastRun != nil, fmt.Sprintf("%s: %s", st.State, st.Reason)
	})
	last := st.Job.LastRun
	require.Equal(t, treestatus.RunFailed, last.Outcome, "%+v", last)
	require.NotNil(t, last.ExitCode, "%+v", last)
	require.Equal(t, 7, *last.ExitCode, "%+v", last)
	require.Contains(t, last.Reason, "noted by its job shim", "%+v", last)
	b, err := os.ReadFile(starts)
	require.NoError(t, err)
	require.Len(t, strings.Fields(string(b)), 1, "the command ran once: %q", b)
	require.Equal(t, 1, st.Job.Runs)
}

// A job under a host's policy: a command the policy does not allow is
// refused, the run fails naming the rule, and nothing of it runs.
func TestJobRefusedByTheHostsPolicy(t *testing.T) {
	needServer(t)
	const host = "it-jobpol"
	dir := t.TempDir()
	sleep, err := exec.LookPath("sleep")
	require.NoError(t, err)
	policy := filepath.Join(dir, "policy.yaml")
	require.NoError(t, os.WriteFile(policy, []byte("commands: ["+sleep+"]\n"), 0o644))
	guardedWorker(t, host, "--policy", policy)
	proof := filepath.Join(dir, "proof")
	r := starter(t, "apply", "-f", writeSpec(t, fmt.Sprintf(`
name: it-jobpol
children:
  - name: sneaky
    kind: process
    process: {command: /bin/sh, args: ["-c", "touch %s"], host: %s}
    job: {every: 2s}
`, proof, host)), "--wait", "--timeout", "2m")
	require.Equal(t, 0, r.code, r.stdout+r.stderr)
	t.Cleanup(func() { starter(t, "delete", "it-jobpol") })
	var st workflows.Status
	eventually(t, 90*time.Second, func() (bool, string) {
		var err error
		if st, err = jobStatus(t, "it-jobpol/sneaky"); err != nil {
			return false, err.Error()
		}
		return st.Job.LastRun != nil, st.State
	})
	require.Equal(t, "failed", st.State)
	require.Equal(t, treestatus.RunFailed, st.Job.LastRun.Outcome)
	require.Contains(t, st.Job.LastRun.Reason, "is not allowed", "%+v", st.Job.LastRun)
	require.NoFileExists(t, proof)
}

// overlap skip (the default): a run due while one runs is skipped and
// counted; runs never overlap.
func TestJobOverlapsAreSkipped(t *testing.T) {
	needServer(t)
	r := starter(t, "apply", "-f", writeSpec(t, `
name: it-overlap
children:
  - name: slow
    kind: process
    process: {command: sleep, args: ["2.5"]}
    job: {every: 1s}
`), "--wait", "--timeout", "2m")
	require.Equal(t, 0, r.code, r.stdout+r.stderr)
	t.Cleanup(func() { starter(t, "delete", "it-overlap") })
	eventually(t, 90*time.Second, func() (bool, string) {
		st, err := jobStatus(t, "it-overlap/slow")
		if err != nil {
			return false, err.Error()
		}
		return st.Job.Runs >= 3, fmt.Sprintf("%d runs", st.Job.Runs)
	})
	r = starter(t, "jobs", "it-overlap", "-o", "json")
	require.Equal(t, 0, r.code, r.stderr)
	var jobs []struct {
		Skipped int `json:"skipped"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &jobs), r.stdout)
	require.Len(t, jobs, 1)
	require.Positive(t, jobs[0].Skipped, r.stdout)
	r = starter(t, "runs", "it-overlap/slow", "-o", "json", "--limit", "50")
	require.Equal(t, 0, r.code, r.stderr)
	var runs []treestatus.JobRun
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &runs), r.stdout)
	slices.SortFunc(runs, func(a, b treestatus.JobRun) int { return a.StartedAt.Compare(b.StartedAt) })
	for i := 1; i < len(runs); i++ {
		prev := runs[i-1]
		require.False(t, prev.EndedAt.IsZero(), "a run before the last one ended: %s", r.stdout)
		require.False(t, runs[i].StartedAt.Before(prev.EndedAt), "run %s began before %s ended: %s", runs[i].ID, prev.ID, r.stdout)
	}
}

// An http job's run is one request: a 2xx answer succeeds, any other fails
// the run with the answer's status.
func TestHTTPJobIsOneRequest(t *testing.T) {
	needServer(t)
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/broken" {
			http.Error(w, "no", http.StatusInternalServerError)
			return
		}
		if r.Method != http.MethodPost {
			http.Error(w, "POST only", http.StatusMethodNotAllowed) // fails the run: the test sees it
			return
		}
		hits.Add(1)
	}))
	t.Cleanup(srv.Close)
	r := starter(t, "apply", "-f", writeSpec(t, fmt.Sprintf(`
name: it-httpjob
children:
  - name: ping
    kind: http
    http: {start: {method: POST, url: "%s/run"}}
    job: {every: 2s}
  - name: broken
    kind: http
    http: {start: {url: "%s/broken"}}
    retry: {maxAttempts: 1}
    job: {every: 2s}
`, srv.URL, srv.URL)))
	require.Equal(t, 0, r.code, r.stdout+r.stderr)
	t.Cleanup(func() { starter(t, "delete", "it-httpjob") })
	eventually(t, 60*time.Second, func() (bool, string) {
		st, err := jobStatus(t, "it-httpjob/ping")
		if err != nil {
			return false, err.Error()
		}
		return st.Job.Runs >= 2 && st.Job.Failures == 0 && hits.Load() >= 2, fmt.Sprintf("%d runs, %d failed, %d requests", st.Job.Runs, st.Job.Failures, hits.Load())
	})
	eventually(t, 60*time.Second, func() (bool, string) {
		st, err := jobStatus(t, "it-httpjob/broken")
		if err != nil || st.Job.LastRun == nil {
			return false, fmt.Sprint(err)
		}
		return st.Job.LastRun.Outcome == treestatus.RunFailed && strings.Contains(st.Job.LastRun.Reason, "500"), fmt.Sprintf("%+v", st.Job.LastRun)
	})
}

// Regression (attack review): a job run past its timeout was recorded
// "timedOut ... stopped" while its process ran on, beside the schedule's
// next run: the run's stop named no instance (its wait had given up) and
// the driver's stop did nothing. The same for a run cancelled
// (`overlap: cancelOther`, `temporal workflow cancel`).
func TestJobRunPastItsTimeoutIsStopped(t *testing.T) {
	needServer(t)
	r := starter(t, "apply", "-f", writeSpec(t, `
name: it-jobto
children:
  - {name: keep, kind: stub}
  - name: slow
    kind: process
    process: {command: sleep, args: ["317"]}
    job: {every: 24h, timeout: 3s}
`), "--wait", "--timeout", "2m")
	require.Equal(t, 0, r.code, r.stdout+r.stderr)
	t.Cleanup(func() { starter(t, "delete", "it-jobto") })
	r = starter(t, "run", "it-jobto/slow", "--wait", "--timeout", "2m")
	require.Equal(t, 1, r.code, "the run did not succeed: %s%s", r.stdout, r.stderr)
	require.Contains(t, r.stdout+r.stderr, treestatus.RunTimedOut, r.stdout+r.stderr)
	eventually(t, 30*time.Second, func() (bool, string) {
		pids := sleepsWithArg("317")
		return len(pids) == 0, fmt.Sprintf("the run's process still runs: %v", pids)
	})
}
