package workflows

import (
	"time"

	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/steward-sh/steward/activities"
	"github.com/steward-sh/steward/internal/placement"
	"github.com/steward-sh/steward/internal/spec"
	"github.com/steward-sh/steward/internal/supervise"
	"github.com/steward-sh/steward/internal/tick"
	"github.com/steward-sh/steward/internal/versions"
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
	// Version is the code version of this run (upgrade.go; 0: begun by
	// code older than the versions).
	Version int `json:"version,omitempty"`
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
	// Journal is the worker's last JournalLimit state transitions, oldest
	// first, carried over continue-as-new (the `history` query).
	Journal []JournalEntry `json:"journal,omitempty"`
	// Troubled: the worker failed or its host was unknown since it last
	// ran (its next running is "recovered"); Notifications are those not
	// delivered by the run that sent them (notify.go).
	Troubled      bool                          `json:"troubled,omitempty"`
	NotifySeq     int64                         `json:"notifySeq,omitempty"`
	Notifications []activities.NotificationTask `json:"notifications,omitempty"`
	// Whereabouts: the host the instance was started on (version 5 on), a move
	// not yet carried out and the copies left on hosts it moved off
	// (worker_move.go; its fields inline: instanceHost, move, stale).
	placement.Whereabouts
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
	// onSuccess is the report the activity sends if it succeeds.
	onSuccess *activities.SuccessReport
	// host is where the action runs (node: the spec it runs with); began,
	// when it was sent.
	host  string
	node  spec.Node
	began time.Time
	// move is the move the action carries out (nil: none).
	move *StaleCopy
}

type workerRun struct {
	ctx   workflow.Context
	log   log.Logger
	in    WorkerInput
	node  spec.Node // resolved
	carry WorkerCarry
	// actionEnded: the event being handled is an action's result (the
	// journal names the action that caused a transition).
	actionEnded bool
	// endedAt: when the action whose end is being handled succeeded, by
	// its host (worker code version 5 on; zero: unknown).
	endedAt time.Time
	flight  *inflight
	// staleStops are the stops of the stale copies, by instance.
	staleStops map[string]workflow.Future

	backoff       deadline // the pending automatic restart
	observeTimer  workflow.Future
	observeCancel workflow.CancelFunc
	// observeEvery is how long observeTimer was armed for.
	observeEvery time.Duration

	lastState    tick.State
	lastReported *Status
	// seqFree is a report number a success report of the task at history
	// length seqFreeAt left free (reserveSuccessSeq; version 5).
	seqFree   int64
	seqFreeAt int
	// maybeReported is a success report an action's activity may have
	// delivered before the action failed (onActionDone); the next report
	// that the supervisor would otherwise not get is sent if it differs.
	maybeReported *Status
	searchState   string

	// wake is the timer of a watched rollout operation's budget (armWake).
	wake deadline
	// The rollout update (worker_rollout.go): calls carries operations from
	// the handler to the loop, outcomes the loop's answers back; watch is
	// the operation in progress.
	calls workflow.Channel
	// specs carries the specs that came by Update (UpdateSpec) to the loop.
	specs    workflow.Channel
	outcomes map[int64]activities.RolloutOutcome
	callSeq  int64
	watch    *RolloutWatch
	// out holds what this run sent until it is delivered.
	out outbox
	// notes holds the notifications not yet delivered.
	notes notifier
	// upgrade: the run was asked to continue as new onto this build's code.
	upgrade upgrade
	// limits: the answer to the input limits' markers (limits.go).
	limits limitsMarker
}

