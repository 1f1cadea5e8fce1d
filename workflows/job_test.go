package workflows

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/steward-sh/steward/activities"
	"github.com/steward-sh/steward/internal/spec"
	"github.com/steward-sh/steward/internal/treestatus"
	"github.com/steward-sh/steward/internal/versions"
)

func periodicJob(name string) spec.Node {
	return spec.Node{Name: name, Kind: spec.KindProcess, Process: map[string]any{"command": "/bin/true"},
		Job: &spec.Job{Every: spec.Dur(time.Hour), PauseOnFailure: true}}
}

// A periodic job puts its schedule at its start (its path, its run, not
// paused), again paused when it is stopped, and deletes it when it ends;
// the runs it hears of are its status and its metrics.
func TestJob_ItsScheduleFollowsItsLife(t *testing.T) {
	env, rec := newEnvWithMetrics(t)
	env.RegisterWorkflow(JobWorkflow)
	var mu sync.Mutex
	var puts []activities.JobSchedule
	var deleted []string
	env.OnActivity(activities.PutScheduleName, mock.Anything, mock.Anything).Return(func(_ context.Context, s activities.JobSchedule) error {
		mu.Lock()
		defer mu.Unlock()
		puts = append(puts, s)
		return nil
	})
	env.OnActivity(activities.DeleteScheduleName, mock.Anything, mock.Anything).Return(func(_ context.Context, id string) error {
		mu.Lock()
		defer mu.Unlock()
		deleted = append(deleted, id)
		return nil
	})
	const path = "t/backup"
	ok := 0
	at(env, time.Minute, func() {
		env.SignalWorkflow(SignalJobRun, JobRun{ID: path + "/run-2026-11-27T03:00:00Z", Outcome: treestatus.RunSucceeded, ExitCode: &ok, EndedAt: time.Unix(1000, 0)})
		env.SignalWorkflow(SignalJobRun, JobRun{ID: "t/other/run-1", Outcome: treestatus.RunFailed}) // not its run
	})
	var st Status
	at(env, 2*time.Minute, func() {
		v, err := env.QueryWorkflow(QueryStatus)
		require.NoError(t, err)
		require.NoError(t, v.Get(&st))
		env.SignalWorkflow(SignalDesired, spec.DesiredStopped)
	})
	endAt(env, 3*time.Minute)
	executeJob(env, JobInput{Path: path, Spec: periodicJob("backup"), Generation: 1, Version: JobVersion})

	require.Equal(t, "running", st.State, st.Reason)
	require.Equal(t, 1, st.Job.Runs)
	require.Equal(t, treestatus.RunSucceeded, st.Job.LastRun.Outcome)
	require.Equal(t, path, st.Job.ScheduleID)
	require.Equal(t, 1, st.RejectedSignals, "another job's run is refused")
	mu.Lock()
	defer mu.Unlock()
	require.Len(t, puts, 2)
	require.Equal(t, path, puts[0].ID)
	require.Equal(t, path+"/run", puts[0].RunID, "the server adds -<time> to each run's ID")
	require.Equal(t, "JobRunWorkflow", puts[0].Workflow)
	require.False(t, puts[0].Paused)
	require.True(t, puts[1].Paused, "stopped: its schedule paused")
	var in JobRunInput
	require.NoError(t, json.Unmarshal(puts[0].Input, &in))
	require.Equal(t, path, in.Job)
	require.Equal(t, []string{path}, deleted, "ended: its schedule deleted")
	require.Equal(t, 1.0, rec.Sum(MetricJobRuns, map[string]string{"path": path, "outcome": treestatus.RunSucceeded}))
	last, found := rec.Last(MetricJobLastSuccess, map[string]string{"path": path})
	require.True(t, found)
	require.Equal(t, 1000.0, last)
	period, found := rec.Last(MetricJobPeriod, map[string]string{"path": path})
	require.True(t, found)
	require.Equal(t, time.Hour.Seconds(), period)
}

