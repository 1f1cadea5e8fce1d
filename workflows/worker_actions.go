package workflows

import (
	"errors"
	"fmt"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/steward-sh/steward/activities"
	"github.com/steward-sh/steward/internal/spec"
	"github.com/steward-sh/steward/internal/tick"
	"github.com/steward-sh/steward/internal/treestatus"
	"github.com/steward-sh/steward/internal/versions"
)

// A worker's actions: the tick's decision carried out as an activity, and
// the activity's result (or error) turned into the tick's next snapshot.

func (w *workerRun) onActionDone(f *inflight, fut workflow.Future) {
	var res activities.ActionResult
	err := fut.Get(w.ctx, &res)
	w.flight = nil
	releaseContext(f.cancel)
	r := tick.Result{Action: f.action, Instance: res.Instance, Observed: tick.Observation(res.Observed)}
	attempts := int(res.Attempt)
	switch {
	case err == nil:
		r.Outcome = tick.Succeeded
	case temporal.IsCanceledError(err):
		r.Outcome = tick.Cancelled
	default:
		r.Outcome, attempts = classify(err, w.node.Retry.MaxAttempts, f.action)
		refusal := refusalMessage(err)
		if versions.WorkerRefused.In(w.in.Version) && refusal != "" {
			// Version 2: a refused action ran nothing and stopped
			// nothing (before, it was a permanent failure).
			r.Outcome = tick.Refused
		}
		if r.Outcome == tick.TimedOut {
			count(w.ctx, MetricActionTimeouts, map[string]string{"action": string(f.action), "kind": w.node.Kind})
		}
		r.Error = rootMessage(err)
		if r.Outcome == tick.Refused {
			r.Error = refusal // the rule and why, as the host said it
		}
		if r.Outcome == tick.Unreachable {
			r.Error = fmt.Sprintf("host %s unreachable (no worker took the %s within %s)", w.node.RunsOn(), f.action, w.node.UnreachableAfter())
		}
	}
	if err == nil && (f.action == tick.Start || f.action == tick.Restart) && versions.WorkerMoves.In(w.in.Version) {
		w.carry.Started(f.host, f.node, res.Instance, w.node.RunsOn())
	}
	if temporal.IsCanceledError(err) {
		w.carry.Cancelled(f.move)
	}
	if err == nil && versions.WorkerMoves.In(w.in.Version) && res.Done.After(f.began) {
		// The state the action's end brings dates from the action's end
		// (the host's clock, within the action's span), not from this task.
		w.endedAt = res.Done
	}
	if f.action != tick.Observe {
		if attempts < 1 {
			attempts = 1
		}
		w.carry.LastAction = ActionStatus{Name: string(f.action), Status: string(r.Outcome), Attempts: attempts, Error: r.Error}
		w.actionEnded = true
	}
	if on := f.onSuccess; on != nil {
		switch {
		case err == nil && res.Reported && on.Report.Seq == w.carry.ReportSeq:
			// The activity sent the report this success calls for, and
			// none was sent since it was made: it is the last one.
			st := on.Report.Status
			st.Instance, st.LastAction.Attempts = res.Instance, attempts
			w.lastReported = &st
		case err != nil:
			// An attempt may have sent it and then failed to complete
			// (timed out, its worker lost): the supervisor may hold a
			// success that did not happen (report() checks against it).
			st := on.Report.Status
			w.maybeReported = &st
		}
	}
	w.tick(tick.Snapshot{Event: tick.EventActionDone, Result: &r})
	if r.Outcome == tick.Refused && f.action != tick.Observe && w.carry.Memory.State != tick.Failed {
		// The service runs on as it was: no transition tells of it.
		w.notes.announce(w.ctx, w.node.Notify, &w.carry.NotifySeq, spec.EventRefused, activities.Notification{
			Path: w.in.Path, State: string(w.carry.Memory.State), Reason: string(f.action) + " refused: " + r.Error,
			Time: workflow.Now(w.ctx), Generation: w.in.Generation})
	}
	w.replayPendingExits()
}

// refusalMessage is the host's refusal an action's error is, if it is one.
func refusalMessage(err error) string {
	var appErr *temporal.ApplicationError
	if errors.As(err, &appErr) && appErr.Type() == activities.ErrRefused {
		return appErr.Message()
	}
	return ""
}

// maxPendingExits bounds the exits kept while an action runs (a driver
// reports each instance's end once; more than a few means stale noise).
const maxPendingExits = 8

