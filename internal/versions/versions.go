// Package versions holds the version tables of steward's workflow code:
// every behaviour of a workflow type's code that changed since the
// versions began, as a named feature with the version that introduced it.
// Code asks `versions.SupUpdates.In(run's version)`, never a number; the
// comment of each feature is the changelog (workflows/upgrade.go says how
// versions work and how a run moves onto the newest). A type's newest
// version is the highest of its table (versions_test.go holds them to it).
//
// Version 0 is a run begun by code older than the versions: it takes every
// old branch, and the ad-hoc markers of that code are asked in it only.
package versions

// Feature is a behaviour of a workflow type's code from version Since on.
type Feature struct {
	Name     string
	Workflow string
	Since    int
}

// In says whether a run of version v has the feature.
func (f Feature) In(v int) bool { return v >= f.Since }

// The workflow types, and the newest version of each: its table's
// highest (versions_test.go holds them to it).
const (
	typeSupervisor = "SupervisorWorkflow"
	typeWorker     = "WorkerWorkflow"
	typeRollout    = "RolloutWorkflow"
	typeHost       = "HostWorkflow"
	typeRevisions  = "RevisionsWorkflow"
	typeJob        = "JobWorkflow"

	Supervisor = 14
	Worker     = 9
	Rollout    = 3
	Host       = 3
	Revisions  = 2
	Job        = 5
)

