package workflows

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/steward-sh/steward/activities"
	"github.com/steward-sh/steward/internal/jobcore"
	"github.com/steward-sh/steward/internal/spec"
	"github.com/steward-sh/steward/internal/supervise"
	"github.com/steward-sh/steward/internal/treestatus"
	"github.com/steward-sh/steward/internal/versions"
)

// JobInput starts (or continues) a job's workflow.
type JobInput struct {
	Path       string    `json:"path"`
	Parent     string    `json:"parent,omitempty"`
	Spec       spec.Node `json:"spec"`
	Generation int64     `json:"generation"`
	// Version is the code version of this run (JobVersion).
	Version int       `json:"version,omitempty"`
	Carry   *JobCarry `json:"carry,omitempty"`
}

// JobCarry is what a job's workflow carries over continue-as-new: the
// job's record (jobcore.Record, its fields inline), and what only the
// workflow needs.
type JobCarry struct {
	jobcore.Record
	ReportSeq       int64 `json:"reportSeq,omitempty"`
	SuperviseSeq    int64 `json:"superviseSeq,omitempty"`
	RejectedSignals int   `json:"rejectedSignals,omitempty"`
	// NotifySeq numbers its notifications, and Notifications are those
	// not yet delivered (notify.go).
	NotifySeq     int64                         `json:"notifySeq,omitempty"`
	Notifications []activities.NotificationTask `json:"notifications,omitempty"`
	// Journal is its last JournalLimit transitions (the `history` query).
	Journal []JournalEntry `json:"journal,omitempty"`
}

// jobHistoryLimit is the history length past which a job's workflow
// continues as new (each run it hears of costs it a few events).
const jobHistoryLimit = 2000

