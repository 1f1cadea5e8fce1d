package workflows

import (
	"time"

	"go.temporal.io/sdk/workflow"
)

// What a change of status costs, and how steward keeps it small.
//
// A report to the parent is a signal: an event in both histories and a
// workflow task on each side, and every ancestor forwards it. On the dev
// server, whose one SQLite connection is the bottleneck, that cost is the
// cost of steward (the issue 7 benchmark counted 48 history events and 6.7
// workflow tasks per rollout restart, against 6 and 1 for a raw activity).
// So, from changeLeanReports on:
//
//   - A worker does not publish (report or upsert its search attributes) a
//     state it is in only while an action runs (starting, stopping,
//     restarting) unless the action is still running after publishDelay: most
//     actions end sooner, and then only the state they end in is published.
//     What a supervisor acts on is reported at once (urgentChange): a new
//     termination, an acknowledged supervise request, a new generation, a
//     change of desired state or of awaiting a restart.
//   - A supervisor reports a change of its own status at once, and a change
//     only in its subtree (a child's state, the "n/m at desired" reason) at
//     most once per publishDelay: a rollout of ten children reaches the root
//     as one report, not twenty.
//   - A worker keeps its observe timer through an action instead of
//     cancelling and re-arming it around each one.
//
// From version 2 of the change, a run does not upsert its search attributes
// at its start when they already hold what it would set (the supervisor
// sets them when it starts the child; continue-as-new carries them over).
//
// The price: an ancestor's view of its subtree (its status query, `starter
// status` of an ancestor, `apply --wait`) lags the children's own status by
// up to publishDelay per level. A worker's own query is never late.
const changeLeanReports = "lean-reports"

// publishDelay is how long a worker's transient state, or a supervisor's
// subtree-only change, waits before it is published.
const publishDelay = time.Second

// Versions of changeLeanReports.
const (
	// leanReportsV1: the deferred and coalesced publications.
	leanReportsV1 workflow.Version = 1
	// leanReportsV2: no upsert at a run's start of what is already set.
	leanReportsV2 workflow.Version = 2
)

// leanReportsVersion is this run's version of the lean reports (a run
// recorded before them replays with workflow.DefaultVersion). GetVersion
// itself costs a marker and an upsert of TemporalChangeVersion per run.
func leanReportsVersion(ctx workflow.Context) workflow.Version {
	return workflow.GetVersion(ctx, changeLeanReports, workflow.DefaultVersion, leanReportsV2)
}

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

// urgentChange reports whether a child's new status b differs from its last
// report a in something its supervisor acts on.
func urgentChange(a, b Status) bool {
	return a.Terminations != b.Terminations || a.SuperviseSeq != b.SuperviseSeq || a.Generation != b.Generation ||
		a.Desired != b.Desired || a.AwaitingRestart != b.AwaitingRestart || a.Completed != b.Completed
}

// sameOwnStatus reports whether two statuses of a supervisor agree on
// everything but its subtree (children and the reason that counts them).
func sameOwnStatus(a, b Status) bool {
	return a.State == b.State && a.Desired == b.Desired && a.Generation == b.Generation &&
		a.Restarts == b.Restarts && a.ManualRestarts == b.ManualRestarts && a.Terminations == b.Terminations &&
		a.SuperviseSeq == b.SuperviseSeq && a.AwaitingRestart == b.AwaitingRestart && a.Completed == b.Completed &&
		a.BackoffUntil.Equal(b.BackoffUntil) && a.Strategy == b.Strategy && a.RecentRestarts == b.RecentRestarts &&
		a.RejectedSignals == b.RejectedSignals
}
