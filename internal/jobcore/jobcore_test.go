package jobcore

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/steward-sh/steward/internal/spec"
	"github.com/steward-sh/steward/internal/treestatus"
	"github.com/steward-sh/steward/internal/versions"
)

var t0 = time.Date(2026, 11, 28, 3, 0, 0, 0, time.UTC)

func periodic() spec.Node {
	return spec.Node{Name: "backup", Kind: spec.KindProcess, Process: map[string]any{"command": "/bin/true"},
		Job: &spec.Job{Every: spec.Dur(time.Hour)}}
}

func once() spec.Node {
	n := periodic()
	n.Job = &spec.Job{Once: true}
	return n
}

func newJob(n spec.Node, version int) (*Job, *Record) {
	rec := New(n, t0)
	return &Job{Path: "t/backup", Spec: n, Generation: 1, Version: version, Rec: &rec}, &rec
}

func run(id, outcome string) treestatus.JobRun {
	return treestatus.JobRun{ID: "t/backup/run-" + id, Outcome: outcome, EndedAt: t0}
}

func TestNew_TakesTheSpecsDesiredState(t *testing.T) {
	n := periodic()
	n.Desired = spec.DesiredStopped
	rec := New(n, t0)
	require.Equal(t, Record{Desired: spec.DesiredStopped, Since: t0, Began: t0}, rec)
	require.Equal(t, spec.DesiredRunning, New(periodic(), t0).Desired, "the default")
}

func TestCheck(t *testing.T) {
	require.NoError(t, Check("t/backup", periodic()))
	svc := periodic()
	svc.Job = nil
	require.ErrorContains(t, Check("t/backup", svc), "cannot become a job in place")
	bad := periodic()
	bad.Job = &spec.Job{}
	require.Error(t, Check("t/backup", bad), "neither schedule, every nor once")
}

// A periodic job's schedule is put once per generation and desired state
// (and code version from JobRunsAwait), one put at a time; its end says
// whether the job failed.
func TestNext_APeriodicJobPutsItsScheduleOncePerChange(t *testing.T) {
	j, rec := newJob(periodic(), versions.Job)
	require.Equal(t, PutSchedule, j.Next())
	require.True(t, rec.Scheduled)
	require.Equal(t, fmt.Sprintf("1/running/v%d", versions.Job), rec.PutFor)
	require.Equal(t, None, j.Next(), "one at a time")
	j.PutDone("")
	require.Equal(t, None, j.Next(), "as the spec says already")

	require.NoError(t, j.TakeDesired(spec.DesiredStopped, t0.Add(time.Minute)))
	require.True(t, j.Paused())
	require.Equal(t, t0.Add(time.Minute), rec.Since)
	require.Equal(t, PutSchedule, j.Next())
	j.PutDone("server unavailable")
	state, reason, _ := j.State()
	require.Equal(t, "stopped", state, "desired stopped comes first")
	require.NoError(t, j.TakeDesired(spec.DesiredRunning, t0.Add(2*time.Minute)))
	state, reason, _ = j.State()
	require.Equal(t, "failed", state)
	require.Equal(t, "its schedule could not be put: server unavailable", reason)
	require.Equal(t, PutSchedule, j.Next())
	j.PutDone("")
	state, _, _ = j.State()
	require.Equal(t, "running", state)

	// `starter start` on a running job puts it again (pauseOnFailure may
	// have paused it).
	require.NoError(t, j.TakeDesired(spec.DesiredRunning, t0.Add(3*time.Minute)))
	require.Equal(t, t0.Add(2*time.Minute), rec.Since, "no change of desired state")
	require.Equal(t, PutSchedule, j.Next())
	require.ErrorContains(t, j.TakeDesired("paused", t0), `"running" or "stopped"`)
}

func TestWantPut_ByVersion(t *testing.T) {
	j, _ := newJob(periodic(), 1)
	require.Equal(t, "1/running", j.WantPut(), "version 1: no code version in it")
	j.Version = versions.JobRunsAwait.Since
	require.Equal(t, fmt.Sprintf("1/running/v%d", versions.JobRunsAwait.Since), j.WantPut())
}

