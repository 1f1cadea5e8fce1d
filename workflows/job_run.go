package workflows

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/steward-sh/steward/activities"
	"github.com/steward-sh/steward/internal/driver"
	"github.com/steward-sh/steward/internal/spec"
	"github.com/steward-sh/steward/internal/tick"
	"github.com/steward-sh/steward/internal/treestatus"
	"github.com/steward-sh/steward/internal/versions"
)

// JobRunInput is one run of a job: a periodic job's Schedule starts it
// (its action's argument), a once job's workflow starts it as a child.
type JobRunInput struct {
	// Job is the job's path: its JobWorkflow's ID, told of the run's end.
	Job string `json:"job"`
	// Spec is the job's node as its JobWorkflow holds it (templates
	// unrendered, as signed).
	Spec       spec.Node `json:"spec"`
	Generation int64     `json:"generation"`
	// Version is its job's code version that put it (versions.JobRunsAwait
	// and on: the run awaits its end in one activity); 0 for a run of
	// version 1's code.
	Version int `json:"version,omitempty"`
}

// JobRun is one run of a job (treestatus.JobRun).
type JobRun = treestatus.JobRun

// SignalJobRun: a run tells its job how it ended (payload JobRun).
const SignalJobRun = "jobRun"

// JobRunPrefix is how the IDs of a job's runs begin (spec.JobRunPrefix).
func JobRunPrefix(job string) string { return spec.JobRunPrefix(job) }

// JobRunMemo is the memo key of a run's outcome (what `starter runs`
// lists without asking each run).
const JobRunMemo = "run"