// JobWorkflow is a job's node in the tree (spec.Job; docs/jobs.md): a child
// of its supervisor as a worker is, whose runs are workflows of their own
// (JobRunWorkflow).
//
// A periodic job owns one Temporal Schedule, whose ID is its path: put
// when the job starts and at every new spec (PutSchedule: created, or
// updated in place), paused while its desired state is stopped, deleted
// when the job is removed or its tree deleted (runs in progress go on to
// their end, their timeout at most). A once job has no schedule: it starts
// one run per generation of its spec as a child workflow (cancelled with
// it), and counts as completed once that run succeeded, which is what
// siblings that dependsOn it wait for.
//
// Each run tells its job how it ended (SignalJobRun): the job's status
// shows its last run and counts its runs and failures, and its state
// says how it is: running (scheduled, or a once job's run in progress:
// starting), failed (its last run did not succeed, or its schedule could
// not be put), stopped (desired stopped), and, for a once job whose run
// succeeded, stopped and completed. A failed run is not a crash: it never
// counts against its supervisor's intensity (Terminations stays 0).
//
// A supervisor's group stop or restart (one_for_all, rest_for_one) is
// acknowledged and changes nothing: a job is not a service of the group.
func JobWorkflow(ctx workflow.Context, in JobInput) error {
	if id := workflow.GetInfo(ctx).WorkflowExecution.ID; in.Path != id {
		// Its path names its Schedule (put, paused, deleted) and its runs:
		// one started by hand under another ID would act on another job's.
		// Whatever version its input says (its starter picks that, as a
		// host's: host.go): a supervisor starts every job at its path. Before
		// the version is looked at, as a host's.
		return temporal.NewNonRetryableApplicationError(fmt.Sprintf("invalid job input: path %.100q is not its workflow ID %.100q", in.Path, id), "InvalidSpec", nil)
	}
	checkVersion("JobWorkflow", in.Version, JobVersion)
	j := &jobRun{ctx: ctx, in: in, log: workflow.GetLogger(ctx)}
	if in.Carry != nil {
		j.carry = *in.Carry
		if n := supervise.NotAfter(versions.JobReportSeqByTime.In(in.Version), workflow.Now(ctx)); n != 0 && j.carry.SuperviseSeq > n {
			j.carry.SuperviseSeq = 0 // pinned by a forged request under a version before
		}
	} else {
		j.carry.Record = jobcore.New(in.Spec, workflow.Now(ctx))
	}
	j.core = jobcore.Job{Path: in.Path, Spec: in.Spec, Generation: in.Generation, Version: in.Version, Rec: &j.carry.Record,
		OnceExact: versions.JobOnceExact.In(in.Version), GenerationBounded: versions.JobGenerationBounded.In(in.Version),
		OnceByResult: versions.JobOnceRunByResult.In(in.Version)}
	if err := jobcore.Check(in.Path, in.Spec); err != nil {
		return temporal.NewNonRetryableApplicationError("invalid job spec:\n"+err.Error(), "InvalidSpec", nil)
	}
	if err := workflow.SetQueryHandler(ctx, QueryStatus, func() (Status, error) { return j.status(), nil }); err != nil {
		return err
	}
	if err := workflow.SetQueryHandler(ctx, QuerySpec, func() (spec.Node, error) { return j.core.Spec, nil }); err != nil {
		return err
	}
	if err := workflow.SetQueryHandler(ctx, QueryHistory, func() ([]JournalEntry, error) { return j.carry.Journal, nil }); err != nil {
		return err
	}
	specCh := workflow.GetSignalChannel(ctx, SignalSpec)
	desiredCh := workflow.GetSignalChannel(ctx, SignalDesired)
	runCh := workflow.GetSignalChannel(ctx, SignalJobRun)
	superviseCh := workflow.GetSignalChannel(ctx, SignalSupervise)
	upgradeCh := workflow.GetSignalChannel(ctx, SignalUpgrade)
	known := []string{SignalSpec, SignalDesired, SignalJobRun, SignalSupervise, SignalUpgrade}

	if versions.JobNotifyBounded.In(in.Version) {
		j.notes.limit = MaxPendingNotifications
	}
	j.notes.resend(ctx, j.carry.Notifications)
	j.carry.Notifications = nil
	j.sync()
	j.journal()
	j.report(false)
	j.gauges()
	upgrade := false
	for {
		sel := workflow.NewSelector(ctx)
		cancelled := false
		sel.AddReceive(ctx.Done(), func(workflow.ReceiveChannel, bool) { cancelled = true })
		sel.AddReceive(specCh, func(c workflow.ReceiveChannel, _ bool) { j.onSpec(receiveRaw(ctx, c)) })
		sel.AddReceive(desiredCh, func(c workflow.ReceiveChannel, _ bool) { j.onDesired(receiveRaw(ctx, c)) })
		sel.AddReceive(runCh, func(c workflow.ReceiveChannel, _ bool) { j.onRun(receiveRaw(ctx, c)) })
		sel.AddReceive(superviseCh, func(c workflow.ReceiveChannel, _ bool) { j.onSupervise(receiveRaw(ctx, c)) })
		sel.AddReceive(upgradeCh, func(c workflow.ReceiveChannel, _ bool) { receiveRaw(ctx, c); upgrade = true })
		if f := j.once; f != nil {
			sel.AddFuture(f, func(f workflow.Future) { j.onOnceEnded(f) })
		}
		if f := j.put; f != nil {
			sel.AddFuture(f, func(f workflow.Future) { j.onPut(f) })
		}
		j.notes.watch(ctx, j.log, sel)
		sel.Select(ctx)
		if cancelled {
			return j.shutdown()
		}
		j.carry.RejectedSignals += dropUnknownSignals(ctx, j.log, known...)
		j.sync()
		j.journal()
		j.report(false)
		j.gauges()
		if (upgrade || workflow.GetInfo(ctx).GetCurrentHistoryLength() > jobHistoryLimit) && j.once == nil && j.put == nil && !anyPending(specCh, desiredCh, runCh, superviseCh) {
			next := j.in
			next.Spec, next.Generation = j.core.Spec, j.core.Generation
			carry := j.carry
			carry.Notifications = j.notes.undelivered()
			next.Carry, next.Version = &carry, JobVersion
			return workflow.NewContinueAsNewError(ctx, JobWorkflow, next)
		}
	}
}