// SupervisorWorkflow's versions.
var (
	// 1: the first versioned code: the marker of version 0 folded in (a
	// closed child supervisor's spec is read back: closedcheck.go), and
	// StewardBuild recorded.
	SupVersioned = Feature{"supervisor.versioned", typeSupervisor, 1}
	// 2: a child's digest covers its signature (version 1 leaves it out,
	// as the code before signatures did).
	SupDigestSignature = Feature{"supervisor.digest-signature", typeSupervisor, 2}
	// 2: an apply sends its spec again to a child that reports a newer
	// generation than its supervisor sent (a spec sent around the
	// supervisor); version 1 sends it to changed children only.
	SupResendNewer = Feature{"supervisor.resend-newer", typeSupervisor, 2}
	// 3: rolling updates (update.go). A child's lifecycle is one field of
	// its record in place of seven booleans (the carry's format: a carry of
	// version 2 or older is read by its booleans, ChildRecord.UnmarshalJSON).
	SupUpdates = Feature{"supervisor.updates", typeSupervisor, 3}
	// 4: a root handed an apply's request tells the tree's revisions which
	// revision it became (SignalTaken); version 3 leaves it pending.
	SupTellsRevisions = Feature{"supervisor.tells-revisions", typeSupervisor, 4}
	// 4: its report carries its update's state, not its progress.
	SupReportsUpdateState = Feature{"supervisor.reports-update-state", typeSupervisor, 4}
	// 4: a rolling update fails on a host's refusal of a target's start or
	// restart (version 3 counted the old instance, running on, as updated).
	SupRefusalFailsUpdate = Feature{"supervisor.refusal-fails-update", typeSupervisor, 4}
	// 4: a revert sends each target a generation past the one the update
	// sent it.
	SupRevertPastSent = Feature{"supervisor.revert-past-sent", typeSupervisor, 4}
	// 4: a child applying its spec is not up for the dependency order.
	SupApplyingNotUp = Feature{"supervisor.applying-not-up", typeSupervisor, 4}
	// 4: subscribes to the hosts its workers run on and takes their `host`
	// signal: moves off lost and draining hosts (fleet.go); version 3 drops
	// the signal as unknown.
	SupFleet = Feature{"supervisor.fleet", typeSupervisor, 4}
	// 5: the spec signals one task decides leave together from a local
	// activity (handout.go); version 4 sends each as a command.
	SupHandOut = Feature{"supervisor.hand-out", typeSupervisor, 5}
	// 6: children start through the start window (startwindow.go);
	// version 5 starts every child in its first task.
	SupStartWindow = Feature{"supervisor.start-window", typeSupervisor, 6}
	// 7: a child supervisor holds its slot of the start window until its
	// subtree has started; version 6 frees it at its first report.
	SupSubtreeHold = Feature{"supervisor.subtree-hold", typeSupervisor, 7}
	// 7: the wake timer is kept when the wake moves later (armWake);
	// version 6 starts another.
	SupKeepWakeTimer = Feature{"supervisor.keep-wake-timer", typeSupervisor, 7}
	// 8: the children a task starts go in batches of at most
	// startBatchBytes, each awaited; version 7 sends them in one task.
	SupStartBatches = Feature{"supervisor.start-batches", typeSupervisor, 8}
	// 9: a child with a job block is a job (JobWorkflow, job.go);
	// version 8 refuses a spec with one (it would run it as a service).
	SupJobs = Feature{"supervisor.jobs", typeSupervisor, 9}
	// 10: a worker whose host is lost moves at once while an update runs,
	// and counts for the update once it runs its new spec on its new host
	// (supervise.Update.Moved); version 9 holds every move until the
	// update ends, so a target on a lost host stayed unknown until the
	// update's healthyDeadline failed it (TestFault_HostFrozenDuringAnUpdate).
	SupMoveLostInUpdate = Feature{"supervisor.move-lost-in-update", typeSupervisor, 10}
	// 10: a subscription to a host is numbered past the time it is sent
	// (in ns), not from 1 (version 9): a host keeps the highest number a
	// supervisor's path sent, and a tree deleted and applied again under
	// its name numbered from 1 again, below its first life's last, so its
	// hosts ignored it (a drain found them drained with its services on
	// them; found by the fault tests run twice, TestFault_WorkerKilledDuringADrain).
	SupHostSeqByTime = Feature{"supervisor.host-seq-by-time", typeSupervisor, 10}
	// 11: its reports to its parent are numbered past the time they are
	// sent (in ns), and a child's report numbered past its own time (more
	// than supervise.SeqSkew ahead) is refused: a report sent by hand with
	// a huge number held the child's record against every real report
	// after it (each taken only if newer), so the supervisor never heard
	// of the child again. Once a child's run is known, a report must name
	// it, and an end report is taken only during the supervisor's own
	// shutdown: a forged end report made a live child's record ended for
	// good. Its supervise requests are numbered by time too, and a request
	// from its parent numbered past its time is carried out but not
	// acknowledged (a forged huge number counted every later request as
	// answered at once). A root counts its revisions itself: one sent to it (MaxInt64,
	// by hand) wrapped its count. Version 10 numbers from 1 and takes any
	// of them.
	SupReportSeqBounded = Feature{"supervisor.report-seq-bounded", typeSupervisor, 11}
	// 12: a spec's generation and a child's reported one are refused past
	// spec.MaxGeneration (2^53): one sent by hand near 2^63 wrapped the
	// generation a supervisor sends a child (the one past its report's).
	// Version 11 takes any.
	SupGenerationBounded = Feature{"supervisor.generation-bounded", typeSupervisor, 12}
	// 12: at most workflows.MaxPendingNotifications notifications are
	// retried at once, the oldest cancelled past it; version 11 retried
	// any number, up to Temporal's limit of pending activities, which then
	// failed its task for good (a node that flapped while its receiver was
	// down; or job runs and exits sent by hand).
	SupNotifyBounded = Feature{"supervisor.notify-bounded", typeSupervisor, 12}
	// 12: a spec its hand-out sends again by signal (its local activity
	// failed) is marked resent: a worker of version 8 drops it when it is
	// older than its own (WorkerSignalSpecOrder). Version 11 does not mark it.
	SupMarksResent = Feature{"supervisor.marks-resent", typeSupervisor, 12}
	// 13: a continue-as-new carries a deferred worker's node once, in the
	// spec (supervise.LeanCarry), and the next run puts it back in its
	// record (supervise.RestoreNodes). Up to 12 each deferred child's
	// record held its node beside the spec's copy: a level of a thousand
	// workers waiting on one dependency carried past the 2 MiB a
	// continue-as-new may, and the server ended the supervisor. A run of
	// 12 carried on by 13 reads its whole records as they are.
	SupLeanCarry = Feature{"supervisor.lean-carry", typeSupervisor, 13}
	// 13: a host's note is taken only for a host the supervisor has
	// subscribed to (one its workers run on or may move to). Up to 12 any
	// host's was: a thousand notes of made-up hosts filled its table of
	// host states (1,024), and from then on it refused every real host it
	// had not heard from yet, for good (attack review).
	SupHostNotesSubscribed = Feature{"supervisor.host-notes-subscribed", typeSupervisor, 13}
	// 13: a host is lost from when the supervisor learned it (its first
	// note saying unknown), not from the time a note says: a note sent by
	// hand saying a host was unknown since 2000 moved its workers off it
	// at once, whatever their reschedule.after (attack review). Notes come
	// within a moment of the change, so a real loss moves as before; a
	// supervisor that subscribes to a host lost long ago waits after once.
	SupHostLostAsLearned = Feature{"supervisor.host-lost-as-learned", typeSupervisor, 13}
	// 13: a child's report counts at most spec.MaxIntensityRestarts+1
	// terminations, whatever the intensity's maxRestarts (a first input,
	// or a spec taken before the limits, may name any): a report forged
	// with a count near 2^62 beside such a maxRestarts appended that many
	// restart times in one task (attack review). Up to 12 a count past
	// maxRestarts+1 is cut to it, which decides the same.
	SupTerminationsBounded = Feature{"supervisor.terminations-bounded", typeSupervisor, 13}
	// 13: a continue-as-new whose input is past what the server takes even
	// trimmed (workflows' fitCarry) is not made: the run goes on and tries
	// again at its next event. Up to 12 it was made, and the server ended
	// the supervisor (a rolling update's previous nodes of a large level).
	SupCarryFits = Feature{"supervisor.carry-fits", typeSupervisor, 13}
	// 14: a host the supervisor no longer subscribes to (no worker of its
	// spec runs on it or may move to it: taken out of every hosts list) is
	// forgotten: its state, and the workers' notes to leave it. Up to 13
	// every host it ever heard from was kept, and past 1,024 (a fleet whose
	// hosts are named by instance ID, replaced now and then) it refused
	// every new host's note: their losses moved no worker (review of what
	// grows over months).
	SupForgetsUnsubscribedHosts = Feature{"supervisor.forgets-unsubscribed-hosts", typeSupervisor, 14}
	// 14: a revert's targets, and those an update that ended never sent
	// their new node, keep their previous node as their node in the spec
	// (supervise.KeepPrevious). Up to 13 the spec kept the new node: after
	// an update reverted, the next update took the reverted (bad) node for
	// what its targets ran, and when that update failed too (a deadline
	// missed while the supervisor's worker was down), its revert put the
	// bad node on them: a crash loop no update ended (found by the soak).
	// A closed child started again after a revert got the bad node too.
	SupRevertToWhatRuns = Feature{"supervisor.revert-to-what-runs", typeSupervisor, 14}
)