// A periodic job made a once job deletes its schedule first, then runs.
func TestNext_APeriodicJobMadeOnceDeletesItsScheduleThenRuns(t *testing.T) {
	j, rec := newJob(periodic(), versions.Job)
	require.Equal(t, PutSchedule, j.Next())
	j.PutDone("")
	require.NoError(t, j.TakeSpec(once(), 0, t0))
	require.EqualValues(t, 2, j.Generation)
	require.Equal(t, DeleteSchedule, j.Next())
	require.Empty(t, rec.PutFor)
	require.Equal(t, None, j.Next(), "no run while the delete is in flight")
	j.PutDone("not allowed")
	require.Equal(t, "its schedule could not be deleted: not allowed", rec.ScheduleError)
	require.True(t, rec.Scheduled, "still there")
	require.Equal(t, DeleteSchedule, j.Next(), "tried again")
	j.PutDone("")
	require.False(t, rec.Scheduled)
	require.Empty(t, rec.ScheduleError)
	require.Equal(t, RunOnce, j.Next())
	require.EqualValues(t, 2, j.OnceGen)
}

// A once job runs one run per generation, a generation taken mid-run
// too; stopped, it runs nothing; a run that did not tell is a failure.
func TestNext_AOnceJobRunsEachGenerationOnce(t *testing.T) {
	j, rec := newJob(once(), versions.Job)
	state, reason, _ := j.State()
	require.Equal(t, "starting", state)
	require.Equal(t, "its run is due", reason)
	require.Equal(t, RunOnce, j.Next())
	require.Equal(t, None, j.Next(), "one run at a time")
	state, _, _ = j.State()
	require.Equal(t, "starting", state)
	require.NoError(t, j.TakeSpec(once(), 5, t0))
	require.EqualValues(t, 5, j.Generation, "the supervisor's generation")
	r := j.OnceEnded(run("g1", treestatus.RunSucceeded), "", t0)
	require.EqualValues(t, 1, rec.Ran)
	_, _, noted := j.Note(r, t0)
	require.True(t, noted)
	require.Equal(t, RunOnce, j.Next(), "generation 5 runs next")
	r = j.OnceEnded(treestatus.JobRun{}, "child workflow failed to start", t0.Add(time.Minute))
	require.Equal(t, "t/backup/run-g5", r.ID)
	require.Equal(t, treestatus.RunFailed, r.Outcome)
	require.Equal(t, "child workflow failed to start", r.Reason)
	require.EqualValues(t, 5, r.Generation)
	j.Note(r, t0)
	state, reason, _ = j.State()
	require.Equal(t, "failed", state)
	require.Equal(t, "its last run failed: child workflow failed to start", reason)
	require.Equal(t, None, j.Next(), "ran for its generation")

	j2, _ := newJob(once(), versions.Job)
	require.NoError(t, j2.TakeDesired(spec.DesiredStopped, t0))
	require.Equal(t, None, j2.Next())
}

func TestState_AOnceJobWhoseRunSucceededIsCompleted(t *testing.T) {
	j, _ := newJob(once(), versions.Job)
	require.Equal(t, RunOnce, j.Next())
	j.Note(j.OnceEnded(run("g1", treestatus.RunSucceeded), "", t0), t0)
	state, reason, completed := j.State()
	require.Equal(t, "stopped", state)
	require.Equal(t, "its run succeeded", reason)
	require.True(t, completed)
	require.NoError(t, j.TakeSpec(once(), 0, t0))
	state, _, completed = j.State()
	require.Equal(t, "starting", state, "a new generation is due")
	require.False(t, completed)
}

