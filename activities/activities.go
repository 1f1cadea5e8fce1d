// Package activities holds steward's activities:
//
//   - Start, Stop, Restart, Observe, Reload of one worker's service
//     (activities.go), after the host's admission checks (the guard of
//     internal/admission), their end reported to the worker's supervisor
//     by a signal (report*.go);
//   - HandOut (handout.go): a supervisor's specs to its children, run as
//     a local activity of the supervisor's task;
//   - the control queue's: a supervisor's look at its closed children and
//     a closed child's spec (control.go, subtree.go), a rollout's chunks
//     (rollout.go), notifications (notify.go), a host's subscriptions
//     (host.go);
//   - a host queue's: its liveness lease (host.go), log reads (logs.go) and
//     usage reads (services.go).
//
// Start, Stop, Restart and Observe are thin: each dispatches to the
// driver of the worker's kind, heartbeats while the driver works, and turns
// the driver's error into a Temporal error the RetryPolicy understands
// (ErrPermanent is non-retryable, ErrActionFailed is retried).
//
// Every result and every driver failure carries the attempt number (a
// cancellation or timeout is reported by Temporal as such), so the worker's
// status can say "succeeded after 3 attempts".
package activities

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/steward-sh/steward/internal/admission"
	"github.com/steward-sh/steward/internal/driver"
	"github.com/steward-sh/steward/internal/driver/process"
	"github.com/steward-sh/steward/internal/spec"
	"github.com/steward-sh/steward/internal/treestatus"
)

// Activity type names, as registered with Prefix.
const (
	Prefix      = "steward."
	StartName   = Prefix + "Start"
	StopName    = Prefix + "Stop"
	RestartName = Prefix + "Restart"
	ObserveName = Prefix + "Observe"
	ReloadName  = Prefix + "Reload"
	RunJobName  = Prefix + "RunJob"
)

// SlowAfter is how long an action runs before its workflow hears that it is
// slow (Activities.Slow).
const SlowAfter = time.Second

// Error types of failed actions, for RetryPolicy.NonRetryableErrorTypes.
const (
	ErrPermanent    = "PermanentError"
	ErrActionFailed = "ActionFailed"
	ErrUnknownKind  = "UnknownKind"
	// ErrRefused: the host would not run the spec (its policy, or a
	// signature it requires): nothing ran, nothing was stopped. It is
	// non-retryable.
	ErrRefused = "Refused"
)

// ActionRequest is the input of every action.
type ActionRequest struct {
	WorkflowID string    `json:"workflowId"`
	Path       string    `json:"path"`
	Seq        int64     `json:"seq"`
	Spec       spec.Node `json:"spec"`
	Instance   string    `json:"instance,omitempty"`
	// OnSuccess is the report the worker's workflow would send its
	// supervisor once this action succeeds; the activity sends it itself
	// (Activities.Report), which spares the workflow a signal and the
	// workflow task that follows it (nil: the workflow reports, if at all).
	OnSuccess *SuccessReport `json:"onSuccess,omitempty"`
	// Template is a signed fleet worker's spec as its supervisor sent it,
	// before rendering: a host with --trusted-keys verifies its signature
	// and that Spec is its rendering (admission.VerifyFleet).
	Template *spec.Node `json:"template,omitempty"`
	// Deadline bounds a job's run (RunJob): past it, the run's process is
	// left running and the result says TimedOut (its workflow stops it).
	Deadline time.Time `json:"deadline,omitzero"`
	// Adopt: RunJob only finds the run's process (an earlier attempt may
	// have started it), and never starts one.
	Adopt bool `json:"adopt,omitempty"`
	// OnEnd is a job run's record, which RunJob completes with the run's
	// end and tells its job (ActionResult.Run, Told): the run's workflow
	// then has nothing left to tell.
	OnEnd *JobEnd `json:"onEnd,omitempty"`
}

// JobEnd is a job run's record for RunJob to complete with its end and
// send to its job (Signal to the workflow Job; StartedAt: when the run
// began, for a run whose process is adopted).
type JobEnd struct {
	Job    string            `json:"job"`
	Signal string            `json:"signal"`
	Run    treestatus.JobRun `json:"run"`
}

// SuccessReport is a report to send to Parent when the action succeeds.
// The activity fills in what only it knows: the instance, the attempts and
// the time.
type SuccessReport struct {
	Parent string                 `json:"parent"`
	Report treestatus.ChildReport `json:"report"`
}

