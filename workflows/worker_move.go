package workflows

import (
	"fmt"
	"slices"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/steward-sh/steward/activities"
	"github.com/steward-sh/steward/internal/spec"
	"github.com/steward-sh/steward/internal/tick"
)

// Moves (worker code version 5 on; docs/fleet.md).
//
// A spec that puts a running service on another host (its supervisor
// placed it elsewhere: a drain, a lost host, an operator's new hosts list
// or process.host) moves it. Off a host that is up, the move is the
// tick's restart carried out in two activities: the instance's stop on its
// old host and its start on the new one, at once (move: overlap, the
// default) or one after the other (move: stopFirst: break before make). Off a lost
// host (the supervisor says so, or the worker finds it unknown), the
// instance there cannot be reached: it is left as a stale copy, and the
// service starts on the new host at once (tick.EventMoved). A stale copy
// has a stop of its own waiting on its host's queue, with no limit on how
// long it waits: when the host is back, its worker takes the stop and the
// copy ends. Until then two copies may run, the lost one unreachable; the
// worker counts one, the one it can reach.

// StaleCopy is an instance a worker left on a host it moved off.
type StaleCopy struct {
	Host     string    `json:"host"`
	Instance string    `json:"instance"`
	Node     spec.Node `json:"node"` // as it was started (rendered)
	// Lost: the host was lost when the move began.
	Lost bool `json:"lost,omitempty"`
}

// noteMove records that the new spec moves the running instance off the
// host it runs on (old: the node before the spec); lost is the host the
// supervisor found lost. It reports whether the service must restart.
func (w *workerRun) noteMove(old spec.Node, lost string) bool {
	m := w.carry.Memory
	from := w.carry.InstanceHost
	if from == "" {
		from = old.RunsOn()
	}
	to := w.node.RunsOn()
	if m.Instance == "" || from == "" || from == to {
		if mv := w.carry.Move; mv != nil && mv.Host == to {
			w.carry.Move = nil // back where it runs before the move was carried out
		}
		return false
	}
	if w.carry.Move == nil {
		w.carry.Move = &StaleCopy{Host: from, Instance: m.Instance, Node: old}
		if f := w.flight; f != nil && f.move != nil {
			// A move in flight: its instance runs where that move began
			// (old is the spec that move was for).
			mv := *f.move
			w.carry.Move = &mv
		}
	}
	if lost != "" && lost == w.carry.Move.Host {
		w.carry.Move.Lost = true
	}
	return true
}

// settleMoveAfter brings a move noted while a start or restart ran up to
// date with its success: the service now runs instance on f.host. A move
// that named the instance before (stopped by the action, or left stale by
// it) now moves the new one, or nothing if it runs where the spec says.
func (w *workerRun) settleMoveAfter(f *inflight, instance string) {
	mv := w.carry.Move
	if mv == nil || mv.Instance == instance {
		return
	}
	if f.host == w.node.RunsOn() {
		w.carry.Move = nil
		return
	}
	w.carry.Move = &StaleCopy{Host: f.host, Instance: instance, Node: f.node}
}

// carryOutMove moves the service off a lost (or unknown) host at once;
// off a host that is up the tick's restart does (launch).
func (w *workerRun) carryOutMove() {
	mv := w.carry.Move
	if mv == nil || w.flight != nil {
		return
	}
	m := w.carry.Memory
	if m.Instance == "" || (m.Instance != mv.Instance && w.carry.InstanceHost == w.node.RunsOn()) {
		w.carry.Move = nil // nothing runs there any more
		return
	}
	if !mv.Lost && m.State != tick.Unknown {
		return
	}
	w.carry.Move = nil
	left := *mv
	left.Instance = m.Instance
	w.leaveStale(left)
	w.tick(tick.Snapshot{Event: tick.EventMoved, Moved: fmt.Sprintf("moved from host %s (lost) to %s", mv.Host, w.node.RunsOn())})
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
	if c.Instance == "" || slices.ContainsFunc(w.carry.Stale, func(o StaleCopy) bool { return o.Instance == c.Instance }) {
		return
	}
	w.carry.Stale = append(w.carry.Stale, c)
	w.launchStale()
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
	i := slices.IndexFunc(w.carry.Stale, func(c StaleCopy) bool { return c.Instance == instance })
	if i < 0 {
		return
	}
	c := w.carry.Stale[i]
	if err != nil && temporal.IsCanceledError(err) {
		return
	}
	if err != nil {
		w.log.Warn("the stop of a stale copy failed for good", "path", w.in.Path, "host", c.Host, "instance", instance, "error", err.Error())
	} else {
		w.log.Info("stale copy stopped", "path", w.in.Path, "host", c.Host, "instance", instance)
	}
	w.carry.Stale = slices.Delete(w.carry.Stale, i, i+1)
}

// staleCopies is what status shows of the stale copies: HOST/INSTANCE.
func (w *workerRun) staleCopies() []string {
	var out []string
	for _, c := range w.carry.Stale {
		out = append(out, c.Host+"/"+c.Instance)
	}
	return out
}

// instanceHost is the host the service runs on: its instance's, while a
// move is not carried out, else the spec's.
func (w *workerRun) instanceHost() string {
	if mv := w.carry.Move; mv != nil {
		return mv.Host
	}
	return w.node.RunsOn()
}