// A spec that is not a job's is refused by a job (a service does not
// become a job in place), and the job runs on as it was.
func TestJob_RefusesAServiceSpec(t *testing.T) {
	env := newEnv(t)
	env.RegisterWorkflow(JobWorkflow)
	env.OnActivity(activities.PutScheduleName, mock.Anything, mock.Anything).Return(nil)
	env.OnActivity(activities.DeleteScheduleName, mock.Anything, mock.Anything).Return(nil)
	var st Status
	at(env, time.Minute, func() {
		env.SignalWorkflow(SignalSpec, spec.Update{Generation: 2, Spec: stubNode("backup", nil)})
	})
	at(env, 2*time.Minute, func() { st = queryOwn(t, env) })
	endAt(env, 3*time.Minute)
	executeJob(env, JobInput{Path: "t/backup", Spec: periodicJob("backup"), Generation: 1, Version: JobVersion})
	require.Equal(t, 1, st.RejectedSignals)
	require.EqualValues(t, 1, st.Generation)
	require.NotNil(t, st.Job)
}

// Period: an interval's, or between a cron expression's next two times.
func TestJob_Period(t *testing.T) {
	now := time.Date(2026, 11, 27, 12, 30, 0, 0, time.UTC)
	require.Equal(t, 24*time.Hour, spec.Job{Schedule: "0 3 * * *"}.Period(now))
	require.Equal(t, time.Hour, spec.Job{Schedule: "@hourly"}.Period(now))
	require.Equal(t, 6*time.Hour, spec.Job{Every: spec.Dur(6 * time.Hour)}.Period(now))
	require.Zero(t, spec.Job{Once: true}.Period(now))
}

// A run: its process started on its host, its end awaited; past its
// timeout the process is stopped and the run ends timed out; an exit is
// the run's outcome, exit code included; its job is told either way.
func TestJobRun_OutcomeByExitOrTimeout(t *testing.T) {
	for _, c := range []struct {
		name    string
		exit    *jobExit
		outcome string
		stopped bool
	}{
		{"exit 0", &jobExit{Instance: "i1", Normal: true, Code: intPtr(0)}, treestatus.RunSucceeded, false},
		{"exit 3", &jobExit{Instance: "i1", Code: intPtr(3), Reason: "exit status 3"}, treestatus.RunFailed, false},
		{"another instance's exit, then the timeout", &jobExit{Instance: "i0", Normal: true}, treestatus.RunTimedOut, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			env := newEnv(t)
			env.RegisterWorkflow(JobRunWorkflow)
			env.SetStartWorkflowOptions(client.StartWorkflowOptions{ID: "t/backup/run-x"})
			env.OnActivity(activities.StartName, mock.Anything, mock.Anything).Return(activities.ActionResult{Instance: "i1"}, nil)
			stops := 0
			env.OnActivity(activities.StopName, mock.Anything, mock.Anything).Return(func(_ context.Context, r activities.ActionRequest) (activities.ActionResult, error) {
				require.Equal(t, "i1", r.Instance)
				stops++
				return activities.ActionResult{}, nil
			}).Maybe()
			var told []JobRun
			env.OnActivity(activities.TellJobName, mock.Anything, mock.Anything).Return(func(_ context.Context, r activities.TellJobRequest) error {
				require.Equal(t, "t/backup", r.Job)
				require.Equal(t, SignalJobRun, r.Signal)
				var run JobRun
				require.NoError(t, json.Unmarshal(r.Run, &run))
				told = append(told, run)
				return nil
			})
			n := periodicJob("backup")
			n.Job.Timeout = spec.Dur(time.Minute)
			at(env, time.Second, func() { env.SignalWorkflow(SignalExit, *c.exit) })
			env.ExecuteWorkflow(JobRunWorkflow, JobRunInput{Job: "t/backup", Spec: n, Generation: 1})
			require.Len(t, told, 1)
			run := told[0]
			require.Equal(t, "t/backup/run-x", run.ID)
			require.Equal(t, c.outcome, run.Outcome, run.Reason)
			require.Equal(t, c.stopped, stops == 1)
			if c.outcome == treestatus.RunSucceeded {
				require.NoError(t, env.GetWorkflowError())
				return
			}
			require.Error(t, env.GetWorkflowError(), "a run that did not succeed fails (pauseOnFailure sees it)")
			if c.exit.Code != nil && c.outcome == treestatus.RunFailed {
				require.Equal(t, *c.exit.Code, *run.ExitCode)
			}
		})
	}
}

