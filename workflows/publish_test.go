package workflows

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/steward-sh/steward/activities"
	"github.com/steward-sh/steward/internal/spec"
	"github.com/steward-sh/steward/internal/supervise"
	"github.com/steward-sh/steward/internal/versions"
)

// reports records what a workflow signals its parent, with the workflow
// time of each report, in the order of their numbers: the test
// environment calls a signal's mock on a goroutine of its own, so two
// reports sent in one workflow task may reach it in either order
// (TestVersions_SuccessReportIsNotStale failed in CI on that).
type reports struct {
	mu  sync.Mutex
	env *testsuite.TestWorkflowEnvironment
	got []timedReport
}

type timedReport struct {
	at time.Time
	ChildReport
}

func recordReports(env *testsuite.TestWorkflowEnvironment, parent string) *reports {
	r := &reports{env: env}
	env.OnSignalExternalWorkflow(mock.Anything, parent, "", SignalChild, mock.Anything).Return(
		func(_, _, _, _ string, arg any) error {
			r.mu.Lock()
			defer r.mu.Unlock()
			rep := timedReport{env.Now(), arg.(ChildReport)}
			i := len(r.got)
			for rep.Seq != 0 && i > 0 && r.got[i-1].Seq > rep.Seq {
				i--
			}
			r.got = append(r.got[:i], append([]timedReport{rep}, r.got[i:]...)...)
			return nil
		})
	return r
}

func (r *reports) states() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, g := range r.got {
		out = append(out, g.Status.State)
	}
	return out
}

func (r *reports) between(from, to time.Time) []timedReport {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []timedReport
	for _, g := range r.got {
		if !g.at.Before(from) && g.at.Before(to) {
			out = append(out, g)
		}
	}
	return out
}

// An action that ends within publishDelay reaches the parent as the state
// it ends in, and a manual restart, which ends where it began (running),
// is not reported at all: its counter rides along with the next report.
func TestLeanReports_AQuickActionIsReportedOnlyAsTheStateItEndsIn(t *testing.T) {
	env := newEnv(t)
	reps := recordReports(env, "p")
	env.OnActivity(activities.StartName, mock.Anything, mock.Anything).Return(activities.ActionResult{Attempt: 1, Instance: "i1"}, nil)
	env.OnActivity(activities.RestartName, mock.Anything, mock.Anything).After(200*time.Millisecond).Return(activities.ActionResult{Attempt: 1, Instance: "i2"}, nil)
	at(env, time.Minute, func() { env.SignalWorkflow(SignalRestart, nil) })
	endAt(env, 2*time.Minute)
	env.ExecuteWorkflow(WorkerWorkflow, WorkerInput{Path: "p/w", Parent: "p", Spec: stubNode("w", nil), Generation: 1})

	require.Equal(t, []string{"running", "stopped"}, reps.states(),
		"the start and the end on delete: no transient state, no report of the restart alone")
	require.Equal(t, 1, reps.got[1].Status.ManualRestarts, "the restart's count rides along")
}

// An action still running after activities.SlowAfter is published when its
// activity says so (the `slow` signal), so the parent and the Web UI see a
// slow start as starting; a stale or bad `slow` changes nothing.
func TestLeanReports_ASlowActionIsReportedWhenItsActivitySaysSo(t *testing.T) {
	env := newEnv(t)
	reps := recordReports(env, "p")
	env.OnActivity(activities.StartName, mock.Anything, mock.Anything).After(4*time.Second).Return(activities.ActionResult{Attempt: 1, Instance: "i1"}, nil)
	env.SetStartTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	began := env.Now()
	at(env, 500*time.Millisecond, func() { env.SignalWorkflow(SignalSlow, int64(99)) }) // not this action's
	at(env, activities.SlowAfter, func() { env.SignalWorkflow(SignalSlow, int64(1)) })
	var st Status
	at(env, 10*time.Second, func() { st = queryOwn(t, env) })
	endAt(env, time.Minute)
	env.ExecuteWorkflow(WorkerWorkflow, WorkerInput{Path: "p/w", Parent: "p", Spec: stubNode("w", nil), Generation: 1})

	require.Equal(t, []string{"starting", "running"}, reps.states()[:2])
	require.Equal(t, began.Add(activities.SlowAfter), reps.got[0].at, "the transient state waited for the slow signal")
	require.Zero(t, st.RejectedSignals)
}