// WorkerWorkflow's versions.
var (
	// 1: the first versioned code: the markers of version 0 folded in (a
	// rollout restart satisfied by a start, an exit while unknown, a report
	// after a failed action), and StewardBuild recorded.
	WorkerVersioned = Feature{"worker.versioned", typeWorker, 1}
	// 2: a host's refusal of an action is tick.Refused (a running instance
	// runs on), and the next spec after a refusal is applied by a restart;
	// version 1 fails permanently.
	WorkerRefused = Feature{"worker.refused", typeWorker, 2}
	// 3: the reload signal and action (`starter reload`); version 2 drops
	// the signal as unknown.
	WorkerReload = Feature{"worker.reload", typeWorker, 3}
	// 4: a spec that restarts the service cancels a start or restart in
	// flight; version 3 lets it finish first.
	WorkerSpecCancelsAction = Feature{"worker.spec-cancels-action", typeWorker, 4}
	// 5: an action's success report takes the number after the next, so
	// it is not dropped as stale; a new generation alone is not reported
	// while an action runs; reports carry the host and stale copies.
	WorkerReportOrder = Feature{"worker.report-order", typeWorker, 5}
	// 5: a move to another host (worker_move.go): the instance is stopped
	// on its old host, or left as a stale copy; version 4 restarted it on
	// the new host's queue.
	WorkerMoves = Feature{"worker.moves", typeWorker, 5}
	// 6: takes its spec by the `spec` Update too; version 5 refuses it.
	WorkerSpecUpdate = Feature{"worker.spec-update", typeWorker, 6}
	// 7: its reports are numbered past the time they are made (in ns; its
	// supervisor refuses one numbered past its own time:
	// SupReportSeqBounded); version 6 numbers from 1.
	WorkerReportSeqByTime = Feature{"worker.report-seq-by-time", typeWorker, 7}
	// 8: a worker that goes unknown probes its host within
	// tick.UnknownProbeEvery (the observe timer of its running state is
	// re-armed shorter); version 7 probes at its observe interval, an hour
	// for some services (found by the PostgreSQL soak: two workers stayed
	// unknown for ten minutes, their host up all along).
	WorkerUnknownProbe = Feature{"worker.unknown-probe", typeWorker, 8}
	// 8: a spec whose generation is past spec.MaxGeneration (2^53) is
	// refused (SupGenerationBounded); version 7 takes any.
	WorkerGenerationBounded = Feature{"worker.generation-bounded", typeWorker, 8}
	// 8: its notifications are bounded as a supervisor's (SupNotifyBounded).
	WorkerNotifyBounded = Feature{"worker.notify-bounded", typeWorker, 8}
	// 8: a spec signal marked resent (SupMarksResent) older than the
	// worker's generation is dropped, as an older spec Update is (version
	// 6 on); version 7 applied it. A
	// hand-out whose local activity failed under load sends its specs again
	// by signal, which came after the next hand-out's newer Update: the
	// worker went back to the older spec (a move undone) and its
	// supervisor counted it applying for good (found by the PostgreSQL soak).
	WorkerSignalSpecOrder = Feature{"worker.signal-spec-order", typeWorker, 8}
	// 9: a worker with move: stopFirst takes a spec's lost (the host its
	// supervisor found lost) only while it finds that host unknown itself;
	// else its move stops the old copy first, as off a host that is up (a
	// stop that does not get through leaves it stale, and the start goes).
	// Version 8 took any sender's word: a spec sent by hand naming the
	// current host lost started the service on its new host beside its
	// running process (attack review).
	WorkerLostStopFirst = Feature{"worker.lost-stop-first", typeWorker, 9}
)

