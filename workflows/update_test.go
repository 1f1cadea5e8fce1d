package workflows

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/testsuite"

	"github.com/steward-sh/steward/activities"
	"github.com/steward-sh/steward/internal/spec"
	"github.com/steward-sh/steward/internal/supervise"
	"github.com/steward-sh/steward/internal/treestatus"
	"github.com/steward-sh/steward/internal/versions"
)

// restartLog records each restart of the workers: which, with what stub
// delay (the spec it runs), and when it began and ended.
type restartLog struct {
	mu   sync.Mutex
	env  *testsuite.TestWorkflowEnvironment
	runs []restartRun
}

type restartRun struct {
	path       string
	delay      time.Duration
	begin, end time.Time
	failed     bool
}

func (l *restartLog) all() []restartRun {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]restartRun(nil), l.runs...)
}

// with are the runs with the stub delay d.
func (l *restartLog) with(d time.Duration) []restartRun {
	var out []restartRun
	for _, r := range l.all() {
		if r.delay == d {
			out = append(out, r)
		}
	}
	return out
}

// mockUpdates mocks the actions: a restart takes 5 s; one to the stub
// delay bad fails.
func mockUpdates(env *testsuite.TestWorkflowEnvironment, bad time.Duration) *restartLog {
	return mockUpdatesBad(env, bad)
}

// mockUpdatesBad is mockUpdates where a restart to any of the delays bad
// fails.
func mockUpdatesBad(env *testsuite.TestWorkflowEnvironment, bad ...time.Duration) *restartLog {
	l := &restartLog{env: env}
	ok := func(_ context.Context, r activities.ActionRequest) (activities.ActionResult, error) {
		return activities.ActionResult{Attempt: 1, Instance: r.Path}, nil
	}
	act := func(_ context.Context, r activities.ActionRequest) (activities.ActionResult, error) {
		d := time.Duration(r.Spec.Stub.Delay)
		run := restartRun{path: r.Path, delay: d, begin: env.Now(), end: env.Now().Add(5 * time.Second), failed: slices.Contains(bad, d)}
		l.mu.Lock()
		l.runs = append(l.runs, run)
		l.mu.Unlock()
		if run.failed {
			return activities.ActionResult{}, errors.New("exec: no such file")
		}
		return activities.ActionResult{Attempt: 1, Instance: r.Path}, nil
	}
	env.OnActivity(activities.StartName, mock.Anything, mock.MatchedBy(func(r activities.ActionRequest) bool { return r.Spec.Stub.Delay == 0 })).Return(act)
	env.OnActivity(activities.StartName, mock.Anything, mock.Anything).Return(act).After(5 * time.Second)
	env.OnActivity(activities.RestartName, mock.Anything, mock.Anything).Return(act).After(5 * time.Second)
	env.OnActivity(activities.StopName, mock.Anything, mock.Anything).Return(ok)
	return l
}

// withDelay is the tree of four stub workers whose stub delay is d (a
// change of it restarts them), under policy.
func withDelay(d time.Duration, policy *spec.UpdatePolicy) spec.Node {
	var kids []spec.Node
	for _, n := range []string{"a", "b", "c", "d"} {
		kids = append(kids, stubNode(n, &spec.Stub{Delay: spec.Duration(d)}))
	}
	root := tree("root", kids...)
	root.Update = policy
	return root
}

func parallel(n int) *spec.Parallel { return &spec.Parallel{N: n} }