// jobRun is one run of a job's workflow.
type jobRun struct {
	ctx workflow.Context
	// in is the input this run began with (its path, parent and version;
	// the spec and generation now are core's).
	in    JobInput
	log   log.Logger
	carry JobCarry
	// core decides; its record is carry's.
	core jobcore.Job
	// put is the schedule's put (or delete) in flight.
	put workflow.Future
	// searched: this run has upserted its search attributes.
	searched bool
	// once is a once job's run in flight (its child's future).
	once workflow.Future
	// lastReported is the status last reported to the supervisor.
	lastReported *Status
	notes        notifier
}

// runInput is the input of the job's runs.
func (j *jobRun) runInput() JobRunInput {
	in := JobRunInput{Job: j.in.Path, Spec: j.core.Spec, Generation: j.core.Generation}
	if versions.JobRunsAwait.In(j.in.Version) {
		in.Version = j.in.Version
	}
	return in
}

// sync carries out what the core decides: a periodic job's schedule put
// when its spec or desired state changed since its last put (or deleted,
// for a periodic job made a once job), a once job's run started for a
// generation it has not run.
func (j *jobRun) sync() {
	// Puts and deletes run on a disconnected context: a job cancelled
	// meanwhile waits for them (shutdown), so a put never lands after its
	// schedule's delete.
	dctx, _ := workflow.NewDisconnectedContext(j.ctx)
	switch j.core.Next() {
	case jobcore.PutSchedule:
		j.put = workflow.ExecuteActivity(workflow.WithActivityOptions(dctx, scheduleOptions), activities.PutScheduleName, j.schedule())
	case jobcore.DeleteSchedule:
		j.put = workflow.ExecuteActivity(workflow.WithActivityOptions(dctx, deleteOptions), activities.DeleteScheduleName, j.in.Path)
	case jobcore.RunOnce:
		id := jobcore.OnceRunID(j.in.Path, j.core.OnceGen)
		cctx := workflow.WithChildOptions(j.ctx, workflow.ChildWorkflowOptions{
			WorkflowID:            id,
			TaskQueue:             TaskQueue,
			ParentClosePolicy:     enumspb.PARENT_CLOSE_POLICY_REQUEST_CANCEL,
			WorkflowIDReusePolicy: enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE,
			WaitForCancellation:   true,
			StaticSummary:         "steward job run " + j.in.Path,
			TypedSearchAttributes: temporal.NewSearchAttributes(SearchPath.ValueSet(j.in.Path), SearchKind.ValueSet(JobRunKind)),
		})
		j.once = workflow.ExecuteChildWorkflow(cctx, JobRunWorkflow, j.runInput())
	}
}

// JobRunKind is a run's StewardKind (its job's is its driver's).
const JobRunKind = "jobrun"

// scheduleOptions: a schedule's put or delete, on the control queue,
// tried for about a minute (the server down, or restarting) before the
// job says it failed; the next spec or desired state tries again.
var scheduleOptions = workflow.ActivityOptions{
	TaskQueue:           ControlQueue,
	StartToCloseTimeout: 30 * time.Second,
	RetryPolicy:         &temporal.RetryPolicy{MaximumAttempts: 6, InitialInterval: time.Second, MaximumInterval: 20 * time.Second, NonRetryableErrorTypes: []string{activities.ErrPermanent}},
}

// deleteOptions: a schedule's delete, tried until it succeeds (or finds
// no schedule) for up to ten minutes: a schedule left behind would start
// runs of a job that is gone.
var deleteOptions = workflow.ActivityOptions{
	TaskQueue:              ControlQueue,
	StartToCloseTimeout:    30 * time.Second,
	ScheduleToCloseTimeout: 10 * time.Minute,
	RetryPolicy:            &temporal.RetryPolicy{InitialInterval: time.Second, MaximumInterval: 30 * time.Second, NonRetryableErrorTypes: []string{activities.ErrPermanent}},
}

