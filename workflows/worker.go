package workflows

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/steward-sh/steward/activities"
	"github.com/steward-sh/steward/internal/spec"
	"github.com/steward-sh/steward/internal/tick"
)

// WorkerInput starts (or continues) a worker workflow.
type WorkerInput struct {
	Path string `json:"path"`
	// Parent is the workflow ID of the supervisor to report to ("" for none).
	Parent     string    `json:"parent,omitempty"`
	Spec       spec.Node `json:"spec"`
	Generation int64     `json:"generation"`
	// HistoryLimit overrides DefaultHistoryLimit (tests use small ones).
	HistoryLimit int `json:"historyLimit,omitempty"`
	// Coordinated: the supervisor restarts this worker with its siblings
	// (one_for_all, rest_for_one); the worker does not restart itself.
	Coordinated bool `json:"coordinated,omitempty"`
	// Carry is the state carried across continue-as-new (nil on a first run).
	Carry *WorkerCarry `json:"carry,omitempty"`
}

// WorkerCarry is the state of a worker that survives continue-as-new.
type WorkerCarry struct {
	Memory          tick.Memory  `json:"memory"`
	Desired         tick.Desired `json:"desired"`
	LastAction      ActionStatus `json:"lastAction"`
	Seq             int64        `json:"seq"`
	RejectedSignals int          `json:"rejectedSignals"`
	Since           time.Time    `json:"since"`
	// PendingExits are exits that arrived while an action was in flight,
	// oldest first; the tick after the action sees each (stale ones are
	// ignored by their instance).
	PendingExits []tick.Exit `json:"pendingExits,omitempty"`
	// SuperviseSeq is the last supervise request handled (echoed in status
	// so the supervisor knows its request arrived).
	SuperviseSeq int64 `json:"superviseSeq,omitempty"`
	// ReportSeq numbers the reports to the parent.
	ReportSeq int64 `json:"reportSeq,omitempty"`
}

// WorkerWorkflow supervises one service.
//
// It is an event-driven loop: signals (desired, restart, spec, exit), the
// result of the action in flight, the backoff timer and the slow observe
// timer each wake it; each wake-up feeds one Snapshot to tick.Next, which
// says what the worker becomes and which action to run.
//
// Guarantees:
//   - The tick never blocks: actions run as activities while the loop keeps
//     serving signals, queries and timers.
//   - At most one action is in flight (a size-1 queue), and no new action is
//     derived while it is: what arrives meanwhile is recorded (tick.Absorb)
//     and seen by the tick that handles the action's result.
//   - A desired state that makes the in-flight action pointless cancels it
//     (tick.ShouldCancel); the activity learns of it through its heartbeat.
//   - A bad signal payload is logged, counted in status, and ignored.
//   - History stays bounded: the workflow continues as new when the server
//     suggests it or past HistoryLimit events, never with an action in
//     flight, after draining every signal into the carried state.
//   - Cancelling the workflow (starter delete, a supervisor removing the
//     child) stops the service and ends the workflow.
func WorkerWorkflow(ctx workflow.Context, in WorkerInput) error {
	w, err := newWorkerRun(ctx, in)
	if err != nil {
		return err
	}
	return w.loop()
}

type inflight struct {
	action tick.Action
	future workflow.Future
	cancel workflow.CancelFunc
	// cancelled: the workflow asked the activity to stop.
	cancelled bool
}

type workerRun struct {
	ctx    workflow.Context
	log    log.Logger
	in     WorkerInput
	node   spec.Node // resolved
	carry  WorkerCarry
	flight *inflight

	backoff       deadline // the pending automatic restart
	observeTimer  workflow.Future
	observeCancel workflow.CancelFunc

	lastState    tick.State
	lastReported *Status
	searchState  string

	// wake is the timer of a watched rollout operation's budget (armWake).
	wake deadline
	// The rollout update (worker_rollout.go): calls carries operations from
	// the handler to the loop, outcomes the loop's answers back; watch is
	// the operation in progress.
	calls    workflow.Channel
	outcomes map[int64]activities.RolloutOutcome
	callSeq  int64
	watch    *RolloutWatch
	// sent holds the reports and rollout results this run sent that may not
	// be delivered yet: they must be before the workflow continues as new.
	sent []workflow.Future
}

