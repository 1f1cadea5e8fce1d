package workflows

import (
	"go.temporal.io/sdk/workflow"
)

// What a change of status costs, and how steward keeps it small.
//
// A report to the parent is a signal: an event in both histories and a
// workflow task on each side. So:
//
//   - A report carries the sender's own record only (treestatus.Narrow): a
//     supervisor never forwards its children's records, so what a
//     supervisor receives, keeps and carries over continue-as-new grows
//     with its direct children, not with the tree below them. A change deep
//     in the tree costs one report to its own supervisor and no more.
//     `starter status` assembles the tree by querying the supervisors and
//     the workers (internal/treestatus).
//   - A supervisor reports only a change of its own record (state, desired
//     state, counts, generation, acknowledgements), never its children's.
//   - A worker reports only what its supervisor acts on or shows as its
//     state (treestatus.SameReport): a manual restart, which ends where it began
//     (running), is not reported; its counters ride along with the next
//     report.
//   - A worker does not publish (report or upsert its search attributes) a
//     state it is in only while an action runs (starting, stopping,
//     restarting) unless the action is still running after
//     activities.SlowAfter (1 s): the activity then signals `slow`. Most
//     actions end sooner, and then only the state they end in is
//     published, with no timer in the history. What a supervisor acts on is
//     reported at once (urgentChange): a new termination, an acknowledged
//     supervise request, a new generation, a change of desired state or of
//     awaiting a restart. From worker code version 5 a new generation
//     alone waits for the end of the action it began (urgentDuringAction):
//     the action's success report carries it.
//   - An action's success report is made when the action starts and sent
//     by its activity the moment it succeeds, a hop before the workflow
//     could (its number: worker_status.go, "Report numbers").
//   - A supervisor's report carries its rolling update's state, not its
//     progress (supervisor code version 4).
//   - A worker keeps its observe timer through an action instead of
//     cancelling and re-arming it around each one.
//   - A run does not upsert its search attributes at its start when they
//     already hold what it would set (the supervisor sets them when it
//     starts the child; continue-as-new carries them over).
//
// The price: a supervisor's record of a worker lags the worker's own status
// by up to a second while an action runs, and its counters lag until the
// next report. A worker's own query is never late.

// searchAttributesSet returns the state and kind the run's search
// attributes hold now, if they are those of path ("", "" if not).
func searchAttributesSet(ctx workflow.Context, path string) (state, kind string) {
	sa := workflow.GetTypedSearchAttributes(ctx)
	if p, ok := sa.GetKeyword(SearchPath); !ok || p != path {
		return "", ""
	}
	state, _ = sa.GetKeyword(SearchState)
	kind, _ = sa.GetKeyword(SearchKind)
	return state, kind
}