// A spec change that restarts every worker rolls out maxParallel at a
// time, in start order, each after the one before has run for
// minHealthyTime; the status shows the update and the revision.
func TestUpdate_ASpecChangeRollsOutOneAtATime(t *testing.T) {
	env := newEnv(t)
	log := mockUpdates(env, -1)
	policy := &spec.UpdatePolicy{MaxParallel: parallel(1), MinHealthyTime: spec.Dur(10 * time.Second)}
	var during, after Status
	at(env, time.Minute, func() {
		env.SignalWorkflow(SignalSpec, spec.Update{Spec: withDelay(time.Millisecond, policy)})
	})
	at(env, time.Minute+20*time.Second, func() { during = queryOwn(t, env) })
	at(env, 5*time.Minute, func() { after = queryOwn(t, env) })
	endAt(env, 6*time.Minute)
	env.ExecuteWorkflow(SupervisorWorkflow, SupervisorInput{Path: "root", Spec: withDelay(0, policy), Generation: 1, Version: SupervisorVersion})

	runs := log.with(time.Millisecond)
	require.Len(t, runs, 4, "%+v", runs)
	for i, r := range runs {
		require.Equal(t, "root/"+string(rune('a'+i)), r.path, "in start order")
		require.Equal(t, time.Millisecond, r.delay)
		if i > 0 {
			require.False(t, r.begin.Before(runs[i-1].end.Add(10*time.Second)), "%s began %s after %s ended: one at a time, each after minHealthyTime", r.path, r.begin.Sub(runs[i-1].end), runs[i-1].path)
		}
	}
	require.NotNil(t, during.Update)
	require.Equal(t, supervise.UpdateRolling, during.Update.State)
	require.Equal(t, 4, during.Update.Total)
	require.Less(t, during.Update.Updated, 4)
	require.EqualValues(t, 2, during.Revision, "the second apply")
	applying := 0
	for _, c := range during.Children {
		if c.Applying {
			applying++
		}
	}
	require.Equal(t, 4-during.Update.Updated, applying, "the workers not yet updated count as applying")

	require.Equal(t, supervise.UpdateComplete, after.Update.State)
	require.Equal(t, 4, after.Update.Updated)
	for _, c := range after.Children {
		require.Equal(t, "running", c.State, c.Path)
		require.False(t, c.Applying, c.Path)
	}
}

// A change that restarts nothing (here the intensity) applies at once; an
// unchanged re-apply is no revision.
func TestUpdate_AChangeThatRestartsNothingAppliesAtOnce(t *testing.T) {
	env := newEnv(t)
	log := mockUpdates(env, -1)
	policy := &spec.UpdatePolicy{MaxParallel: parallel(1)}
	var st Status
	at(env, time.Minute, func() {
		n := withDelay(0, policy)
		n.Children[0].Timeouts = &spec.Timeouts{Start: spec.Dur(time.Minute)}
		env.SignalWorkflow(SignalSpec, spec.Update{Spec: n})
	})
	at(env, 2*time.Minute, func() {
		n := withDelay(0, policy)
		n.Children[0].Timeouts = &spec.Timeouts{Start: spec.Dur(time.Minute)}
		env.SignalWorkflow(SignalSpec, spec.Update{Spec: n})
	})
	at(env, 3*time.Minute, func() { st = queryOwn(t, env) })
	endAt(env, 4*time.Minute)
	env.ExecuteWorkflow(SupervisorWorkflow, SupervisorInput{Path: "root", Spec: withDelay(0, policy), Generation: 1, Version: SupervisorVersion})

	require.Len(t, log.all(), 4, "the first starts, and nothing restarted")
	require.Nil(t, st.Update, "no update")
	require.EqualValues(t, 2, st.Revision, "the first apply changed the tree, the second did not")
	require.EqualValues(t, 3, st.Generation)
	require.EqualValues(t, 2, childNamed(t, st, "root/a").Generation, "a took its change, and was not sent the unchanged re-apply")
}