// ActionResult is the output of every action.
type ActionResult struct {
	Attempt  int32  `json:"attempt"`
	Instance string `json:"instance,omitempty"`
	Observed string `json:"observed,omitempty"`
	// Reported: the request's OnSuccess report reached the supervisor.
	Reported bool `json:"reported,omitempty"`
	// Done: when the action succeeded, by the host's clock (before its
	// success report was sent). The worker dates the state it enters by
	// it: the task that learns of the end comes later.
	Done time.Time `json:"done,omitzero"`
	// Exit is how a job's run ended (RunJob), when its driver awaited it;
	// TimedOut: its deadline came first. Started: when it began (RunJob).
	Exit     *driver.Exit `json:"exit,omitempty"`
	TimedOut bool         `json:"timedOut,omitempty"`
	Started  time.Time    `json:"started,omitzero"`
	// Run is the run's record RunJob completed (OnEnd), and Told: its job
	// was told of it.
	Run  *treestatus.JobRun `json:"run,omitempty"`
	Told bool               `json:"told,omitempty"`
}

// Activities dispatches actions to drivers by worker kind.
type Activities struct {
	Drivers map[string]driver.Driver
	// Metrics receives the action metrics (nil: none); PoolSize is the
	// action slots per task queue, for the pool utilization.
	Metrics  client.MetricsHandler
	PoolSize int
	// Slow, when set, tells a worker workflow that its start, stop or
	// restart is still running after SlowAfter (the worker then publishes
	// its transient state: without it a quick action costs no timer).
	Slow func(ctx context.Context, workflowID string, seq int64) error
	// Signal sends a workflow a signal (client.SignalWorkflow): the
	// supervisors' hand-outs (HandOut).
	Signal func(ctx context.Context, workflowID, name string, arg any) error
	// Update, when set, sends a workflow an Update and waits for its
	// outcome (client.UpdateWorkflow to its completed stage): the
	// hand-outs' way to a worker (HandOut; nil: they signal).
	Update func(ctx context.Context, workflowID, updateID, name string, arg any) error
	// Report, when set, sends a succeeded action's OnSuccess report to the
	// supervisor (a Reporter's Report); an error leaves the report to the
	// workflow.
	Report func(ctx context.Context, parent string, r treestatus.ChildReport) error
	// Complete and Heartbeat, when set (client.CompleteActivity and
	// client.RecordActivityHeartbeat), let a succeeded action give its slot
	// back before its report is sent (report_async.go), and a start whose
	// attempt the server gave up on stop what it started (abandoned.go).
	Complete  func(ctx context.Context, taskToken []byte, result any, err error) error
	Heartbeat func(ctx context.Context, taskToken []byte, details ...any) error
	// Guard is this host's admission (worker --policy, --trusted-keys):
	// asked before a process is started, restarted or observed (its probes
	// run programs); nil admits everything.
	Guard *admission.Guard
	// Log, when set, hears of every refusal.
	Log func(msg string, keyvals ...any)

	mu       sync.Mutex
	inFlight map[string]int // by task queue
	// reporting: the succeeded actions still sending their report;
	// stopping: WaitReports has begun (no more are counted).
	reporting sync.WaitGroup
	stopping  bool
}

// Action metrics (docs/metrics.md).
const (
	MetricExecutionDuration = "steward_action_execution_duration_seconds" // {action, kind, status}
	MetricPoolUtilization   = "steward_worker_pool_utilization"           // {task_queue}: in flight / pool size
	MetricRefusedActions    = "steward_refused_actions_total"             // {action, rule}: refused by the host's policy or signature check
)

// track counts an action in or out of its task queue's slots and updates
// the pool utilization.
func (a *Activities) track(queue string, delta int) {
	if a.Metrics == nil || a.PoolSize <= 0 {
		return
	}
	a.mu.Lock()
	if a.inFlight == nil {
		a.inFlight = map[string]int{}
	}
	a.inFlight[queue] += delta
	n := a.inFlight[queue]
	a.mu.Unlock()
	a.Metrics.WithTags(map[string]string{"task_queue": queue}).Gauge(MetricPoolUtilization).Update(float64(n) / float64(a.PoolSize))
}

