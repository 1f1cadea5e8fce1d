package workflows

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/steward-sh/steward/activities"
	"github.com/steward-sh/steward/internal/driver"
	"github.com/steward-sh/steward/internal/driver/stub"
	"github.com/steward-sh/steward/internal/spec"
)

// envClosingChild is a test environment whose worker workflow at path
// closes by itself, without reporting, at workflow time closeAt after its
// first run starts: as a workflow terminated by hand does. Later runs at
// that path are ordinary workers.
func envClosingChild(t *testing.T, path string, closeAt time.Duration) *testsuite.TestWorkflowEnvironment {
	t.Helper()
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	var mu sync.Mutex
	closed := false
	env.RegisterWorkflowWithOptions(func(ctx workflow.Context, in WorkerInput) error {
		mu.Lock()
		first := in.Path == path && !closed
		closed = closed || first
		mu.Unlock()
		if first {
			_ = workflow.Sleep(ctx, closeAt)
			return errors.New("terminated by hand")
		}
		return WorkerWorkflow(ctx, in)
	}, workflow.RegisterOptions{Name: "WorkerWorkflow"})
	env.RegisterWorkflow(SupervisorWorkflow)
	d := stub.New(nil, nil)
	t.Cleanup(d.Close)
	env.RegisterActivityWithOptions(&activities.Activities{Drivers: map[string]driver.Driver{spec.KindStub: d}}, activity.RegisterOptions{Name: activities.Prefix})
	return env
}

// Regression (issue 13, hole 1): a child workflow that closed without
// reporting stayed "running" in its supervisor forever. Now the supervisor
// sees it close, counts it in its intensity and starts it anew after its
// backoff; its sibling is untouched.
func TestClosedChild_TerminatedWorkerIsSeenAndStartedAnew(t *testing.T) {
	env := envClosingChild(t, "root/b", time.Minute)
	log := mockActions(env)
	var during, after Status
	at(env, time.Minute+100*time.Millisecond, func() { during = queryOwn(t, env) })
	at(env, 2*time.Minute, func() { after = query(t, env) })
	endAt(env, 3*time.Minute)
	env.ExecuteWorkflow(SupervisorWorkflow, SupervisorInput{Path: "root", Spec: tree("root", stubNode("a", nil), stubNode("b", nil)), Generation: 1})

	b := childNamed(t, during, "root/b")
	require.NotEqual(t, "running", b.State, "the closed child is no longer counted as running")
	require.Equal(t, 1, during.RecentRestarts, "the close counts in the restart intensity")
	require.Equal(t, "running", childNamed(t, after, "root/b").State)
	require.Equal(t, "running", childNamed(t, after, "root/a").State)
	starts := log.of("start")
	require.Equal(t, []string{"root/a", "root/b"}, starts, "b's first run was closed before it started a service; a's is started once")
}

// A removed child whose workflow is already closed is gone at once, and a
// child re-added under the same path starts at once (it waited forever
// for the closed run's end report before).
func TestClosedChild_RemovedWhileClosedIsGoneAndCanBeReAdded(t *testing.T) {
	env := envClosingChild(t, "root/b", time.Minute)
	mockActions(env)
	b := stubNode("b", nil)
	b.Restart = spec.RestartTemporary // not restarted: stays closed
	withB := tree("root", stubNode("a", nil), b)
	var closedSt, removed, readded Status
	at(env, 90*time.Second, func() { closedSt = queryOwn(t, env) })
	at(env, 2*time.Minute, func() {
		env.SignalWorkflow(SignalSpec, spec.Update{Spec: tree("root", stubNode("a", nil))})
	})
	at(env, 2*time.Minute+time.Second, func() { removed = queryOwn(t, env) })
	at(env, 3*time.Minute, func() { env.SignalWorkflow(SignalSpec, spec.Update{Spec: withB}) })
	at(env, 3*time.Minute+10*time.Second, func() { readded = query(t, env) })
	endAt(env, 4*time.Minute)
	env.ExecuteWorkflow(SupervisorWorkflow, SupervisorInput{Path: "root", Spec: withB, Generation: 1})

	require.Equal(t, "failed", childNamed(t, closedSt, "root/b").State)
	require.Contains(t, childNamed(t, closedSt, "root/b").Reason, "workflow closed")
	require.Len(t, removed.Children, 1)
	got := childNamed(t, readded, "root/b")
	require.Equal(t, "running", got.State, "re-added at once: %+v", got)
	require.False(t, got.Applying)
}

