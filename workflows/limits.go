package workflows

import (
	"encoding/json"

	"go.temporal.io/sdk/workflow"

	"github.com/steward-sh/steward/internal/spec"
)

// Input limits (internal/spec's limits.go).
//
// A `spec` signal or Update is held to the spec's limits (names, paths,
// depth, sizes, minimum intervals) before it changes anything, and one
// over a limit is rejected and counted like any bad payload. Those limits
// are newer than some histories: a run replaying a history that older
// code wrote must take the same specs it took then. So the limits are
// asked behind a marker ("steward-limits"), once a run: a run that asks
// live records it and holds every spec from then on to the limits; a
// history without it (a spec taken by older code) replays as it ran, with
// spec.ValidateLegacy, until the run continues as new (`starter upgrade`).
// Field templates are held to their language in every run (they cannot run
// away in any: internal/spec's template.go).
//
// A workflow's own input (a first run's spec, a carry) is validated as
// before (ValidateLegacy): a spec a supervisor kept from before the limits
// still starts its child, and an upgrade never fails a running tree.

// limitsHeld says whether this run holds the specs it takes to the limits.
func limitsHeld(ctx workflow.Context) bool {
	return workflow.GetVersion(ctx, "steward-limits", workflow.DefaultVersion, 1) == 1
}

// parentPath is the path of a workflow path's parent ("" for a root).
func parentPath(path string) string {
	for i := len(path) - 1; i >= 0; i-- {
		if path[i] == '/' {
			return path[:i]
		}
	}
	return ""
}

// validateSupervisorSpec checks a spec sent to the supervisor at path.
func validateSupervisorSpec(held bool, path string, n spec.Node) spec.Problems {
	if held {
		return spec.ValidateAt(parentPath(path), n)
	}
	return spec.ValidateLegacy(n)
}

// validateWorkerSpec checks a spec sent to the worker at path.
func validateWorkerSpec(held bool, path string, n spec.Node) spec.Problems {
	if held {
		return spec.ValidateWorker(path, n)
	}
	return spec.ValidateWorkerLegacy(n)
}

// encodedSize is a value's size as JSON (what it weighs in a payload).
func encodedSize(n any) int {
	b, _ := json.Marshal(n)
	return len(b)
}
