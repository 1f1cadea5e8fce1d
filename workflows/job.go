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
	"github.com/steward-sh/steward/internal/spec"
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

// JobCarry is what a job's workflow carries over continue-as-new.
type JobCarry struct {
	Desired         string    `json:"desired"`
	Since           time.Time `json:"since,omitzero"`
	LastRun         *JobRun   `json:"lastRun,omitempty"`
	Runs            int       `json:"runs,omitempty"`
	Failures        int       `json:"failures,omitempty"`
	ReportSeq       int64     `json:"reportSeq,omitempty"`
	SuperviseSeq    int64     `json:"superviseSeq,omitempty"`
	RejectedSignals int       `json:"rejectedSignals,omitempty"`
	// Ran is the generation a once job last ran for (its run ended).
	Ran int64 `json:"ran,omitempty"`
	// Troubled: its last run did not succeed (jobRecovered is due at the
	// next that does); NotifySeq numbers its notifications, and
	// Notifications are those not yet delivered (notify.go).
	Troubled      bool                          `json:"troubled,omitempty"`
	NotifySeq     int64                         `json:"notifySeq,omitempty"`
	Notifications []activities.NotificationTask `json:"notifications,omitempty"`
	// Journal is its last JournalLimit transitions (the `history` query).
	Journal []JournalEntry `json:"journal,omitempty"`
	// Began is when the job began; LastSuccess when its last run that
	// succeeded ended (its metrics).
	Began       time.Time `json:"began,omitzero"`
	LastSuccess time.Time `json:"lastSuccess,omitzero"`
	// ScheduleError says why its schedule could not be put ("" when it
	// is as the spec says).
	ScheduleError string `json:"scheduleError,omitempty"`
	// PutFor is the generation and desired state its schedule was last
	// put for (it is put again only when they change, or at `starter
	// start`: a schedule paused by pauseOnFailure stays paused across
	// continue-as-new); Scheduled: a schedule may exist (put, not
	// deleted since).
	PutFor    string `json:"putFor,omitempty"`
	Scheduled bool   `json:"scheduled,omitempty"`
}

// maxRunIDBytes bounds a run's ID a job takes: its path (spec's limit),
// "/run-" and a time or generation.
const maxRunIDBytes = spec.MaxPathLength + 64

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
	checkVersion("JobWorkflow", in.Version, JobVersion)
	j := &jobRun{ctx: ctx, in: in, log: workflow.GetLogger(ctx)}
	if in.Carry != nil {
		j.carry = *in.Carry
	} else {
		j.carry.Desired = in.Spec.Resolved().Desired
		j.carry.Since = workflow.Now(ctx)
		j.carry.Began = j.carry.Since
	}
	if err := checkJob(in.Path, in.Spec); err != nil {
		return temporal.NewNonRetryableApplicationError("invalid job spec:\n"+err.Error(), "InvalidSpec", nil)
	}
	if err := workflow.SetQueryHandler(ctx, QueryStatus, func() (Status, error) { return j.status(), nil }); err != nil {
		return err
	}
	if err := workflow.SetQueryHandler(ctx, QuerySpec, func() (spec.Node, error) { return j.in.Spec, nil }); err != nil {
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
			carry := j.carry
			carry.Notifications = j.notes.undelivered()
			next.Carry, next.Version = &carry, JobVersion
			return workflow.NewContinueAsNewError(ctx, JobWorkflow, next)
		}
	}
}

// jobRun is one run of a job's workflow.
type jobRun struct {
	ctx   workflow.Context
	in    JobInput
	log   log.Logger
	carry JobCarry
	// put is the schedule's put (or delete) in flight.
	put workflow.Future
	// deleting: put is its schedule's delete; searched: this run has
	// upserted its search attributes.
	deleting bool
	searched bool
	// once is a once job's run in flight (its child's future), and
	// onceGen the generation it runs.
	once    workflow.Future
	onceGen int64
	// lastReported is the status last reported to the supervisor.
	lastReported *Status
	notes        notifier
}

// checkJob says why a node is not a job's (nil: it is one).
func checkJob(path string, n spec.Node) error {
	if !n.IsJob() {
		return fmt.Errorf("%s has no job block: a service cannot become a job in place (remove it, apply, then add it back as a job)", path)
	}
	if ps := spec.ValidateWorker(path, n); len(ps) > 0 {
		return ps
	}
	return nil
}