// A bad change fails the update at its first worker: no further worker is
// touched, and with autoRevert the one it touched gets its previous spec
// back.
func TestUpdate_ABadChangeFailsAndReverts(t *testing.T) {
	for _, revert := range []bool{false, true} {
		t.Run(map[bool]string{false: "failed", true: "reverted"}[revert], func(t *testing.T) {
			env := newEnv(t)
			bad := 7 * time.Millisecond
			log := mockUpdates(env, bad)
			policy := &spec.UpdatePolicy{MaxParallel: parallel(1), AutoRevert: revert, HealthyDeadline: spec.Dur(time.Minute)}
			var st Status
			at(env, time.Minute, func() { env.SignalWorkflow(SignalSpec, spec.Update{Spec: withDelay(bad, policy)}) })
			at(env, 10*time.Minute, func() { st = queryOwn(t, env) })
			endAt(env, 11*time.Minute)
			env.ExecuteWorkflow(SupervisorWorkflow, SupervisorInput{Path: "root", Spec: withDelay(0, policy), Generation: 1, Version: SupervisorVersion})

			touched := map[string]bool{}
			for _, r := range log.all() {
				if r.delay == bad {
					touched[r.path] = true
				}
			}
			require.Equal(t, map[string]bool{"root/a": true}, touched, "only the first worker was ever given the bad spec")
			require.NotNil(t, st.Update)
			require.Equal(t, "a", st.Update.Failed)
			require.Contains(t, st.Update.Reason, "a ")
			for _, n := range []string{"b", "c", "d"} {
				require.Equal(t, "running", childNamed(t, st, "root/"+n).State, n)
				require.False(t, childNamed(t, st, "root/"+n).Applying, n)
			}
			if !revert {
				require.Equal(t, supervise.UpdateFailed, st.Update.State)
				return
			}
			require.Equal(t, supervise.UpdateReverted, st.Update.State)
			runs := log.all()
			last := runs[len(runs)-1]
			require.Equal(t, "root/a", last.path)
			require.Equal(t, time.Duration(0), last.delay, "a runs its previous spec again")
			require.Equal(t, "running", childNamed(t, st, "root/a").State)
		})
	}
}

// Canary, promote, pause and resume through the update signal; a bad
// payload is rejected.
func TestUpdate_CanaryPromotePauseResume(t *testing.T) {
	env := newEnv(t)
	log := mockUpdates(env, -1)
	policy := &spec.UpdatePolicy{MaxParallel: parallel(2), Canary: 1}
	var canary, paused, final Status
	var afterCanary, afterPause int
	at(env, time.Minute, func() { env.SignalWorkflow(SignalSpec, spec.Update{Spec: withDelay(time.Millisecond, policy)}) })
	at(env, 3*time.Minute, func() {
		canary, afterCanary = queryOwn(t, env), len(log.with(time.Millisecond))
		env.SignalWorkflow(SignalUpdate, "pause")
		env.SignalWorkflow(SignalUpdate, "promote")
		env.SignalWorkflow(SignalUpdate, "bogus")
	})
	at(env, 5*time.Minute, func() {
		paused, afterPause = queryOwn(t, env), len(log.with(time.Millisecond))
		env.SignalWorkflow(SignalUpdate, "resume")
	})
	at(env, 8*time.Minute, func() { final = queryOwn(t, env) })
	endAt(env, 9*time.Minute)
	env.ExecuteWorkflow(SupervisorWorkflow, SupervisorInput{Path: "root", Spec: withDelay(0, policy), Generation: 1, Version: SupervisorVersion})

	require.Equal(t, 1, afterCanary, "only the canary")
	require.Equal(t, supervise.UpdateCanary, canary.Update.State)
	require.Equal(t, "paused", paused.Update.State)
	require.Equal(t, 1, afterPause, "promoted while paused: nothing goes")
	require.Equal(t, 1, paused.RejectedSignals, "the bad payload")
	require.Equal(t, supervise.UpdateComplete, final.Update.State)
	require.Len(t, log.with(time.Millisecond), 4)
}

