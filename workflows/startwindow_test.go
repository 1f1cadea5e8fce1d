package workflows

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/testsuite"

	"github.com/steward-sh/steward/activities"
	"github.com/steward-sh/steward/internal/spec"
	"github.com/steward-sh/steward/internal/supervise"
)

// wideTree is a root of n stub workers w00, w01, ...
func wideTree(n int) spec.Node {
	kids := make([]spec.Node, n)
	for i := range kids {
		kids[i] = stubNode(fmt.Sprintf("w%02d", i), nil)
	}
	return tree("root", kids...)
}

// waitingForASlot counts the children that wait for the start window.
func waitingForASlot(st Status) int {
	n := 0
	for _, c := range st.Children {
		if strings.HasPrefix(c.Reason, supervise.WindowReason) { // a supervisor's row adds its count
			n++
		}
	}
	return n
}

// slowStarts mocks every start to take 10 s (a child reports at its
// start's end) and records the starts that ended.
func slowStarts(env *testsuite.TestWorkflowEnvironment) *calls {
	var starts calls
	env.OnActivity(activities.StartName, mock.Anything, mock.Anything).After(10 * time.Second).Return(func(_ context.Context, r activities.ActionRequest) (activities.ActionResult, error) {
		starts.add(r.Path)
		return activities.ActionResult{Attempt: 1, Instance: r.Path}, nil
	})
	return &starts
}

// firstWindowNeverStarts mocks the starts of the first window's children
// (paths prefix00 .. below prefix<StartWindow>) to end after the test, the
// others' at once.
func firstWindowNeverStarts(env *testsuite.TestWorkflowEnvironment, prefix string) {
	first := fmt.Sprintf("%s%02d", prefix, supervise.StartWindow)
	env.OnActivity(activities.StartName, mock.Anything, mock.MatchedBy(func(r activities.ActionRequest) bool { return r.Path < first })).
		After(time.Hour).Return(activities.ActionResult{Attempt: 1}, nil)
	env.OnActivity(activities.StartName, mock.Anything, mock.Anything).Return(activities.ActionResult{Attempt: 1}, nil)
}

// starting counts the children started that have not reported running.
func starting(st Status) int {
	n := 0
	for _, c := range st.Children {
		if c.State != "running" && c.Reason != supervise.WindowReason {
			n++
		}
	}
	return n
}

// A supervisor has at most StartWindow children starting at once: the
// others wait, and start as the first report; every child runs in the end.
// (A tree of 10,000 workers put 10,000 first tasks in the workflow queue at
// once: the queue's oldest task waited two minutes, every other tree's
// tasks behind it.)
func TestStartWindow_TenThousandFirstTasksAtOnce_StartsAWindowAtATime(t *testing.T) {
	env := newEnv(t)
	starts := slowStarts(env)
	n := 2*supervise.StartWindow + 5 // two windows and some
	var early, mid Status
	var startedEarly, startedMid int
	at(env, 5*time.Second, func() { early, startedEarly = query(t, env), len(starts.get()) })
	at(env, 15*time.Second, func() { mid, startedMid = query(t, env), len(starts.get()) })
	var final Status
	at(env, 2*time.Minute, func() { final = query(t, env) })
	endAt(env, 3*time.Minute)
	env.ExecuteWorkflow(SupervisorWorkflow, SupervisorInput{Path: "root", Spec: wideTree(n), Generation: 1, Version: SupervisorVersion})

	require.Equal(t, 0, startedEarly, "no start has ended yet")
	require.Equal(t, n-supervise.StartWindow, waitingForASlot(early), "a window's worth starts first")
	require.Equal(t, supervise.StartWindow, startedMid, "the first window's starts ended")
	require.Less(t, waitingForASlot(mid), waitingForASlot(early), "the next children started as the first reported")
	require.LessOrEqual(t, starting(mid), supervise.StartWindow, "never more than a window starting")
	require.Equal(t, "stopped", childState(mid, fmt.Sprintf("w%02d", n-1)).State)
	require.Len(t, starts.get(), n, "every child started once")
	at, total := final.AtDesired()
	require.Equal(t, n, at)
	require.Equal(t, n, total)
	require.Equal(t, 0, waitingForASlot(final))
}

