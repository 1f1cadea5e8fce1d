package workflows

// How a supervisor's run ends: continue-as-new, and its shutdown.

import (
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/steward-sh/steward/internal/spec"
	"github.com/steward-sh/steward/internal/supervise"
)

func (s *supervisorRun) shouldContinueAsNew() bool {
	return s.upgrade.asked || continueAsNewDue(s.ctx, s.in.HistoryLimit)
}

// shutdown cancels the children in reverse spec order, each after the one
// before it has ended (reported so, or its workflow closed) or childStopWait
// passed, then ends.
func (s *supervisorRun) shutdown(childCh workflow.ReceiveChannel) error {
	dctx, _ := workflow.NewDisconnectedContext(s.ctx)
	s.ctx = dctx
	s.shuttingDown = true
	s.carry.Plan = nil
	s.wake.stop()
	for i := len(s.carry.Children) - 1; i >= 0; i-- {
		rec := &s.carry.Children[i]
		if rec.Gone() {
			continue
		}
		// The request fails when the child is not running (never started,
		// or already closed): then there is nothing to wait for.
		if err := workflow.RequestCancelExternalWorkflow(dctx, rec.Path, "").Get(dctx, nil); err != nil {
			rec.Step(supervise.ReportedEnd)
			continue
		}
		tctx, cancel := workflow.WithCancel(dctx)
		timer := workflow.NewTimer(tctx, childStopWait)
		timedOut := false
		for rec.Lifecycle != supervise.Ended && !timedOut {
			sel := workflow.NewSelector(dctx)
			sel.AddReceive(childCh, func(c workflow.ReceiveChannel, _ bool) {
				var r ChildReport
				if err := decodeRaw(receiveRaw(dctx, c), &r); err == nil {
					s.apply(r)
				}
			})
			sel.AddFuture(timer, func(workflow.Future) { timedOut = true })
			if f, ok := s.futures[rec.Path]; ok {
				// Its workflow closed: it has ended, reported or not.
				sel.AddFuture(f, func(workflow.Future) { delete(s.futures, rec.Path); rec.Step(supervise.ReportedEnd) })
			}
			sel.Select(dctx)
		}
		cancel()
		if timedOut {
			s.log.Warn("child did not report its end in time", "path", rec.Path)
		}
	}
	s.unsubscribeHosts()
	s.carry.Desired = spec.DesiredStopped
	s.report(true)
	return temporal.NewCanceledError("deleted")
}
