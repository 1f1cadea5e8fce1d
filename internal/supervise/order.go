package supervise

import (
	"slices"
	"strings"

	"github.com/steward-sh/steward/internal/spec"
)

// The dependency order among siblings (spec.Node.DependsOn), decided here
// and carried out by the supervisor workflow:
//
//   - a child whose dependencies are not all up is not started: it waits
//     (Deferred, its node kept) until each is, then its workflow starts;
//   - the operator's start of the supervisor reaches a child only once its
//     dependencies are up (HeldStart);
//   - the operator's stop reaches a child only once every sibling that
//     depends on it is down (PendingStop);
//   - the operator's restart of the supervisor stops every child in that
//     order (RestartStop), then starts each once every child of the restart
//     is down and its dependencies are up again (RestartStart).
//
// A child supervisor in a dependency reports how its whole subtree is
// (Subtree): up once every worker below it runs, down once every one is.

// Sibling is what the dependency order knows of one child, in start order.
type Sibling struct {
	Name string
	// DependsOn names the siblings it depends on, by the spec;
	// NodeDependsOn, a deferred child's by the node it will start with.
	DependsOn, NodeDependsOn []string
	Supervisor               bool
	// State, Completed and Subtree are its last report's.
	State     string
	Completed bool
	Subtree   string
	Lifecycle Lifecycle
	// CanStart: a deferred child's node is kept to start it.
	CanStart bool
	// Removing: a removed run of its path has not ended yet.
	Removing bool
	// Applying: it has not reported the spec its supervisor sent it (a
	// worker restarting for it reports the new generation at the
	// restart's end): it is not up, whatever it last said.
	Applying bool
	// Starting: its workflow was started and has not reported yet: it
	// holds a slot of the start window (window.go, HoldsSlot).
	Starting bool
}

// Gone: the child's workflow is not there to be asked anything.
func (c Sibling) Gone() bool { return c.Lifecycle.Gone() }

// Up: the child runs (a child supervisor: its whole subtree) or completed,
// and nothing is queued for it.
func (c Sibling) Up() bool {
	if c.Lifecycle != Live || c.Applying {
		return false
	}
	return c.Completed || (c.State == "running" && (!c.Supervisor || c.Subtree == "running"))
}

// Down: the child runs nothing (a child supervisor: nothing below it).
func (c Sibling) Down() bool {
	if c.Gone() {
		return true
	}
	return !c.Lifecycle.stopQueued() && IsDown(c.State) && (!c.Supervisor || c.Subtree == "stopped")
}

// WaitingFor lists the dependencies in deps that are not up yet; none while
// the supervisor is not to run (what starts then starts stopped).
func WaitingFor(sibs []Sibling, deps []string, running bool) []string {
	if len(deps) == 0 || !running {
		return nil
	}
	var out []string
	for _, d := range deps {
		i := slices.IndexFunc(sibs, func(c Sibling) bool { return c.Name == d })
		if i < 0 || !sibs[i].Up() {
			out = append(out, d)
		}
	}
	return out
}

// WaitingReason is the reason of a child that waits for deps.
func WaitingReason(deps []string) string {
	return "waiting for " + strings.Join(deps, ", ") + " to be running"
}

// DependantsDown reports whether every sibling that depends on name is
// down or gone (name may stop now).
func DependantsDown(sibs []Sibling, name string) bool {
	for _, c := range sibs {
		if slices.Contains(c.DependsOn, name) && !c.Down() {
			return false
		}
	}
	return true
}

// RestartsDown: every child of an operator's restart is down.
func RestartsDown(sibs []Sibling) bool {
	return !slices.ContainsFunc(sibs, func(c Sibling) bool { return c.Lifecycle.inRestart() && !c.Down() })
}

// OrderKind is what an OrderStep asks of the workflow.
type OrderKind string

const (
	// StopChild: send the child desired stopped (its dependants are down).
	StopChild OrderKind = "stop"
	// StartChild: start the deferred child's workflow (its dependencies
	// are up, no removed run of its path is left).
	StartChild OrderKind = "start"
	// RunChild: send the child desired running (its dependencies are up).
	RunChild OrderKind = "run"
	// Wait: the child still waits; Reason says for what.
	Wait OrderKind = "wait"
)

// OrderStep is one step of Release, on the child at Index.
type OrderStep struct {
	Kind   OrderKind
	Index  int
	Reason string
}

