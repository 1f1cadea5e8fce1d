package workflows

import (
	"fmt"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/steward-sh/steward/internal/buildinfo"
)

// Versions of the workflow code, one per workflow type, and how a running
// tree moves from one to the next.
//
// A run's version is in its input (SupervisorInput.Version and the like),
// set by whatever starts it: the starter for a root or a rollout, a
// supervisor for its children, and every continue-as-new, which always
// writes the version of the code that runs it. A run keeps its version for
// its whole life, so the code that replays its history takes the branches
// that wrote it: a change of behaviour is written as
//
//	if s.in.Version >= 3 { new } else { old }
//
// (version 0 is a run begun by code older than this scheme: the ad-hoc
// workflow.GetVersion markers of that code are still asked in version-0
// runs only). The input costs no history event, unlike a marker.
//
// A run moves to the newest version at its next continue-as-new: on its
// own (history length), or sooner when asked by the `upgrade` signal
// (`starter upgrade`), at its next safe point (no action in flight, every
// handler finished, signals drained). Children keep running across it; no
// service is restarted.
//
// Policy: a change adds a version and a branch; an old branch is removed
// one release after `starter upgrade` has shown no workflow on a build
// older than the one that introduced its successor. Every old branch is
// exercised by a test (a run with the old version in its input).
//
// The versions:
//
//	supervisor 1, worker 1, rollout 1: the first versioned code (the four
//	  markers of version 0 folded in; StewardBuild recorded).
//	worker 2: a host's refusal of an action (activities.ErrRefused: its
//	  command policy or a signature it requires) is tick.Refused, which
//	  leaves a running instance running and is announced as `refused`,
//	  and the next spec after a refusal is applied by a restart; in
//	  version 1 a refusal is a permanent failure.
//	worker 3: the reload signal (`starter reload`): a reload action of
//	  the running service (tick.Reload, counted in status.reloads); a
//	  version-2 run drops the signal as unknown, as its code did.
//	worker 4: a spec that restarts the service cancels a start or restart
//	  in flight, and the service starts with the new spec (a rolling
//	  update's revert of a worker whose bad start waits for its ready
//	  probe); version 3 lets the action finish first.
//	worker 5: an action's success report, which its activity sends, takes
//	  the report number after the next, and the report of the transient
//	  state sent in the same task the one left free, so the success is not
//	  dropped as stale (worker_status.go, "Report numbers"); version 4
//	  numbers them in the order made, and reports the success again from
//	  its next task. A new generation alone is not reported while an
//	  action runs (urgentDuringAction): the action's end reports it.
//	rollout 2: the reload op (`starter rollout reload`); version 1 refuses
//	  it as an unknown op.
//	supervisor 2: a child's digest covers its signature (version 1
//	  leaves it out, as the code before signatures did); an apply sends its spec again to a child that reports a
//	  newer generation than its supervisor sent (a spec sent around the
//	  supervisor, with the temporal CLI); in version 1 only changed
//	  children get the spec.
//	supervisor 3: a child's lifecycle is one field of its record
//	  (ChildRecord.Lifecycle, supervise.Lifecycle) in place of seven
//	  booleans. Decisions are unchanged; the version marks the carried
//	  state's format, so that a worker of an older build refuses a run
//	  whose carry it would misread. A carry of version 2 or older is read
//	  by its booleans (ChildRecord.UnmarshalJSON).
//	supervisor 4: a root handed an apply's request (spec.Update.Request,
//	  SupervisorInput.Request) tells the tree's revisions which revision
//	  it became (SignalTaken to RevisionsID); version 3 ignores the
//	  request, and its tree's revisions keep the record pending. Its
//	  report to its parent carries its update's state, not its progress
//	  (updated, total, in flight): version 3 reported every worker updated.
//	  Its rolling update fails on a host's refusal of a target's start or
//	  restart (version 3 counted the old instance, running on, as
//	  updated), and a revert sends each target a generation past the one
//	  the update sent it (a late success of the bad spec is not taken for
//	  the revert's). A child applying its spec is not up for the
//	  dependency order (dependsOn). It subscribes to the hosts its
//	  workers run on and takes their `host` signal: it moves workers off
//	  a host lost past their reschedule.after, and off a draining one
//	  under its update policy (fleet.go); version 3 drops the signal as
//	  unknown and subscribes to nothing.
//	supervisor 5: the spec signals one task decides leave together from
//	  a local activity (activities.HandOut, handout.go), which adds no
//	  workflow task when they are delivered; version 4 sends each as a
//	  SignalExternalWorkflow command, whose delivery is a task of its own.
//	worker 5 also carries out a move to another host (worker_move.go):
//	  the instance is stopped on its old host, or left there as a stale
//	  copy stopped once that host is back; version 4 restarted it on the
//	  new host's queue.
//	supervisor 6: starts its children through the start window
//	  (startwindow.go, internal/supervise's window.go): at most
//	  supervise.StartWindow at once, each until its first report; the
//	  others wait as deferred, and those the window lets go in one
//	  release start in one batch. Version 5 starts every child in its
//	  first task (and every child of an apply's additions at once), and
//	  the deferred children a release lets go one after the other.
//	worker 6: takes its spec by the `spec` Update too
//	  (worker_spec_update.go), and a supervisor's hand-out uses it once
//	  the worker's report says version 6; version 5 refuses the Update as
//	  unknown and gets its spec by signal.
//	supervisor 7: a child supervisor holds its slot of the start window
//	  until its whole subtree has started (its record's SubtreeStarted),
//	  for supervise.SubtreeHold at most, and its own record says when its
//	  subtree has (startwindow.go); version 6 frees a child supervisor's
//	  slot at its first report and never says it. Its wake timer is kept
//	  when the wake moves later (armWake): version 6 cancels it and starts
//	  another with each worker a rolling update counts as updated.
//	supervisor 8: starts the children a task starts (the start window's
//	  release, a restart of closed children) in batches of at most
//	  startBatchBytes of their input, each awaited before the next is
//	  sent (startChildren); version 7 sends them in one task.
//
// Not a version: the input limits, asked behind the marker
// "steward-limits" in runs of every version (limits.go).
const (
	SupervisorVersion = 8
	WorkerVersion     = 6
	RolloutVersion    = 2
)