// A child that never reports holds its slot for SlotHold at most: the rest
// of the tree still starts.
func TestStartWindow_ChildrenThatNeverReport_HoldTheirSlotsForSlotHoldOnly(t *testing.T) {
	env := newEnv(t)
	firstWindowNeverStarts(env, "root/w")
	var held, after Status
	at(env, supervise.SlotHold-5*time.Second, func() { held = query(t, env) })
	at(env, supervise.SlotHold+30*time.Second, func() { after = query(t, env) })
	endAt(env, 2*supervise.SlotHold)
	env.ExecuteWorkflow(SupervisorWorkflow, SupervisorInput{Path: "root", Spec: wideTree(supervise.StartWindow + 5), Generation: 1, Version: SupervisorVersion})

	require.Equal(t, 5, waitingForASlot(held), "held by a window of children that have not reported")
	require.Equal(t, 0, waitingForASlot(after), "their slots freed after SlotHold")
	for i := supervise.StartWindow; i < supervise.StartWindow+5; i++ {
		require.Equal(t, "running", childState(after, fmt.Sprintf("w%02d", i)).State)
	}
}

// Version 5 (the old branch): every child starts in the first task.
func TestStartWindow_Version5StartsEveryChildAtOnce(t *testing.T) {
	env := newEnv(t)
	starts := slowStarts(env)
	var early Status
	var startedEarly int
	at(env, 11*time.Second, func() { early, startedEarly = query(t, env), len(starts.get()) })
	endAt(env, time.Minute)
	env.ExecuteWorkflow(SupervisorWorkflow, SupervisorInput{Path: "root", Spec: wideTree(2*supervise.StartWindow + 5), Generation: 1, Version: 5})

	require.Equal(t, 2*supervise.StartWindow+5, startedEarly)
	require.Equal(t, 0, waitingForASlot(early))
}

// A run carried over continue-as-new with children an apply added as the
// last run ended (deferred, no slot held) starts them at once, though no
// report will come and no slot frees: the run looks at its children as it
// begins (the closed check's timer, set for now), and that task releases
// them.
func TestStartWindow_CarriedDeferredChildrenStartWithoutAnEvent(t *testing.T) {
	env := newEnv(t)
	root := wideTree(3)
	carry := SupervisorCarry{Desired: spec.DesiredRunning}
	for _, c := range root.Children {
		c := c
		carry.Children = append(carry.Children, ChildRecord{Name: c.Name, Path: "root/" + c.Name, Digest: "d", WantGeneration: 1,
			Lifecycle: supervise.Deferred, Node: &c,
			Status: Status{Path: "root/" + c.Name, Kind: spec.KindStub, State: "stopped", Desired: spec.DesiredRunning, Reason: supervise.WindowReason}})
	}
	var st Status
	at(env, 30*time.Second, func() { st = query(t, env) })
	endAt(env, time.Minute)
	env.ExecuteWorkflow(SupervisorWorkflow, SupervisorInput{Path: "root", Spec: pruneSpec(root), Generation: 1, Carry: &carry, Version: SupervisorVersion})

	for _, c := range root.Children {
		require.Equal(t, "running", childState(st, c.Name).State, c.Name)
	}
}

// groupsOfOne is a root of n supervisors g00, g01, ..., each of one stub
// worker.
func groupsOfOne(n int) spec.Node {
	kids := make([]spec.Node, n)
	for i := range kids {
		kids[i] = tree(fmt.Sprintf("g%02d", i), stubNode("w", nil))
	}
	return tree("root", kids...)
}