// JobRunWorkflow runs a job once: its process run on its host (the host's
// queue, under its policy and signature checks, as a service's start) to
// its end, and past the job's timeout, or when the run is cancelled, its
// process stopped. A run that did not succeed fails the workflow
// (non-retryable), so that a Schedule's pauseOnFailure sees it.
//
// A run of versions.JobRunsAwait is one activity (RunJob, runToEnd): it
// starts the process and awaits its end, completes the run's record and
// tells the job (SignalJobRun); the record is the run's result (or its
// failure's details). A run of version 1's code starts the process in one
// activity (startRun), awaits the driver's exit report (a signal), keeps
// its record in its memo too, and tells its job from a local activity.
//
// Durability is the process driver's: the process outlives the steward
// worker that started it, and the next worker of its host adopts it and
// knows its end (its exit code, the job shim's note). An attempt tried
// again after its worker died adopts the process, never starts another,
// so a run never starts twice.
func JobRunWorkflow(ctx workflow.Context, in JobRunInput) (JobRun, error) {
	info := workflow.GetInfo(ctx)
	run := JobRun{ID: info.WorkflowExecution.ID, Outcome: treestatus.RunRunning, ScheduledAt: scheduledAt(ctx), Generation: in.Generation}
	if in.Spec.Job == nil || !strings.HasPrefix(run.ID, JobRunPrefix(in.Job)) {
		return run, temporal.NewNonRetryableApplicationError(fmt.Sprintf("not a run of job %q: the input has no job block, or the run's ID does not begin with %q", in.Job, JobRunPrefix(in.Job)), "InvalidJobRun", nil)
	}
	if ps := spec.ValidateWorker(in.Job, in.Spec); len(ps) > 0 {
		return run, temporal.NewNonRetryableApplicationError("invalid job spec:\n"+ps.Error(), "InvalidSpec", nil)
	}
	node := spec.Rendered(in.Spec)
	run.Host = node.RunsOn()
	job := node.Job.Resolved()
	deadline := workflow.Now(ctx).Add(job.Timeout.D())
	exits := workflow.GetSignalChannel(ctx, SignalExit)

	req := activities.ActionRequest{WorkflowID: run.ID, Path: in.Job, Seq: 1, Spec: node}
	began := workflow.Now(ctx)
	var res activities.ActionResult
	var ended *jobExit
	var err error
	if versions.JobRunsAwait.In(in.Version) {
		// Its end, once known, is completed and told to its job by the
		// activity itself: no local activity (nor its marker) after it.
		told := run
		told.StartedAt = began
		req.OnEnd = &activities.JobEnd{Job: in.Job, Signal: SignalJobRun, Run: told}
		res, err = runToEnd(ctx, node, req, deadline)
	} else {
		res, ended, err = startRun(ctx, node, req, exits)
	}
	switch {
	case ended != nil: // its process ran and ended while its start's worker was gone (startRun)
		endedBy(&run, *ended)
		return endRun(ctx, in, run, false)
	case err == nil && res.Run != nil: // awaited to its end, its record completed (runToEnd)
		return endRun(ctx, in, *res.Run, res.Told)
	case err == nil && res.Exit != nil: // awaited to its end, its record left to the run
		run.StartedAt = res.Started
		if run.StartedAt.IsZero() { // adopted: its start is not known here
			run.StartedAt = began
		}
		endedBy(&run, *res.Exit)
		return endRun(ctx, in, run, false)
	case err == nil && res.TimedOut:
		run.StartedAt = began
		run.Outcome, run.Reason = treestatus.RunTimedOut, fmt.Sprintf("still running after its timeout (%s): stopped", job.Timeout.D())
		stopRun(ctx, node, req, &run)
		return endRun(ctx, in, run, false)
	case err != nil && ctx.Err() != nil:
		run.Outcome, run.Reason = treestatus.RunCanceled, "canceled: stopped"
		stopRun(ctx, node, req, &run)
		return endRun(ctx, in, run, false)
	case err != nil:
		run.Outcome, run.Reason = treestatus.RunFailed, "start: "+errorText(err)
		return endRun(ctx, in, run, false)
	}
	run.StartedAt = res.Done
	if run.StartedAt.IsZero() {
		run.StartedAt = workflow.Now(ctx)
	}
	req.Instance = res.Instance
	if node.Kind == spec.KindHTTP {
		// An http job's run is its request, answered 2xx.
		run.Outcome = treestatus.RunSucceeded
		return endRun(ctx, in, run, false)
	}

	timerCtx, stopTimer := workflow.WithCancel(ctx)
	timer := workflow.NewTimer(timerCtx, max(deadline.Sub(workflow.Now(ctx)), time.Millisecond))
	for run.Outcome == treestatus.RunRunning {
		sel := workflow.NewSelector(ctx)
		sel.AddReceive(exits, func(c workflow.ReceiveChannel, _ bool) {
			var e jobExit
			if decodeRaw(receiveRaw(ctx, c), &e) == nil && e.Instance == req.Instance {
				endedBy(&run, e)
			}
		})
		sel.AddFuture(timer, func(f workflow.Future) {
			if f.Get(ctx, nil) == nil {
				run.Outcome, run.Reason = treestatus.RunTimedOut, fmt.Sprintf("still running after its timeout (%s): stopped", job.Timeout.D())
			}
		})
		sel.AddReceive(ctx.Done(), func(workflow.ReceiveChannel, bool) {
			run.Outcome, run.Reason = treestatus.RunCanceled, "canceled: stopped"
		})
		sel.Select(ctx)
	}
	stopTimer()
	if run.Outcome == treestatus.RunTimedOut || run.Outcome == treestatus.RunCanceled {
		stopRun(ctx, node, req, &run) // a run never leaves its process behind
	}
	return endRun(ctx, in, run, false)
}

// jobExit is a driver's exit report (its exit code too, which a
// worker's tick.Exit leaves out).
type jobExit = driver.Exit