// observe records an action's execution time by outcome.
func (a *Activities) observe(ctx context.Context, kind string, began time.Time, err error) {
	if a.Metrics == nil {
		return
	}
	status := "success"
	switch {
	case err == nil:
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		status = "timeout"
	case ctx.Err() != nil:
		status = "cancelled"
	default:
		status = "failure"
	}
	action := strings.ToLower(strings.TrimPrefix(activity.GetInfo(ctx).ActivityType.Name, Prefix))
	a.Metrics.WithTags(map[string]string{"action": action, "kind": kind, "status": status}).
		Timer(MetricExecutionDuration).Record(time.Since(began))
}

// Start starts the service.
func (a *Activities) Start(ctx context.Context, req ActionRequest) (ActionResult, error) {
	return a.run(ctx, req, func(d driver.Driver, r driver.Request) (ActionResult, error) {
		id, err := d.Start(ctx, r)
		return ActionResult{Instance: id}, err
	})
}

// RunJob runs a job's run to its end in one activity: its process
// started (or, with req.Adopt, found: an earlier attempt may have started
// it) and its end awaited until req.Deadline (driver.Runner). The end is
// the result, so the run's workflow takes no signal and no task for it.
// A driver that cannot await (stub, http) starts the run and has its end
// pushed, as Start does. A run to adopt that the host does not know ended
// (it never started, or ended as its worker died) ends as failed: its
// process is never started twice.
func (a *Activities) RunJob(ctx context.Context, req ActionRequest) (ActionResult, error) {
	return a.run(ctx, req, func(d driver.Driver, r driver.Request) (ActionResult, error) {
		rd, ok := d.(driver.Runner)
		if !ok {
			if req.Adopt {
				return ActionResult{}, nil // its end is pushed
			}
			id, err := d.Start(ctx, r)
			return ActionResult{Instance: id}, err
		}
		wctx := ctx
		if !req.Deadline.IsZero() {
			var cancel context.CancelFunc
			wctx, cancel = context.WithDeadline(ctx, req.Deadline)
			defer cancel()
		}
		started := time.Now().UTC()
		e, err := rd.Run(wctx, r, req.Adopt)
		switch {
		case errors.Is(err, driver.ErrRunUnknown):
			e, err = driver.Exit{Reason: "its end is not known: " + err.Error()}, nil
			fallthrough
		case err == nil:
			res := ActionResult{Instance: e.Instance, Exit: &e}
			if !req.Adopt {
				res.Started = started
			}
			a.tellJob(ctx, req.OnEnd, &res)
			return res, nil
		case ctx.Err() == nil && errors.Is(err, context.DeadlineExceeded):
			return ActionResult{TimedOut: true}, nil
		}
		return ActionResult{}, err
	})
}

// tellJob completes a job run's record (on) with its end (res) and tells
// its job: res.Run, and res.Told once told. A record for another job than
// the run's own (its workflow ID names it) is told nothing.
func (a *Activities) tellJob(ctx context.Context, on *JobEnd, res *ActionResult) {
	if on == nil || res.Exit == nil {
		return
	}
	run := on.Run
	run.ID = activity.GetInfo(ctx).WorkflowExecution.ID
	if !res.Started.IsZero() {
		run.StartedAt = res.Started
	}
	run.EndedAt = time.Now().UTC()
	run.EndedBy(res.Exit.Normal, res.Exit.Code, res.Exit.Reason)
	res.Run = &run
	if !spec.IsJobRun(run.ID, on.Job) {
		return
	}
	b, err := json.Marshal(run)
	if err != nil {
		return
	}
	res.Told = a.TellJob(ctx, TellJobRequest{Job: on.Job, Signal: on.Signal, Run: b}) == nil
}

// Stop stops the service.
func (a *Activities) Stop(ctx context.Context, req ActionRequest) (ActionResult, error) {
	return a.run(ctx, req, func(d driver.Driver, r driver.Request) (ActionResult, error) {
		return ActionResult{}, d.Stop(ctx, r)
	})
}

// Restart stops and starts the service.
func (a *Activities) Restart(ctx context.Context, req ActionRequest) (ActionResult, error) {
	return a.run(ctx, req, func(d driver.Driver, r driver.Request) (ActionResult, error) {
		id, err := d.Restart(ctx, r)
		return ActionResult{Instance: id}, err
	})
}