// What the supervisor acts on is reported at once, even during an action:
// here the acknowledgement of its supervise request.
func TestLeanReports_ASuperviseAckIsReportedAtOnce(t *testing.T) {
	env := newEnv(t)
	reps := recordReports(env, "p")
	env.OnActivity(activities.StartName, mock.Anything, mock.Anything).Return(activities.ActionResult{Attempt: 1, Instance: "i1"}, nil)
	env.OnActivity(activities.StopName, mock.Anything, mock.Anything).After(4*time.Second).Return(activities.ActionResult{Attempt: 1}, nil)
	env.SetStartTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	began := env.Now()
	at(env, time.Minute, func() { env.SignalWorkflow(SignalSupervise, SuperviseRequest{Seq: 1, Op: supervise.RequestStop}) })
	endAt(env, 2*time.Minute)
	env.ExecuteWorkflow(WorkerWorkflow, WorkerInput{Path: "p/w", Parent: "p", Spec: stubNode("w", nil), Generation: 1, Coordinated: true})

	acks := reps.between(began.Add(time.Minute), began.Add(time.Minute+time.Millisecond))
	require.Len(t, acks, 1, "reported in the task that handled the request: %v", reps.states())
	require.Equal(t, "stopping", acks[0].Status.State)
	require.EqualValues(t, 1, acks[0].Status.SuperviseSeq)
}

// A supervisor reports its own record only: its children's restarts reach
// no further than it (no report to its parent), and a change of its own (a
// manual restart of the supervisor) goes up at once, without children.
func TestNarrowReports_ASupervisorReportsItsOwnRecordOnly(t *testing.T) {
	env := newEnv(t)
	reps := recordReports(env, "top")
	env.SetStartTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	began := env.Now()
	at(env, time.Minute, func() {
		for _, p := range []string{"top/mid/a", "top/mid/b", "top/mid/c"} {
			require.NoError(t, env.SignalWorkflowByID(p, SignalRestart, nil))
		}
	})
	var mid Status
	at(env, time.Minute+10*time.Second, func() { mid = query(t, env) })
	at(env, 2*time.Minute, func() { env.SignalWorkflow(SignalRestart, nil) })
	endAt(env, 3*time.Minute)
	env.OnActivity(activities.StartName, mock.Anything, mock.Anything).Return(
		func(_ context.Context, r activities.ActionRequest) (activities.ActionResult, error) {
			return activities.ActionResult{Attempt: 1, Instance: r.Path}, nil
		})
	env.OnActivity(activities.RestartName, mock.Anything, mock.Anything).Return(
		func(_ context.Context, r activities.ActionRequest) (activities.ActionResult, error) {
			return activities.ActionResult{Attempt: 1, Instance: r.Path + "-2"}, nil
		})
	node := tree("mid", stubNode("a", nil), stubNode("b", nil), stubNode("c", nil))
	env.ExecuteWorkflow(SupervisorWorkflow, SupervisorInput{Path: "top/mid", Parent: "top", Spec: node, Generation: 1})

	for _, p := range []string{"top/mid/a", "top/mid/b", "top/mid/c"} {
		require.Equal(t, 1, childNamed(t, mid, p).ManualRestarts, "%s: the assembled status has it", p)
	}
	require.Empty(t, reps.between(began.Add(time.Minute), began.Add(2*time.Minute)), "children's restarts are not the parent's business")
	own := reps.between(began.Add(2*time.Minute), began.Add(2*time.Minute+time.Millisecond))
	require.NotEmpty(t, own, "the supervisor's own restart is reported at once")
	require.Equal(t, 1, own[0].Status.ManualRestarts)
	for _, r := range reps.got {
		require.Nil(t, r.Status.Children, "a report never carries children")
	}
}

