package workflows

import (
	"slices"

	"go.temporal.io/sdk/workflow"

	"github.com/steward-sh/steward/internal/spec"
	"github.com/steward-sh/steward/internal/supervise"
	"github.com/steward-sh/steward/internal/versions"
)

// Dependencies between siblings (spec.Node.DependsOn; internal/spec's
// depends.go states the contract). A supervisor keeps its children in start
// order (spec.StartOrder); internal/supervise (order.go) decides what the
// order lets go (supervise.Release) from the children's records seen as
// supervise.Siblings, and this file carries its steps out. Group restarts,
// give-ups and delete handle children one after the other in start order
// (or its reverse), so they honour it as they are. Children without
// dependencies are not held back at all: they start together, and a tree
// without dependsOn sends exactly what it sent before.

// dependenciesOf names the siblings the child depends on.
func (s *supervisorRun) dependenciesOf(name string) []string {
	for _, c := range s.in.Spec.Children {
		if c.Name == name {
			return c.DependsOn
		}
	}
	return nil
}

// sibling is the dependency order's view of a child's record; deps are its
// dependencies by the spec.
func sibling(r ChildRecord, deps []string, removing bool) supervise.Sibling {
	sb := supervise.Sibling{Name: r.Name, DependsOn: deps, Supervisor: r.IsSupervisor(),
		State: r.Status.State, Completed: r.Status.Completed, Subtree: r.Status.Subtree,
		Lifecycle: r.Lifecycle, CanStart: r.Node != nil, Removing: removing}
	if r.Node != nil {
		sb.NodeDependsOn = r.Node.DependsOn
	}
	return sb
}

// siblings is the dependency order's view of every child, in start order.
func (s *supervisorRun) siblings() []supervise.Sibling {
	deps := make(map[string][]string, len(s.in.Spec.Children))
	for _, c := range s.in.Spec.Children {
		deps[c.Name] = c.DependsOn
	}
	out := make([]supervise.Sibling, len(s.carry.Children))
	now := workflow.Now(s.ctx)
	for i, r := range s.carry.Children {
		out[i] = sibling(r, deps[r.Name], slices.Contains(s.carry.Removing, r.Path))
		out[i].Starting = supervise.HoldsSlot(r.Lifecycle, s.slot(r), now)
		// Version 4: a child applying its spec is not up (a worker of
		// version 5 reports a new generation at its restart's end).
		out[i].Applying = versions.SupApplyingNotUp.In(s.in.Version) && r.WantGeneration > r.Status.Generation
	}
	return out
}

// waitingFor lists the dependencies in deps that are not up yet
// (supervise.WaitingFor).
func (s *supervisorRun) waitingFor(deps []string) []string {
	if len(deps) == 0 { // the common case: no view of the siblings to build
		return nil
	}
	return supervise.WaitingFor(s.siblings(), deps, s.carry.Desired == spec.DesiredRunning)
}

// isUp: the child runs (a child supervisor: its whole subtree), or
// completed, and nothing is queued for it.
func isUp(r ChildRecord) bool { return sibling(r, nil, false).Up() }

// settled: the child is where it was asked to be, up, or desired stopped
// and down.
func settled(r ChildRecord) bool {
	return isUp(r) || (r.Status.Desired == spec.DesiredStopped && isDown(r))
}

// isDown: the child runs nothing (a child supervisor: nothing below it).
func isDown(r ChildRecord) bool { return sibling(r, nil, false).Down() }

// hasDependencies reports whether any child depends on a sibling.
func (s *supervisorRun) hasDependencies() bool {
	return slices.ContainsFunc(s.in.Spec.Children, func(c spec.Node) bool { return len(c.DependsOn) > 0 })
}

// reportsSubtree says whether the child supervisor name must report its
// subtree's state: this supervisor reports its own (its parent orders by
// it), or the child is in a dependency.
func (s *supervisorRun) reportsSubtree(name string) bool {
	if s.in.ReportSubtree {
		return true
	}
	for _, c := range s.in.Spec.Children {
		if (c.Name == name && len(c.DependsOn) > 0) || slices.Contains(c.DependsOn, name) {
			return true
		}
	}
	return false
}

// subtree is how this supervisor's subtree is, for Status.Subtree.
func (s *supervisorRun) subtree() string {
	up, down := s.ownState() == "running", true
	for _, r := range s.carry.Children {
		up = up && settled(r) && r.WantGeneration <= r.Status.Generation
		down = down && isDown(r)
	}
	switch {
	case up:
		return "running"
	case down:
		return "stopped"
	}
	return "changing"
}

// clearQueued drops the operator's start, stop and restart still waiting
// for dependencies: a newer desired state or restart replaces them.
func (s *supervisorRun) clearQueued() {
	for i := range s.carry.Children {
		s.carry.Children[i].Step(supervise.Unqueue)
	}
}

// release carries out what the dependency order lets go now
// (supervise.Release): the operator's stops, in reverse start order, then
// the deferred starts and the operator's starts, in start order. Nothing
// waiting for dependencies starts while a plan of the core (a group
// restart, a give-up, a hold) is in progress, or while the supervisor is
// failed or held: the core decides then.
func (s *supervisorRun) release() {
	if s.shuttingDown || !slices.ContainsFunc(s.carry.Children, func(r ChildRecord) bool { return r.Lifecycle.Waits() }) {
		return // nothing waits: the common case, after every event
	}
	steps, after := supervise.Release(s.siblings(), s.carry.Desired == spec.DesiredRunning, supervise.Blocked(s.carry.Memory), s.window())
	// The queued marks first, as the order leaves them: a child started
	// below checks its dependencies (earlier in start order) by them.
	for i, a := range after {
		if r := &s.carry.Children[i]; r.Lifecycle.Queued() {
			r.Lifecycle = a.Lifecycle
		}
	}
	var starts []int // version 6 on: started together, after the signals
	for _, st := range steps {
		rec := &s.carry.Children[st.Index]
		switch st.Kind {
		case supervise.StopChild:
			s.out.add(workflow.SignalExternalWorkflow(s.ctx, rec.Path, "", SignalDesired, spec.DesiredStopped))
		case supervise.RunChild:
			s.out.add(workflow.SignalExternalWorkflow(s.ctx, rec.Path, "", SignalDesired, spec.DesiredRunning))
		case supervise.StartChild:
			if s.window() > 0 {
				starts = append(starts, st.Index)
				continue
			}
			s.startDeferred([]int{st.Index}) // one at a time, each awaited, as version 5 did
		case supervise.Wait:
			rec.Status.Reason = st.Reason
		}
	}
	if len(starts) > 0 {
		s.startDeferred(starts)
	}
}

// startDeferred starts the deferred children at the indexes given, in one
// batch (one workflow task awaits them all), each with the node it kept.
func (s *supervisorRun) startDeferred(at []int) {
	nodes := make([]spec.Node, len(at))
	for k, i := range at {
		nodes[k] = *s.carry.Children[i].Node
	}
	waiting := 0
	for _, r := range s.carry.Children {
		if r.Lifecycle == supervise.Deferred {
			waiting++
		}
	}
	s.othersWait = waiting > len(at)
	started := s.startChildren(nodes)
	s.othersWait = false
	for k, rec := range started {
		i := at[k]
		rec.WantGeneration = max(s.carry.Children[i].WantGeneration, rec.WantGeneration)
		s.carry.Children[i] = rec
	}
}