// SignalUpgrade asks a workflow to continue as new onto the code of the
// build that runs it, at its next safe point (no payload).
const SignalUpgrade = "upgrade"

// SearchBuild is the build (internal/buildinfo) of the worker that began a
// workflow's current run: `starter upgrade` counts the workflows by it.
var SearchBuild = temporal.NewSearchAttributeKeyKeyword("StewardBuild")

// checkVersion refuses, by failing the workflow task, a run of a version
// newer than this build knows: its history was written by newer code. The
// task is retried until a worker of a newer build takes it (during a
// rolling replacement of the worker processes, say).
func checkVersion(workflowType string, got, known int) {
	if got > known {
		panic(fmt.Sprintf("%s run of code version %d: this worker's build (%s) knows up to %d; run a newer worker", workflowType, got, buildinfo.ID(), known))
	}
}

// stateAttributes are the search attributes a run upserts when its state
// changes: with StewardBuild in a run of version >= 1. The build rides on
// upserts the run makes anyway (their content is not held against the
// history on replay): a first run records it without an event of its own.
func stateAttributes(version int, path, kind, state string) []temporal.SearchAttributeUpdate {
	sas := []temporal.SearchAttributeUpdate{SearchPath.ValueSet(path), SearchKind.ValueSet(kind), SearchState.ValueSet(state)}
	if version >= 1 {
		sas = append(sas, SearchBuild.ValueSet(buildinfo.ID()))
	}
	return sas
}

// recordBuild upserts StewardBuild at the start of a run carried over
// continue-as-new into version >= 1: it carries the search attributes of
// the run before (of an older build, or none), and its state may not change
// for hours. A worker of a release before the versions (5b9cb0e) ignores
// the version in the input and may run the first task of such a run while
// the workers are being replaced; its history has no such upsert. So the
// upsert is behind a marker ("steward-build"), which the SDK does not hold
// against a history without it: replaying that history, the marker is
// absent and the upsert is not made again. Two events a continue-as-new.
func recordBuild(ctx workflow.Context, version int, carried bool) {
	if version < 1 || !carried || workflow.GetVersion(ctx, "steward-build", workflow.DefaultVersion, 1) != 1 {
		return
	}
	_ = workflow.UpsertTypedSearchAttributes(ctx, SearchBuild.ValueSet(buildinfo.ID()))
}

// upgrade is a run's answer to the upgrade signal.
type upgrade struct {
	// asked: continue as new at the next safe point.
	asked bool
	// seen counts the upgrade signals this run received.
	seen int
}

// receive takes every upgrade signal waiting on ch. It returns how many it
// refused and whether it took one without honouring it: a wake-up that the
// older code which wrote this history did not have, after which the caller
// goes back to waiting, doing nothing else.
//
// Code older than the versions did not know the signal: it dropped it as
// unknown at its next wake-up, and the signal alone woke nothing. Each
// signal is honoured behind a marker of its own ("steward-upgrade-n", the
// n-th of the run): received live, the marker is recorded and the signal
// honoured; replaying a history older code wrote, the marker is absent and
// the signal is refused again, as it was. (A marker costs two events; an
// upgrade asks once.)
func (u *upgrade) receive(ctx workflow.Context, ch workflow.ReceiveChannel) (refused int, idle bool) {
	took := false
	for ch.ReceiveAsync(nil) {
		took = true
		u.seen++
		if workflow.GetVersion(ctx, fmt.Sprintf("steward-upgrade-%d", u.seen), workflow.DefaultVersion, 1) == 1 {
			u.asked = true
		} else {
			refused++
		}
	}
	return refused, took && !u.asked
}