func newWorkerRun(ctx workflow.Context, in WorkerInput) (*workerRun, error) {
	w := &workerRun{ctx: ctx, log: workflow.GetLogger(ctx), in: in}
	if ps := spec.ValidateWorker(in.Spec); len(ps) > 0 {
		// Starters validate before starting anything; this guards direct starts.
		return nil, temporal.NewNonRetryableApplicationError("invalid worker spec:\n"+ps.Error(), "InvalidSpec", nil)
	}
	w.node = rendered(in.Spec)
	if in.Carry != nil {
		w.carry = *in.Carry
	} else {
		w.carry = WorkerCarry{Desired: tick.Desired(w.node.Desired), Memory: tick.Memory{State: tick.Stopped, Reason: "created"}, Since: workflow.Now(ctx)}
	}
	w.lastState = w.carry.Memory.State
	if state, kind := searchAttributesSet(ctx, in.Path); state != "" && kind != "" {
		w.searchState = state + "/" + kind // upsertSearch skips what is set
	}
	if err := workflow.SetQueryHandler(ctx, QueryStatus, func() (Status, error) { return w.status(), nil }); err != nil {
		return nil, err
	}
	if err := w.setupRolloutUpdate(ctx); err != nil {
		return nil, err
	}
	return w, nil
}

func (w *workerRun) loop() error {
	ctx := w.ctx
	desiredCh := workflow.GetSignalChannel(ctx, SignalDesired)
	restartCh := workflow.GetSignalChannel(ctx, SignalRestart)
	specCh := workflow.GetSignalChannel(ctx, SignalSpec)
	exitCh := workflow.GetSignalChannel(ctx, SignalExit)
	superviseCh := workflow.GetSignalChannel(ctx, SignalSupervise)
	slowCh := workflow.GetSignalChannel(ctx, SignalSlow)

	w.upsertSearch()
	w.tick(tick.Snapshot{Event: tick.EventReconcile})
	w.replayPendingExits()

	cancelled := false
	for {
		sel := workflow.NewSelector(ctx)
		sel.AddReceive(ctx.Done(), func(workflow.ReceiveChannel, bool) { cancelled = true })
		sel.AddReceive(desiredCh, func(c workflow.ReceiveChannel, _ bool) { w.onDesired(receiveRaw(ctx, c)) })
		sel.AddReceive(restartCh, func(c workflow.ReceiveChannel, _ bool) { receiveRaw(ctx, c); w.onRestart() })
		sel.AddReceive(specCh, func(c workflow.ReceiveChannel, _ bool) { w.onSpec(receiveRaw(ctx, c)) })
		sel.AddReceive(exitCh, func(c workflow.ReceiveChannel, _ bool) { w.onExit(receiveRaw(ctx, c)) })
		sel.AddReceive(superviseCh, func(c workflow.ReceiveChannel, _ bool) { w.onSupervise(receiveRaw(ctx, c)) })
		sel.AddReceive(w.calls, func(c workflow.ReceiveChannel, _ bool) {
			var call rolloutCall
			c.Receive(ctx, &call)
			w.onRolloutCall(call)
		})
		sel.AddReceive(slowCh, func(c workflow.ReceiveChannel, _ bool) { w.onSlow(receiveRaw(ctx, c)) })
		if t := w.wake.fut; t != nil {
			sel.AddFuture(t, func(fut workflow.Future) { w.wake.fired(fut) }) // afterEvent checks the budget
		}
		if f := w.flight; f != nil {
			sel.AddFuture(f.future, func(fut workflow.Future) { w.onActionDone(f, fut) })
		}
		if t := w.backoff.fut; t != nil {
			sel.AddFuture(t, func(fut workflow.Future) {
				if !w.backoff.fired(fut) {
					return
				}
				if fut.Get(ctx, nil) == nil {
					w.tickIfIdle(tick.Snapshot{Event: tick.EventBackoffExpired})
				}
			})
		}
		if t := w.observeTimer; t != nil {
			sel.AddFuture(t, func(fut workflow.Future) {
				if fut != w.observeTimer {
					return
				}
				w.observeTimer = nil
				if fut.Get(ctx, nil) == nil {
					w.tickIfIdle(tick.Snapshot{Event: tick.EventReconcile})
				}
			})
		}
		sel.Select(ctx)
		if cancelled {
			return w.shutdown()
		}
		w.carry.RejectedSignals += dropUnknownSignals(ctx, w.log, SignalDesired, SignalRestart, SignalSpec, SignalExit, SignalSupervise, SignalSlow)
		w.afterEvent()
		if w.flight == nil && w.watch == nil && workflow.AllHandlersFinished(ctx) && w.shouldContinueAsNew() && ctx.Err() == nil {
			if done, err := w.continueAsNew(desiredCh, restartCh, specCh, exitCh, superviseCh); done {
				return err
			}
		}
	}
}