// An update in progress survives continue-as-new: a run carried over with
// one goes on where it was (b is sent its node once a is updated), and
// carries it on again.
func TestUpdate_SurvivesContinueAsNew(t *testing.T) {
	env := newEnv(t)
	mockActions(env)
	env.OnActivity(activities.ClosedChildrenName, mock.Anything, mock.Anything).Return([]activities.ClosedChild{}, nil)
	var mu sync.Mutex
	var sentTo []string
	onHandOut(env, func(d activities.Delivery) {
		mu.Lock()
		defer mu.Unlock()
		sentTo = append(sentTo, d.Path)
	})
	policy := &spec.UpdatePolicy{MaxParallel: parallel(1)}
	root := tree("root", stubNode("a", &spec.Stub{Delay: spec.Duration(time.Millisecond)}), stubNode("b", &spec.Stub{Delay: spec.Duration(time.Millisecond)}))
	root.Update = policy
	t1 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	carry := &SupervisorCarry{Desired: "running", Revision: 2}
	for _, n := range []string{"a", "b"} {
		carry.Children = append(carry.Children, ChildRecord{Name: n, Path: "root/" + n, Run: "r-" + n, Digest: "old-" + n, WantGeneration: 1,
			Status: Status{Path: "root/" + n, Kind: spec.KindStub, State: "running", Desired: "running", Generation: 1, Since: t1}})
	}
	carry.Children[0].Digest, carry.Children[0].WantGeneration = "new-a", 2
	prev := stubNode("b", nil)
	carry.Update = &supervise.Update{Revision: 2, Generation: 2, State: supervise.UpdateRolling, Policy: spec.ResolvedUpdate{MaxParallel: 1, HealthyDeadline: time.Hour, ProgressDeadline: time.Hour},
		Progress: env.Now(), Targets: []supervise.Target{
			{Name: "a", Phase: supervise.TargetSent, Digest: "new-a", PreviousDigest: "old-a", SentAt: env.Now(), Generation: 2},
			{Name: "b", Phase: supervise.TargetPending, Digest: "new-b", PreviousDigest: "old-b", Previous: &prev}}}
	var during []string
	at(env, time.Minute, func() {
		env.SignalWorkflow(SignalChild, ChildReport{Seq: 1, Run: "r-a",
			Status: Status{Path: "root/a", Kind: spec.KindStub, State: "running", Desired: "running", Generation: 2, Since: env.Now()}})
	})
	at(env, 2*time.Minute, func() {
		mu.Lock()
		during = append(during, sentTo...)
		mu.Unlock()
		env.SignalWorkflow(SignalUpgrade, nil)
	})
	endAt(env, time.Hour)
	env.ExecuteWorkflow(SupervisorWorkflow, SupervisorInput{Path: "root", Spec: pruneSpec(root), Generation: 2, Carry: carry, Version: SupervisorVersion})

	require.Equal(t, []string{"root/b"}, during, "b goes once a is updated")
	next, ok := continuedAs[SupervisorInput](t, env.GetWorkflowError())
	require.True(t, ok, "continued as new: %v", env.GetWorkflowError())
	u := next.Carry.Update
	require.True(t, u.Active(), "%+v", u)
	require.Equal(t, supervise.TargetUpdated, u.Targets[0].Phase)
	require.Equal(t, supervise.TargetSent, u.Targets[1].Phase)
	require.NotNil(t, u.Targets[1].Previous, "what b ran, to revert to")
	require.EqualValues(t, 2, next.Carry.Revision)
}

// The Web UI's Current Details show the update under the supervisor's
// headline.
func TestUpdate_ShownInTheCurrentDetails(t *testing.T) {
	st := Status{Path: "root", State: "running", Generation: 3, Revision: 2,
		Update: &treestatus.UpdateStatus{State: "rolling", Updated: 1, Total: 4, InFlight: []string{"b", "c"}}}
	d := treestatus.SupervisorDetails(st)
	require.Contains(t, d, "revision 2 · update **rolling**: 1 of 4 updated · in flight: b, c\n")
	require.Contains(t, d, "| child | kind |")
	st.Update = nil
	require.NotContains(t, treestatus.SupervisorDetails(st), "update")
}

