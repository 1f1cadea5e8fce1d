package workflows

import (
	"fmt"
	"time"

	"go.temporal.io/sdk/converter"
)

// Status is the answer of the `status` query: a worker answers for itself, a
// supervisor for its whole subtree.
type Status struct {
	Path           string       `json:"path"`
	Kind           string       `json:"kind"`
	State          string       `json:"state"`
	Desired        string       `json:"desired"`
	Reason         string       `json:"reason"`
	Restarts       int          `json:"restarts"`
	ManualRestarts int          `json:"manualRestarts"`
	Generation     int64        `json:"generation"`
	LastAction     ActionStatus `json:"lastAction"`
	Children       []Status     `json:"children"`
	// Since is when the worker entered its state (workflow time).
	Since time.Time `json:"since,omitzero"`
	// BackoffUntil is when a pending automatic restart fires.
	BackoffUntil time.Time `json:"backoffUntil,omitzero"`
	// Instance identifies the running instance (driver-defined; for a
	// process "proc/<pid>/<start>@<workflow>").
	Instance string `json:"instance,omitempty"`
	// RejectedSignals counts signals refused for a bad payload.
	RejectedSignals int `json:"rejectedSignals"`
	// Completed: the service exited normally and its restart type
	// (transient, temporary) does not start it again; it counts as settled.
	Completed bool `json:"completed,omitempty"`
	// Applying: the supervisor has sent this node a new spec (or holds its
	// start until a removed run ends) and has not heard back yet.
	Applying bool `json:"applying,omitempty"`
	// Terminations counts ends that called for an automatic restart (a
	// crash, a failed start, a normal exit of a permanent service; for a
	// supervisor, giving up): what its supervisor's intensity counts.
	Terminations int `json:"terminations"`
	// AwaitingRestart: the node ended and waits for its supervisor to
	// restart it (one_for_all, rest_for_one).
	AwaitingRestart bool `json:"awaitingRestart,omitempty"`
	// SuperviseSeq is the last supervise request the node handled.
	SuperviseSeq int64 `json:"superviseSeq,omitempty"`
	// Strategy and Intensity describe a supervisor.
	Strategy string `json:"strategy,omitempty"`
	// RecentRestarts is how many restarts a supervisor counts in its
	// current intensity period.
	RecentRestarts int `json:"recentRestarts,omitempty"`
}

// SuperviseRequest is the payload of the supervise signal.
type SuperviseRequest struct {
	// Seq orders a supervisor's requests; the child echoes the last one.
	Seq int64 `json:"seq"`
	// Op is SuperviseStop or SuperviseRestart.
	Op     string `json:"op"`
	Reason string `json:"reason,omitempty"`
}

// Supervise operations.
const (
	// SuperviseStop: stop (keep down) until restarted by the supervisor.
	SuperviseStop = "stop"
	// SuperviseRestart: start again (an automatic restart).
	SuperviseRestart = "restart"
)

// ActionStatus describes the last start, stop or restart (observes are not
// reported: they are periodic and would drown it).
type ActionStatus struct {
	Name     string `json:"name"`
	Status   string `json:"status"` // running, succeeded, failed, timeout, cancelled
	Attempts int    `json:"attempts"`
	Error    string `json:"error"`
}

// ChildReport is what a child signals its supervisor on every change.
type ChildReport struct {
	// Seq numbers a child's reports: two sent in one workflow task can
	// arrive in either order, and the supervisor keeps the newest.
	Seq    int64  `json:"seq,omitempty"`
	Status Status `json:"status"`
	// Ended: the child's workflow is ending (it was deleted).
	Ended bool `json:"ended,omitempty"`
}

// AtDesired reports whether every worker in the subtree is at its desired
// state, and counts workers at it and in all.
func (s Status) AtDesired() (at, total int) {
	if s.Kind == "supervisor" {
		for _, c := range s.Children {
			a, t := c.AtDesired()
			at += a
			total += t
		}
		return at, total
	}
	if (s.State == s.Desired || s.Completed) && !s.Applying {
		return 1, 1
	}
	return 0, 1
}

// Find returns the node at path in the subtree.
func (s Status) Find(path string) (Status, bool) {
	if s.Path == path {
		return s, true
	}
	for _, c := range s.Children {
		if f, ok := c.Find(path); ok {
			return f, true
		}
	}
	return Status{}, false
}

// decodeSupervise reads a supervise signal's payload, refusing an unknown op.
func decodeSupervise(raw converter.RawValue) (SuperviseRequest, error) {
	var r SuperviseRequest
	if err := decodeRaw(raw, &r); err != nil {
		return r, err
	}
	if r.Op != SuperviseStop && r.Op != SuperviseRestart {
		return r, fmt.Errorf("op must be %q or %q, got %q", SuperviseStop, SuperviseRestart, r.Op)
	}
	return r, nil
}