// wantPut is what the schedule must say: the generation and desired
// state it was last put for.
func (j *jobRun) wantPut() string {
	if versions.JobRunsAwait.In(j.in.Version) { // its runs' input says which code they run
		return fmt.Sprintf("%d/%s/v%d", j.in.Generation, j.carry.Desired, j.in.Version)
	}
	return fmt.Sprintf("%d/%s", j.in.Generation, j.carry.Desired)
}

// runInput is the input of the job's runs.
func (j *jobRun) runInput() JobRunInput {
	in := JobRunInput{Job: j.in.Path, Spec: j.in.Spec, Generation: j.in.Generation}
	if versions.JobRunsAwait.In(j.in.Version) {
		in.Version = j.in.Version
	}
	return in
}

// sync puts the periodic job's schedule when the spec or the desired
// state changed since its last put, and starts a once job's run for a
// generation it has not run.
func (j *jobRun) sync() {
	if j.put != nil {
		return // one at a time: the next is decided when it is done
	}
	// Puts and deletes run on a disconnected context: a job cancelled
	// meanwhile waits for them (shutdown), so a put never lands after its
	// schedule's delete.
	dctx, _ := workflow.NewDisconnectedContext(j.ctx)
	if j.in.Spec.Job.Periodic() {
		if j.carry.PutFor != j.wantPut() {
			j.carry.PutFor, j.carry.Scheduled = j.wantPut(), true
			j.put = workflow.ExecuteActivity(workflow.WithActivityOptions(dctx, scheduleOptions), activities.PutScheduleName, j.schedule())
		}
		return
	}
	if j.carry.Scheduled { // a periodic job made a once job: its schedule goes
		j.carry.PutFor = ""
		j.put = workflow.ExecuteActivity(workflow.WithActivityOptions(dctx, deleteOptions), activities.DeleteScheduleName, j.in.Path)
		j.deleting = true
		return
	}
	if j.once == nil && j.carry.Desired == spec.DesiredRunning && j.carry.Ran < j.in.Generation {
		id := fmt.Sprintf("%sg%d", JobRunPrefix(j.in.Path), j.in.Generation)
		cctx := workflow.WithChildOptions(j.ctx, workflow.ChildWorkflowOptions{
			WorkflowID:            id,
			TaskQueue:             TaskQueue,
			ParentClosePolicy:     enumspb.PARENT_CLOSE_POLICY_REQUEST_CANCEL,
			WorkflowIDReusePolicy: enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE,
			WaitForCancellation:   true,
			StaticSummary:         "steward job run " + j.in.Path,
			TypedSearchAttributes: temporal.NewSearchAttributes(SearchPath.ValueSet(j.in.Path), SearchKind.ValueSet(JobRunKind)),
		})
		j.once, j.onceGen = workflow.ExecuteChildWorkflow(cctx, JobRunWorkflow, j.runInput()), j.in.Generation
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
		ID: j.in.Path, Job: *j.in.Spec.Job, Paused: j.carry.Desired == spec.DesiredStopped,
		Workflow: "JobRunWorkflow", RunID: strings.TrimSuffix(JobRunPrefix(j.in.Path), "-"), TaskQueue: TaskQueue, Input: input,
		Search: map[string]string{SearchPath.GetName(): j.in.Path, SearchKind.GetName(): JobRunKind},
	}
}

func (j *jobRun) onPut(f workflow.Future) {
	j.put = nil
	if j.deleting {
		j.deleting = false
		if err := f.Get(j.ctx, nil); err != nil {
			j.carry.ScheduleError = "its schedule could not be deleted: " + errorText(err)
			return
		}
		j.carry.Scheduled, j.carry.ScheduleError = false, ""
		return
	}
	if err := f.Get(j.ctx, nil); err != nil {
		j.carry.ScheduleError = "its schedule could not be put: " + errorText(err)
		j.log.Warn("job schedule not put", "path", j.in.Path, "error", err.Error())
		return
	}
	j.carry.ScheduleError = ""
}

func (j *jobRun) onOnceEnded(f workflow.Future) {
	j.once = nil
	var run JobRun
	err := f.Get(j.ctx, &run)
	var app *temporal.ApplicationError
	if errors.As(err, &app) && app.HasDetails() {
		_ = app.Details(&run) // a run that did not succeed says how in its failure
	}
	// The generation it ran: a newer spec taken meanwhile runs next.
	j.carry.Ran = max(j.carry.Ran, j.onceGen)
	if run.ID == "" { // the run did not tell (it failed to start as a workflow)
		run = JobRun{ID: fmt.Sprintf("%sg%d", JobRunPrefix(j.in.Path), j.onceGen), Outcome: treestatus.RunFailed, Generation: j.onceGen, EndedAt: workflow.Now(j.ctx)}
		if err != nil {
			run.Reason = errorText(err)
		}
	}
	j.noteRun(run)
}