// receiveRaw takes one signal without decoding it, so a payload that does
// not decode is ours to reject and count (the SDK would drop it silently).
func receiveRaw(ctx workflow.Context, c workflow.ReceiveChannel) converter.RawValue {
	var raw converter.RawValue
	c.Receive(ctx, &raw)
	return raw
}

func decodeRaw(raw converter.RawValue, out any) error {
	if raw.Payload() == nil {
		return errors.New("no payload")
	}
	return converter.GetDefaultDataConverter().FromPayload(raw.Payload(), out)
}

func (w *workerRun) reject(signal string, err error) {
	w.carry.RejectedSignals++
	count(w.ctx, MetricRejectedSignals, map[string]string{"signal": signal})
	if signal == SignalSpec && templateProblem(err) {
		count(w.ctx, MetricTemplateErrors, nil)
	}
	w.log.Warn("rejected signal", "signal", signal, "path", w.in.Path, "error", err.Error(), "rejected", w.carry.RejectedSignals)
}

// event feeds an event to the tick when no action is in flight, and records
// it (tick.Absorb) when one is.
func (w *workerRun) event(s tick.Snapshot) {
	if w.flight != nil {
		w.carry.Memory = tick.Absorb(w.carry.Memory, s.Event, s.SpecNeedsRestart)
		return
	}
	w.tick(s)
}

func (w *workerRun) tickIfIdle(s tick.Snapshot) {
	if w.flight == nil {
		w.tick(s)
	}
}

func (w *workerRun) onDesired(raw converter.RawValue) {
	var d string
	if err := decodeRaw(raw, &d); err != nil {
		w.reject(SignalDesired, fmt.Errorf("payload must be \"running\" or \"stopped\": %w", err))
		return
	}
	if d != spec.DesiredRunning && d != spec.DesiredStopped {
		w.reject(SignalDesired, fmt.Errorf("payload must be \"running\" or \"stopped\", got %q", d))
		return
	}
	w.setDesired(tick.Desired(d))
}

func (w *workerRun) setDesired(d tick.Desired) {
	w.carry.Desired = d
	if f := w.flight; f != nil && !f.cancelled && tick.ShouldCancel(f.action, w.carry.Desired) {
		f.cancelled = true
		f.cancel()
	}
	w.event(tick.Snapshot{Event: tick.EventDesired})
}

func (w *workerRun) onRestart() {
	// A restart means the operator wants the service running (systemd's
	// restart starts a stopped unit too).
	w.carry.Desired = tick.WantRunning
	w.event(tick.Snapshot{Event: tick.EventRestart})
}

