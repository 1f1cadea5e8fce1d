package supervise

// Lifecycle is where one child is in its life as its supervisor sees it:
// one state, where a record once held seven booleans (ended, closed,
// deferred, held, pending stop, restart, adopted) from which every reader
// worked a state back out.
//
// A child is Live while its workflow is there to be asked (started, or
// found running and adopted) and nothing is queued for it. The operator's
// start, stop and restart of a supervisor with dependencies queue on a
// live child (HeldStart, PendingStop, RestartStop, RestartStart) until the
// dependency order (order.go) lets them go. A child not started yet waits
// as Deferred, its node kept. Ended and Closed are the two ways its
// workflow goes: it reported its end, or it closed without (a termination,
// started anew by the strategy). Every move between them is a ChildEvent,
// and Step is the whole table (lifecycle_test.go has a row per pair).
//
// The zero value is Live, so that a record carries nothing for the common
// case.
type Lifecycle string

// Lifecycles.
const (
	// Live: its workflow is there; nothing is queued for it.
	Live Lifecycle = ""
	// Deferred: its workflow is not started yet: it waits for a removed
	// run of its path to end, or for its dependencies to run. Its node is
	// kept until then.
	Deferred Lifecycle = "deferred"
	// HeldStart: the operator's start reaches it once its dependencies
	// are up.
	HeldStart Lifecycle = "heldStart"
	// PendingStop: the operator's stop reaches it once every sibling that
	// depends on it is down.
	PendingStop Lifecycle = "pendingStop"
	// RestartStop: the operator's restart stops it once its dependants are
	// down (then RestartStart).
	RestartStop Lifecycle = "restartStop"
	// RestartStart: stopped for the operator's restart; started once every
	// child of that restart is down and its dependencies are up again.
	RestartStart Lifecycle = "restartStart"
	// Ended: its workflow reported its end (it was deleted or removed).
	Ended Lifecycle = "ended"
	// Closed: its workflow closed without reporting its end (terminated,
	// timed out, failed, reset); the strategy starts it anew.
	Closed Lifecycle = "closed"
)

// Lifecycles lists every lifecycle (for tables and checks).
var Lifecycles = []Lifecycle{Live, Deferred, HeldStart, PendingStop, RestartStop, RestartStart, Ended, Closed}

// String names the lifecycle ("live" for the zero value).
func (l Lifecycle) String() string {
	if l == Live {
		return "live"
	}
	return string(l)
}

// Gone: its workflow is not there to be asked anything.
func (l Lifecycle) Gone() bool { return l == Ended || l == Closed || l == Deferred }

// Queued: an operator's start, stop or restart waits on it.
func (l Lifecycle) Queued() bool {
	return l == HeldStart || l == PendingStop || l == RestartStop || l == RestartStart
}

// Waits: the dependency order has something to decide for it.
func (l Lifecycle) Waits() bool { return l == Deferred || l.Queued() }

// stopQueued: a stop waits on it (the operator's stop or restart).
func (l Lifecycle) stopQueued() bool { return l == PendingStop || l == RestartStop }

// startQueued: a start waits on it, and no stop before it.
func (l Lifecycle) startQueued() bool { return l == HeldStart || l == RestartStart }

// inRestart: part of an operator's restart in order.
func (l Lifecycle) inRestart() bool { return l == RestartStop || l == RestartStart }

// ChildEvent is what happens to a child that moves its lifecycle.
type ChildEvent int

// Child events.
const (
	// OperatorStart: the operator set the supervisor running.
	OperatorStart ChildEvent = iota
	// OperatorStop: the operator set the supervisor stopped.
	OperatorStop
	// OperatorRestartInOrder: the operator restarted a supervisor whose
	// children depend on each other.
	OperatorRestartInOrder
	// Unqueue: a newer desired state, a restart or the core's reset drops
	// what was queued.
	Unqueue
	// ReleaseStop: the order lets its queued stop go (every sibling that
	// depends on it is down).
	ReleaseStop
	// ReleaseStart: the order lets its queued start go (its dependencies
	// are up and, in a restart, every child of it is down).
	ReleaseStart
	// WorkflowStarted: its workflow was started (a deferred child, or a
	// closed one started anew).
	WorkflowStarted
	// ReportedEnd: it reported that its workflow ended.
	ReportedEnd
	// WorkflowClosed: its workflow closed without reporting its end.
	WorkflowClosed
)

