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
// record (internal/treestatus).
type ChildReport = treestatus.ChildReport

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