// A run of versions.JobRunsAwait runs to its end in one activity
// (RunJob): the end is the activity's result, no exit signal is awaited
// and no memo written; a worker that died mid-run (a timeout) is followed
// by attempts that adopt the process, never start one, and do not count
// against the job's retries; a deadline passed stops the process.
func TestJobRun_AwaitsItsEndInOneActivity(t *testing.T) {
	for _, c := range []struct {
		name     string
		answers  []any // per attempt: an ActionResult or an error
		outcome  string
		adopts   []bool
		stopped  bool
		exitCode *int
	}{
		{"exit 0", []any{activities.ActionResult{Exit: &jobExit{Instance: "i1", Normal: true, Code: intPtr(0)}}},
			treestatus.RunSucceeded, []bool{false}, false, intPtr(0)},
		{"exit 3", []any{activities.ActionResult{Exit: &jobExit{Instance: "i1", Code: intPtr(3), Reason: "exit status 3"}}},
			treestatus.RunFailed, []bool{false}, false, intPtr(3)},
		{"its worker killed twice, then adopted to its end",
			[]any{temporal.NewTimeoutError(enumspb.TIMEOUT_TYPE_HEARTBEAT, nil), temporal.NewTimeoutError(enumspb.TIMEOUT_TYPE_HEARTBEAT, nil),
				activities.ActionResult{Exit: &jobExit{Instance: "i1", Normal: true}}},
			treestatus.RunSucceeded, []bool{false, true, true}, false, nil},
		{"its deadline passed", []any{activities.ActionResult{TimedOut: true}}, treestatus.RunTimedOut, []bool{false}, true, nil},
		{"its activity told its job", []any{activities.ActionResult{Exit: &jobExit{Normal: true, Code: intPtr(0)}, Told: true,
			Run: &JobRun{ID: "t/backup/run-x", Outcome: treestatus.RunSucceeded, ExitCode: intPtr(0), StartedAt: time.Unix(1, 0), EndedAt: time.Unix(2, 0)}}},
			treestatus.RunSucceeded, []bool{false}, false, intPtr(0)},
	} {
		t.Run(c.name, func(t *testing.T) {
			env := newEnv(t)
			env.RegisterWorkflow(JobRunWorkflow)
			env.SetStartWorkflowOptions(client.StartWorkflowOptions{ID: "t/backup/run-x"})
			var adopts []bool
			env.OnActivity(activities.RunJobName, mock.Anything, mock.Anything).Return(func(_ context.Context, r activities.ActionRequest) (activities.ActionResult, error) {
				require.False(t, r.Deadline.IsZero(), "a run's activity knows its deadline")
				require.NotNil(t, r.OnEnd, "and its record, to tell its job")
				require.Equal(t, "t/backup", r.OnEnd.Job)
				require.False(t, r.OnEnd.Run.StartedAt.IsZero())
				adopts = append(adopts, r.Adopt)
				switch a := c.answers[len(adopts)-1].(type) {
				case error:
					return activities.ActionResult{}, a
				default:
					return a.(activities.ActionResult), nil
				}
			})
			stops := 0
			env.OnActivity(activities.StopName, mock.Anything, mock.Anything).Return(func(context.Context, activities.ActionRequest) (activities.ActionResult, error) {
				stops++
				return activities.ActionResult{}, nil
			}).Maybe()
			var told []JobRun
			env.OnActivity(activities.TellJobName, mock.Anything, mock.Anything).Return(func(_ context.Context, r activities.TellJobRequest) error {
				var run JobRun
				require.NoError(t, json.Unmarshal(r.Run, &run))
				told = append(told, run)
				return nil
			}).Maybe()
			n := periodicJob("backup")
			n.Retry = &spec.Retry{MaxAttempts: 1}
			env.ExecuteWorkflow(JobRunWorkflow, JobRunInput{Job: "t/backup", Spec: n, Generation: 1, Version: JobVersion})
			require.Equal(t, c.adopts, adopts)
			if len(told) == 0 && c.outcome == treestatus.RunSucceeded { // its activity told the job
				var res JobRun
				require.NoError(t, env.GetWorkflowResult(&res))
				told = append(told, res)
			}
			require.Len(t, told, 1)
			require.Equal(t, c.outcome, told[0].Outcome, told[0].Reason)
			require.Equal(t, c.stopped, stops == 1)
			require.Equal(t, c.exitCode, told[0].ExitCode)
			require.False(t, told[0].StartedAt.IsZero())
			if c.outcome == treestatus.RunSucceeded {
				require.NoError(t, env.GetWorkflowError())
				var res JobRun
				require.NoError(t, env.GetWorkflowResult(&res))
				require.Equal(t, c.outcome, res.Outcome, "the result says the outcome (no memo)")
				return
			}
			var app *temporal.ApplicationError
			require.ErrorAs(t, env.GetWorkflowError(), &app)
			var res JobRun
			require.NoError(t, app.Details(&res), "a failed run's details are its record")
			require.Equal(t, c.outcome, res.Outcome)
		})
	}
}