// Release decides which waiting children the order lets go now: stops in
// reverse start order, then starts and the operator's starts in start
// order. running: the supervisor is to run; blocked: a plan of the core
// (a group restart, a give-up, a hold) is in progress, or the supervisor
// failed or is held, and nothing waiting for dependencies starts (a child
// waiting only for a removed run of its path still does). window is the
// start window's size (StartWindow; 0: none, before version 6): a deferred
// child starts only into a free slot. It returns the steps to carry out,
// in order, and the siblings as they are after them (a started child: up
// to its first report, not up, and starting).
func Release(sibs []Sibling, running, blocked bool, window int) ([]OrderStep, []Sibling) {
	sibs = slices.Clone(sibs)
	if !slices.ContainsFunc(sibs, func(c Sibling) bool { return c.Lifecycle.Waits() }) {
		return nil, sibs // nothing waits: the common case, after every event
	}
	var steps []OrderStep
	for j := len(sibs) - 1; j >= 0; j-- {
		c := &sibs[j]
		if c.Lifecycle.stopQueued() && DependantsDown(sibs, c.Name) {
			c.Lifecycle = Step(c.Lifecycle, ReleaseStop)
			steps = append(steps, OrderStep{Kind: StopChild, Index: j})
		}
	}
	restartsDown := RestartsDown(sibs)
	slots := newWindow(window, sibs)
	for j := range sibs {
		c := &sibs[j]
		switch {
		case c.Lifecycle == Deferred && c.CanStart:
			if c.Removing || (blocked && len(c.NodeDependsOn) > 0) {
				continue
			}
			if w := WaitingFor(sibs, c.NodeDependsOn, running); len(w) > 0 {
				steps = append(steps, OrderStep{Kind: Wait, Index: j, Reason: WaitingReason(w)})
				continue
			}
			if !slots.take() {
				steps = append(steps, OrderStep{Kind: Wait, Index: j, Reason: WindowReason})
				continue
			}
			steps = append(steps, OrderStep{Kind: StartChild, Index: j})
			*c = Sibling{Name: c.Name, DependsOn: c.DependsOn, Supervisor: c.Supervisor, State: "stopped",
				Lifecycle: Step(Deferred, WorkflowStarted), Starting: window > 0}
		case c.Lifecycle.startQueued():
			if blocked || (c.Lifecycle == RestartStart && !restartsDown) {
				continue
			}
			if w := WaitingFor(sibs, c.DependsOn, running); len(w) > 0 {
				steps = append(steps, OrderStep{Kind: Wait, Index: j, Reason: WaitingReason(w)})
				continue
			}
			c.Lifecycle = Step(c.Lifecycle, ReleaseStart)
			steps = append(steps, OrderStep{Kind: RunChild, Index: j})
		}
	}
	return steps, sibs
}

// Blocked: a plan of the core is in progress (a group restart, a give-up,
// a hold), or the supervisor failed or is held. Children waiting for their
// dependencies do not start then: the core decides what starts, and when.
func Blocked(m Memory) bool { return m.Plan != nil || m.Failed || m.Held }

// StaysDown: the supervisor's subtree is to stay down (it is stopped, gave
// up, or is held by a group stop above it). A closed child supervisor is
// not started anew then, even by a read-back of its spec: what starts the
// supervisor again (start, cooldown, the group's restart) reads it back
// again. Unlike Blocked, a plan in progress does not keep it down: the plan
// itself starts it.
func StaysDown(m Memory, desired string) bool {
	return desired != spec.DesiredRunning || m.Failed || m.Held
}

// RemovedRunReason is the reason of a child whose path's removed run is
// still stopping.
const RemovedRunReason = "waiting for the removed run to end"

// StartHold says why a child about to start waits instead ("" when it
// starts now): a removed run of its path is still stopping (it starts once
// that run has ended), or dependencies of its are not up yet (waiting, as
// WaitingFor lists them).
func StartHold(removedRunStopping bool, waiting []string) string {
	switch {
	case removedRunStopping:
		return RemovedRunReason
	case len(waiting) > 0:
		return WaitingReason(waiting)
	}
	return ""
}

// WindowHold is the reason of a new child deferred for the start window to
// release: the window's, unless a removed run of its path still stops.
func WindowHold(removedRunStopping bool) string {
	if removedRunStopping {
		return RemovedRunReason
	}
	return WindowReason
}
