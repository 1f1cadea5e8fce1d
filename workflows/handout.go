package workflows

import (
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/steward-sh/steward/activities"
	"github.com/steward-sh/steward/internal/spec"
)

// Hand-outs (supervisor code version 5 on): the spec signals a supervisor
// decides in a workflow task leave together from one local activity
// (activities.HandOut says why: a signal sent as a command costs the
// supervisor a workflow task when it is delivered). sendSpec queues them;
// handOut, called where a task's decisions are complete (and before a
// handler awaits anything), sends the queue. Its future joins the outbox,
// so a run continues as new only once its hand-outs are done. A child the
// hand-out did not reach is treated as an undelivered signal was: the
// record waits for the child's report (an update's target fails at its
// healthyDeadline), and is logged.

// handsOut reports whether this run hands its spec signals out by local
// activity.
func (s *supervisorRun) handsOut() bool { return s.in.Version >= 5 }

// signalSpec sends a child its spec signal: queued for the task's
// hand-out, or (version 4 and older) at once by a command.
func (s *supervisorRun) signalSpec(path string, u spec.Update) {
	if s.handsOut() {
		s.handout = append(s.handout, activities.Delivery{Path: path, Update: u})
		return
	}
	s.out.add(workflow.SignalExternalWorkflow(s.ctx, path, "", SignalSpec, u))
}

// handOutOptions: the signals are quick; a hand-out that outlasts its
// timeout is tried again by the SDK (within the task, heartbeating it).
var handOutOptions = workflow.LocalActivityOptions{
	StartToCloseTimeout: 10 * time.Second,
	RetryPolicy:         &temporal.RetryPolicy{InitialInterval: 200 * time.Millisecond, MaximumAttempts: 3},
}

// handOut sends the queued spec signals.
func (s *supervisorRun) handOut() {
	if len(s.handout) == 0 {
		return
	}
	req := activities.HandOutRequest{Signal: SignalSpec, Deliveries: s.handout}
	s.handout = nil
	f := workflow.ExecuteLocalActivity(workflow.WithLocalActivityOptions(s.ctx, handOutOptions), activities.HandOutName, req)
	s.out.add(f)
	log := s.log
	workflow.Go(s.ctx, func(ctx workflow.Context) {
		var missed []activities.Undelivered
		if err := f.Get(ctx, &missed); err != nil {
			log.Warn("hand-out failed", "children", len(req.Deliveries), "error", err.Error())
			return
		}
		for _, m := range missed {
			log.Warn("spec not delivered", "path", m.Path, "error", m.Error)
		}
	})
}