// A run's ID must be its job's: a run started by hand under another ID
// is refused before anything runs.
func TestJobRun_RefusesAnotherJobsID(t *testing.T) {
	env := newEnv(t)
	env.RegisterWorkflow(JobRunWorkflow)
	env.SetStartWorkflowOptions(client.StartWorkflowOptions{ID: "rogue"})
	env.ExecuteWorkflow(JobRunWorkflow, JobRunInput{Job: "t/backup", Spec: periodicJob("backup"), Generation: 1})
	require.ErrorContains(t, env.GetWorkflowError(), `not a run of job "t/backup"`)
}

func intPtr(n int) *int { return &n }

// jobFailed as a job begins to fail, once however often it fails on;
// jobRecovered at its next run that succeeds.
func TestJob_NotifiesFailedOnceAndRecovered(t *testing.T) {
	env := newEnv(t)
	env.RegisterWorkflow(JobWorkflow)
	env.OnActivity(activities.PutScheduleName, mock.Anything, mock.Anything).Return(nil)
	env.OnActivity(activities.DeleteScheduleName, mock.Anything, mock.Anything).Return(nil)
	var events []string
	env.OnActivity(activities.NotifyName, mock.Anything, mock.Anything).Return(func(_ context.Context, n activities.NotificationTask) error {
		events = append(events, n.Notification.Event+" "+n.Notification.State)
		return nil
	})
	run := func(id, outcome string) func() {
		return func() { env.SignalWorkflow(SignalJobRun, JobRun{ID: "t/backup/run-" + id, Outcome: outcome}) }
	}
	at(env, time.Minute, run("1", treestatus.RunFailed))
	at(env, 2*time.Minute, run("2", treestatus.RunTimedOut))
	at(env, 3*time.Minute, run("3", treestatus.RunSucceeded))
	at(env, 4*time.Minute, run("4", treestatus.RunSucceeded))
	endAt(env, 5*time.Minute)
	n := periodicJob("backup")
	n.Notify = &spec.Notify{Webhook: spec.Value{Literal: "http://127.0.0.1:1/hook"}}
	executeJob(env, JobInput{Path: "t/backup", Spec: n, Generation: 1, Version: JobVersion})
	require.Equal(t, []string{"jobFailed failed", "jobRecovered succeeded"}, events)
}

