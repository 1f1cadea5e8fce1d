package workflows

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"

	"github.com/steward-sh/steward/activities"
	"github.com/steward-sh/steward/internal/spec"
	"github.com/steward-sh/steward/internal/supervise"
)

// Regression (attack review): each deferred child's record kept its node
// beside the spec's copy, so a level of workers waiting on one dependency
// carried its spec twice into a continue-as-new; a 1.4 MiB level (within
// the spec's limits) passed the 2 MiB the server takes, and the server
// ended the supervisor. From supervisor 13 the carry holds such a node
// once, and the next run puts it back and starts the children with it.
func TestSupervisor_ADeferredLevelIsCarriedOnce(t *testing.T) {
	const n = 300
	pad := strings.Repeat("x", 4000)
	gate := stubNode("gate", nil)
	root := tree("root", gate)
	carry := &SupervisorCarry{Desired: "running", Revision: 1}
	carry.Children = append(carry.Children, ChildRecord{Name: "gate", Path: "root/gate", Run: "r-gate", WantGeneration: 1,
		Status: Status{Path: "root/gate", Kind: spec.KindStub, State: "stopped", Desired: "running", Generation: 1}})
	for i := range n {
		w := dependsOn(stubNode(fmt.Sprintf("w%03d", i), nil), "gate")
		w.Vars = map[string]string{"pad": pad}
		root.Children = append(root.Children, w)
		node := w
		carry.Children = append(carry.Children, ChildRecord{Name: w.Name, Path: "root/" + w.Name, WantGeneration: 1,
			Lifecycle: supervise.Deferred, Node: &node, Status: Status{Path: "root/" + w.Name, Kind: spec.KindStub, State: "stopped", Desired: "running"}})
	}
	in := SupervisorInput{Path: "root", Spec: pruneSpec(root), Generation: 1, Carry: carry, Version: SupervisorVersion}
	require.Greater(t, spec.EncodedSize(in), 2<<20, "with a node in each record the carry is past 2 MiB")

	env := newEnv(t)
	mockActions(env)
	env.OnActivity(activities.ClosedChildrenName, mock.Anything, mock.Anything).Return([]activities.ClosedChild{}, nil)
	onHandOut(env, func(activities.Delivery) {})
	at(env, time.Minute, func() { env.SignalWorkflow(SignalUpgrade, nil) })
	endAt(env, time.Hour)
	env.ExecuteWorkflow(SupervisorWorkflow, in)
	next, ok := continuedAs[SupervisorInput](t, env.GetWorkflowError())
	require.True(t, ok, "continued as new: %v", env.GetWorkflowError())
	require.Less(t, spec.EncodedSize(next), 2<<20, "each deferred node carried once")
	for _, r := range next.Carry.Children[1:] {
		require.True(t, r.NodeInSpec, r.Name)
		require.Nil(t, r.Node, r.Name)
	}

	// The next run puts the nodes back: with the gate up, the deferred
	// children start with their own nodes.
	next.Carry.Children[0].Status.State = "running"
	env = newEnv(t)
	mockActions(env)
	env.OnActivity(activities.ClosedChildrenName, mock.Anything, mock.Anything).Return([]activities.ClosedChild{}, nil)
	onHandOut(env, func(activities.Delivery) {})
	var mu sync.Mutex
	started := map[string]string{}
	env.OnWorkflow(WorkerWorkflow, mock.Anything, mock.Anything).Run(func(a mock.Arguments) {
		wi := a.Get(1).(WorkerInput)
		mu.Lock()
		started[wi.Path] = wi.Spec.Vars["pad"]
		mu.Unlock()
	}).After(time.Hour).Return(nil)
	env.OnRequestCancelExternalWorkflow(mock.Anything, mock.Anything, mock.Anything).Return(nil)
	endAt(env, 2*time.Minute)
	env.ExecuteWorkflow(SupervisorWorkflow, next)
	mu.Lock()
	defer mu.Unlock()
	require.NotEmpty(t, started, "the deferred children started")
	for path, p := range started {
		require.Equal(t, pad, p, path)
	}
}