// Reload asks the running service to re-read its configuration: the same
// instance goes on (its result names it). A driver without reloads, or a
// node without one configured, is a permanent failure.
func (a *Activities) Reload(ctx context.Context, req ActionRequest) (ActionResult, error) {
	return a.run(ctx, req, func(d driver.Driver, r driver.Request) (ActionResult, error) {
		rd, ok := d.(driver.Reloader)
		if !ok || !r.Spec.ReloadConfigured() {
			return ActionResult{}, driver.Permanent(fmt.Errorf("%s has no reload configured (process.reload or http.reload)", r.Path))
		}
		return ActionResult{Instance: r.Instance}, rd.Reload(ctx, r)
	})
}

// Observe checks whether the service still runs.
func (a *Activities) Observe(ctx context.Context, req ActionRequest) (ActionResult, error) {
	return a.run(ctx, req, func(d driver.Driver, r driver.Request) (ActionResult, error) {
		obs, err := d.Observe(ctx, r)
		return ActionResult{Observed: string(obs)}, err
	})
}

func (a *Activities) run(ctx context.Context, req ActionRequest, do func(driver.Driver, driver.Request) (ActionResult, error)) (ActionResult, error) {
	info := activity.GetInfo(ctx)
	attempt := info.Attempt
	d, ok := a.Drivers[req.Spec.Kind]
	if !ok {
		return ActionResult{Attempt: attempt}, temporal.NewApplicationErrorWithOptions(
			fmt.Sprintf("no driver for kind %q in this worker", req.Spec.Kind), ErrUnknownKind,
			temporal.ApplicationErrorOptions{NonRetryable: true, Details: []any{attempt}})
	}
	if err := a.admit(ctx, &req); err != nil {
		return ActionResult{Attempt: attempt}, err
	}
	a.track(info.TaskQueue, 1)
	defer a.track(info.TaskQueue, -1)
	if a.Slow != nil && info.ActivityType.Name != ObserveName && info.ActivityType.Name != RunJobName {
		slow := time.AfterFunc(SlowAfter, func() {
			sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			_ = a.Slow(sctx, req.WorkflowID, req.Seq) // best effort: the action's end publishes anyway
		})
		defer slow.Stop()
	}
	began := time.Now()
	stop := heartbeat(ctx, info.HeartbeatTimeout, attempt)
	dreq := driver.Request{
		WorkflowID: req.WorkflowID, Path: req.Path, Spec: req.Spec,
		Instance: req.Instance, Seq: req.Seq, Attempt: attempt,
	}
	res, err := do(d, dreq)
	res.Attempt = attempt
	if err == nil && res.Instance != "" && abandons(info.ActivityType.Name, req.Spec) {
		// An attempt the server gave up on while it ran (its host froze)
		// leaves no process that no workflow owns (abandoned.go).
		if a.attemptGone(ctx, time.Since(began)) {
			stop()
			a.abandon(d, dreq, res.Instance)
			err = errors.New("the server no longer knows this attempt (it timed out while the action ran): the instance it started was stopped")
			a.observe(ctx, req.Spec.Kind, began, err)
			return res, err
		}
	}
	if err == nil {
		res.Done = time.Now().UTC()
		if a.completesAfterReport(req) && a.beginReport() {
			stop()
			a.observe(ctx, req.Spec.Kind, began, nil)
			var gone func()
			if res.Instance != "" && abandons(info.ActivityType.Name, req.Spec) {
				gone = func() { a.abandon(d, dreq, res.Instance) }
			}
			a.completeAfterReport(info.TaskToken, info.HeartbeatTimeout, time.Since(began), req.OnSuccess, res, gone)
			return ActionResult{}, activity.ErrResultPending
		}
		// Still heartbeating: a slow signal must not time the attempt out
		// (a retried start would start the service again).
		res.Reported = a.reportSuccess(ctx, req.OnSuccess, res)
	}
	stop()
	a.observe(ctx, req.Spec.Kind, began, err)
	if err == nil {
		return res, nil
	}
	if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
		// Cancelled or timed out: let Temporal report it as such.
		return res, err
	}
	typ := ErrActionFailed
	if driver.IsPermanent(err) {
		typ = ErrPermanent
	}
	// A log path in the message names the log directory, not the
	// descriptor the worker reaches it through (process.AnchorDir).
	return res, temporal.NewApplicationErrorWithOptions(process.ShowAnchors(err.Error()), typ,
		temporal.ApplicationErrorOptions{NonRetryable: typ == ErrPermanent, Details: []any{attempt}})
}