// schedule is the job's schedule as its spec and desired state say.
func (j *jobRun) schedule() activities.JobSchedule {
	input, _ := json.Marshal(j.runInput())
	return activities.JobSchedule{
		ID: j.in.Path, Job: *j.core.Spec.Job, Paused: j.core.Paused(),
		Workflow: "JobRunWorkflow", RunID: strings.TrimSuffix(JobRunPrefix(j.in.Path), "-"), TaskQueue: TaskQueue, Input: input,
		Search: map[string]string{SearchPath.GetName(): j.in.Path, SearchKind.GetName(): JobRunKind},
	}
}

func (j *jobRun) onPut(f workflow.Future) {
	j.put = nil
	errText := ""
	if err := f.Get(j.ctx, nil); err != nil {
		errText = errorText(err)
		j.log.Warn("job schedule not put or deleted", "path", j.in.Path, "error", errText)
	}
	j.core.PutDone(errText)
}

func (j *jobRun) onOnceEnded(f workflow.Future) {
	j.once = nil
	var run JobRun
	err := f.Get(j.ctx, &run)
	var app *temporal.ApplicationError
	if errors.As(err, &app) && app.HasDetails() {
		_ = app.Details(&run) // a run that did not succeed says how in its failure
	}
	errText := ""
	if err != nil {
		errText = errorText(err)
	}
	j.noteRun(j.core.OnceEnded(run, errText, workflow.Now(j.ctx)))
}

func (j *jobRun) onSpec(raw converter.RawValue) {
	u, err := decodeUpdate(raw)
	if err == nil {
		err = j.core.TakeSpec(u.Spec, u.Generation, workflow.Now(j.ctx))
	}
	if err != nil {
		j.reject(SignalSpec, err)
	}
}

func (j *jobRun) onDesired(raw converter.RawValue) {
	var d string
	err := decodeRaw(raw, &d)
	if err == nil {
		err = j.core.TakeDesired(d, workflow.Now(j.ctx))
	}
	if err != nil {
		j.reject(SignalDesired, fmt.Errorf("payload must be \"running\" or \"stopped\" (got %q)", d))
	}
}

// onRun takes a run's end: its own runs only, each once.
func (j *jobRun) onRun(raw converter.RawValue) {
	var run JobRun
	err := decodeRaw(raw, &run)
	if err != nil {
		err = fmt.Errorf("not a run of this job (its ID must begin with %q, at most %d bytes)", JobRunPrefix(j.in.Path), jobcore.MaxRunIDBytes)
	}
	ok := false
	if err == nil {
		run, ok, err = j.core.TakeRun(run)
	}
	if err != nil {
		j.reject(SignalJobRun, err)
		return
	}
	if ok {
		j.noteRun(run)
	}
}

// noteRun counts a run's end and notifies as the core says.
func (j *jobRun) noteRun(run JobRun) {
	now := workflow.Now(j.ctx)
	event, reason, noted := j.core.Note(run, now)
	if !noted {
		return
	}
	count(j.ctx, MetricJobRuns, map[string]string{"path": j.in.Path, "outcome": run.Outcome})
	j.notes.announce(j.ctx, j.core.Spec.Notify, &j.carry.NotifySeq, event, activities.Notification{Path: j.in.Path, State: run.Outcome,
		Reason: reason, Time: now, Generation: j.core.Generation})
}

// journal notes a change of the job's state in its journal, and in its
// search attributes (StewardState; with StewardBuild, which `starter
// upgrade` counts, at each run's first task).
func (j *jobRun) journal() {
	state, reason, _ := j.core.State()
	from := ""
	if n := len(j.carry.Journal); n > 0 {
		from = j.carry.Journal[n-1].State
	}
	if from != state || !j.searched {
		j.searched = true
		_ = workflow.UpsertTypedSearchAttributes(j.ctx, stateAttributes(true, j.in.Path, j.core.Spec.Kind, state)...)
	}
	if from == state {
		return
	}
	j.carry.Journal = appendJournal(j.carry.Journal, JournalEntry{Time: workflow.Now(j.ctx), From: from, State: state, Reason: reason})
}