// A once job given a new generation while its run runs runs again for it
// (the bug: the run's end marked the new generation as run, and its
// dependants started without it).
func TestJob_OnceRunsEachGenerationEvenOneTakenMidRun(t *testing.T) {
	env := newEnv(t)
	env.RegisterWorkflow(JobWorkflow)
	env.RegisterWorkflow(JobRunWorkflow)
	var gens []int64
	env.OnWorkflow(JobRunWorkflow, mock.Anything, mock.Anything).After(2 * time.Minute).Return(func(_ workflow.Context, in JobRunInput) (JobRun, error) {
		gens = append(gens, in.Generation)
		return JobRun{ID: fmt.Sprintf("%sg%d", JobRunPrefix(in.Job), in.Generation), Outcome: treestatus.RunSucceeded, Generation: in.Generation}, nil
	})
	n := periodicJob("migrate")
	n.Job = &spec.Job{Once: true}
	changed := n
	changed.Process = map[string]any{"command": "/bin/false"}
	at(env, time.Minute, func() { env.SignalWorkflow(SignalSpec, spec.Update{Generation: 2, Spec: changed}) })
	var st Status
	at(env, 10*time.Minute, func() { st = queryOwn(t, env) })
	endAt(env, 11*time.Minute)
	executeJob(env, JobInput{Path: "t/migrate", Spec: n, Generation: 1, Version: JobVersion})
	require.Equal(t, []int64{1, 2}, gens)
	require.True(t, st.Completed, st.Reason)
	require.Equal(t, "t/migrate/run-g2", st.Job.LastRun.ID)
}

// A periodic job made a once job deletes its schedule; its continue-as-new
// keeps what its schedule was put for (a schedule paused by its failure is
// not resumed by a new run of the job's workflow).
func TestJob_PeriodicMadeOnceDeletesItsScheduleAndCarriesItsPut(t *testing.T) {
	env := newEnv(t)
	env.RegisterWorkflow(JobWorkflow)
	env.RegisterWorkflow(JobRunWorkflow)
	var puts, deletes int
	env.OnActivity(activities.PutScheduleName, mock.Anything, mock.Anything).Return(func(context.Context, activities.JobSchedule) error { puts++; return nil })
	env.OnActivity(activities.DeleteScheduleName, mock.Anything, mock.Anything).Return(func(context.Context, string) error { deletes++; return nil })
	env.OnWorkflow(JobRunWorkflow, mock.Anything, mock.Anything).Return(JobRun{ID: "t/j/run-g2", Outcome: treestatus.RunSucceeded}, nil).Maybe()
	once := periodicJob("j")
	once.Job = &spec.Job{Once: true}
	at(env, time.Minute, func() { env.SignalWorkflow(SignalSpec, spec.Update{Generation: 2, Spec: once}) })
	endAt(env, 2*time.Minute)
	executeJob(env, JobInput{Path: "t/j", Spec: periodicJob("j"), Generation: 1, Version: JobVersion})
	require.Equal(t, 1, puts)
	require.Equal(t, 1, deletes, "deleted when it became a once job, and not again at its end")

	env = newEnv(t)
	env.RegisterWorkflow(JobWorkflow)
	puts = 0
	env.OnActivity(activities.PutScheduleName, mock.Anything, mock.Anything).Return(func(context.Context, activities.JobSchedule) error { puts++; return nil })
	env.OnActivity(activities.DeleteScheduleName, mock.Anything, mock.Anything).Return(nil)
	at(env, time.Minute, func() { env.SignalWorkflow(SignalUpgrade, nil) })
	executeJob(env, JobInput{Path: "t/j", Spec: periodicJob("j"), Generation: 1, Version: JobVersion})
	var can *workflow.ContinueAsNewError
	require.ErrorAs(t, env.GetWorkflowError(), &can)
	var next JobInput
	require.NoError(t, converter.GetDefaultDataConverter().FromPayloads(can.Input, &next))
	require.Equal(t, fmt.Sprintf("1/running/v%d", JobVersion), next.Carry.PutFor)
	require.True(t, next.Carry.Scheduled)
	require.Equal(t, 1, puts)
}