func (w *workerRun) onSpec(raw converter.RawValue) {
	u, err := decodeUpdate(raw)
	if err == nil && u.Spec.Name != w.node.Name {
		err = fmt.Errorf("spec.name %q does not match this worker (%q)", u.Spec.Name, w.node.Name)
	}
	if err == nil {
		if ps := spec.ValidateWorker(u.Spec); len(ps) > 0 {
			err = ps
		}
	}
	if err != nil {
		w.reject(SignalSpec, err)
		return
	}
	recordPropagation(w.ctx, u)
	old := w.node
	w.in.Spec = u.Spec
	w.node = rendered(u.Spec)
	if u.Coordinated != nil {
		w.in.Coordinated = *u.Coordinated
	}
	if u.Generation > 0 {
		w.in.Generation = u.Generation
	} else {
		w.in.Generation++
	}
	if w.node.Desired != old.Desired {
		w.carry.Desired = tick.Desired(w.node.Desired)
	}
	if w.observeTimer != nil && w.node.Observe.Interval.D() != old.Observe.Interval.D() {
		w.observeCancel() // re-armed with the new interval after this event
		w.observeTimer = nil
	}
	w.upsertSearch()
	w.event(tick.Snapshot{Event: tick.EventSpec, SpecNeedsRestart: driverChanged(old, w.node)})
}

// rendered is a validated worker node with its driver templates executed
// and every default filled in: what the tick and the drivers act on.
func rendered(n spec.Node) spec.Node {
	r, _ := spec.Render(n, "") // validated: it renders
	return r.Resolved()
}

// onSupervise carries out the supervisor's stop or restart of a group.
func (w *workerRun) onSupervise(raw converter.RawValue) {
	r, err := decodeSupervise(raw)
	if err != nil {
		w.reject(SignalSupervise, err)
		return
	}
	if r.Seq > w.carry.SuperviseSeq {
		w.carry.SuperviseSeq = r.Seq
	}
	if r.Op == SuperviseStop {
		if f := w.flight; f != nil && !f.cancelled && tick.ShouldCancel(f.action, tick.WantStopped) {
			f.cancelled = true
			f.cancel()
		}
		w.event(tick.Snapshot{Event: tick.EventSupervisorStop})
		return
	}
	w.event(tick.Snapshot{Event: tick.EventSupervisorRestart})
}

// decodeUpdate accepts {"generation": N, "spec": {...}} or a bare node.
func decodeUpdate(raw converter.RawValue) (spec.Update, error) {
	var u spec.Update
	if err := decodeRaw(raw, &u); err == nil && u.Spec.Name != "" {
		return u, nil
	}
	var n spec.Node
	if err := decodeRaw(raw, &n); err != nil {
		return spec.Update{}, fmt.Errorf("payload is not a spec: %w", err)
	}
	if n.Name == "" {
		return spec.Update{}, errors.New("payload is not a spec: no name")
	}
	return spec.Update{Spec: n}, nil
}

// driverChanged reports whether a running service must restart to apply a
// new spec: its kind or driver block changed. Timeouts, retries, backoff and
// the desired state apply without a restart.
func driverChanged(a, b spec.Node) bool {
	ja, _ := json.Marshal([]any{a.Kind, a.Stub, a.Process, a.HTTP})
	jb, _ := json.Marshal([]any{b.Kind, b.Stub, b.Process, b.HTTP})
	return string(ja) != string(jb)
}

func (w *workerRun) onExit(raw converter.RawValue) {
	var e tick.Exit
	if err := decodeRaw(raw, &e); err != nil || e.Instance == "" {
		if err == nil {
			err = errors.New("no instance")
		}
		w.reject(SignalExit, err)
		return
	}
	if w.flight != nil {
		// Seen by the tick after the action; an exit of an instance that the
		// action replaced is then ignored by the instance check.
		w.carry.PendingExits = append(w.carry.PendingExits, e)
		if len(w.carry.PendingExits) > maxPendingExits {
			w.carry.PendingExits = w.carry.PendingExits[1:]
		}
		return
	}
	w.tick(tick.Snapshot{Event: tick.EventExited, Exit: &e})
}

