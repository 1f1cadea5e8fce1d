package workflows

import (
	"fmt"

	"go.temporal.io/sdk/converter"

	"github.com/steward-sh/steward/internal/treestatus"
)

// Status is the answer of the `status` query (internal/treestatus): a
// worker answers for itself, a supervisor for itself and its direct
// children's records.
type Status = treestatus.Status

// ActionStatus describes a worker's last start, stop or restart.
type ActionStatus = treestatus.ActionStatus

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

// ChildReport is what a child signals its supervisor on a change of its own
// record: never its children's (a supervisor's report has no Children), so
// what a supervisor receives grows with its direct children only.
type ChildReport struct {
	// Seq numbers a child's reports: two sent in one workflow task can
	// arrive in either order, and the supervisor keeps the newest.
	Seq int64 `json:"seq,omitempty"`
	// Run is the first run ID of the child's workflow: a supervisor tells
	// the reports of a removed or closed run from those of its successor.
	Run    string `json:"run,omitempty"`
	Status Status `json:"status"`
	// Ended: the child's workflow is ending (it was deleted).
	Ended bool `json:"ended,omitempty"`
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