// A job of version 1 puts its schedule for runs of version 1's code (no
// version in their input); brought to version 2 by `starter upgrade` (its
// continue-as-new), it puts its schedule again, for runs that await their
// end in one activity (versions.JobRunsAwait).
func TestJob_UpgradedToRunsThatAwaitPutsItsScheduleAgain(t *testing.T) {
	putsOf := func(version int, carry *JobCarry) (inputs []JobRunInput, next JobInput) {
		env := newEnv(t)
		env.RegisterWorkflow(JobWorkflow)
		env.OnActivity(activities.PutScheduleName, mock.Anything, mock.Anything).Return(func(_ context.Context, s activities.JobSchedule) error {
			var in JobRunInput
			require.NoError(t, json.Unmarshal(s.Input, &in))
			inputs = append(inputs, in)
			return nil
		})
		env.OnActivity(activities.DeleteScheduleName, mock.Anything, mock.Anything).Return(nil).Maybe()
		at(env, time.Minute, func() { env.SignalWorkflow(SignalUpgrade, nil) })
		executeJob(env, JobInput{Path: "t/j", Spec: periodicJob("j"), Generation: 1, Version: version, Carry: carry})
		var can *workflow.ContinueAsNewError
		require.ErrorAs(t, env.GetWorkflowError(), &can)
		require.NoError(t, converter.GetDefaultDataConverter().FromPayloads(can.Input, &next))
		return inputs, next
	}
	v1, next := putsOf(versions.JobVersioned.Since, nil)
	require.Len(t, v1, 1)
	require.Zero(t, v1[0].Version, "version 1's runs: no version in their input")
	require.Equal(t, JobVersion, next.Version, "the upgrade's continue-as-new brings it to the newest")
	v2, again := putsOf(next.Version, next.Carry)
	require.Len(t, v2, 1, "put again after the upgrade")
	require.Equal(t, JobVersion, v2[0].Version)
	require.True(t, versions.JobRunsAwait.In(v2[0].Version))
	v3, _ := putsOf(again.Version, again.Carry)
	require.Empty(t, v3, "a continue-as-new at the same version puts nothing")
}

// From job code version 3 a job's reports are numbered past the time they
// are made, as a worker's; version 2 numbers from 1.
func TestVersions_JobReportsNumberedByTime(t *testing.T) {
	for _, version := range []int{versions.JobReportSeqByTime.Since - 1, versions.JobReportSeqByTime.Since} {
		env := newEnv(t)
		env.RegisterWorkflow(JobWorkflow)
		env.OnActivity(activities.PutScheduleName, mock.Anything, mock.Anything).Return(nil)
		env.OnActivity(activities.DeleteScheduleName, mock.Anything, mock.Anything).Return(nil)
		reps := recordReports(env, "p")
		began := env.Now()
		endAt(env, time.Minute)
		executeJob(env, JobInput{Path: "p/backup", Parent: "p", Spec: periodicJob("backup"), Generation: 1, Version: version})
		reps.mu.Lock()
		got := reps.got
		reps.mu.Unlock()
		require.NotEmpty(t, got, "version %d", version)
		for _, r := range got {
			if versions.JobReportSeqByTime.In(version) {
				require.GreaterOrEqual(t, r.Seq, began.UnixNano(), "version %d: by time", version)
			} else {
				require.Less(t, r.Seq, int64(100), "version %d: counted from 1", version)
			}
		}
	}
}