func (w *workerRun) onActionDone(f *inflight, fut workflow.Future) {
	var res activities.ActionResult
	err := fut.Get(w.ctx, &res)
	w.flight = nil
	r := tick.Result{Action: f.action, Instance: res.Instance, Observed: tick.Observation(res.Observed)}
	attempts := int(res.Attempt)
	switch {
	case err == nil:
		r.Outcome = tick.Succeeded
	case temporal.IsCanceledError(err):
		r.Outcome = tick.Cancelled
	default:
		r.Outcome, attempts = classify(err, w.node.Retry.MaxAttempts, f.action)
		if r.Outcome == tick.TimedOut {
			count(w.ctx, MetricActionTimeouts, map[string]string{"action": string(f.action), "kind": w.node.Kind})
		}
		r.Error = rootMessage(err)
		if r.Outcome == tick.Unreachable {
			r.Error = fmt.Sprintf("host %s unreachable (no worker took the %s within %s)", w.node.ProcessHost(), f.action, w.node.UnreachableAfter())
		}
	}
	if f.action != tick.Observe {
		if attempts < 1 {
			attempts = 1
		}
		w.carry.LastAction = ActionStatus{Name: string(f.action), Status: string(r.Outcome), Attempts: attempts, Error: r.Error}
	}
	w.tick(tick.Snapshot{Event: tick.EventActionDone, Result: &r})
	w.replayPendingExits()
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
		w.tick(tick.Snapshot{Event: tick.EventExited, Exit: &e})
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

// rootMessage is the innermost error message: "stub: start failed", not the
// activity error wrapping it.
func rootMessage(err error) string {
	for {
		u := errors.Unwrap(err)
		if u == nil {
			return err.Error()
		}
		err = u
	}
}

// tick runs one tick and carries out its decision.
func (w *workerRun) tick(s tick.Snapshot) {
	s.Now = workflow.Now(w.ctx)
	s.Memory = w.carry.Memory
	s.Desired = w.carry.Desired
	s.RestartType = tick.RestartType(w.node.Restart)
	b := w.node.Backoff
	s.Backoff = tick.BackoffPolicy{Initial: b.Initial.D(), Max: b.Max.D(), Multiplier: b.Multiplier, Jitter: *b.Jitter, ResetAfter: b.ResetAfter.D()}
	s.JitterKey = tick.HashKey(w.in.Path)
	s.Coordinated = w.in.Coordinated
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
	opts := ActivityOptions(w.node, a)
	// What the Web UI shows for the activity: "start plant/line-1/press".
	opts.Summary = string(a) + " " + w.in.Path
	// Eager dispatch happens only where the worker process allows it
	// (--eager-actions) and for the shared queue.
	opts.DisableEagerExecution = false
	actx = workflow.WithActivityOptions(actx, opts)
	req := activities.ActionRequest{WorkflowID: workflow.GetInfo(w.ctx).WorkflowExecution.ID, Path: w.in.Path, Seq: w.carry.Seq, Spec: w.node, Instance: w.carry.Memory.Instance}
	fut := workflow.ExecuteActivity(actx, activityName(a), req)
	count(w.ctx, MetricActionQueued, map[string]string{"action": string(a), "kind": w.node.Kind})
	w.flight = &inflight{action: a, future: fut, cancel: cancel}
	if a != tick.Observe {
		w.carry.LastAction = ActionStatus{Name: string(a), Status: "running"}
	}
}

func activityName(a tick.Action) string {
	switch a {
	case tick.Start:
		return activities.StartName
	case tick.Stop:
		return activities.StopName
	case tick.Restart:
		return activities.RestartName
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
	if host := n.ProcessHost(); host != "" {
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

// afterEvent arms or disarms timers for the current state, upserts the
// search attributes and reports to the parent.
func (w *workerRun) afterEvent() {
	m := &w.carry.Memory
	if m.State != w.lastState {
		count(w.ctx, MetricStateTransitions, map[string]string{"from": string(w.lastState), "to": string(m.State), "kind": w.node.Kind})
		if host := w.node.ProcessHost(); host != "" && (m.State == tick.Unknown) != (w.lastState == tick.Unknown) {
			name := MetricCircuitCloses
			if m.State == tick.Unknown {
				name = MetricCircuitOpens
			}
			count(w.ctx, name, map[string]string{"host": host})
		}
		w.carry.Since = workflow.Now(w.ctx)
		w.lastState = m.State
	}
	// Backoff timer: exactly one, for the current BackoffUntil.
	if m.State == tick.Backoff && w.flight == nil {
		w.backoff.set(w.ctx, m.BackoffUntil)
	} else {
		w.backoff.stop()
	}
	// Observe timer: only while running (or probing an unreachable host).
	// It is kept through an action (one that fires meanwhile is dropped):
	// most actions end where they began, in running.
	if m.State == tick.Running || m.State == tick.Unknown {
		if w.observeTimer == nil && w.flight == nil {
			tctx, cancel := workflow.WithCancel(w.ctx)
			w.observeTimer = workflow.NewTimer(tctx, w.node.Observe.Interval.D())
			w.observeCancel = cancel
		}
	} else if w.observeTimer != nil && w.flight == nil {
		w.observeCancel()
		w.observeTimer = nil
	}
	w.checkRollout()
	w.publish()
	w.armWake()
	workflow.SetCurrentDetails(w.ctx, w.details())
}

// publish makes a change of status known: the search attributes and the
// report to the parent. A change while an action is in flight waits for the
// action's end, or for its `slow` signal (publish.go), unless the
// supervisor acts on it.
func (w *workerRun) publish() {
	if w.flight != nil && w.flight.action != tick.Observe {
		last := w.lastReported
		if w.in.Parent == "" || last == nil || !urgentChange(*last, w.status()) {
			return
		}
	}
	w.publishNow()
}

// publishNow publishes the current status.
func (w *workerRun) publishNow() {
	w.upsertSearch()
	w.report(false)
}

// onSlow: the action in flight has run for publishDelay (its activity says
// so): its transient state (starting, stopping) is published now.
func (w *workerRun) onSlow(raw converter.RawValue) {
	var seq int64
	if err := decodeRaw(raw, &seq); err != nil {
		w.reject(SignalSlow, err)
		return
	}
	if f := w.flight; f != nil && f.action != tick.Observe && seq == w.carry.Seq {
		w.publishNow()
	}
}

// details is the worker's status in Temporal markdown, shown as "Current
// Details" on the workflow's page in the Web UI (no history event).
func (w *workerRun) details() string {
	st := w.status()
	d := fmt.Sprintf("**%s** (desired %s) — %s\n\nrestarts: %d automatic, %d manual · generation %d",
		st.State, st.Desired, st.Reason, st.Restarts, st.ManualRestarts, st.Generation)
	if la := st.LastAction; la.Name != "" {
		d += fmt.Sprintf("\n\nlast action: %s %s (%s)", la.Name, la.Status, attemptsWord(la.Attempts))
		if la.Error != "" {
			d += ": " + la.Error
		}
	}
	if !st.BackoffUntil.IsZero() {
		d += "\n\nrestart at " + st.BackoffUntil.Format(time.RFC3339)
	}
	return d
}

func attemptsWord(n int) string {
	if n == 1 {
		return "1 attempt"
	}
	return fmt.Sprintf("%d attempts", n)
}

func (w *workerRun) searchKey() string { return string(w.carry.Memory.State) + "/" + w.node.Kind }

func (w *workerRun) upsertSearch() {
	state := string(w.carry.Memory.State)
	key := w.searchKey()
	if key == w.searchState {
		return
	}
	err := workflow.UpsertTypedSearchAttributes(w.ctx,
		SearchPath.ValueSet(w.in.Path), SearchKind.ValueSet(w.node.Kind), SearchState.ValueSet(state))
	if err != nil {
		w.log.Warn("could not upsert search attributes", "error", err.Error())
		return
	}
	w.searchState = key
}

func (w *workerRun) status() Status {
	m := w.carry.Memory
	s := Status{
		Path: w.in.Path, Kind: w.node.Kind, State: string(m.State), Desired: string(w.carry.Desired),
		Reason: m.Reason, Restarts: m.Restarts, ManualRestarts: m.ManualRestarts,
		Generation: w.in.Generation, LastAction: w.carry.LastAction, Children: []Status{},
		Since: w.carry.Since, RejectedSignals: w.carry.RejectedSignals, Instance: m.Instance,
		Terminations: m.Terminations, AwaitingRestart: m.AwaitingSupervisor, SuperviseSeq: w.carry.SuperviseSeq,
	}
	if m.State == tick.Backoff {
		s.BackoffUntil = m.BackoffUntil
	}
	// (A worker awaiting its supervisor's restart is not completed.)
	s.Completed = m.State == tick.Stopped && m.Hold && !m.AwaitingSupervisor && s.Desired == string(tick.WantRunning)
	return s
}

// report signals the parent when the status changed.
func (w *workerRun) report(ended bool) {
	if w.in.Parent == "" {
		return
	}
	st := w.status()
	if !ended && w.lastReported != nil && sameReport(*w.lastReported, st) {
		return
	}
	w.lastReported = &st
	st = narrowRecord(st)
	ctx := w.ctx
	if ended {
		ctx, _ = workflow.NewDisconnectedContext(w.ctx)
	}
	// Fire and forget: a parent that is gone must not stall the worker. The
	// last report is awaited: a signal initiated by a workflow that closes
	// in the same task may never be delivered.
	w.carry.ReportSeq++
	f := workflow.SignalExternalWorkflow(ctx, w.in.Parent, "", SignalChild, ChildReport{Seq: w.carry.ReportSeq, Run: workflow.GetInfo(w.ctx).FirstRunID, Status: st, Ended: ended})
	w.track(f)
	if ended {
		_ = f.Get(ctx, nil)
	}
}

// track keeps a sent signal until it is delivered: continue-as-new waits
// for every one (a signal initiated by a run that closes may be lost).
func (w *workerRun) track(f workflow.Future) {
	w.delivered() // drops what was delivered
	w.sent = append(w.sent, f)
}

// sameReport reports whether two statuses agree on what the supervisor acts
// on or shows as the worker's state. Counters, the last action and the
// reason of an unchanged state (a manual restart: running, then running
// again) are not reported on their own: they ride along with the next
// report, and `starter status` reads them from the worker itself.
func sameReport(a, b Status) bool {
	return a.State == b.State && a.Desired == b.Desired && a.Completed == b.Completed &&
		a.Generation == b.Generation && a.Terminations == b.Terminations &&
		a.AwaitingRestart == b.AwaitingRestart && a.SuperviseSeq == b.SuperviseSeq
}

func (w *workerRun) shouldContinueAsNew() bool {
	return continueAsNewDue(w.ctx, w.in.HistoryLimit)
}

// continueAsNew waits until what this run sent is delivered, drains every
// signal into the carried state (recording, not acting: no action may start
// now) and continues as new; done is false when a rollout update arrived
// meanwhile: the loop goes on and serves it first.
func (w *workerRun) continueAsNew(desiredCh, restartCh, specCh, exitCh, superviseCh workflow.ReceiveChannel) (done bool, err error) {
	if err := workflow.Await(w.ctx, func() bool {
		return (workflow.AllHandlersFinished(w.ctx) && w.delivered()) || w.calls.Len() > 0
	}); err != nil {
		return true, w.shutdown() // cancelled while waiting
	}
	if w.calls.Len() > 0 {
		return false, nil
	}
	w.drain(desiredCh, restartCh, specCh, exitCh, superviseCh)
	if w.ctx.Err() != nil {
		return true, w.shutdown()
	}
	next := w.in
	carry := w.carry
	next.Carry = &carry
	return true, workflow.NewContinueAsNewError(w.ctx, WorkerWorkflow, next)
}

// delivered reports whether every signal this run sent has been delivered
// (or failed), dropping those that have.
func (w *workerRun) delivered() bool {
	pending := w.sent[:0]
	for _, f := range w.sent {
		if !f.IsReady() {
			pending = append(pending, f)
		}
	}
	w.sent = pending
	return len(pending) == 0
}

func (w *workerRun) drain(chans ...workflow.ReceiveChannel) {
	// A pretend flight makes every handler record instead of tick.
	w.flight = &inflight{action: tick.None, cancelled: true}
	defer func() { w.flight = nil }()
	for {
		got := false
		for i, c := range chans {
			var raw converter.RawValue
			for c.ReceiveAsync(&raw) {
				got = true
				switch i {
				case 0:
					w.onDesired(raw)
				case 1:
					w.onRestart()
				case 2:
					w.onSpec(raw)
				case 3:
					w.onExit(raw)
				case 4:
					w.onSupervise(raw)
				}
				raw = converter.RawValue{}
			}
		}
		if !got {
			return
		}
	}
}

// shutdown runs when the workflow is cancelled: it lets the in-flight action
// end (it was cancelled with the workflow), stops the service, reports the
// end to the parent and ends the workflow as cancelled.
func (w *workerRun) shutdown() error {
	dctx, _ := workflow.NewDisconnectedContext(w.ctx)
	w.ctx = dctx
	if f := w.flight; f != nil {
		var res activities.ActionResult
		if err := f.future.Get(dctx, &res); err == nil && res.Instance != "" {
			w.carry.Memory.Instance = res.Instance
		}
		w.flight = nil
	}
	w.backoff.stop()
	if w.observeTimer != nil {
		w.observeCancel()
		w.observeTimer = nil
	}
	m := &w.carry.Memory
	if m.State != tick.Stopped || m.Instance != "" {
		m.State, m.Reason = tick.Stopping, "deleted: stopping"
		w.upsertSearch()
		opts := ActivityOptions(w.node, tick.Stop)
		opts.Summary = "stop " + w.in.Path + " (deleted)"
		actx := workflow.WithActivityOptions(dctx, opts)
		w.carry.Seq++
		req := activities.ActionRequest{WorkflowID: workflow.GetInfo(dctx).WorkflowExecution.ID, Path: w.in.Path, Seq: w.carry.Seq, Spec: w.node, Instance: m.Instance}
		var res activities.ActionResult
		err := workflow.ExecuteActivity(actx, activities.StopName, req).Get(dctx, &res)
		w.carry.LastAction = ActionStatus{Name: string(tick.Stop), Status: string(tick.Succeeded), Attempts: int(res.Attempt)}
		if err != nil {
			out, attempts := classify(err, w.node.Retry.MaxAttempts, tick.Stop)
			w.carry.LastAction = ActionStatus{Name: string(tick.Stop), Status: string(out), Attempts: max(attempts, 1), Error: rootMessage(err)}
			w.log.Error("stop on delete failed", "path", w.in.Path, "error", err.Error())
		}
	}
	m.State, m.Reason, m.Instance = tick.Stopped, "deleted", ""
	if wt := w.watch; wt != nil {
		w.settle(*wt, TargetFailed, "the worker was deleted")
	}
	w.carry.Since = workflow.Now(dctx)
	w.carry.Desired = tick.WantStopped
	w.upsertSearch()
	w.report(true)
	return temporal.NewCanceledError("deleted")
}