// RolloutWorkflow's versions.
var (
	// 1: the first versioned code (StewardBuild recorded).
	RolloutVersioned = Feature{"rollout.versioned", typeRollout, 1}
	// 2: the reload op; version 1 refuses it as an unknown op.
	RolloutReload = Feature{"rollout.reload", typeRollout, 2}
	// 3: a chunk is at most rolloutcore.MaxChunk targets (a larger one
	// asked is cut to it). Version 2 took any: a rollout started by hand
	// with a chunk of 100,000 made one activity open as many goroutines
	// and Update calls at once (attack review).
	RolloutChunkBounded = Feature{"rollout.chunk-bounded", typeRollout, 3}
)

// HostWorkflow's versions.
var (
	// 1: the first versioned code: a run's input names its version
	// (HostInput.Version), checked at start and written at every
	// continue-as-new; version 0 runs the same code.
	HostVersioned = Feature{"host.versioned", typeHost, 1}
	// 2: a subscription numbered past the host's time (more than
	// hostcore.SeqSkew ahead) is refused: numbered by time since
	// supervisor version 10, a real one never is, and one sent by hand
	// with a huge number held its supervisor's entry against every later
	// real one (the host's newest is kept); an entry carried from version 1
	// numbered so has its number cleared. Version 1 takes any number.
	HostSeqBounded = Feature{"host.seq-bounded", typeHost, 2}
	// 3: a subscriber has at most one note in flight: a change while one
	// is sent is told (the state then) once it is delivered; and the
	// subscriptions' pinned lists are bounded in total (hostcore.MaxPinnedBytes).
	// Version 2 told every change to every subscriber at once: with a
	// thousand subscribers (started by hand) a few drain toggles in one
	// task passed Temporal's 2,000 pending signals, which failed its task
	// for good; and six subscriptions of long pinned lists passed the 2 MiB
	// a continue-as-new carries.
	HostNotesBounded = Feature{"host.notes-bounded", typeHost, 3}
)