func TestTakeSpec_RefusesAnotherNameOrAService(t *testing.T) {
	j, _ := newJob(periodic(), versions.Job)
	other := periodic()
	other.Name = "other"
	require.ErrorContains(t, j.TakeSpec(other, 0, t0), `spec.name "other" does not match this job ("backup")`)
	svc := periodic()
	svc.Job = nil
	require.ErrorContains(t, j.TakeSpec(svc, 0, t0), "cannot become a job in place")
	require.EqualValues(t, 1, j.Generation, "nothing taken")
	stopped := periodic()
	stopped.Desired = spec.DesiredStopped
	require.NoError(t, j.TakeSpec(stopped, 0, t0.Add(time.Hour)))
	require.Equal(t, spec.DesiredStopped, j.Rec.Desired)
	require.Equal(t, t0.Add(time.Hour), j.Rec.Since)
}

// Regression (review): a job took any generation, and supervisors of
// version 12 refuse reports past 2^53: a job sent one near 2^63 by hand
// had every report refused. From job version 4 it is held to a worker's
// bounds; version 3 takes it.
func TestTakeSpec_AGenerationPastTheBoundsIsRefused(t *testing.T) {
	j, _ := newJob(periodic(), versions.Job)
	j.GenerationBounded = true
	require.ErrorContains(t, j.TakeSpec(periodic(), 1<<63-1, t0), "out of range")
	require.ErrorContains(t, j.TakeSpec(periodic(), 2+spec.MaxGenerationStep, t0), "more than 2^32 past")
	require.EqualValues(t, 1, j.Generation, "nothing taken")
	old, _ := newJob(periodic(), versions.JobGenerationBounded.Since-1)
	require.NoError(t, old.TakeSpec(periodic(), 1<<63-1, t0))
	require.EqualValues(t, int64(1<<63-1), old.Generation)
}

// A run's end is its own job's, with a known outcome, and taken once.
func TestTakeRun(t *testing.T) {
	j, _ := newJob(periodic(), versions.Job)
	for _, tc := range []struct {
		run  treestatus.JobRun
		err  string
		take bool
	}{
		{run("2026-11-28T03:00:00Z", treestatus.RunSucceeded), "", true},
		{treestatus.JobRun{ID: "t/other/run-1", Outcome: treestatus.RunFailed}, "not a run of this job", false},
		{treestatus.JobRun{ID: "t/backup/run-" + strings.Repeat("x", MaxRunIDBytes), Outcome: treestatus.RunFailed}, "at most", false},
		{run("1", "exploded"), `outcome "exploded"`, false},
		{run("2", treestatus.RunTimedOut), "", true},
		{run("3", treestatus.RunCanceled), "", true},
	} {
		got, ok, err := j.TakeRun(tc.run)
		if tc.err != "" {
			require.ErrorContains(t, err, tc.err)
		} else {
			require.NoError(t, err)
		}
		require.Equal(t, tc.take, ok, tc.run.ID)
		if ok {
			j.Note(got, t0)
			_, again, err := j.TakeRun(tc.run)
			require.NoError(t, err)
			require.False(t, again, "told again: not taken")
		}
	}
	long := run("4", treestatus.RunFailed)
	long.Host = strings.Repeat("h", spec.MaxNameLength+10)
	got, ok, err := j.TakeRun(long)
	require.NoError(t, err)
	require.True(t, ok)
	require.Len(t, got.Host, spec.MaxNameLength)
}

// A run's end counts once; jobFailed goes out as the job begins to fail,
// jobRecovered as it succeeds again, nothing in between.
func TestNote_NotifiesAsTheJobBeginsToFailAndRecovers(t *testing.T) {
	j, rec := newJob(periodic(), versions.Job)
	var events []string
	for i, outcome := range []string{treestatus.RunSucceeded, treestatus.RunFailed, treestatus.RunTimedOut, treestatus.RunSucceeded, treestatus.RunSucceeded} {
		r := run(string(rune('a'+i)), outcome)
		r.EndedAt = t0.Add(time.Duration(i) * time.Minute)
		ev, reason, noted := j.Note(r, r.EndedAt)
		require.True(t, noted)
		require.Equal(t, "run "+r.ID+" "+outcome, reason, "no reason of its own: its ID and outcome")
		events = append(events, ev)
		_, _, again := j.Note(r, r.EndedAt)
		require.False(t, again)
	}
	require.Equal(t, []string{"", spec.EventJobFailed, "", spec.EventJobRecovered, ""}, events)
	require.Equal(t, 5, rec.Runs)
	require.Equal(t, 2, rec.Failures)
	require.Equal(t, t0.Add(4*time.Minute), rec.LastSuccess)
	require.False(t, rec.Troubled)

	r := run("long", treestatus.RunFailed)
	r.Reason = strings.Repeat("y", treestatus.MaxRecordText+50)
	_, reason, _ := j.Note(r, t0)
	require.Len(t, rec.LastRun.Reason, treestatus.MaxRecordText+len("…"))
	require.Equal(t, rec.LastRun.Reason, reason)
}