// admit asks the host's guard before an action runs anything: a refused
// start or restart is a non-retryable failure (ErrRefused) whose message
// names the rule, counted and logged. A process's stop or observe is never
// refused (the instance that runs must stay watched and stoppable), but
// under a refused spec it runs without the spec's probes: nothing the spec
// names runs (req is changed in place). An http worker's stop or observe
// under a refused spec is refused: it is a request to what the spec names.
func (a *Activities) admit(ctx context.Context, req *ActionRequest) error {
	info := activity.GetInfo(ctx)
	if a.Guard.Open() {
		return nil
	}
	// The workflow that asked is the one the server names, whatever the
	// input says: the driver acts on that workflow's own records.
	req.WorkflowID = info.WorkflowExecution.ID
	name := info.ActivityType.Name
	err := a.Guard.Admit(admission.Action{WorkflowID: info.WorkflowExecution.ID, Path: req.Path, Spec: req.Spec, Template: req.Template,
		Starts: name == StartName || name == RestartName || name == RunJobName && !req.Adopt})
	if err == nil {
		return nil
	}
	// (A job run adopted is one that runs: it stays awaited.)
	if (name == StopName || name == ObserveName || name == RunJobName && req.Adopt) && req.Spec.Kind != spec.KindHTTP {
		req.Spec = withoutProbes(req.Spec)
		return nil
	}
	// An http worker's stop or observe is itself a request its spec names
	// (a URL, headers read from the host's secrets): under a refused spec
	// none is sent, and the action is refused as a start would be.
	action := strings.ToLower(strings.TrimPrefix(info.ActivityType.Name, Prefix))
	rule := "signature"
	var r *admission.Refusal
	if errors.As(err, &r) && strings.HasPrefix(r.Rule, "policy") {
		rule = "policy"
	}
	if a.Metrics != nil {
		a.Metrics.WithTags(map[string]string{"action": action, "rule": rule}).Counter(MetricRefusedActions).Inc(1)
	}
	if a.Log != nil {
		a.Log("refused", "action", action, "path", req.Path, "reason", err.Error())
	}
	return temporal.NewApplicationErrorWithOptions(err.Error(), ErrRefused,
		temporal.ApplicationErrorOptions{NonRetryable: true, Details: []any{info.Attempt}})
}

// withoutProbes is a process node with its ready and health probes
// dropped (the only programs a stop or an observe would run).
func withoutProbes(n spec.Node) spec.Node {
	if n.Process == nil {
		return n
	}
	p := make(map[string]any, len(n.Process))
	for k, v := range n.Process {
		if k != "ready" && k != "health" {
			p[k] = v
		}
	}
	n.Process = p
	return n
}

// reportSuccess sends a succeeded action's report, if it has one and this
// process can, with the instance, the attempts and the time filled in.
func (a *Activities) reportSuccess(ctx context.Context, on *SuccessReport, res ActionResult) bool {
	if on == nil || a.Report == nil {
		return false
	}
	r := on.Report
	if res.Instance != "" {
		r.Status.Instance = res.Instance
	}
	r.Status.LastAction.Attempts = int(res.Attempt)
	r.Status.Since = time.Now().UTC()
	// Bounded well below the heartbeat timeout and the action's own: a
	// report that waits longer is left to the workflow.
	rctx, cancel := context.WithTimeout(ctx, ReportWait)
	defer cancel()
	return a.Report(rctx, on.Parent, r) == nil
}

// ReportWait bounds how long a succeeded action waits for its report to
// reach the supervisor.
const ReportWait = 2 * time.Second

// heartbeat records a heartbeat (carrying the attempt) at once and then
// three times per heartbeat timeout, so that a lost worker process is seen
// within seconds and a cancellation reaches the driver. It returns a
// function that stops it and waits for it to end.
func heartbeat(ctx context.Context, timeout time.Duration, attempt int32) (stop func()) {
	if timeout <= 0 {
		return func() {}
	}
	activity.RecordHeartbeat(ctx, attempt)
	return every(ctx, max(timeout/3, 50*time.Millisecond), func() { activity.RecordHeartbeat(ctx, attempt) })
}

// every calls beat every period until ctx ends or the returned stop is
// called; stop waits for the last call to end.
func every(ctx context.Context, period time.Duration, beat func()) (stop func()) {
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(period)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-t.C:
				beat()
			}
		}
	}()
	return func() {
		close(done)
		<-finished
	}
}