// Regression (attack review): each report a supervisor keeps is bounded
// (8 KiB), their sum was not: 300 reports padded by hand (stale copies of
// 7.5 KB each) made a continue-as-new input of 2.36 MiB, and the server
// ends a workflow whose continue-as-new it refuses. Past maxCarryBytes
// the records lose what they hold for display only; what the supervisor
// decides from is carried whole. Under it, nothing is cut.
func TestSupervisor_AContinueAsNewPastTheLimitIsTrimmed(t *testing.T) {
	carried := func(n int) SupervisorInput {
		root := tree("root")
		carry := &SupervisorCarry{Desired: "running", Revision: 1}
		pad := strings.Repeat("y", 7500)
		for i := range n {
			c := stubNode(fmt.Sprintf("w%03d", i), nil)
			root.Children = append(root.Children, c)
			carry.Children = append(carry.Children, ChildRecord{Name: c.Name, Path: "root/" + c.Name, Run: "r", WantGeneration: 1, SeenTerminations: 2,
				Status: Status{Path: "root/" + c.Name, Kind: spec.KindStub, State: "running", Desired: "running", Generation: 1, Terminations: 2,
					Reason: "running", StaleCopies: []string{pad}}})
		}
		env := newEnv(t)
		mockActions(env)
		env.OnActivity(activities.ClosedChildrenName, mock.Anything, mock.Anything).Return([]activities.ClosedChild{}, nil)
		onHandOut(env, func(activities.Delivery) {})
		at(env, time.Minute, func() { env.SignalWorkflow(SignalUpgrade, nil) })
		endAt(env, time.Hour)
		env.ExecuteWorkflow(SupervisorWorkflow, SupervisorInput{Path: "root", Spec: pruneSpec(root), Generation: 1, Carry: carry, Version: SupervisorVersion})
		next, ok := continuedAs[SupervisorInput](t, env.GetWorkflowError())
		require.True(t, ok, "continued as new: %v", env.GetWorkflowError())
		return next
	}
	next := carried(300)
	require.LessOrEqual(t, spec.EncodedSize(next), maxCarryBytes)
	for _, r := range next.Carry.Children {
		require.Empty(t, r.Status.StaleCopies, r.Name)
		require.Equal(t, "running", r.Status.State, "what it decides from stays")
		require.Equal(t, 2, r.Status.Terminations)
		require.Equal(t, 2, r.SeenTerminations)
	}
	small := carried(10)
	require.Equal(t, "running", small.Carry.Children[0].Status.Reason, "under the limit nothing is cut")
	require.NotEmpty(t, small.Carry.Children[0].Status.StaleCopies)
}

// Regression (review): what trimming cannot cut (a rolling update's
// previous nodes of a large level, or a spec carried from before the
// limits) could still pass 2 MiB, and the server ends a supervisor whose
// continue-as-new it refuses. From supervisor 13 a run does not continue as
// new while its input would not fit, and goes on supervising.
func TestSupervisor_AContinueAsNewThatCannotFitWaits(t *testing.T) {
	pad := strings.Repeat("z", 4000)
	root := tree("root")
	carry := &SupervisorCarry{Desired: "running", Revision: 1}
	for i := range 600 { // 2.4 MB of spec: a carried one is not held to the limits
		c := stubNode(fmt.Sprintf("w%03d", i), nil)
		c.Vars = map[string]string{"pad": pad}
		root.Children = append(root.Children, c)
		carry.Children = append(carry.Children, ChildRecord{Name: c.Name, Path: "root/" + c.Name, Run: "r", WantGeneration: 1,
			Status: Status{Path: "root/" + c.Name, Kind: spec.KindStub, State: "running", Desired: "running", Generation: 1}})
	}
	env := newEnv(t)
	mockActions(env)
	env.OnActivity(activities.ClosedChildrenName, mock.Anything, mock.Anything).Return([]activities.ClosedChild{}, nil)
	onHandOut(env, func(activities.Delivery) {})
	env.OnRequestCancelExternalWorkflow(mock.Anything, mock.Anything, mock.Anything).Return(nil) // its end stops the children
	var after Status
	at(env, time.Minute, func() { env.SignalWorkflow(SignalUpgrade, nil) })
	at(env, 2*time.Minute, func() { after = query(t, env) })
	endAt(env, 3*time.Minute)
	env.ExecuteWorkflow(SupervisorWorkflow, SupervisorInput{Path: "root", Spec: pruneSpec(root), Generation: 1, Carry: carry, Version: SupervisorVersion})
	_, continued := continuedAs[SupervisorInput](t, env.GetWorkflowError())
	require.False(t, continued, "no continue-as-new the server would refuse")
	require.Equal(t, "root", after.Path, "it went on answering")
	require.Len(t, after.Children, 600)
}