func (j *jobRun) onSpec(raw converter.RawValue) {
	u, err := decodeUpdate(raw)
	if err == nil && u.Spec.Name != j.in.Spec.Name {
		err = fmt.Errorf("spec.name %q does not match this job (%q)", u.Spec.Name, j.in.Spec.Name)
	}
	if err == nil {
		err = checkJob(j.in.Path, u.Spec)
	}
	if err != nil {
		j.reject(SignalSpec, err)
		return
	}
	if u.Generation > 0 {
		j.in.Generation = u.Generation
	} else {
		j.in.Generation++
	}
	j.in.Spec = u.Spec
	if d := u.Spec.Resolved().Desired; d != j.carry.Desired {
		j.setDesired(d)
	}
}

func (j *jobRun) onDesired(raw converter.RawValue) {
	var d string
	if err := decodeRaw(raw, &d); err != nil || (d != spec.DesiredRunning && d != spec.DesiredStopped) {
		j.reject(SignalDesired, fmt.Errorf("payload must be \"running\" or \"stopped\" (got %q)", d))
		return
	}
	if d == spec.DesiredRunning {
		// `starter start`: its schedule runs again, even where the job was
		// running already and the schedule paused itself (pauseOnFailure).
		j.carry.PutFor = ""
	}
	j.setDesired(d)
}

func (j *jobRun) setDesired(d string) {
	if d != j.carry.Desired {
		j.carry.Desired, j.carry.Since = d, workflow.Now(j.ctx)
	}
}

// onRun takes a run's end: its own runs only, each once.
func (j *jobRun) onRun(raw converter.RawValue) {
	var run JobRun
	if err := decodeRaw(raw, &run); err != nil || !spec.IsJobRun(run.ID, j.in.Path) || len(run.ID) > maxRunIDBytes {
		j.reject(SignalJobRun, fmt.Errorf("not a run of this job (its ID must begin with %q, at most %d bytes)", JobRunPrefix(j.in.Path), maxRunIDBytes))
		return
	}
	switch run.Outcome {
	case treestatus.RunSucceeded, treestatus.RunFailed, treestatus.RunTimedOut, treestatus.RunCanceled:
	default:
		j.reject(SignalJobRun, fmt.Errorf("a run's end with outcome %.40q (succeeded, failed, timedOut or canceled)", run.Outcome))
		return
	}
	if len(run.Host) > spec.MaxNameLength {
		run.Host = run.Host[:spec.MaxNameLength]
	}
	if l := j.carry.LastRun; l != nil && l.ID == run.ID {
		return // told again (its child future said so first)
	}
	j.noteRun(run)
}

func (j *jobRun) noteRun(run JobRun) {
	if l := j.carry.LastRun; l != nil && l.ID == run.ID {
		return
	}
	if len(run.Reason) > treestatus.MaxRecordText { // a run's reason is its process's words
		run.Reason = run.Reason[:treestatus.MaxRecordText] + "…"
	}
	j.carry.LastRun = &run
	j.carry.Runs++
	if run.Outcome != treestatus.RunSucceeded {
		j.carry.Failures++
	} else {
		j.carry.LastSuccess = run.EndedAt
	}
	count(j.ctx, MetricJobRuns, map[string]string{"path": j.in.Path, "outcome": run.Outcome})
	// jobFailed once as it begins to fail, jobRecovered once it succeeds
	// again: a job failing every minute is one notification, not one a
	// minute.
	event := ""
	switch failed := run.Outcome != treestatus.RunSucceeded; {
	case failed && !j.carry.Troubled:
		event = spec.EventJobFailed
	case !failed && j.carry.Troubled:
		event = spec.EventJobRecovered
	}
	j.carry.Troubled = run.Outcome != treestatus.RunSucceeded
	reason := run.Reason
	if reason == "" {
		reason = "run " + run.ID + " " + run.Outcome
	}
	j.notes.announce(j.ctx, j.in.Spec.Notify, &j.carry.NotifySeq, event, activities.Notification{Path: j.in.Path, State: run.Outcome,
		Reason: reason, Time: workflow.Now(j.ctx), Generation: j.in.Generation})
	j.carry.Since = workflow.Now(j.ctx)
}