// After continue-as-new a run holds no future for its children: it looks
// at their workflows at its start (activities.ClosedChildren), and a child
// found closed is answered as a termination and started anew.
func TestClosedChild_ARunCarriedOverLooksAtItsChildrenAtItsStart(t *testing.T) {
	env := newEnv(t)
	log := mockActions(env)
	var asked []string
	env.OnActivity(activities.ClosedChildrenName, mock.Anything, mock.Anything).Return(
		func(_ context.Context, r activities.ClosedChildrenRequest) ([]activities.ClosedChild, error) {
			asked = append(asked, r.Paths...)
			return []activities.ClosedChild{{Path: "root/b", Status: "terminated"}}, nil
		})
	spec := tree("root", stubNode("a", nil), stubNode("b", nil))
	running := func(name string) ChildRecord {
		p := "root/" + name
		return ChildRecord{Name: name, Path: p, Run: "r-" + name, Digest: "d", WantGeneration: 1,
			Status: Status{Path: p, Kind: "stub", State: "running", Desired: "running", Generation: 1}}
	}
	carry := &SupervisorCarry{Desired: "running", Children: []ChildRecord{running("a"), running("b")}}
	// root/a's workflow is of an earlier run of the test: not in this
	// environment. The delete at the end asks it to stop.
	env.OnRequestCancelExternalWorkflow(mock.Anything, "root/a", "").Return(errors.New("not found"))
	var st Status
	at(env, time.Minute, func() { st = queryOwn(t, env) })
	endAt(env, 2*time.Minute)
	env.ExecuteWorkflow(SupervisorWorkflow, SupervisorInput{Path: "root", Spec: pruneSpec(spec), Generation: 1, Carry: carry})

	require.Equal(t, []string{"root/a", "root/b"}, asked, "both children were looked at")
	require.Equal(t, []string{"root/b"}, log.of("start"), "the closed one was started anew; a was left alone")
	require.Equal(t, "running", childNamed(t, st, "root/b").State)
	require.Equal(t, 1, st.RecentRestarts, "counted in the intensity")
}

// A child re-added while its removed run is still stopping waits for that
// run, then starts, and nothing counts against the intensity. (On a real
// server the removed run's end report arrives before its workflow closes;
// the supervisor releases the path on the close, so the new run never
// adopts the dying one. The test environment delivers both together, so
// this test shows the behaviour, not that race.)
func TestClosedChild_ReAddedWhileTheRemovedRunStopsStartsAfterItCloses(t *testing.T) {
	env := newEnv(t)
	var starts, stops calls
	env.OnActivity(activities.StartName, mock.Anything, mock.Anything).Return(func(_ context.Context, r activities.ActionRequest) (activities.ActionResult, error) {
		starts.add(r.Path)
		return activities.ActionResult{Attempt: 1, Instance: r.Path}, nil
	})
	env.OnActivity(activities.StopName, mock.Anything, mock.Anything).After(30 * time.Second).Return(func(_ context.Context, r activities.ActionRequest) (activities.ActionResult, error) {
		stops.add(r.Path)
		return activities.ActionResult{Attempt: 1}, nil
	})
	withB := tree("root", stubNode("a", nil), stubNode("b", nil))
	at(env, time.Minute, func() { env.SignalWorkflow(SignalSpec, spec.Update{Spec: tree("root", stubNode("a", nil))}) })
	at(env, time.Minute+time.Second, func() { env.SignalWorkflow(SignalSpec, spec.Update{Spec: withB}) })
	var during, after Status
	var stopped, started []string
	at(env, time.Minute+10*time.Second, func() { during = queryOwn(t, env) })
	at(env, 3*time.Minute, func() { after, stopped, started = query(t, env), stops.get(), starts.get() })
	endAt(env, 4*time.Minute)
	env.ExecuteWorkflow(SupervisorWorkflow, SupervisorInput{Path: "root", Spec: withB, Generation: 1})

	require.True(t, childNamed(t, during, "root/b").Applying, "waits for the removed run")
	b := childNamed(t, after, "root/b")
	require.Equal(t, "running", b.State)
	require.Zero(t, after.RecentRestarts, "the removed run's close is no termination")
	require.Equal(t, []string{"root/b"}, stopped)
	require.ElementsMatch(t, []string{"root/a", "root/b", "root/b"}, started, "b started again, once")
}

