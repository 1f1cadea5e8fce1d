package workflows

import (
	"fmt"
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/steward-sh/steward/activities"
	"github.com/steward-sh/steward/internal/rolloutcore"
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

// RolloutWatch is the rollout operation a worker is carrying out
// (internal/rolloutcore).
type RolloutWatch = rolloutcore.Watch

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
		Deadline:   now.Add(rolloutcore.Budget(w.node, c.Op)),
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

// checkRollout settles the watched operation once its outcome is known, or
// as a timeout once its budget has passed (armWake).
func (w *workerRun) checkRollout() {
	wt := w.watch
	if wt == nil || w.flight != nil && w.flight.action != tick.Observe {
		return // an action is running: its result decides
	}
	late := !workflow.Now(w.ctx).Before(wt.Deadline)
	status, why := rolloutcore.Verdict(*wt, w.carry.Memory, w.carry.LastAction, late, rolloutcore.Budget(w.node, wt.Op),
		func() bool { return w.restartSatisfiedByStart() })
	if status != "" {
		w.settle(*wt, status, why)
	}
}

// restartSatisfiedByStart: a service that has run since its watched
// restart was asked (rolloutcore.RestartedSince), though no manual restart
// was counted, has restarted: the restart was asked while a start or
// restart was in flight, and that action satisfied it. Before this check
// such a target waited for its whole budget and was answered as a timeout
// (TestRolloutUpdate_RestartAskedDuringAStartIsSatisfiedByIt); the new
// answer is behind a version, asked only in that case.
func (w *workerRun) restartSatisfiedByStart() bool {
	return versions.WorkerVersioned.In(w.in.Version) || workflow.GetVersion(w.ctx, "rollout-restart-satisfied-by-start", workflow.DefaultVersion, 1) == 1
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