// A failed update that reverts tells the supervisor's webhook twice:
// updateFailed, then reverted.
func TestUpdate_NotifiesUpdateFailedThenReverted(t *testing.T) {
	env := newEnv(t)
	bad := 7 * time.Millisecond
	mockUpdates(env, bad)
	notes := &notifyLog{}
	env.OnActivity(activities.NotifyName, mock.Anything, mock.Anything).Return(notes.notify)
	policy := &spec.UpdatePolicy{MaxParallel: parallel(1), AutoRevert: true, HealthyDeadline: spec.Dur(time.Minute)}
	withHook := func(d time.Duration) spec.Node {
		n := withDelay(d, policy)
		n.Notify = &spec.Notify{Webhook: spec.Literal("http://127.0.0.1:1/hook"), On: []string{spec.EventUpdateFailed, spec.EventReverted}}
		return n
	}
	at(env, time.Minute, func() { env.SignalWorkflow(SignalSpec, spec.Update{Spec: withHook(bad)}) })
	endAt(env, 10*time.Minute)
	env.ExecuteWorkflow(SupervisorWorkflow, SupervisorInput{Path: "root", Spec: withHook(0), Generation: 1, Version: SupervisorVersion})

	require.Equal(t, []string{spec.EventUpdateFailed, spec.EventReverted}, notes.events())
	failed := notes.sent()[0].Notification
	require.Equal(t, "root", failed.Path)
	require.Contains(t, failed.Reason, "a ")
}

// Version 4 of a supervisor reports its update's state to its parent, not
// its progress: version 3 sent its parent (the root, at the top) a signal
// and a task per worker updated.
func TestVersions_ReportsCarryAnUpdatesStateNotItsProgress(t *testing.T) {
	reportsOf := func(version int) []ChildReport {
		env := newEnv(t)
		mockUpdates(env, -1)
		reps := recordReports(env, "top")
		policy := &spec.UpdatePolicy{MaxParallel: parallel(1)}
		at(env, time.Minute, func() {
			env.SignalWorkflow(SignalSpec, spec.Update{Spec: withDelay(time.Millisecond, policy), Revision: 2})
		})
		endAt(env, 6*time.Minute)
		env.ExecuteWorkflow(SupervisorWorkflow, SupervisorInput{Path: "top/root", Parent: "top", Spec: withDelay(0, policy), Generation: 1, Version: version})
		reps.mu.Lock()
		defer reps.mu.Unlock()
		var out []ChildReport
		for _, r := range reps.got {
			out = append(out, r.ChildReport)
		}
		return out
	}
	progress := func(reps []ChildReport) (shown int, states []string) {
		for _, r := range reps {
			if u := r.Status.Update; u != nil {
				shown = max(shown, u.Updated)
				if len(states) == 0 || states[len(states)-1] != u.State {
					states = append(states, u.State)
				}
			}
		}
		return shown, states
	}
	v3, v4 := reportsOf(3), reportsOf(4)
	shown, states := progress(v3)
	require.Equal(t, 4, shown, "version 3 reports its progress")
	require.Equal(t, []string{supervise.UpdateRolling, supervise.UpdateComplete}, states)
	shown, states = progress(v4)
	require.Zero(t, shown, "version 4 does not")
	require.Equal(t, []string{supervise.UpdateRolling, supervise.UpdateComplete}, states, "its state, it does")
	require.Less(t, len(v4), len(v3)-2, "fewer reports")
}

// Version 4 fails a rolling update on a host's refusal of a target's start
// or restart; version 3 counted the old instance, running on, as updated.
// A refused reload or observe is no refusal of the new spec.
func TestVersions_ARefusalFailsAnUpdateFromVersion4(t *testing.T) {
	refused := func(action string) treestatus.ActionStatus {
		return treestatus.ActionStatus{Name: action, Status: "refused", Error: "policy p: command /bin/sh is not allowed"}
	}
	require.Empty(t, refusal(3, refused("restart")))
	require.Equal(t, "restart refused, running as before: policy p: command /bin/sh is not allowed", refusal(4, refused("restart")))
	require.NotEmpty(t, refusal(4, refused("start")))
	require.Empty(t, refusal(4, refused("reload")))
	require.Empty(t, refusal(4, treestatus.ActionStatus{Name: "restart", Status: "succeeded"}))
}