// startRun starts the run's process: the job's retry policy, tried by
// the run itself, one attempt at a time, so that between two attempts it
// looks for the end of a process the first one started (its worker died
// after the start, and the host's next worker found it ended: ended). An
// attempt that finds the process running takes it (the process driver
// starts a job's process once).
func startRun(ctx workflow.Context, node spec.Node, req activities.ActionRequest, exits workflow.ReceiveChannel) (res activities.ActionResult, ended *jobExit, err error) {
	opts := ActivityOptions(node, tick.Start)
	retry := node.Resolved().Retry
	policy := *opts.RetryPolicy
	policy.MaximumAttempts = 1
	opts.RetryPolicy = &policy
	wait := retry.InitialInterval.D()
	endedAlready := func() *jobExit { return endedAlready(exits, req.WorkflowID) }
	for attempt := 1; ; attempt++ {
		if attempt > 1 {
			if e := endedAlready(); e != nil { // it ended during the wait
				return res, e, nil
			}
		}
		err = workflow.ExecuteActivity(workflow.WithActivityOptions(ctx, opts), activities.StartName, req).Get(ctx, &res)
		if err == nil {
			return res, nil, nil
		}
		if e := endedAlready(); e != nil {
			return res, e, nil
		}
		var app *temporal.ApplicationError
		if ctx.Err() != nil || attempt >= retry.MaxAttempts || (errors.As(err, &app) && app.NonRetryable()) {
			return res, nil, err
		}
		if workflow.Sleep(ctx, wait) != nil {
			return res, nil, err
		}
		wait = min(time.Duration(float64(wait)*retry.BackoffCoefficient), retry.MaxInterval.D())
	}
}

// endedAlready is an exit report of the run's process among the signals
// received (its worker died, and the host's next worker found it ended).
func endedAlready(exits workflow.ReceiveChannel, runID string) *jobExit {
	for {
		var raw converter.RawValue
		if !exits.ReceiveAsync(&raw) {
			return nil
		}
		var e jobExit
		if decodeRaw(raw, &e) == nil && strings.HasSuffix(e.Instance, "@"+runID) {
			return &e
		}
	}
}

// runHeartbeat bounds the silence of a run's RunJob activity: its worker
// gone that long, the run's next attempt adopts its process on the host's
// next worker.
const runHeartbeat = 10 * time.Second

// runToEnd runs the run's process to its end in one activity (RunJob,
// versions.JobRunsAwait): its result is the end (res.Exit), or its
// deadline passed (res.TimedOut), or, for a driver that cannot await, the
// start alone (the end comes as an exit signal). The job's retry policy
// applies to the start, one attempt at a time as startRun's. An attempt
// that timed out (its worker died or went silent) may have started the
// process: the next attempts adopt it, never start one, and do not count
// against the retries (a worker killed fails no run). An exit signal is
// not taken for the end: the host's worker, asked again, says it (an exit
// sent by hand, with a run's instance, ends nothing).
func runToEnd(ctx workflow.Context, node spec.Node, req activities.ActionRequest, deadline time.Time) (res activities.ActionResult, err error) {
	opts := ActivityOptions(node, tick.Start)
	startTimeout := opts.StartToCloseTimeout
	retry := node.Resolved().Retry
	policy := *opts.RetryPolicy
	policy.MaximumAttempts = 1
	opts.RetryPolicy = &policy
	opts.HeartbeatTimeout = runHeartbeat
	req.Deadline = deadline
	wait := retry.InitialInterval.D()
	for attempt := 1; ; {
		left := max(deadline.Sub(workflow.Now(ctx)), 0)
		if req.Adopt && left == 0 {
			return activities.ActionResult{TimedOut: true}, nil // its end never came: stopped
		}
		opts.StartToCloseTimeout = startTimeout + left
		err = workflow.ExecuteActivity(workflow.WithActivityOptions(ctx, opts), activities.RunJobName, req).Get(ctx, &res)
		if err == nil || ctx.Err() != nil {
			return res, err
		}
		if _, timedOut := errors.AsType[*temporal.TimeoutError](err); timedOut {
			req.Adopt = true
			continue
		}
		var app *temporal.ApplicationError
		if req.Adopt || attempt >= retry.MaxAttempts || (errors.As(err, &app) && app.NonRetryable()) {
			return res, err
		}
		attempt++
		if workflow.Sleep(ctx, wait) != nil {
			return res, err
		}
		wait = min(time.Duration(float64(wait)*retry.BackoffCoefficient), retry.MaxInterval.D())
	}
}