// Regression (attack review): a once job took the first end told of a run
// and dropped the rest, so a "succeeded" signal forged before its run
// ended (the run's ID is PATH/run-g<generation>) made the run's failure
// count as success: the job completed and its dependants started after a
// failed migration. From job version 5 a once run counts by its child's
// result alone; version 4 is as it was.
func TestJob_AForgedSuccessOfAOnceRunIsDropped(t *testing.T) {
	for _, version := range []int{versions.JobOnceRunByResult.Since - 1, versions.JobOnceRunByResult.Since} {
		env := newEnv(t)
		env.RegisterWorkflow(JobWorkflow)
		env.RegisterWorkflow(JobRunWorkflow)
		env.OnWorkflow(JobRunWorkflow, mock.Anything, mock.Anything).After(2 * time.Minute).Return(func(_ workflow.Context, in JobRunInput) (JobRun, error) {
			run := JobRun{ID: fmt.Sprintf("%sg%d", JobRunPrefix(in.Job), in.Generation), Outcome: treestatus.RunFailed, Reason: "exit 1", Generation: in.Generation}
			return run, temporal.NewNonRetryableApplicationError("failed", "JobFailed", nil, run)
		})
		n := periodicJob("migrate")
		n.Job = &spec.Job{Once: true}
		at(env, time.Minute, func() {
			env.SignalWorkflow(SignalJobRun, JobRun{ID: "t/migrate/run-g1", Outcome: treestatus.RunSucceeded, Generation: 1})
		})
		at(env, 5*time.Minute, func() { // after the run failed: another ID (found by the review)
			env.SignalWorkflow(SignalJobRun, JobRun{ID: "t/migrate/run-now-x", Outcome: treestatus.RunSucceeded, Generation: 1})
		})
		var st Status
		at(env, 10*time.Minute, func() { st = queryOwn(t, env) })
		endAt(env, 11*time.Minute)
		executeJob(env, JobInput{Path: "t/migrate", Spec: n, Generation: 1, Version: version})
		if versions.JobOnceRunByResult.In(version) {
			require.False(t, st.Completed, "version %d: %s", version, st.Reason)
			require.Equal(t, "failed", st.State, "as its own run ended")
			require.Equal(t, 1, st.Job.Failures)
		} else {
			require.True(t, st.Completed, "version %d: the forged success counted", version)
		}
	}
}

// executeJob runs a job's workflow at its path, as its supervisor starts
// it (from job version 5 a job whose path is not its ID ends at once).
func executeJob(env *testsuite.TestWorkflowEnvironment, in JobInput) {
	env.SetStartWorkflowOptions(client.StartWorkflowOptions{ID: in.Path})
	env.ExecuteWorkflow(JobWorkflow, in)
}

// Regression (attack review): a job acts on the Schedule its path names;
// one started by hand under another workflow ID, naming an operator's job
// as its path, overwrote, paused or deleted that job's Schedule. It ends at
// once, refused, whatever version its input says (the review found that a
// check by version was the hand-starter's to skip).
func TestJob_APathThatIsNotItsIDIsRefused(t *testing.T) {
	for _, version := range []int{JobVersion - 1, JobVersion, JobVersion + 50} { // (+50: refused before the version is looked at)
		env := newEnv(t)
		env.RegisterWorkflow(JobWorkflow)
		var puts atomic.Int32
		env.OnActivity(activities.PutScheduleName, mock.Anything, mock.Anything).Return(func(context.Context, activities.JobSchedule) error { puts.Add(1); return nil }).Maybe()
		env.OnActivity(activities.DeleteScheduleName, mock.Anything, mock.Anything).Return(nil).Maybe()
		env.SetStartWorkflowOptions(client.StartWorkflowOptions{ID: "x"})
		endAt(env, time.Minute)
		env.ExecuteWorkflow(JobWorkflow, JobInput{Path: "shop/backup", Spec: periodicJob("backup"), Generation: 1, Version: version})
		require.ErrorContains(t, env.GetWorkflowError(), `path "shop/backup" is not its workflow ID "x"`, "version %d", version)
		require.Zero(t, puts.Load(), "no Schedule touched")
	}
}