func newWorkerRun(ctx workflow.Context, in WorkerInput) (*workerRun, error) {
	checkVersion("WorkerWorkflow", in.Version, WorkerVersion)
	w := &workerRun{ctx: ctx, log: workflow.GetLogger(ctx), in: in}
	if ps := spec.ValidateWorkerLegacy(in.Spec); len(ps) > 0 { // limits.go: an input as before
		// Starters validate before starting anything; this guards direct starts.
		return nil, temporal.NewNonRetryableApplicationError("invalid worker spec:\n"+ps.Error(), "InvalidSpec", nil)
	}
	w.node = spec.Rendered(in.Spec)
	if in.Carry != nil {
		w.carry = *in.Carry
		if n := supervise.NotAfter(versions.WorkerReportSeqByTime.In(in.Version), workflow.Now(ctx)); n != 0 && w.carry.SuperviseSeq > n {
			w.carry.SuperviseSeq = 0 // pinned by a forged request under a version before
		}
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
	if err := workflow.SetQueryHandler(ctx, QuerySpec, func() (spec.Node, error) { return w.in.Spec, nil }); err != nil {
		return nil, err
	}
	if err := workflow.SetQueryHandler(ctx, QueryHistory, func() ([]JournalEntry, error) { return w.carry.Journal, nil }); err != nil {
		return nil, err
	}
	if err := w.setupRolloutUpdate(ctx); err != nil {
		return nil, err
	}
	if err := w.setupSpecUpdate(ctx); err != nil {
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
	upgradeCh := workflow.GetSignalChannel(ctx, SignalUpgrade)
	reloadCh := workflow.GetSignalChannel(ctx, SignalReload)
	known := []string{SignalDesired, SignalRestart, SignalSpec, SignalExit, SignalSupervise, SignalSlow, SignalUpgrade}
	signalled := []workflow.ReceiveChannel{desiredCh, restartCh, specCh, exitCh, superviseCh}
	if versions.WorkerReload.In(w.in.Version) {
		// Version 3 knows reload; older runs drop it as unknown, as the
		// code that wrote their histories did.
		known = append(known, SignalReload)
		signalled = append(signalled, reloadCh)
	}

	recordBuild(ctx, versions.WorkerVersioned.In(w.in.Version), w.in.Carry != nil)
	w.upsertSearch()
	if versions.WorkerNotifyBounded.In(w.in.Version) {
		w.notes.limit = MaxPendingNotifications
	}
	w.notes.resend(ctx, w.carry.Notifications)
	w.carry.Notifications = nil
	w.tick(tick.Snapshot{Event: tick.EventReconcile})
	w.replayPendingExits()
	w.launchStale()

	cancelled := false
	for {
		sel := workflow.NewSelector(ctx)
		sel.AddReceive(ctx.Done(), func(workflow.ReceiveChannel, bool) { cancelled = true })
		sel.AddReceive(desiredCh, func(c workflow.ReceiveChannel, _ bool) { w.onDesired(receiveRaw(ctx, c)) })
		sel.AddReceive(restartCh, func(c workflow.ReceiveChannel, _ bool) { receiveRaw(ctx, c); w.onRestart() })
		idle := false // woken by a signal older code would not have seen
		if versions.WorkerReload.In(w.in.Version) {
			sel.AddReceive(reloadCh, func(c workflow.ReceiveChannel, _ bool) {
				receiveRaw(ctx, c)
				idle = !w.onReload()
			})
		}
		sel.AddReceive(specCh, func(c workflow.ReceiveChannel, _ bool) { w.onSpec(receiveRaw(ctx, c)) })
		sel.AddReceive(w.specs, func(workflow.ReceiveChannel, bool) { w.receiveSpecs() })
		sel.AddReceive(exitCh, func(c workflow.ReceiveChannel, _ bool) { w.onExit(receiveRaw(ctx, c)) })
		sel.AddReceive(superviseCh, func(c workflow.ReceiveChannel, _ bool) { w.onSupervise(receiveRaw(ctx, c)) })
		sel.AddReceive(w.calls, func(c workflow.ReceiveChannel, _ bool) {
			var call rolloutCall
			c.Receive(ctx, &call)
			w.onRolloutCall(call)
		})
		sel.AddReceive(slowCh, func(c workflow.ReceiveChannel, _ bool) { w.onSlow(receiveRaw(ctx, c)) })
		sel.AddReceive(upgradeCh, func(c workflow.ReceiveChannel, _ bool) {
			refused, wokeOnly := w.upgrade.receive(ctx, c)
			w.carry.RejectedSignals += refused
			idle = wokeOnly
		})
		w.notes.watch(ctx, w.log, sel)
		if t := w.wake.fut; t != nil {
			sel.AddFuture(t, func(fut workflow.Future) { w.wake.fired(fut) }) // afterEvent checks the budget
		}
		if f := w.flight; f != nil {
			sel.AddFuture(f.future, func(fut workflow.Future) { w.onActionDone(f, fut) })
		}
		w.watchStale(sel)
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
				releaseContext(w.observeCancel)
				if fut.Get(ctx, nil) == nil {
					w.tickIfIdle(tick.Snapshot{Event: tick.EventReconcile})
				}
			})
		}
		sel.Select(ctx)
		if cancelled {
			return w.shutdown()
		}
		if idle {
			continue
		}
		w.carry.RejectedSignals += dropUnknownSignals(ctx, w.log, known...)
		w.carryOutMove()
		w.afterEvent()
		// No update waits for this loop (its outcome is settled, so its
		// handler ends): continueAsNew waits for the handlers to return.
		if w.flight == nil && w.watch == nil && w.calls.Len() == 0 && w.specs.Len() == 0 && w.shouldContinueAsNew() && ctx.Err() == nil {
			if done, err := w.continueAsNew(signalled...); done {
				return err
			}
		}
	}
}