// endedBy notes a process's end as the run's outcome.
func endedBy(run *JobRun, e jobExit) { run.EndedBy(e.Normal, e.Code, e.Reason) }

// stopRun stops the run's process (a run timed out or cancelled), and
// notes a stop that failed.
func stopRun(ctx workflow.Context, node spec.Node, req activities.ActionRequest, run *JobRun) {
	dctx, _ := workflow.NewDisconnectedContext(ctx)
	if err := workflow.ExecuteActivity(workflow.WithActivityOptions(dctx, ActivityOptions(node, tick.Stop)), activities.StopName, req).Get(dctx, nil); err != nil {
		run.Reason += "; its stop failed: " + errorText(err)
	}
}

// endRun records the run's outcome (its memo, version 1), tells its job
// (unless told: its activity did), and ends the run: a failure unless it
// succeeded.
func endRun(ctx workflow.Context, in JobRunInput, run JobRun, told bool) (JobRun, error) {
	dctx, _ := workflow.NewDisconnectedContext(ctx)
	if run.EndedAt.IsZero() {
		run.EndedAt = workflow.Now(dctx)
	}
	awaits := versions.JobRunsAwait.In(in.Version)
	if !awaits { // (its result and its failure's details say it: ReadJobRun)
		if err := workflow.UpsertMemo(dctx, map[string]any{JobRunMemo: run}); err != nil {
			workflow.GetLogger(dctx).Warn("run memo not recorded", "error", err.Error())
		}
	}
	// Its job is told from a local activity of this last task (a signal
	// command would cost the run two events and a task to await it). A job
	// that is gone (its tree deleted), or a signal that failed, does not
	// change the run: its memo has its end, and its job's next run tells.
	if told {
		return runResult(run)
	}
	b, _ := json.Marshal(run)
	lctx := workflow.WithLocalActivityOptions(dctx, workflow.LocalActivityOptions{StartToCloseTimeout: 10 * time.Second,
		RetryPolicy: &temporal.RetryPolicy{MaximumAttempts: 3, InitialInterval: 100 * time.Millisecond}})
	if err := workflow.ExecuteLocalActivity(lctx, activities.TellJobName, activities.TellJobRequest{Job: in.Job, Signal: SignalJobRun, Run: b}).Get(lctx, nil); err != nil {
		workflow.GetLogger(dctx).Warn("job not told of its run's end", "job", in.Job, "run", run.ID, "error", err.Error())
	}
	if !awaits && run.Outcome == treestatus.RunCanceled {
		return run, temporal.NewCanceledError(run.Reason)
	}
	return runResult(run)
}

// runResult ends a run: its record as its result, or as the details of
// its failure (or cancellation) unless it succeeded.
func runResult(run JobRun) (JobRun, error) {
	switch run.Outcome {
	case treestatus.RunSucceeded:
		return run, nil
	case treestatus.RunCanceled:
		return run, temporal.NewCanceledError(run)
	}
	return run, temporal.NewNonRetryableApplicationError(fmt.Sprintf("%s %s: %s", run.ID, run.Outcome, run.Reason), "Job"+strings.ToUpper(run.Outcome[:1])+run.Outcome[1:], nil, run)
}

// scheduledAt is when a Schedule meant the run to start (its search
// attribute TemporalScheduledStartTime), else when the run began.
func scheduledAt(ctx workflow.Context) time.Time {
	if t, ok := workflow.GetTypedSearchAttributes(ctx).GetTime(temporal.NewSearchAttributeKeyTime("TemporalScheduledStartTime")); ok {
		return t
	}
	return workflow.GetInfo(ctx).WorkflowStartTime
}

// errorText is an activity error's own message (the application error's,
// without the SDK's wrapping).
func errorText(err error) string {
	var app *temporal.ApplicationError
	if errors.As(err, &app) {
		return app.Message()
	}
	return err.Error()
}
