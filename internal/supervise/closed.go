package supervise

import "github.com/steward-sh/steward/internal/spec"

// Children whose workflow closed (Lifecycle Closed: terminated by hand,
// timed out, reset, or found closed after a continue-as-new), decided here
// and carried out by the supervisor workflow:
//
//   - such a child starts anew when its supervisor should run: an
//     operator's start or restart of the supervisor, a new spec, the end of
//     a cooldown, a group restart's StartAnew (never while StaysDown);
//   - it starts with the spec its supervisor holds for it; a child
//     supervisor whose subtree an earlier run handed down (its supervisor
//     holds only its own level) has its subtree's spec read back from the
//     subtree's workflows first, and starts with that;
//   - a child whose spec is neither held nor can be read back waits for
//     the operator to apply the tree again.

// ClosedStart says how a closed child starts anew.
type ClosedStart int

const (
	// StartWithSpec: start its workflow with the spec the supervisor holds.
	StartWithSpec ClosedStart = iota
	// ReadBackFirst: read its subtree's spec back, then start it.
	ReadBackFirst
	// WaitForApply: its spec is not here; it waits for an apply.
	WaitForApply
)

func (c ClosedStart) String() string {
	return [...]string{"startWithSpec", "readBackFirst", "waitForApply"}[c]
}

// ClosedChild is what the supervisor knows of a closed child when it
// would start it anew.
type ClosedChild struct {
	// SpecHeld: the supervisor holds the child's whole spec (a worker's
	// node, or a child supervisor's subtree handed to this run).
	SpecHeld bool
	// Supervisor: the child is a supervisor whose subtree is not held.
	Supervisor bool
	// CanReadBack: this run may read a subtree back (a history recorded
	// before read-backs existed may not).
	CanReadBack bool
}

// RestartClosed decides how a closed child starts anew, and the reason its
// record shows while it does not start at once.
func RestartClosed(c ClosedChild) (ClosedStart, string) {
	switch {
	case c.SpecHeld:
		return StartWithSpec, ""
	case c.Supervisor && c.CanReadBack:
		return ReadBackFirst, "workflow closed; reading its subtree's spec back from its workflows to start it anew"
	}
	return WaitForApply, "workflow closed; its subtree's spec was handed to an earlier run: apply a change to it (or to its parent) to start it anew"
}

// ReadBack is a finished read-back of a closed child supervisor's spec, and
// what has become of the child since it began.
type ReadBack struct {
	// Found: the child is still in the spec, not deferred; Lifecycle is
	// its record's now.
	Found     bool
	Lifecycle Lifecycle
	// ShuttingDown: its supervisor is being deleted.
	ShuttingDown bool
	// StaysDown: its supervisor's subtree is to stay down (StaysDown).
	StaysDown bool
	// Err is why the spec could not be read back ("" when it was), and
	// Name the name of the spec read back.
	Err, Name string
	// Want is the child's name.
	Want string
}

// AfterReadBack decides what a read-back does: start the child with the
// spec read back (start), or not, and the reason its record then shows
// ("" to leave it as it is: the child was removed, or started anew by a
// newer spec meanwhile).
func AfterReadBack(r ReadBack) (start bool, reason string) {
	if !r.Found || r.Lifecycle != Closed || r.ShuttingDown {
		return false, ""
	}
	if r.StaysDown {
		// What starts the supervisor again (start, cooldown, the group's
		// restart) asks for a new read-back.
		return false, "workflow closed; not started anew while its supervisor is down"
	}
	err := r.Err
	if err == "" && r.Name != r.Want {
		err = "the spec read back is named \"" + r.Name + "\""
	}
	if err != "" {
		return false, "workflow closed; its subtree's spec could not be read back (" + err + "): apply the tree again to start it anew"
	}
	return true, ""
}

// StartsClosed: closed children start anew only while their supervisor
// should run (desired running).
func StartsClosed(desired string) bool { return desired == spec.DesiredRunning }