// replayPendingExits feeds the exits that arrived during an action to the
// tick, oldest first, until one of them starts a new action.
func (w *workerRun) replayPendingExits() {
	for len(w.carry.PendingExits) > 0 && w.flight == nil {
		e := w.carry.PendingExits[0]
		w.carry.PendingExits = w.carry.PendingExits[1:]
		w.tick(w.exitSnapshot(e))
	}
}

// classify maps an activity error to an outcome and the attempts it took.
func classify(err error, maxAttempts int, action tick.Action) (tick.Outcome, int) {
	outcome := tick.FailedOutcome
	attempts := 0
	var appErr *temporal.ApplicationError
	var toErr *temporal.TimeoutError
	switch {
	case errors.As(err, &toErr) && toErr.TimeoutType() == enumspb.TIMEOUT_TYPE_SCHEDULE_TO_START:
		return tick.Unreachable, 0
	case errors.As(err, &toErr):
		outcome = tick.TimedOut
		var a int32
		if toErr.HasLastHeartbeatDetails() && toErr.LastHeartbeatDetails(&a) == nil {
			attempts = int(a)
		}
	case errors.As(err, &appErr):
		if appErr.NonRetryable() || appErr.Type() == activities.ErrPermanent || appErr.Type() == activities.ErrUnknownKind {
			outcome = tick.PermanentFailure
		}
		var a int32
		if appErr.HasDetails() && appErr.Details(&a) == nil {
			attempts = int(a)
		}
	}
	if attempts == 0 {
		var actErr *temporal.ActivityError
		if errors.As(err, &actErr) && actErr.RetryState() == enumspb.RETRY_STATE_MAXIMUM_ATTEMPTS_REACHED {
			attempts = maxAttempts
			if action == tick.Observe {
				attempts = 1
			}
		}
	}
	return outcome, attempts
}

// snapshot completes an event's snapshot with the worker's state.
func (w *workerRun) snapshot(s tick.Snapshot) tick.Snapshot {
	s.Now = workflow.Now(w.ctx)
	s.Memory = w.carry.Memory
	s.Desired = w.carry.Desired
	s.RestartType = tick.RestartType(w.node.Restart)
	b := w.node.Backoff
	s.Backoff = tick.BackoffPolicy{Initial: b.Initial.D(), Max: b.Max.D(), Multiplier: b.Multiplier, Jitter: *b.Jitter, ResetAfter: b.ResetAfter.D()}
	s.JitterKey = tick.HashKey(w.in.Path)
	s.Coordinated = w.in.Coordinated
	return s
}

// tick runs one tick and carries out its decision.
func (w *workerRun) tick(s tick.Snapshot) {
	s = w.snapshot(s)
	d := tick.Next(s)
	if d.Memory.Restarts > s.Memory.Restarts {
		count(w.ctx, MetricRestarts, map[string]string{"reason": "automatic", "kind": w.node.Kind})
	}
	if d.Memory.ManualRestarts > s.Memory.ManualRestarts {
		count(w.ctx, MetricRestarts, map[string]string{"reason": "manual", "kind": w.node.Kind})
	}
	w.carry.Memory = d.Memory
	if d.Action != tick.None {
		w.launch(d.Action)
	}
	w.afterEvent()
}

// launch runs an action as an activity, cancellable.
func (w *workerRun) launch(a tick.Action) {
	w.carry.Seq++
	actx, cancel := workflow.WithCancel(w.ctx)
	// A start or restart carries out the move (the success report says
	// where it runs next); an observe, stop or reload goes where the
	// instance runs.
	elsewhere := w.carry.Move != nil
	node, moving := w.carry.Take(a == tick.Start || a == tick.Restart, w.node)
	elsewhere = elsewhere && moving == nil
	opts := ActivityOptions(node, a)
	// What the Web UI shows for the activity: "start plant/line-1/press".
	opts.Summary = string(a) + " " + w.in.Path
	// Eager dispatch happens only where the worker process allows it
	// (--eager-actions) and for the shared queue.
	opts.DisableEagerExecution = false
	actx = workflow.WithActivityOptions(actx, opts)
	req := activities.ActionRequest{WorkflowID: workflow.GetInfo(w.ctx).WorkflowExecution.ID, Path: w.in.Path, Seq: w.carry.Seq, Spec: node, Instance: w.carry.Memory.Instance}
	req.OnSuccess = w.successReport(a)
	if raw := w.in.Spec; raw.Signature != "" && raw.InFleet() && !elsewhere {
		// A signed fleet's worker: its host verifies the template and
		// that the spec is its rendering (admission.VerifyFleet).
		req.Template = &raw
	}
	var fut workflow.Future
	if moving != nil {
		fut = w.launchMove(actx, *moving, req)
	} else {
		fut = workflow.ExecuteActivity(actx, activityName(a), req)
	}
	count(w.ctx, MetricActionQueued, map[string]string{"action": string(a), "kind": w.node.Kind})
	w.flight = &inflight{action: a, future: fut, cancel: cancel, onSuccess: req.OnSuccess, host: node.RunsOn(), node: node, began: workflow.Now(w.ctx)}
	w.flight.move = moving
	if a != tick.Observe {
		w.carry.LastAction = ActionStatus{Name: string(a), Status: "running"}
	}
}