// RevisionsWorkflow's versions.
var (
	// 1: the first versioned code: a run's input names its version
	// (RevisionsInput.Version), checked at start and written at every
	// continue-as-new; version 0 runs the same code.
	RevisionsVersioned = Feature{"revisions.versioned", typeRevisions, 1}
	// 2: a record whose spec is not gzip is refused, and so is every record
	// once the run's history holds MaxRevisionsRunBytes: twenty forged
	// records of 1.5 MiB in one run (each in its signal and its holder's
	// input) grew its history past the server's limit, and the server
	// terminated it with the tree's log. Version 1 took them.
	RevisionsBounded = Feature{"revisions.bounded", typeRevisions, 2}
)

// JobWorkflow's versions.
var (
	// 1: the first code of jobs: a run's input names its version
	// (JobInput.Version), checked at start and written at every
	// continue-as-new.
	JobVersioned = Feature{"job.versioned", typeJob, 1}
	// 2: its runs (JobRunInput.Version) run to their end in one activity
	// (RunJob: the process's end is its result, not a signal) and keep
	// their outcome in their result alone (no memo); its schedule is put
	// again after the continue-as-new that brings a job to it, so that
	// its runs say so. Version 1's runs start in one activity, await the
	// exit signal and upsert a memo.
	JobRunsAwait = Feature{"job.runs-await", typeJob, 2}
	// 3: its reports are numbered past the time they are made (in ns), as
	// a worker's (WorkerReportSeqByTime); version 2 numbers from 1.
	JobReportSeqByTime = Feature{"job.report-seq-by-time", typeJob, 3}
	// 3: a once job runs for a generation above the one it last ran for,
	// or below it once its spec changed (version 2: above it only): a spec
	// sent by hand with a huge generation ran once and left the job
	// "completed" for every real generation after it, which were all
	// below.
	JobOnceExact = Feature{"job.once-exact", typeJob, 3}
	// 4: its notifications are bounded as a supervisor's (SupNotifyBounded).
	JobNotifyBounded = Feature{"job.notify-bounded", typeJob, 4}
	// 4: a spec's generation is held to the bounds a worker's is
	// (WorkerGenerationBounded); version 3 takes any, and a job sent one
	// near 2^63 had its reports refused by supervisors of version 12.
	JobGenerationBounded = Feature{"job.generation-bounded", typeJob, 4}
	// 5: a once job's run (PATH/run-gN, its child) counts by its child's
	// result alone: a jobRun signal naming one is dropped. Version 4 took
	// the first end told and dropped the rest, so a "succeeded" forged
	// before a once run ended made its failure count as success, and the
	// job's dependants started (attack review).
	JobOnceRunByResult = Feature{"job.once-run-by-result", typeJob, 5}
)

// All lists every table, for the tests that hold them together.
var All = []Feature{
	SupVersioned, SupDigestSignature, SupResendNewer, SupUpdates, SupTellsRevisions, SupReportsUpdateState,
	SupRefusalFailsUpdate, SupRevertPastSent, SupApplyingNotUp, SupFleet, SupHandOut, SupStartWindow,
	SupSubtreeHold, SupKeepWakeTimer, SupStartBatches, SupJobs, SupMoveLostInUpdate, SupHostSeqByTime, SupReportSeqBounded, SupGenerationBounded, SupNotifyBounded, SupMarksResent, SupLeanCarry, SupHostNotesSubscribed, SupHostLostAsLearned, SupTerminationsBounded, SupCarryFits, SupForgetsUnsubscribedHosts, SupRevertToWhatRuns,
	WorkerVersioned, WorkerRefused, WorkerReload, WorkerSpecCancelsAction, WorkerReportOrder, WorkerMoves, WorkerSpecUpdate, WorkerReportSeqByTime, WorkerUnknownProbe, WorkerGenerationBounded, WorkerNotifyBounded, WorkerSignalSpecOrder, WorkerLostStopFirst,
	RolloutVersioned, RolloutReload, RolloutChunkBounded,
	HostVersioned, HostSeqBounded, HostNotesBounded,
	RevisionsVersioned, RevisionsBounded,
	JobVersioned, JobRunsAwait, JobReportSeqByTime, JobOnceExact, JobNotifyBounded, JobGenerationBounded, JobOnceRunByResult,
}