// carriedGroup is the carried state of a root whose one child, the
// supervisor root/g, ran when the root last continued as new.
func carriedGroup() *SupervisorCarry {
	return &SupervisorCarry{Desired: "running", Children: []ChildRecord{{Name: "g", Path: "root/g", Run: "r-g", Digest: "d", WantGeneration: 1,
		Status: Status{Path: "root/g", Kind: spec.KindSupervisor, State: "running", Desired: "running", Generation: 1}}}}
}

// A child supervisor found closed by a run carried over (which holds only
// the child's own fields) is started anew with its subtree's spec read back
// from its workflows (activities.SubtreeSpec), where it used to stay closed
// until the operator applied the tree again.
func TestClosedChild_ASupervisorClosedAfterContinueAsNewIsStartedAnewWithItsReadBackSpec(t *testing.T) {
	env := newEnv(t)
	log := mockActions(env)
	env.OnActivity(activities.ClosedChildrenName, mock.Anything, mock.Anything).Return(
		[]activities.ClosedChild{{Path: "root/g", Status: "terminated"}}, nil)
	group := tree("g", stubNode("x", nil), stubNode("y", nil))
	var readBack []string
	env.OnActivity(activities.SubtreeSpecName, mock.Anything, mock.Anything).Return(
		func(_ context.Context, r activities.SubtreeSpecRequest) (spec.Node, error) {
			readBack = append(readBack, r.Path)
			// The child's own copy was handed down while the root was
			// stopped: the root's current word (running) wins.
			stale := group
			stale.Desired = spec.DesiredStopped
			return stale, nil
		})
	carry := carriedGroup()
	var st Status
	at(env, time.Minute, func() { st = query(t, env) })
	endAt(env, 2*time.Minute)
	env.ExecuteWorkflow(SupervisorWorkflow, SupervisorInput{Path: "root", Spec: pruneSpec(tree("root", group)), Generation: 1, Carry: carry})

	require.Equal(t, []string{"root/g"}, readBack)
	require.ElementsMatch(t, []string{"root/g/x", "root/g/y"}, log.of("start"), "the group's workers started under its new run")
	g := childNamed(t, st, "root/g")
	require.Equal(t, "running", g.State, "%+v", g)
	require.Len(t, g.Children, 2)
	require.Equal(t, 1, st.RecentRestarts, "counted in the intensity")
}

// A subtree that cannot be read back leaves the child closed, with a reason
// that tells the operator what to do.
func TestClosedChild_ASupervisorWhoseSpecCannotBeReadBackSaysSo(t *testing.T) {
	env := newEnv(t)
	log := mockActions(env)
	env.OnActivity(activities.ClosedChildrenName, mock.Anything, mock.Anything).Return(
		[]activities.ClosedChild{{Path: "root/g", Status: "terminated"}}, nil)
	env.OnActivity(activities.SubtreeSpecName, mock.Anything, mock.Anything).Return(
		spec.Node{}, temporal.NewNonRetryableApplicationError("root/g/sub: not found", "InvalidSpec", nil))
	carry := carriedGroup()
	var st Status
	at(env, time.Minute, func() { st = queryOwn(t, env) })
	endAt(env, 2*time.Minute)
	env.ExecuteWorkflow(SupervisorWorkflow, SupervisorInput{Path: "root", Spec: pruneSpec(tree("root", tree("g", stubNode("x", nil)))), Generation: 1, Carry: carry})

	require.Empty(t, log.of("start"))
	g := childNamed(t, st, "root/g")
	require.Equal(t, "failed", g.State)
	require.Contains(t, g.Reason, "could not be read back")
	require.Contains(t, g.Reason, "apply the tree again")
}