// A rolling update moves the supervisor's wake with every worker it counts
// as updated. Version 6 cancelled its timer and started another each time
// (two events and a timer task of the server's in most of its tasks);
// version 7 keeps the timer set for the earlier moment, and the update
// still ends with every worker updated. (The test environment's listener
// hears the workers' timers too, the same in both runs: the difference is
// the supervisor's.)
func TestUpdate_TheWakeTimerIsNotMovedWithEveryWorkerUpdated(t *testing.T) {
	cancelledDuring := func(version int) int {
		env := newEnv(t)
		mockUpdates(env, -1)
		var mu sync.Mutex
		cancelled := 0
		env.SetOnTimerCanceledListener(func(string) { mu.Lock(); cancelled++; mu.Unlock() })
		policy := &spec.UpdatePolicy{MaxParallel: parallel(1)}
		var before int
		var after Status
		at(env, time.Minute, func() {
			mu.Lock()
			before = cancelled
			mu.Unlock()
			env.SignalWorkflow(SignalSpec, spec.Update{Spec: withDelay(time.Millisecond, policy)})
		})
		at(env, 5*time.Minute, func() { after = queryOwn(t, env) })
		endAt(env, 6*time.Minute)
		env.ExecuteWorkflow(SupervisorWorkflow, SupervisorInput{Path: "root", Spec: withDelay(0, policy), Generation: 1, Version: version})

		require.NotNil(t, after.Update, "version %d", version)
		require.Equal(t, "complete", after.Update.State, "version %d", version)
		require.Equal(t, 4, after.Update.Updated, "version %d", version)
		mu.Lock()
		defer mu.Unlock()
		return cancelled - before
	}
	v7, v6 := cancelledDuring(SupervisorVersion), cancelledDuring(6)
	require.GreaterOrEqual(t, v6-v7, 3, "version 6 moved its timer with each of the 4 workers updated but the last (%d timers cancelled, version 7: %d)", v6, v7)
}

// Regression (found by the soak): after an update reverted, the next
// update's targets kept as their previous node the reverted one (the spec
// before), not the one they ran. When that update failed too, its revert
// put the bad node back on them: a crash loop, the revert failed, and no
// update ended it. From supervisor 14 a target keeps the node it runs.
func TestUpdate_ARevertAfterARevertRestoresWhatRan(t *testing.T) {
	for _, version := range []int{versions.SupRevertToWhatRuns.Since - 1, SupervisorVersion} {
		env := newEnv(t)
		first, second := 7*time.Millisecond, 9*time.Millisecond // two bad applies in a row
		log := mockUpdatesBad(env, first, second)
		policy := &spec.UpdatePolicy{MaxParallel: parallel(1), AutoRevert: true, HealthyDeadline: spec.Dur(time.Minute)}
		var afterFirst, final Status
		at(env, time.Minute, func() { env.SignalWorkflow(SignalSpec, spec.Update{Spec: withDelay(first, policy)}) })
		at(env, 10*time.Minute, func() {
			afterFirst = queryOwn(t, env)
			env.SignalWorkflow(SignalSpec, spec.Update{Spec: withDelay(second, policy)})
		})
		at(env, 20*time.Minute, func() { final = queryOwn(t, env) })
		endAt(env, 21*time.Minute)
		env.ExecuteWorkflow(SupervisorWorkflow, SupervisorInput{Path: "root", Spec: withDelay(0, policy), Generation: 1, Version: version})

		require.Equal(t, supervise.UpdateReverted, afterFirst.Update.State, "version %d: the first bad apply reverted", version)
		runs := log.all()
		last := runs[len(runs)-1]
		require.Equal(t, "root/a", last.path, "version %d", version)
		if versions.SupRevertToWhatRuns.In(version) {
			require.Equal(t, supervise.UpdateReverted, final.Update.State, "version %d: %s", version, final.Update.Reason)
			require.Equal(t, time.Duration(0), last.delay, "version %d: a runs the node it ran before both", version)
			require.Equal(t, "running", childNamed(t, final, "root/a").State)
		} else {
			require.Equal(t, first, last.delay, "version %d reverted a to the first bad node", version)
			require.Equal(t, supervise.UpdateFailed, final.Update.State, "version %d: its revert failed", version)
		}
	}
}
