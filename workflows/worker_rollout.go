package workflows

import (
	"fmt"
	"time"

	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/workflow"

	"github.com/steward-sh/steward/internal/spec"
	"github.com/steward-sh/steward/internal/tick"
)

// RolloutWatch is a rollout's request a worker is carrying out: it reports
// the outcome to the rollout once it knows it.
type RolloutWatch struct {
	Rollout  string    `json:"rollout"`
	Seq      int       `json:"seq"`
	Op       string    `json:"op"`
	Deadline time.Time `json:"deadline"`
	// The counters when the request arrived: a rise tells that the restart
	// happened (ManualRestarts) or that the service ended again
	// (Terminations).
	BaseManual       int `json:"baseManual"`
	BaseTerminations int `json:"baseTerminations"`
}

// onRollout carries out a rollout's operation as an operator's would
// (restart: a manual restart; stop and start: the desired state) and
// watches for its outcome.
func (w *workerRun) onRollout(raw converter.RawValue) {
	var r RolloutRequest
	if err := decodeRaw(raw, &r); err != nil || r.Rollout == "" || (r.Op != RolloutRestart && r.Op != RolloutStop && r.Op != RolloutStart) {
		if err == nil {
			err = fmt.Errorf("want {rollout, seq, op: restart|stop|start}, got %+v", r)
		}
		w.reject(SignalRollout, err)
		return
	}
	if old := w.carry.Watch; old != nil && (old.Rollout != r.Rollout || old.Seq != r.Seq) {
		w.sendRolloutResult(*old, TargetFailed, "superseded by rollout "+r.Rollout)
	}
	m := w.carry.Memory
	w.carry.Watch = &RolloutWatch{Rollout: r.Rollout, Seq: r.Seq, Op: r.Op,
		Deadline:   workflow.Now(w.ctx).Add(rolloutBudget(w.node, r.Op)),
		BaseManual: m.ManualRestarts, BaseTerminations: m.Terminations}
	switch r.Op {
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
	case RolloutStart:
		return stop + budget(n.Timeouts.Start.D())
	}
	return stop + budget(max(n.Timeouts.Restart.D(), n.Timeouts.Start.D()))
}

// checkRollout reports the watched operation's outcome once there is one.
func (w *workerRun) checkRollout() {
	wt := w.carry.Watch
	if wt == nil || w.flight != nil && w.flight.action != tick.Observe {
		return // an action is running: its result decides
	}
	m := w.carry.Memory
	status, why := "", ""
	ended := m.Terminations > wt.BaseTerminations
	switch wt.Op {
	case RolloutStop:
		switch {
		case m.State == tick.Stopped:
			status = TargetSucceeded
		case m.State == tick.Failed:
			status, why = TargetFailed, m.Reason
		}
	case RolloutStart:
		switch {
		case m.State == tick.Running:
			status = TargetSucceeded
		case ended || m.State == tick.Failed || (m.State == tick.Stopped && m.Hold):
			status, why = TargetFailed, m.Reason
		}
	case RolloutRestart:
		restarted := m.ManualRestarts > wt.BaseManual
		switch {
		case restarted && m.State == tick.Running:
			status = TargetSucceeded
		case ended || (restarted && (m.State == tick.Failed || (m.State == tick.Stopped && m.Hold))):
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
	w.carry.Watch = nil
	w.sendRolloutResult(*wt, status, why)
}

func wantWord(op string) string {
	if op == RolloutStop {
		return "stopped"
	}
	return "running"
}

func (w *workerRun) sendRolloutResult(wt RolloutWatch, status, why string) {
	// Fire and forget: a rollout that is gone must not stall the worker.
	f := workflow.SignalExternalWorkflow(w.ctx, wt.Rollout, "", SignalRolloutResult,
		RolloutResult{Seq: wt.Seq, Path: w.in.Path, Status: status, Error: why})
	w.track(f)
}

// armWake keeps one timer for the earliest moment the worker must look
// again without an event: the watched rollout operation's deadline and a
// deferred publication. A timer armed earlier than needed is
// kept (it wakes the worker early, harmlessly): replacing it would cost two
// history events, and a rollout restart is over well within publishDelay.
func (w *workerRun) armWake() {
	var at time.Time
	if wt := w.carry.Watch; wt != nil {
		at = wt.Deadline
	}
	if !w.publishAt.IsZero() && (at.IsZero() || w.publishAt.Before(at)) {
		at = w.publishAt
	}
	if at.IsZero() {
		w.wake.stop()
		return
	}
	if w.wake.fut == nil || at.Before(w.wake.at) {
		w.wake.set(w.ctx, at)
	}
}
