package workflows

import (
	"fmt"

	"go.temporal.io/sdk/converter"

	"github.com/steward-sh/steward/internal/supervise"
	"github.com/steward-sh/steward/internal/treestatus"
)

// Status is the answer of the `status` query (internal/treestatus): a
// worker answers for itself, a supervisor for itself and its direct
// children's records.
type Status = treestatus.Status

// ActionStatus describes a worker's last start, stop or restart.
type ActionStatus = treestatus.ActionStatus

// SuperviseRequest is the payload of the supervise signal: a stop (keep
// down until restarted by the supervisor, supervise.RequestStop) or a
// restart (start again: an automatic restart, supervise.RequestRestart).
type SuperviseRequest = supervise.Request

// ChildReport is what a child signals its supervisor on a change of its own
// record (internal/treestatus).
type ChildReport = treestatus.ChildReport

// decodeSupervise reads a supervise signal's payload, refusing an unknown op.
func decodeSupervise(raw converter.RawValue) (SuperviseRequest, error) {
	var r SuperviseRequest
	if err := decodeRaw(raw, &r); err != nil {
		return r, err
	}
	if r.Op != supervise.RequestStop && r.Op != supervise.RequestRestart {
		return r, fmt.Errorf("op must be %q or %q, got %q", supervise.RequestStop, supervise.RequestRestart, r.Op)
	}
	return r, nil
}