func TestStatus(t *testing.T) {
	j, _ := newJob(periodic(), versions.Job)
	j.Note(run("a", treestatus.RunFailed), t0)
	require.Equal(t, &treestatus.JobStatus{Schedule: periodic().Job.What(), ScheduleID: "t/backup", LastRun: j.Rec.LastRun, Runs: 1, Failures: 1}, j.Status())
	state, reason, _ := j.State()
	require.Equal(t, "failed", state)
	require.Equal(t, "its last run failed: ", reason)
	o, _ := newJob(once(), versions.Job)
	require.Empty(t, o.Status().ScheduleID, "a once job has no schedule")
}

func TestSameReport(t *testing.T) {
	a := treestatus.Status{Path: "t/backup", State: "running", Reason: "scheduled: every 1h"}
	b := a
	require.True(t, SameReport(a, b))
	b.Reason = "its last run failed: x"
	require.False(t, SameReport(a, b))
	b = a
	b.SuperviseSeq = 3
	require.False(t, SameReport(a, b))
}

// The defect: a spec sent by hand with a huge generation ran once and left
// the once job completed for every real generation after it, all below.
// With OnceExact (job version 3) a generation other than the one it last
// ran for runs; before, only one above it did.
func TestNext_AOnceJobPinnedByAHugeGenerationRunsAgain(t *testing.T) {
	for _, exact := range []bool{false, true} {
		j, rec := newJob(once(), versions.Job)
		j.OnceExact = exact
		require.NoError(t, j.TakeSpec(once(), 9_000_000_000_000_000_000, t0))
		require.Equal(t, RunOnce, j.Next())
		j.Note(j.OnceEnded(run("g9e18", treestatus.RunSucceeded), "", t0), t0)
		require.NoError(t, j.TakeSpec(once(), 2, t0), "adopted again at a lower generation, its spec the same")
		_, _, completed := j.State()
		if exact {
			require.Equal(t, None, j.Next(), "the same spec: not run again")
			require.True(t, completed)
			changed := once()
			changed.Process = map[string]any{"command": "/bin/echo"}
			require.NoError(t, j.TakeSpec(changed, 3, t0), "the next real apply, which changes it")
			require.Equal(t, RunOnce, j.Next(), "its generation runs")
			j.Note(j.OnceEnded(run("g3", treestatus.RunSucceeded), "", t0), t0)
			require.EqualValues(t, 3, rec.Ran, "unpinned")
			require.NoError(t, j.TakeSpec(changed, 4, t0))
			require.Equal(t, RunOnce, j.Next(), "and a newer generation runs as before")
		} else {
			require.Equal(t, None, j.Next(), "version 2: pinned")
			require.True(t, completed)
			require.EqualValues(t, 9_000_000_000_000_000_000, rec.Ran)
		}
	}
}

// A run recorded before OnceExact kept no digest: a lower generation is
// taken as run (no once job runs again by surprise).
func TestNext_ARunRecordedBeforeOnceExactIsNotRunAgain(t *testing.T) {
	j, rec := newJob(once(), versions.Job)
	j.OnceExact = true
	rec.Ran = 7 // carried from job version 2
	require.NoError(t, j.TakeSpec(once(), 5, t0))
	require.Equal(t, None, j.Next())
	require.NoError(t, j.TakeSpec(once(), 8, t0))
	require.Equal(t, RunOnce, j.Next(), "a newer generation runs")
}