// gauges sets the job's gauges (each task: a worker process that takes
// the job over reports them too).
func (j *jobRun) gauges() {
	tags := map[string]string{"path": j.in.Path}
	last := j.carry.LastSuccess
	if last.IsZero() {
		last = j.carry.Began
	}
	if !last.IsZero() {
		gauge(j.ctx, MetricJobLastSuccess, tags, float64(last.UnixMilli())/1000)
	}
	if p := j.core.Spec.Job.Period(workflow.Now(j.ctx)); p > 0 {
		gauge(j.ctx, MetricJobPeriod, tags, p.Seconds())
	}
}

// onSupervise acknowledges a group stop or restart of its supervisor's.
func (j *jobRun) onSupervise(raw converter.RawValue) {
	r, err := decodeSupervise(raw)
	if err != nil {
		j.reject(SignalSupervise, err)
		return
	}
	j.carry.SuperviseSeq = supervise.Acknowledged(j.carry.SuperviseSeq, r.Seq,
		supervise.NotAfter(versions.JobReportSeqByTime.In(j.in.Version), workflow.Now(j.ctx)))
}

func (j *jobRun) reject(signal string, err error) {
	j.carry.RejectedSignals++
	count(j.ctx, MetricRejectedSignals, map[string]string{"signal": signal})
	j.log.Warn("rejected signal", "signal", signal, "path", j.in.Path, "error", err.Error(), "rejected", j.carry.RejectedSignals)
}

// status is the job's answer to the status query.
func (j *jobRun) status() Status {
	state, reason, completed := j.core.State()
	n := spec.Rendered(j.core.Spec)
	return Status{Path: j.in.Path, Kind: n.Kind, State: state, Desired: j.carry.Desired, Reason: reason, Generation: j.core.Generation,
		Since: j.carry.Since, Host: n.RunsOn(), RejectedSignals: j.carry.RejectedSignals, Completed: completed, SuperviseSeq: j.carry.SuperviseSeq,
		Job: j.core.Status()}
}

// report tells the supervisor of a change of the job's record.
func (j *jobRun) report(ended bool) {
	if j.in.Parent == "" {
		return
	}
	st := j.status()
	if !ended && j.lastReported != nil && jobcore.SameReport(*j.lastReported, st) {
		return
	}
	j.lastReported = &st
	j.carry.ReportSeq = nextSeq(j.carry.ReportSeq, versions.JobReportSeqByTime.In(j.in.Version), j.ctx)
	ctx := j.ctx
	if ended {
		ctx, _ = workflow.NewDisconnectedContext(j.ctx)
	}
	f := workflow.SignalExternalWorkflow(ctx, j.in.Parent, "", SignalChild,
		ChildReport{Seq: j.carry.ReportSeq, Run: reportRun(j.ctx), Status: treestatus.Narrow(st), Ended: ended})
	if ended {
		_ = f.Get(ctx, nil)
	}
}

// shutdown ends the job (removed, or its tree deleted): its schedule is
// deleted and a once run in progress cancelled, then the last report.
func (j *jobRun) shutdown() error {
	dctx, _ := workflow.NewDisconnectedContext(j.ctx)
	if f := j.put; f != nil {
		_ = f.Get(dctx, nil) // a put in flight lands before the delete
	}
	if j.core.Spec.Job.Periodic() || j.carry.Scheduled {
		if err := workflow.ExecuteActivity(workflow.WithActivityOptions(dctx, deleteOptions), activities.DeleteScheduleName, j.in.Path).Get(dctx, nil); err != nil {
			j.log.Error("job schedule not deleted: delete it with `temporal schedule delete --schedule-id PATH`", "path", j.in.Path, "error", err.Error())
		}
	}
	if f := j.once; f != nil {
		_ = f.Get(dctx, nil) // cancelled with this workflow: its process is stopped first
	}
	j.carry.Desired = spec.DesiredStopped
	j.report(true)
	return temporal.NewCanceledError()
}
