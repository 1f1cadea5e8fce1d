package workflows

import (
	"fmt"
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/steward-sh/steward/activities"
	"github.com/steward-sh/steward/internal/spec"
	"github.com/steward-sh/steward/internal/tick"
	"github.com/steward-sh/steward/internal/versions"
)

// A rollout asks a worker, by the `rollout` Update (activities.UpdateRollout),
// to carry out an operation as an operator's would (restart: a manual
// restart; stop and start: the desired state), and the update returns when
// the outcome is known: succeeded (it got there), failed (its action failed,
// it ended again, its host is unreachable) or timeout (its budget passed).
//
// The update handler does not act itself: it hands the operation to the
// main loop over a workflow channel, so the loop keeps owning the action in
// flight and its futures, and waits for the loop to settle the outcome.
// While an update runs the worker does not continue as new.

// RolloutWatch is the rollout operation a worker is carrying out.
type RolloutWatch struct {
	Call     int64     `json:"call"`
	Op       string    `json:"op"`
	Deadline time.Time `json:"deadline"`
	// The counters when the request arrived: a rise tells that the restart
	// happened (ManualRestarts) or that the service ended again
	// (Terminations).
	BaseManual       int `json:"baseManual"`
	BaseTerminations int `json:"baseTerminations"`
	// Asked is when the operation arrived: a restart asked while a start or
	// restart is in flight is satisfied by it (tick: no second restart, no
	// manual restart counted), so a service running since then, with no
	// restart still pending, has restarted.
	Asked time.Time `json:"asked,omitzero"`
	// BaseReloads: the reloads counted when a reload was asked (a rise:
	// it was carried out; version 3).
	BaseReloads int `json:"baseReloads,omitempty"`
}

// rolloutCall is an update's operation on its way to the main loop.
type rolloutCall struct {
	ID int64
	Op string
}

// setupRolloutUpdate registers the rollout update handler.
func (w *workerRun) setupRolloutUpdate(ctx workflow.Context) error {
	w.calls = workflow.NewBufferedChannel(ctx, 64)
	w.outcomes = map[int64]activities.RolloutOutcome{}
	return workflow.SetUpdateHandlerWithOptions(ctx, activities.UpdateRollout,
		func(ctx workflow.Context, op activities.RolloutOp) (activities.RolloutOutcome, error) {
			w.callSeq++
			id := w.callSeq
			w.calls.Send(ctx, rolloutCall{ID: id, Op: op.Op})
			var out activities.RolloutOutcome
			err := workflow.Await(ctx, func() bool {
				o, ok := w.outcomes[id]
				out = o
				return ok
			})
			delete(w.outcomes, id)
			return out, err
		},
		workflow.UpdateHandlerOptions{Validator: func(_ workflow.Context, op activities.RolloutOp) error {
			if op.Op == RolloutReload && versions.WorkerReload.In(w.in.Version) {
				if !w.node.ReloadConfigured() {
					return fmt.Errorf("%s has no reload configured (process.reload or http.reload)", w.in.Path)
				}
				return nil
			}
			if op.Op != RolloutRestart && op.Op != RolloutStop && op.Op != RolloutStart {
				return fmt.Errorf("op must be restart, stop or start, got %q", op.Op)
			}
			return nil
		}})
}

// onRolloutCall carries out a rollout's operation and watches for its
// outcome. A watch in progress is superseded.
func (w *workerRun) onRolloutCall(c rolloutCall) {
	if old := w.watch; old != nil {
		w.settle(*old, TargetFailed, "superseded by another rollout")
	}
	m := w.carry.Memory
	now := workflow.Now(w.ctx)
	w.watch = &RolloutWatch{Call: c.ID, Op: c.Op, Asked: now,
		Deadline:   now.Add(rolloutBudget(w.node, c.Op)),
		BaseManual: m.ManualRestarts, BaseTerminations: m.Terminations, BaseReloads: m.Reloads}
	switch c.Op {
	case RolloutReload:
		// The validator saw a reload; a spec sent since may have none, and
		// a history an older worker wrote drops it: answered at once.
		if !w.node.ReloadConfigured() || !w.onReload() {
			w.settle(*w.watch, TargetFailed, fmt.Sprintf("%s: no reload configured, or this run's history predates reload (`starter upgrade`)", w.in.Path))
		}
	case RolloutRestart:
		w.onRestart()
	case RolloutStop:
		w.setDesired(tick.WantStopped)
	case RolloutStart:
		w.setDesired(tick.WantRunning)
	}
}

