package workflows

import (
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/steward-sh/steward/activities"
	"github.com/steward-sh/steward/internal/spec"
	"github.com/steward-sh/steward/internal/versions"
)

// Hand-outs (supervisor code version 5 on): the spec signals a supervisor
// decides in a workflow task leave together from one local activity
// (activities.HandOut says why: a signal sent as a command costs the
// supervisor a workflow task when it is delivered). signalSpec queues them,
// one per child (a newer spec replaces a queued older one); handOut, called
// where a step's decisions are complete, sends the queue: in the main loop
// once no signal is left buffered, so that the reports a task brings
// together are answered by one hand-out.
//
// Order: a child must never get an older spec after a newer one. Within a
// hand-out a child has one delivery; hand-outs run one after the other
// (each waits for the one before, all within the task), so a child's
// signals arrive in the order decided.
//
// Durability: what the local activity could not deliver (the server busy,
// the activity timed out) is sent again as a command, as version 4 sent
// everything: the server delivers it (or fails it for a workflow that is
// not running, as before). The hand-out's future joins the outbox, so a
// run continues as new only once it is done.
//
// Duplicates: the signals leave before the task completes; a task that
// fails afterwards (its worker died) decides them again and sends them
// again. A worker takes the same node and generation a second time
// without a restart, except a worker on its way to another host (the
// move is noted again) or whose last action was refused: those restart
// once more.

// handsOut reports whether this run hands its spec signals out by local
// activity.
func (s *supervisorRun) handsOut() bool { return versions.SupHandOut.In(s.in.Version) }

// signalSpec sends a child its spec: queued for the next hand-out, or
// (version 4 and older) at once by a signal command. A hand-out gives it to
// a worker whose run takes the spec Update (worker code version 6 on, as
// its last report says) by that Update, and to any other child by signal.
func (s *supervisorRun) signalSpec(rec ChildRecord, u spec.Update) {
	path := rec.Path
	if !s.handsOut() {
		s.out.add(workflow.SignalExternalWorkflow(s.ctx, path, "", SignalSpec, u))
		return
	}
	byUpdate := !rec.Status.IsSupervisor() && versions.WorkerSpecUpdate.In(rec.Status.CodeVersion)
	for i, d := range s.handout {
		if d.Path == path {
			s.handout[i].Update, s.handout[i].ByUpdate = u, byUpdate // the newer spec goes, the older never
			return
		}
	}
	s.handout = append(s.handout, activities.Delivery{Path: path, Update: u, ByUpdate: byUpdate})
}

// anyPending reports whether a signal waits on any of the channels (nil
// ones are left out).
func anyPending(chs ...workflow.ReceiveChannel) bool {
	for _, c := range chs {
		if c != nil && c.Len() > 0 {
			return true
		}
	}
	return false
}

// handOutOptions: one attempt (a child the activity did not reach is sent
// a command instead: a retry of the whole hand-out would signal again the
// children it did reach).
var handOutOptions = workflow.LocalActivityOptions{
	StartToCloseTimeout: 10 * time.Second,
	RetryPolicy:         &temporal.RetryPolicy{MaximumAttempts: 1},
}

// handOut sends the queued spec signals, after the hand-out before it.
func (s *supervisorRun) handOut() {
	if len(s.handout) == 0 {
		return
	}
	req := activities.HandOutRequest{Signal: SignalSpec, Deliveries: s.handout}
	s.handout = nil
	prev := s.lastHandOut
	done, settle := workflow.NewFuture(s.ctx)
	s.lastHandOut = done
	s.out.add(done)
	ctx, log := s.ctx, s.log
	workflow.Go(ctx, func(ctx workflow.Context) {
		if prev != nil {
			_ = prev.Get(ctx, nil)
		}
		var missed []activities.Undelivered
		err := workflow.ExecuteLocalActivity(workflow.WithLocalActivityOptions(ctx, handOutOptions), activities.HandOutName, req).Get(ctx, &missed)
		var again []activities.Delivery
		if err != nil {
			log.Warn("hand-out failed: its specs go as commands", "children", len(req.Deliveries), "error", err.Error())
			again = req.Deliveries
		} else {
			for _, m := range missed {
				log.Warn("spec not handed out: it goes as a command", "path", m.Path, "error", m.Error)
				for _, d := range req.Deliveries {
					if d.Path == m.Path {
						again = append(again, d)
					}
				}
			}
		}
		for _, d := range again {
			if versions.SupMarksResent.In(s.in.Version) {
				d.Update.Resent = true // (a worker drops it if a newer spec came meanwhile)
			}
			s.out.add(workflow.SignalExternalWorkflow(ctx, d.Path, "", SignalSpec, d.Update))
		}
		settle.Set(nil, nil)
	})
}