// ChildEvents lists every child event (for tables and checks).
var ChildEvents = []ChildEvent{OperatorStart, OperatorStop, OperatorRestartInOrder, Unqueue, ReleaseStop, ReleaseStart, WorkflowStarted, ReportedEnd, WorkflowClosed}

// String names the event.
func (e ChildEvent) String() string {
	switch e {
	case OperatorStart:
		return "operatorStart"
	case OperatorStop:
		return "operatorStop"
	case OperatorRestartInOrder:
		return "operatorRestartInOrder"
	case Unqueue:
		return "unqueue"
	case ReleaseStop:
		return "releaseStop"
	case ReleaseStart:
		return "releaseStart"
	case WorkflowStarted:
		return "workflowStarted"
	case ReportedEnd:
		return "reportedEnd"
	case WorkflowClosed:
		return "workflowClosed"
	}
	return "unknown"
}

// Step is the lifecycle after the event. A pair that does not apply (a
// stop queued on a child that is gone, a start of a live one) leaves the
// lifecycle as it is.
func Step(l Lifecycle, e ChildEvent) Lifecycle {
	switch e {
	case OperatorStart:
		if !l.Gone() {
			return HeldStart
		}
	case OperatorStop:
		if !l.Gone() {
			return PendingStop
		}
	case OperatorRestartInOrder:
		if !l.Gone() {
			return RestartStop
		}
	case Unqueue:
		if l.Queued() {
			return Live
		}
	case ReleaseStop:
		switch l {
		case PendingStop:
			return Live
		case RestartStop:
			return RestartStart
		}
	case ReleaseStart:
		if l.startQueued() {
			return Live
		}
	case WorkflowStarted:
		if l == Deferred || l == Closed {
			return Live
		}
	case ReportedEnd:
		// A deferred record has no workflow to report, and a closed one's
		// reports are another run's.
		if l != Deferred && l != Closed {
			return Ended
		}
	case WorkflowClosed:
		if !l.Gone() {
			return Closed
		}
	}
	return l
}

// FromFlags is the lifecycle of a record written with the booleans that
// came before Lifecycle (a supervisor's carried state of code version 2 or
// older): what they meant, in the order the code that wrote them read
// them. A queued mark on a child that was gone never had an effect (the
// order dropped it without a signal), and is dropped here.
func FromFlags(ended, closed, deferred, held, pendingStop, restart bool) Lifecycle {
	switch {
	case ended:
		return Ended
	case closed:
		return Closed
	case deferred:
		return Deferred
	case restart && pendingStop:
		return RestartStop
	case restart && held:
		return RestartStart
	case pendingStop:
		return PendingStop
	case held:
		return HeldStart
	}
	return Live
}

// OperatorAct is the operator's act on a supervisor that reaches its
// children: its desired state, or a restart.
type OperatorAct int

// Operator acts.
const (
	ActStart OperatorAct = iota
	ActStop
	ActRestart
)

// OperatorOrder is what an operator's act does to the children.
type OperatorOrder struct {
	// Lifecycles are the children's after the act, in order: what was
	// queued goes, and the act queues on every child whose workflow is
	// there (the dependency order lets it go, order.go).
	Lifecycles []Lifecycle
	// RestartNow lists the children restarted at once (a restart of a
	// supervisor without dependencies: every child whose workflow is
	// there, by its own restart signal).
	RestartNow []int
	// Release: the dependency order lets go what it can now (Release),
	// every act but a restart without dependencies.
	Release bool
	// StartClosed: children whose workflow closed are started anew (the
	// act leaves the supervisor running).
	StartClosed bool
}

// Operate decides what the operator's act does to the children, given
// their lifecycles and whether any child depends on a sibling. A start
// or stop always goes through the order (a child without dependencies is
// let go at once); a restart does only when there are dependencies.
func Operate(act OperatorAct, children []Lifecycle, dependencies bool) OperatorOrder {
	o := OperatorOrder{Lifecycles: make([]Lifecycle, len(children)), StartClosed: act != ActStop,
		Release: act != ActRestart || dependencies}
	queue := OperatorStart
	switch act {
	case ActStop:
		queue = OperatorStop
	case ActRestart:
		queue = OperatorRestartInOrder
	}
	for i, l := range children {
		l = Step(l, Unqueue)
		if act == ActRestart && !dependencies {
			if !l.Gone() {
				o.RestartNow = append(o.RestartNow, i)
			}
		} else {
			l = Step(l, queue)
		}
		o.Lifecycles[i] = l
	}
	return o
}
