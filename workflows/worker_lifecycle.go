package workflows

import (
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/steward-sh/steward/activities"
	"github.com/steward-sh/steward/internal/tick"
)

// A worker's continue-as-new and its end on delete.

func (w *workerRun) shouldContinueAsNew() bool {
	return w.upgrade.asked || continueAsNewDue(w.ctx, w.in.HistoryLimit)
}

// continueAsNew waits until what this run sent is delivered, drains every
// signal into the carried state (recording, not acting: no action may start
// now) and continues as new; done is false when a rollout update arrived
// meanwhile: the loop goes on and serves it first.
// chans are the channels drain takes (drain's order).
func (w *workerRun) continueAsNew(chans ...workflow.ReceiveChannel) (done bool, err error) {
	if err := workflow.Await(w.ctx, func() bool {
		return (workflow.AllHandlersFinished(w.ctx) && w.out.delivered()) || w.calls.Len() > 0
	}); err != nil {
		return true, w.shutdown() // cancelled while waiting
	}
	if w.calls.Len() > 0 {
		return false, nil
	}
	w.drain(chans...)
	if w.ctx.Err() != nil {
		return true, w.shutdown()
	}
	refused, _ := w.upgrade.receive(w.ctx, workflow.GetSignalChannel(w.ctx, SignalUpgrade))
	w.carry.RejectedSignals += refused
	next := w.in
	carry := w.carry
	carry.Notifications = w.notes.undelivered()
	next.Carry = &carry
	next.Version = WorkerVersion // the next run is this code's
	return true, workflow.NewContinueAsNewError(w.ctx, WorkerWorkflow, next)
}

// drain takes every signal waiting on chans: desired, restart, spec, exit,
// supervise and (version 3) reload, in that order, and then every spec
// that came by Update.
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
				case 5:
					w.onReload()
				}
				raw = converter.RawValue{}
			}
		}
		if w.receiveSpecs() {
			got = true
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
