package workflows

import (
	"fmt"

	"go.temporal.io/sdk/workflow"
)

// Input limits (internal/spec's limits.go).
//
// A `spec` signal or Update is held to the spec's limits (names, paths,
// depth, sizes, minimum intervals) before it changes anything, and one
// over a limit is rejected and counted like any bad payload. Those limits
// are newer than some histories: a run replaying a history that older
// code wrote must take the same specs it took then. So the limits are
// asked behind a marker ("steward-limits"; limitsMarker): a run that asks
// live records it and holds every spec from then on to the limits; a
// history without it (a spec taken by older code) replays as it ran, with
// spec.ValidateLegacy.
// Field templates are held to their language in every run (they cannot run
// away in any: internal/spec's template.go).
//
// A workflow's own input (a first run's spec, a carry) is validated as
// before (ValidateLegacy): a spec a supervisor kept from before the limits
// still starts its child, and an upgrade never fails a running tree.

// limitsMarker is a run's answer to the limits' markers.
//
// The SDK keeps a marker's first answer for the whole run: a run whose
// history (written by older code) took a spec before "steward-limits" was
// asked would hold no spec to the limits until it continues as new. So a
// run that got the default asks again at its next spec, under a marker of
// its own ("steward-limits-2", -3, ..., as the upgrade signal does): live,
// it is recorded, and the limits hold from then on; replaying a history
// without it, the spec is taken as it was.
type limitsMarker struct {
	held  bool
	asked int
}

// holds says whether this run holds the spec it takes now to the limits.
func (l *limitsMarker) holds(ctx workflow.Context) bool {
	if l.held {
		return true
	}
	l.asked++
	id := "steward-limits"
	if l.asked > 1 {
		id = fmt.Sprintf("steward-limits-%d", l.asked)
	}
	l.held = workflow.GetVersion(ctx, id, workflow.DefaultVersion, 1) == 1
	return l.held
}