// A root of many groups had every group starting within seconds (each
// freed its slot with its first report, from its first task), so a
// 10,000-worker tree of 100 groups had 100 windows of first tasks waiting
// at once, and the workflow queue's oldest task waited 55 s. From version
// 7 a group holds its slot of the root's window until its whole subtree
// has started (its record's SubtreeStarted) when it was started while
// others waited for the window; the groups after it wait. A group started
// with nobody waiting frees its slot at its first report, and reports
// nothing more for it.
func TestStartWindow_GroupsHoldTheirSlotUntilTheirSubtreeStarted(t *testing.T) {
	for _, tc := range []struct {
		version int
		waiting int // groups waiting for a slot while the first window's starts run
	}{
		{version: SupervisorVersion, waiting: 5},
		{version: 6, waiting: 0},
	} {
		t.Run(fmt.Sprintf("version %d", tc.version), func(t *testing.T) {
			env := newEnv(t)
			starts := slowStarts(env)
			n := supervise.StartWindow + 5
			var early, final Status
			at(env, 5*time.Second, func() { early = query(t, env) })
			at(env, 2*time.Minute, func() { final = query(t, env) })
			endAt(env, 3*time.Minute)
			env.ExecuteWorkflow(SupervisorWorkflow, SupervisorInput{Path: "root", Spec: groupsOfOne(n), Generation: 1, Version: tc.version})

			require.Equal(t, tc.waiting, waitingForASlot(early), "groups waiting while the first window's workers start")
			require.Len(t, starts.get(), n, "every worker started once")
			for i := range n {
				g := childState(final, fmt.Sprintf("g%02d", i))
				require.Equal(t, "running", g.State, g.Path)
				// Only a group started while others waited has its slot
				// held until its subtree started, and says when.
				require.Equal(t, tc.version >= 7 && i < supervise.StartWindow, g.SubtreeStarted, "%s's record says its subtree started", g.Path)
			}
			require.Equal(t, 0, waitingForASlot(final))
		})
	}
}

// A group whose worker never runs (its start fails for good) never has its
// subtree started: it holds its slot of the root's window for SubtreeHold
// at most, and the groups after it start then.
func TestStartWindow_AGroupThatNeverStartsWhole_HoldsItsSlotForSubtreeHoldOnly(t *testing.T) {
	env := newEnv(t)
	firstWindowNeverStarts(env, "root/g")
	var held, after Status
	at(env, supervise.SubtreeHold-30*time.Second, func() { held = query(t, env) })
	at(env, supervise.SubtreeHold+time.Minute, func() { after = query(t, env) })
	endAt(env, supervise.SubtreeHold+2*time.Minute)
	env.ExecuteWorkflow(SupervisorWorkflow, SupervisorInput{Path: "root", Spec: groupsOfOne(supervise.StartWindow + 5), Generation: 1, Version: SupervisorVersion})

	require.Equal(t, 5, waitingForASlot(held), "held past SlotHold by groups whose worker is still starting")
	require.Equal(t, 0, waitingForASlot(after), "their slots freed after SubtreeHold")
	for i := supervise.StartWindow; i < supervise.StartWindow+5; i++ {
		g := childState(after, fmt.Sprintf("g%02d", i))
		require.Equal(t, "running", g.State, g.Path)
		require.False(t, g.SubtreeStarted, "%s: started with nobody waiting, its slot is not held for its subtree", g.Path)
	}
}

// A supervisor whose slot waits for its subtree has its own child
// supervisors say when theirs have started, waiting or not: a root of 21
// supervisors of one group of one worker each sees the first 20 say their
// subtree started, which needs each one's group to have said so.
func TestStartWindow_ASubtreeStartedCountsItsGroupsSubtrees(t *testing.T) {
	env := newEnv(t)
	slowStarts(env)
	n := supervise.StartWindow + 1
	kids := make([]spec.Node, n)
	for i := range kids {
		kids[i] = tree(fmt.Sprintf("m%02d", i), tree("g", stubNode("w", nil)))
	}
	var final Status
	at(env, 2*time.Minute, func() { final = query(t, env) })
	endAt(env, 3*time.Minute)
	env.ExecuteWorkflow(SupervisorWorkflow, SupervisorInput{Path: "root", Spec: tree("root", kids...), Generation: 1, Version: SupervisorVersion})

	for i := range n {
		m := childState(final, fmt.Sprintf("m%02d", i))
		require.Equal(t, "running", m.State, m.Path)
		require.Equal(t, i < supervise.StartWindow, m.SubtreeStarted, m.Path)
	}
}
