package workflows

import (
	"fmt"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/steward-sh/steward/internal/buildinfo"
	"github.com/steward-sh/steward/internal/versions"
)

// Versions of the workflow code, one per workflow type, and how a running
// tree moves from one to the next.
//
// A run's version is in its input (SupervisorInput.Version and the like),
// set by whatever starts it: the starter for a root or a rollout, a
// supervisor for its children, and every continue-as-new, which always
// writes the version of the code that runs it. A run keeps its version for
// its whole life, so the code that replays its history takes the branches
// that wrote it: a change of behaviour is a feature of its type's version
// table (internal/versions), asked as
//
//	if versions.SupUpdates.In(s.in.Version) { new } else { old }
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
// The versions: the tables of internal/versions, a feature per change,
// each with its version and what the version before did instead.
//
// Not a version: the input limits, asked behind the marker
// "steward-limits" in runs of every version (limits.go).
const (
	SupervisorVersion = versions.Supervisor
	WorkerVersion     = versions.Worker
	RolloutVersion    = versions.Rollout
	HostVersion       = versions.Host
	RevisionsVersion  = versions.Revisions
	JobVersion        = versions.Job
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
// changes: with StewardBuild in a versioned run (the type's first version
// on: internal/versions). The build rides on
// upserts the run makes anyway (their content is not held against the
// history on replay): a first run records it without an event of its own.
func stateAttributes(versioned bool, path, kind, state string) []temporal.SearchAttributeUpdate {
	sas := []temporal.SearchAttributeUpdate{SearchPath.ValueSet(path), SearchKind.ValueSet(kind), SearchState.ValueSet(state)}
	if versioned {
		sas = append(sas, SearchBuild.ValueSet(buildinfo.ID()))
	}
	return sas
}

// recordBuild upserts StewardBuild at the start of a run carried over
// continue-as-new into a versioned run: it carries the search attributes of
// the run before (of an older build, or none), and its state may not change
// for hours. A worker of a release before the versions (5b9cb0e) ignores
// the version in the input and may run the first task of such a run while
// the workers are being replaced; its history has no such upsert. So the
// upsert is behind a marker ("steward-build"), which the SDK does not hold
// against a history without it: replaying that history, the marker is
// absent and the upsert is not made again. Two events a continue-as-new.
func recordBuild(ctx workflow.Context, versioned bool, carried bool) {
	if !versioned || !carried || workflow.GetVersion(ctx, "steward-build", workflow.DefaultVersion, 1) != 1 {
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