// rolloutBudget is how long a rollout's operation may take: the action's
// timeout on every attempt with the retry waits between them, plus a stop
// (a restart of a service that is stopping, a start after a stop).
func rolloutBudget(n spec.Node, op string) time.Duration {
	n = n.Resolved()
	budget := func(timeout time.Duration) time.Duration {
		attempts := time.Duration(max(n.Retry.MaxAttempts, 1))
		return timeout*attempts + n.Retry.MaxInterval.D()*(attempts-1)
	}
	stop := budget(n.Timeouts.Stop.D())
	switch op {
	case RolloutStop:
		return stop
	case RolloutReload:
		return budget(n.Timeouts.Start.D())
	case RolloutStart:
		return stop + budget(n.Timeouts.Start.D())
	}
	return stop + budget(max(n.Timeouts.Restart.D(), n.Timeouts.Start.D()))
}

// checkRollout settles the watched operation once its outcome is known, or
// as a timeout once its budget has passed (armWake).
func (w *workerRun) checkRollout() {
	wt := w.watch
	if wt == nil || w.flight != nil && w.flight.action != tick.Observe {
		return // an action is running: its result decides
	}
	m := w.carry.Memory
	status, why := "", ""
	ended := m.Terminations > wt.BaseTerminations
	unreachable := m.State == tick.Unknown
	switch wt.Op {
	case RolloutStop:
		switch {
		case m.State == tick.Stopped:
			status = TargetSucceeded
		case m.State == tick.Failed || unreachable:
			status, why = TargetFailed, m.Reason
		}
	case RolloutStart:
		switch {
		case m.State == tick.Running:
			status = TargetSucceeded
		case ended || unreachable || m.State == tick.Failed || (m.State == tick.Stopped && m.Hold):
			status, why = TargetFailed, m.Reason
		}
	case RolloutReload:
		// Carried out once counted and no longer running (the reload
		// action ran to its end); moot when the service is not running.
		done := m.Reloads > wt.BaseReloads && w.carry.LastAction.Name == string(tick.Reload) && w.carry.LastAction.Status != "running"
		// A start or restart in flight when it was asked satisfies it
		// (tick: the new instance loads the configuration).
		startedSince := !done && m.State == tick.Running && !m.PendingReload && !m.RunningSince.Before(wt.Asked)
		switch {
		case done && w.carry.LastAction.Status == string(tick.Succeeded), startedSince:
			status = TargetSucceeded
		case done, ended, unreachable, m.State != tick.Running && !m.PendingReload:
			status, why = TargetFailed, m.Reason
		}
	case RolloutRestart:
		restarted := m.ManualRestarts > wt.BaseManual || w.startedSince(*wt)
		switch {
		case restarted && m.State == tick.Running:
			status = TargetSucceeded
		case ended || unreachable || (restarted && (m.State == tick.Failed || (m.State == tick.Stopped && m.Hold))):
			status, why = TargetFailed, m.Reason
		}
	}
	if status == "" && !workflow.Now(w.ctx).Before(wt.Deadline) {
		status, why = TargetTimeout, fmt.Sprintf("not %s within %s (state %s: %s)", wantWord(wt.Op), rolloutBudget(w.node, wt.Op), m.State, m.Reason)
	}
	if status == "" {
		return
	}
	if status == TargetFailed && w.carry.LastAction.Error != "" {
		why += ": " + w.carry.LastAction.Error
	}
	w.settle(*wt, status, why)
}

// startedSince tells that the service has run since the watched restart was
// asked, though no manual restart was counted: the restart was asked while a
// start or restart was in flight, and that action satisfied it. Before this
// check such a target waited for its whole budget and was answered as a
// timeout (TestRolloutUpdate_RestartAskedDuringAStartIsSatisfiedByIt); the
// new answer is behind a version, asked only in that case.
func (w *workerRun) startedSince(wt RolloutWatch) bool {
	m := w.carry.Memory
	if wt.Asked.IsZero() || m.State != tick.Running || m.PendingRestart || m.RunningSince.Before(wt.Asked) {
		return false
	}
	return versions.WorkerVersioned.In(w.in.Version) || workflow.GetVersion(w.ctx, "rollout-restart-satisfied-by-start", workflow.DefaultVersion, 1) == 1
}

func wantWord(op string) string {
	if op == RolloutStop {
		return "stopped"
	}
	return "running"
}

// settle answers the watched update.
func (w *workerRun) settle(wt RolloutWatch, status, why string) {
	if w.watch != nil && w.watch.Call == wt.Call {
		w.watch = nil
	}
	w.outcomes[wt.Call] = activities.RolloutOutcome{Status: status, Error: why}
}

// armWake keeps a timer for the watched rollout operation's budget while no
// action is in flight (an action in flight ends within its own timeouts,
// and its result is an event). So the common path, an update whose restart
// succeeds, arms no timer.
func (w *workerRun) armWake() {
	var at time.Time
	if wt := w.watch; wt != nil && w.flight == nil {
		at = wt.Deadline
	}
	if at.IsZero() {
		w.wake.stop()
		return
	}
	if w.wake.fut == nil || at.Before(w.wake.at) {
		w.wake.set(w.ctx, at)
	}
}