// successReport is the report to the supervisor that the action's success
// will call for, made now for the activity to send (ActionRequest.OnSuccess):
// nil without a supervisor, for an observe, when the success leads to
// another action (a transient state), and when the supervisor's record
// would not change. Its number is reserved (reserveSuccessSeq): a report
// the workflow sends in a later task (the action is slow, or something
// urgent) overtakes it.
func (w *workerRun) successReport(a tick.Action) *activities.SuccessReport {
	if w.in.Parent == "" || a == tick.Observe {
		return nil
	}
	d := tick.Next(w.snapshot(tick.Snapshot{Event: tick.EventActionDone, Result: &tick.Result{Action: a, Outcome: tick.Succeeded}}))
	if d.Action != tick.None {
		return nil
	}
	saved := w.carry
	w.carry.Memory = d.Memory
	w.carry.LastAction = ActionStatus{Name: string(a), Status: string(tick.Succeeded), Attempts: 1}
	st := w.status()
	w.carry = saved
	if w.lastReported != nil && sameReportOf(w.in.Version, *w.lastReported, st) {
		return nil
	}
	seq := w.reserveSuccessSeq()
	return &activities.SuccessReport{Parent: w.in.Parent, Report: ChildReport{
		Seq: seq, Run: reportRun(w.ctx), Status: treestatus.Narrow(st)}}
}

func activityName(a tick.Action) string {
	switch a {
	case tick.Start:
		return activities.StartName
	case tick.Stop:
		return activities.StopName
	case tick.Restart:
		return activities.RestartName
	case tick.Reload:
		return activities.ReloadName
	}
	return activities.ObserveName
}

// heartbeatTimeout is how soon a lost worker process is noticed.
const heartbeatTimeout = 5 * time.Second

// ActivityOptions are the options of one action of a worker: its task queue
// (the global pool, or its host's queue for a process), its StartToClose
// timeout, a heartbeat timeout, and the worker's RetryPolicy with permanent
// failures not retried. Observes are tried once: the next
// periodic observe is their retry.
func ActivityOptions(n spec.Node, a tick.Action) workflow.ActivityOptions {
	n = n.Resolved()
	timeout := n.Timeouts.Start.D()
	switch a {
	case tick.Stop:
		timeout = n.Timeouts.Stop.D()
	case tick.Restart:
		timeout = n.Timeouts.Restart.D()
	case tick.Observe:
		timeout = n.Timeouts.Observe.D()
	}
	// A reload has the start timeout (a service's reload may re-read
	// as much as its start does).
	hb := min(heartbeatTimeout, timeout)
	rp := &temporal.RetryPolicy{
		InitialInterval:    n.Retry.InitialInterval.D(),
		BackoffCoefficient: n.Retry.BackoffCoefficient,
		// The server refuses a maximum below the initial interval.
		MaximumInterval:        max(n.Retry.MaxInterval.D(), n.Retry.InitialInterval.D()),
		MaximumAttempts:        int32(n.Retry.MaxAttempts),
		NonRetryableErrorTypes: []string{activities.ErrPermanent, activities.ErrUnknownKind},
	}
	if a == tick.Observe {
		rp.MaximumAttempts = 1
	}
	queue := TaskQueue
	if host := n.RunsOn(); host != "" {
		// A local process runs on its host: that host's worker serves this queue.
		queue = HostTaskQueue(host)
	}
	return workflow.ActivityOptions{
		TaskQueue: queue,
		// For a host's queue: no pickup in time means the host is unreachable.
		ScheduleToStartTimeout: n.UnreachableAfter(),
		StartToCloseTimeout:    timeout,
		HeartbeatTimeout:       hb,
		RetryPolicy:            rp,
		WaitForCancellation:    true,
		// Eager dispatch is the worker process's choice (--eager-actions):
		// workerRun.launch asks for it.
		DisableEagerExecution: true,
	}
}
