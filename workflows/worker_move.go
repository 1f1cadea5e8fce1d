package workflows

import (
	"fmt"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/steward-sh/steward/activities"
	"github.com/steward-sh/steward/internal/placement"
	"github.com/steward-sh/steward/internal/spec"
	"github.com/steward-sh/steward/internal/tick"
	"github.com/steward-sh/steward/internal/versions"
)

// Moves (worker code version 5 on; docs/fleet.md; what moves and when is
// placement.Whereabouts's to decide, and its doc comment says how). Here they
// are carried out. Off a host that is up, the move is the tick's restart
// carried out in two activities (launchMove): the instance's stop on its
// old host and its start on the new one, at once (move: overlap, the
// default) or one after the other (move: stopFirst: break before make).
// Off a lost host, the service starts on the new host at once
// (tick.EventMoved) and the instance there is left as a stale copy, whose
// stop waits on its host's queue for as long as the host is away
// (launchStale).

// StaleCopy is an instance a worker left on a host it moved off.
type StaleCopy = placement.StaleCopy

// noteMove records that the new spec moves the running instance off the
// host it runs on (old: the node before the spec); lost is the host the
// supervisor found lost. It reports whether the service must restart.
func (w *workerRun) noteMove(old spec.Node, lost string) bool {
	if lost != "" && w.node.Move == spec.MoveStopFirst && w.carry.Memory.State != tick.Unknown && versions.WorkerLostStopFirst.In(w.in.Version) {
		// Anyone may send a spec that says lost: a service that must never
		// run twice moves off a host it does not find unknown itself as
		// off one that is up, its stop first.
		lost = ""
	}
	var inFlight *StaleCopy
	if f := w.flight; f != nil {
		inFlight = f.move
	}
	return w.carry.Note(w.carry.Memory.Instance, old, w.node.RunsOn(), inFlight, lost)
}

// carryOutMove moves the service off a lost (or unknown) host at once;
// off a host that is up the tick's restart does (launch).
func (w *workerRun) carryOutMove() {
	if w.flight != nil {
		return
	}
	m := w.carry.Memory
	left, now := w.carry.Due(m.Instance, m.State == tick.Unknown, w.node.RunsOn())
	if !now {
		return
	}
	w.leaveStale(left)
	w.tick(tick.Snapshot{Event: tick.EventMoved, Moved: fmt.Sprintf("moved from host %s (lost) to %s", left.Host, w.node.RunsOn())})
}

// launchMove carries out a start or restart that moves the service. Off a
// lost host: the start on the new one (the old copy is stale). Off a host
// that is up: the stop there and the start on the new host, sent at once
// (move: overlap, the default: the service is down for the longer of the
// two, not for both), or the start only once the stop is done (move:
// stopFirst). A stop that does not get through leaves a stale copy.
func (w *workerRun) launchMove(ctx workflow.Context, mv StaleCopy, req activities.ActionRequest) workflow.Future {
	fut, settle := workflow.NewFuture(ctx)
	start := func(gctx workflow.Context) workflow.Future {
		opts := ActivityOptions(w.node, tick.Start)
		opts.Summary = fmt.Sprintf("start %s on host %s", w.in.Path, w.node.RunsOn())
		r := req
		r.Instance = ""
		return workflow.ExecuteActivity(workflow.WithActivityOptions(gctx, opts), activities.StartName, r)
	}
	workflow.Go(ctx, func(gctx workflow.Context) {
		if mv.Lost {
			w.leaveStale(mv)
			settle.Chain(start(gctx))
			return
		}
		opts := ActivityOptions(mv.Node, tick.Stop)
		opts.Summary = fmt.Sprintf("stop %s on host %s (it moves to %s)", w.in.Path, mv.Host, w.node.RunsOn())
		stop := req
		stop.Spec, stop.Instance, stop.OnSuccess = mv.Node, mv.Instance, nil
		stopped := workflow.ExecuteActivity(workflow.WithActivityOptions(gctx, opts), activities.StopName, stop)
		var started workflow.Future
		if w.node.Move != spec.MoveStopFirst {
			started = start(gctx)
		}
		err := stopped.Get(gctx, nil)
		if temporal.IsCanceledError(err) {
			if started != nil {
				// move: overlap: the start went with the stop, and may
				// have got through before the cancel: its result stands
				// (an instance it started is the worker's), and the old
				// copy, whose stop was cancelled, is left stale.
				if started.Get(gctx, nil) == nil {
					w.leaveStale(mv)
				}
				settle.Chain(started)
				return
			}
			settle.Set(nil, err)
			return
		}
		if err != nil {
			w.log.Warn("move: the stop on the old host did not get through; its copy is stale", "path", w.in.Path, "host", mv.Host, "error", err.Error())
			w.leaveStale(mv)
		}
		if started == nil {
			started = start(gctx)
		}
		settle.Chain(started)
	})
	return fut
}

// leaveStale records a stale copy and sends its stop.
func (w *workerRun) leaveStale(c StaleCopy) {
	if w.carry.Leave(c) {
		w.launchStale()
	}
}

// launchStale sends the stop of every stale copy that has none running:
// on the copy's host's queue, waiting as long as the host is away, retried
// until it gets through.
func (w *workerRun) launchStale() {
	if w.staleStops == nil {
		w.staleStops = map[string]workflow.Future{}
	}
	for _, c := range w.carry.Stale {
		if _, ok := w.staleStops[c.Instance]; ok {
			continue
		}
		opts := ActivityOptions(c.Node, tick.Stop)
		opts.ScheduleToStartTimeout = 0
		opts.RetryPolicy.MaximumAttempts = 0
		opts.RetryPolicy.InitialInterval = max(opts.RetryPolicy.InitialInterval, time.Second)
		opts.RetryPolicy.MaximumInterval = time.Minute
		opts.Summary = fmt.Sprintf("stop the copy of %s left on host %s", w.in.Path, c.Host)
		req := activities.ActionRequest{WorkflowID: workflow.GetInfo(w.ctx).WorkflowExecution.ID, Path: w.in.Path, Spec: c.Node, Instance: c.Instance}
		w.staleStops[c.Instance] = workflow.ExecuteActivity(workflow.WithActivityOptions(w.ctx, opts), activities.StopName, req)
	}
}

// watchStale adds the stale copies' stops to sel.
func (w *workerRun) watchStale(sel workflow.Selector) {
	for _, c := range w.carry.Stale {
		inst := c.Instance
		if f, ok := w.staleStops[inst]; ok {
			sel.AddFuture(f, func(f workflow.Future) { w.onStaleStopped(inst, f) })
		}
	}
}

func (w *workerRun) onStaleStopped(instance string, f workflow.Future) {
	delete(w.staleStops, instance)
	err := f.Get(w.ctx, nil)
	if err != nil && temporal.IsCanceledError(err) {
		return // this run ends: the next sends the stop again
	}
	c, ok := w.carry.Stopped(instance)
	switch {
	case !ok:
	case err != nil:
		w.log.Warn("the stop of a stale copy failed for good", "path", w.in.Path, "host", c.Host, "instance", instance, "error", err.Error())
	default:
		w.log.Info("stale copy stopped", "path", w.in.Path, "host", c.Host, "instance", instance)
	}
}