// A worker does not upsert at its start the search attributes its
// supervisor set when it started it (path, kind, state "stopped").
func TestLeanReports_AWorkerDoesNotUpsertWhatItsSupervisorSetAtStart(t *testing.T) {
	env := newEnv(t)
	var mu sync.Mutex
	var upserted []string
	env.OnUpsertTypedSearchAttributes(mock.Anything).Run(func(args mock.Arguments) {
		mu.Lock()
		defer mu.Unlock()
		sa := args.Get(0).(temporal.SearchAttributes)
		if p, _ := sa.GetKeyword(SearchPath); p == "p/w" {
			st, _ := sa.GetKeyword(SearchState)
			upserted = append(upserted, st)
		}
	}).Return(nil)
	env.OnActivity(activities.StartName, mock.Anything, mock.Anything).Return(activities.ActionResult{Attempt: 1, Instance: "i1"}, nil)
	endAt(env, time.Minute)
	env.ExecuteWorkflow(SupervisorWorkflow, SupervisorInput{Path: "p", Spec: tree("p", stubNode("w", nil)), Generation: 1})

	mu.Lock()
	defer mu.Unlock()
	require.Equal(t, []string{"running", "stopping", "stopped"}, upserted, "no upsert of the \"stopped\" it was started with")
}

// A start whose activity delivered the report of its success (a worker
// process's Reporter) is not reported again by the workflow: the start of
// a worker costs no signal of the workflow's own, and the next reports (the
// stop's) come from the workflow with newer numbers.
func TestLeanReports_AReportTheActivitySentIsNotSentAgain(t *testing.T) {
	env := newEnv(t)
	reps := recordReports(env, "p")
	var sent []activities.SuccessReport
	env.OnActivity(activities.StartName, mock.Anything, mock.Anything).Return(
		func(_ context.Context, r activities.ActionRequest) (activities.ActionResult, error) {
			require.NotNil(t, r.OnSuccess, "the start carries the report of its success")
			sent = append(sent, *r.OnSuccess)
			return activities.ActionResult{Attempt: 1, Instance: "i1", Reported: true}, nil
		})
	env.OnActivity(activities.StopName, mock.Anything, mock.Anything).Return(
		func(_ context.Context, r activities.ActionRequest) (activities.ActionResult, error) {
			require.NotNil(t, r.OnSuccess, "a stop that changes the record carries its report too")
			return activities.ActionResult{Attempt: 1}, nil // not delivered: the workflow reports
		})
	at(env, time.Minute, func() { env.SignalWorkflow(SignalDesired, spec.DesiredStopped) })
	endAt(env, 2*time.Minute)
	env.ExecuteWorkflow(WorkerWorkflow, WorkerInput{Path: "p/w", Parent: "p", Spec: stubNode("w", nil), Generation: 1})

	require.Len(t, sent, 1)
	require.Equal(t, "p", sent[0].Parent)
	require.Equal(t, "running", sent[0].Report.Status.State)
	require.Equal(t, "start", sent[0].Report.Status.LastAction.Name)
	require.EqualValues(t, 1, sent[0].Report.Status.Generation)
	require.Equal(t, []string{"stopping", "stopped"}, reps.states()[:2], "no signal of the workflow for the start; the stop's own (the new desired state is reported at once)")
	require.Greater(t, reps.got[0].Seq, sent[0].Report.Seq, "the workflow's next report is newer")
}

// A report the activity made but a slow action's `slow` publish overtook
// is not taken as the last one: the workflow reports the end itself.
func TestLeanReports_AnOvertakenActivityReportIsSentAgainByTheWorkflow(t *testing.T) {
	env := newEnv(t)
	reps := recordReports(env, "p")
	env.OnActivity(activities.StartName, mock.Anything, mock.Anything).After(4*time.Second).Return(activities.ActionResult{Attempt: 1, Instance: "i1", Reported: true}, nil)
	at(env, activities.SlowAfter, func() { env.SignalWorkflow(SignalSlow, int64(1)) })
	endAt(env, time.Minute)
	env.ExecuteWorkflow(WorkerWorkflow, WorkerInput{Path: "p/w", Parent: "p", Spec: stubNode("w", nil), Generation: 1})

	require.Equal(t, []string{"starting", "running"}, reps.states()[:2], "the slow publish, then the workflow's own report of running")
}