// journal notes a change of the job's state in its journal, and in its
// search attributes (StewardState; with StewardBuild, which `starter
// upgrade` counts, at each run's first task).
func (j *jobRun) journal() {
	state, reason, _ := j.state()
	from := ""
	if n := len(j.carry.Journal); n > 0 {
		from = j.carry.Journal[n-1].State
	}
	if from != state || !j.searched {
		j.searched = true
		_ = workflow.UpsertTypedSearchAttributes(j.ctx, stateAttributes(true, j.in.Path, j.in.Spec.Kind, state)...)
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
	if p := j.in.Spec.Job.Period(workflow.Now(j.ctx)); p > 0 {
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
	j.carry.SuperviseSeq = max(j.carry.SuperviseSeq, r.Seq)
}

func (j *jobRun) reject(signal string, err error) {
	j.carry.RejectedSignals++
	count(j.ctx, MetricRejectedSignals, map[string]string{"signal": signal})
	j.log.Warn("rejected signal", "signal", signal, "path", j.in.Path, "error", err.Error(), "rejected", j.carry.RejectedSignals)
}

// state is the job's state and why (the type's doc comment says which).
func (j *jobRun) state() (state, reason string, completed bool) {
	last := j.carry.LastRun
	switch {
	case j.carry.Desired == spec.DesiredStopped:
		return "stopped", "desired stopped: its schedule is paused", false
	case j.carry.ScheduleError != "":
		return "failed", j.carry.ScheduleError, false
	case !j.in.Spec.Job.Periodic() && j.once != nil:
		return "starting", fmt.Sprintf("its run for generation %d runs", j.in.Generation), false
	case last != nil && last.Outcome != treestatus.RunSucceeded:
		return "failed", fmt.Sprintf("its last run %s: %s", last.Outcome, last.Reason), false
	case !j.in.Spec.Job.Periodic():
		if last != nil && j.carry.Ran >= j.in.Generation {
			return "stopped", "its run succeeded", true
		}
		return "starting", "its run is due", false
	}
	return "running", "scheduled: " + j.in.Spec.Job.What(), false
}

// status is the job's answer to the status query.
func (j *jobRun) status() Status {
	state, reason, completed := j.state()
	n := spec.Rendered(j.in.Spec)
	st := Status{Path: j.in.Path, Kind: n.Kind, State: state, Desired: j.carry.Desired, Reason: reason, Generation: j.in.Generation,
		Since: j.carry.Since, Host: n.RunsOn(), RejectedSignals: j.carry.RejectedSignals, Completed: completed, SuperviseSeq: j.carry.SuperviseSeq,
		Job: &treestatus.JobStatus{Schedule: j.in.Spec.Job.What(), Paused: j.carry.Desired == spec.DesiredStopped, LastRun: j.carry.LastRun,
			Runs: j.carry.Runs, Failures: j.carry.Failures}}
	if j.in.Spec.Job.Periodic() {
		st.Job.ScheduleID = j.in.Path
	}
	return st
}

// report tells the supervisor of a change of the job's record.
func (j *jobRun) report(ended bool) {
	if j.in.Parent == "" {
		return
	}
	st := j.status()
	if !ended && j.lastReported != nil && jobSameReport(*j.lastReported, st) {
		return
	}
	j.lastReported = &st
	j.carry.ReportSeq++
	ctx := j.ctx
	if ended {
		ctx, _ = workflow.NewDisconnectedContext(j.ctx)
	}
	f := workflow.SignalExternalWorkflow(ctx, j.in.Parent, "", SignalChild,
		ChildReport{Seq: j.carry.ReportSeq, Run: workflow.GetInfo(j.ctx).FirstRunID, Status: treestatus.Narrow(st), Ended: ended})
	if ended {
		_ = f.Get(ctx, nil)
	}
}

// jobSameReport: nothing the supervisor keeps of a job changed. A run
// that ends as the one before it did is not reported: a job's runs are
// its own to count (its status query), and a report per run cost its
// supervisor a task each (measured: bench -only jobs).
func jobSameReport(a, b Status) bool {
	return treestatus.SameReport(a, b, true) && a.Reason == b.Reason && a.SuperviseSeq == b.SuperviseSeq
}

// shutdown ends the job (removed, or its tree deleted): its schedule is
// deleted and a once run in progress cancelled, then the last report.
func (j *jobRun) shutdown() error {
	dctx, _ := workflow.NewDisconnectedContext(j.ctx)
	if f := j.put; f != nil {
		_ = f.Get(dctx, nil) // a put in flight lands before the delete
	}
	if j.in.Spec.Job.Periodic() || j.carry.Scheduled {
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
