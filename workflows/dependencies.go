package workflows

import (
	"slices"
	"strings"

	"go.temporal.io/sdk/workflow"

	"github.com/steward-sh/steward/internal/spec"
	"github.com/steward-sh/steward/internal/supervise"
)

// Dependencies between siblings (spec.Node.DependsOn; internal/spec's
// depends.go states the contract). A supervisor keeps its children in start
// order (spec.StartOrder), and:
//
//   - a child whose dependencies are not all running is not started: its
//     record waits (Deferred, with its node) until each has reported
//     running, then its workflow starts;
//   - the operator's start of the supervisor (desired running) reaches a
//     child only once its dependencies run (Held);
//   - the operator's stop (desired stopped) reaches a child only once every
//     sibling that depends on it is down (PendingStop);
//   - the operator's restart of the supervisor stops every child in that
//     order, then starts each once its dependencies run again (Restart);
//   - group restarts, give-ups and delete handle children one after the
//     other in start order (or its reverse), so they honour it as they are;
//   - a child supervisor in a dependency reports how its whole subtree is
//     (Status.Subtree): it counts as running once every worker below it is
//     up, and as down once every one is down.
//
// Children without dependencies are not held back at all: they start
// together, and a tree without dependsOn sends exactly what it sent before.

// dependenciesOf names the siblings the child depends on.
func (s *supervisorRun) dependenciesOf(name string) []string {
	for _, c := range s.in.Spec.Children {
		if c.Name == name {
			return c.DependsOn
		}
	}
	return nil
}

// waitingFor lists the dependencies in deps that are not running yet (none
// while the supervisor is stopped: what starts then starts stopped). A
// dependency that completed (a transient or temporary job that exited
// normally) counts as done.
func (s *supervisorRun) waitingFor(deps []string) []string {
	if len(deps) == 0 || s.carry.Desired != spec.DesiredRunning {
		return nil
	}
	var out []string
	for _, d := range deps {
		i := s.childIndex(d)
		if i < 0 || !isUp(s.carry.Children[i]) {
			out = append(out, d)
		}
	}
	return out
}

// isUp: the child runs (a child supervisor: its whole subtree), or
// completed, and nothing is queued for it.
func isUp(r ChildRecord) bool {
	st := r.Status
	if r.Deferred || r.Held || r.PendingStop || r.Closed || r.Ended {
		return false
	}
	return st.Completed || (st.State == "running" && (!r.isSupervisor() || st.Subtree == "running"))
}

// isDown: the child runs nothing (a child supervisor: nothing below it).
func isDown(r ChildRecord) bool {
	if r.gone() {
		return true
	}
	return !r.PendingStop && supervise.IsDown(r.Status.State) && (!r.isSupervisor() || r.Status.Subtree == "stopped")
}

func waitingReason(names []string) string {
	return "waiting for " + strings.Join(names, ", ") + " to be running"
}

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
		settled := isUp(r) || (r.Status.Desired == spec.DesiredStopped && isDown(r))
		up = up && settled && r.WantGeneration <= r.Status.Generation
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

// dependantsDown reports whether every sibling that depends on name is down
// or gone (it may stop now).
func (s *supervisorRun) dependantsDown(name string) bool {
	for _, c := range s.in.Spec.Children {
		if !slices.Contains(c.DependsOn, name) {
			continue
		}
		if i := s.childIndex(c.Name); i >= 0 && !isDown(s.carry.Children[i]) {
			return false
		}
	}
	return true
}

// clearQueued drops the operator's start, stop and restart still waiting
// for dependencies: a newer desired state or restart replaces them.
func (s *supervisorRun) clearQueued() {
	for i := range s.carry.Children {
		r := &s.carry.Children[i]
		r.Held, r.PendingStop, r.Restart = false, false, false
	}
}

// restartInOrder is the operator's restart of a supervisor with
// dependencies: every child stops (dependants first), then each starts
// once its dependencies run again.
func (s *supervisorRun) restartInOrder() {
	for i := range s.carry.Children {
		r := &s.carry.Children[i]
		if !r.gone() {
			r.PendingStop, r.Held, r.Restart = true, true, true
		}
	}
	s.release()
}

// restartsDown: every child of an operator's restart is down.
func (s *supervisorRun) restartsDown() bool {
	for _, r := range s.carry.Children {
		if r.Restart && !isDown(r) {
			return false
		}
	}
	return true
}

// release starts, and sends the operator's start and stop to, the
// children whose dependencies allow it now: stops in reverse start order,
// starts in start order. Nothing starts while a plan of the core (a group
// restart, a give-up, a hold) is in progress, or while the supervisor is
// failed or held: the core decides then.
func (s *supervisorRun) release() {
	if s.shuttingDown || !slices.ContainsFunc(s.carry.Children, func(r ChildRecord) bool { return r.Deferred || r.Held || r.PendingStop }) {
		return // nothing waits: the common case, after every event
	}
	for j := len(s.carry.Children) - 1; j >= 0; j-- {
		rec := &s.carry.Children[j]
		if rec.PendingStop && s.dependantsDown(rec.Name) {
			rec.PendingStop = false
			if !rec.gone() {
				s.out.add(workflow.SignalExternalWorkflow(s.ctx, rec.Path, "", SignalDesired, spec.DesiredStopped))
			}
		}
	}
	// A child waiting for a removed run of its path starts when that ends,
	// whatever else goes on (as it always has); one waiting for its
	// dependencies does not start while the core has a plan in progress or
	// the supervisor failed or is held.
	blocked := s.carry.Plan != nil || s.carry.Failed || s.carry.Memory.Held
	restartsDown := s.restartsDown()
	for j := range s.carry.Children {
		rec := &s.carry.Children[j]
		switch {
		case rec.Deferred && rec.Node != nil:
			if slices.Contains(s.carry.Removing, rec.Path) || (blocked && len(rec.Node.DependsOn) > 0) {
				continue
			}
			if w := s.waitingFor(rec.Node.DependsOn); len(w) > 0 {
				rec.Status.Reason = waitingReason(w)
				continue
			}
			want := rec.WantGeneration
			s.carry.Children[j] = s.startChildren([]spec.Node{*rec.Node})[0]
			s.carry.Children[j].WantGeneration = max(want, s.carry.Children[j].WantGeneration)
		case rec.Held && !rec.PendingStop:
			if blocked || (rec.Restart && !restartsDown) {
				continue
			}
			if w := s.waitingFor(s.dependenciesOf(rec.Name)); len(w) > 0 {
				rec.Status.Reason = waitingReason(w)
				continue
			}
			rec.Held, rec.Restart = false, false
			if !rec.gone() {
				s.out.add(workflow.SignalExternalWorkflow(s.ctx, rec.Path, "", SignalDesired, spec.DesiredRunning))
			}
		}
	}
}