// Regression (review of the activity's report): an attempt may send its
// success report and then fail to complete; if the failure leaves the
// worker where its last report had it (a temporary worker failed again),
// the workflow reports anyway, so the supervisor does not keep "running".
func TestLeanReports_AFailedActionAfterItsReportIsReportedAgain(t *testing.T) {
	env := newEnv(t)
	reps := recordReports(env, "p")
	starts := 0
	env.OnActivity(activities.StartName, mock.Anything, mock.Anything).Return(
		func(_ context.Context, r activities.ActionRequest) (activities.ActionResult, error) {
			starts++
			return activities.ActionResult{Attempt: 1}, temporal.NewNonRetryableApplicationError("lost after its report", activities.ErrPermanent, nil, int32(1))
		})
	at(env, time.Minute, func() { env.SignalWorkflow(SignalRestart, nil) })
	endAt(env, 2*time.Minute)
	node := stubNode("w", nil)
	node.Restart = spec.RestartTemporary
	env.ExecuteWorkflow(WorkerWorkflow, WorkerInput{Path: "p/w", Parent: "p", Spec: node, Generation: 1})

	require.Equal(t, 2, starts)
	require.Equal(t, []string{"failed", "failed"}, reps.states()[:2], "the second failure is reported though the first was: %v", reps.states())
}

// The state an action's success brings is dated from the action's end, as
// its host says (ActionResult.Done), not from the task that learns of it
// later: a journal of a move or update, counted by its moments, never has
// the worker down after its supervisor heard it was up (drain_max_down).
func TestJournal_AnActionsEndDatesTheStateItBrings(t *testing.T) {
	env := newEnv(t)
	var done time.Time
	env.OnActivity(activities.StartName, mock.Anything, mock.Anything).After(10 * time.Second).Return(
		func(_ context.Context, r activities.ActionRequest) (activities.ActionResult, error) {
			done = env.Now().Add(-2 * time.Second)
			return activities.ActionResult{Attempt: 1, Instance: "i1", Done: done}, nil
		})
	var journal []JournalEntry
	at(env, time.Minute, func() {
		v, err := env.QueryWorkflow(QueryHistory)
		require.NoError(t, err)
		require.NoError(t, v.Get(&journal))
	})
	endAt(env, 2*time.Minute)
	env.ExecuteWorkflow(WorkerWorkflow, WorkerInput{Path: "p/w", Spec: stubNode("w", nil), Generation: 1, Version: WorkerVersion})

	require.False(t, done.IsZero())
	var running *JournalEntry
	for i := range journal {
		if journal[i].State == "running" {
			running = &journal[i]
		}
	}
	require.NotNil(t, running, "journal: %+v", journal)
	require.True(t, running.Time.Equal(done), "running since the start's end (%s), not its task (%s)", done, running.Time)
}

// From worker code version 7 a worker's reports are numbered past the
// time they are made (its supervisor refuses one numbered past its own
// time: a forged huge number no longer pins its record); version 6
// numbers from 1.
func TestVersions_WorkerReportsNumberedByTime(t *testing.T) {
	for _, version := range []int{versions.WorkerReportSeqByTime.Since - 1, versions.WorkerReportSeqByTime.Since} {
		env := newEnv(t)
		reps := recordReports(env, "p")
		began := env.Now()
		endAt(env, time.Minute)
		env.ExecuteWorkflow(WorkerWorkflow, WorkerInput{Path: "p/w", Parent: "p", Spec: stubNode("w", nil), Generation: 1, Version: version})
		reps.mu.Lock()
		got := reps.got
		reps.mu.Unlock()
		require.NotEmpty(t, got, "version %d", version)
		last := int64(0)
		for _, r := range got {
			require.Greater(t, r.Seq, last, "version %d: increasing", version)
			last = r.Seq
			if versions.WorkerReportSeqByTime.In(version) {
				require.GreaterOrEqual(t, r.Seq, began.UnixNano(), "version %d: by time", version)
			} else {
				require.Less(t, r.Seq, int64(100), "version %d: counted from 1", version)
			}
		}
	}
}
