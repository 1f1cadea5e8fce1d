// Package workflows holds steward's workflow code, deterministic only:
//
//   - WorkerWorkflow (worker*.go): one supervised service; its decisions
//     come from the pure tick (internal/tick), its actions run as
//     activities on the pool's or its host's queue (package activities).
//   - SupervisorWorkflow (supervisor*.go): a node with children, as child
//     workflows; its decisions come from internal/supervise. Beside it:
//     strategy.go (restart plans and intensity), startwindow.go (children
//     started a window at a time), handout.go (specs handed out by a local
//     activity), dependencies.go (dependsOn), update.go (rolling updates),
//     fleet.go (instances over hosts, moves), closedcheck.go (children
//     closed behind its back), publish.go (what a report costs), notify.go.
//   - RolloutWorkflow (rollout.go): restart, stop, start or reload a
//     subtree a chunk at a time.
//   - HostWorkflow (host.go): a host's liveness lease, drain, and the
//     supervisors with workers on it.
//   - RevisionsWorkflow and RevisionSpecWorkflow (revisions.go): a tree's
//     applied revisions; LogsWorkflow and ServicesWorkflow (logs.go):
//     reads on a host for the starter.
//
// internal/versions holds each type's version table, upgrade.go how a run
// moves to the newest (`starter upgrade`); limits.go the input limits
// every handler holds a spec to; names.go the queues and workflow IDs.
package workflows

import (
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/steward-sh/steward/activities"
)

// TaskQueue is the shared task queue: worker processes poll it for workflow
// tasks and, as the global action pool, for actions.
const TaskQueue = "steward"

// ControlQueue is the task queue of the control-plane activities (a
// rollout's chunks, a supervisor's look at its children): every worker
// process serves it with slots of its own, so a chunk waiting for its
// targets' actions never holds a slot of the action pool.
const ControlQueue = TaskQueue + "-control"

// HostTaskQueue is the task queue of actions that must run on one host (a
// local process): the worker started with --host NAME serves it.
func HostTaskQueue(host string) string { return TaskQueue + "-host-" + host }

// Signal and query names (the contract of docs/contract.md; usable from the
// `temporal` CLI).
const (
	// SignalDesired: payload "running" or "stopped".
	SignalDesired = "desired"
	// SignalRestart: no payload.
	SignalRestart = "restart"
	// SignalReload: no payload; a worker with process.reload or
	// http.reload asks its running service to re-read its configuration
	// (worker code version 3 on; older runs drop it as unknown).
	SignalReload = "reload"
	// SignalSpec: payload spec.Update ({"generation": N, "spec": {...}}) or a
	// bare spec node.
	SignalSpec = "spec"
	// SignalExit: a driver reports that an instance ended (payload tick.Exit).
	SignalExit = "exit"
	// SignalSlow: an action's activity is still running after publishDelay
	// (payload: the action's seq); the worker publishes its transient state.
	SignalSlow = "slow"
	// SignalChild: a child reports its status to its supervisor (ChildReport).
	SignalChild = "child"
	// SignalSupervise: a supervisor stops or restarts a child as part of its
	// strategy (SuperviseRequest). Internal: operators use desired/restart.
	SignalSupervise = "supervise"
	// SignalUpdate: payload "promote", "pause", "resume" or "cancel": the
	// operator's hand on a supervisor's rolling update (supervisor code
	// version 3 on; older runs drop it as unknown).
	SignalUpdate = "update"
	// QueryStatus answers Status as JSON.
	QueryStatus = "status"
	// QuerySpec answers the node's spec as the workflow holds it (as
	// written, templates unrendered): a supervisor its own level (its
	// children without their subtrees), a worker its node. `starter apply
	// --dry-run` assembles the running tree from it.
	QuerySpec = activities.QuerySpec
	// QueryHistory answers a node's journal: its last JournalLimit state
	// transitions, oldest first (`starter history`); a supervisor's are of
	// its own state.
	QueryHistory = "history"
	// QueryStatusDigest answers a supervisor's treestatus.Digest of its
	// status answer: a watch (`starter console`) asks it every second and
	// the status only when it changed.
	QueryStatusDigest = "statusDigest"
)

// Custom search attributes, upserted on change.
var (
	SearchPath  = temporal.NewSearchAttributeKeyKeyword("StewardPath")
	SearchKind  = temporal.NewSearchAttributeKeyKeyword("StewardKind")
	SearchState = temporal.NewSearchAttributeKeyKeyword("StewardState")
)

// SearchAttributeNames lists the custom search attributes steward needs
// registered (all Keyword).
var SearchAttributeNames = []string{"StewardPath", "StewardKind", "StewardState", "StewardBuild"}

// DefaultHistoryLimit is the history length at which a workflow continues as
// new even before the server suggests it (the server suggests at 4,096
// events): a short history keeps replays cheap.
const DefaultHistoryLimit = 2000

// continueAsNewDue reports whether a workflow should continue as new: the
// server suggests it, or its history reached limit events (0: the default).
func continueAsNewDue(ctx workflow.Context, limit int) bool {
	if limit <= 0 {
		limit = DefaultHistoryLimit
	}
	info := workflow.GetInfo(ctx)
	return info.GetContinueAsNewSuggested() || info.GetCurrentHistoryLength() >= limit
}
