package workflows

import (
	"slices"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/steward-sh/steward/activities"
)

// Children closed while no run watched them.
//
// A supervisor learns that a child's workflow closed from the child's
// future, but only for the children its own run started: after
// continue-as-new (or for a child it adopted) there is no future. So a run
// carried over looks once at its start, and then every childCheckInterval
// while it has such children, with one activity (activities.ClosedChildren:
// one visibility query, plus a description of each child it does not list).
// A child found closed is answered as any closed child: a termination. The
// price: about nine history events per interval per supervisor, and a child
// terminated by hand after a continue-as-new is seen within the interval
// rather than at once.

// childCheckInterval is how often a supervisor looks at the children it
// holds no future for.
const childCheckInterval = 5 * time.Minute

// unwatched lists the paths of children whose workflow should be running,
// and of removed runs still stopping, for which this run holds no future,
// in spec order then removal order.
func (s *supervisorRun) unwatched() []string {
	var out []string
	for _, rec := range s.carry.Children {
		if _, ok := s.futures[rec.Path]; !ok && !rec.gone() {
			out = append(out, rec.Path)
		}
	}
	for _, path := range s.carry.Removing {
		if _, ok := s.futures[path]; !ok && !slices.Contains(out, path) {
			out = append(out, path)
		}
	}
	return out
}

// armCheck keeps the check timer while there are unwatched children and
// no check in progress.
func (s *supervisorRun) armCheck() {
	if s.checking != nil || s.check.fut != nil || len(s.unwatched()) == 0 {
		return
	}
	s.check.set(s.ctx, workflow.Now(s.ctx).Add(childCheckInterval))
}

// watchCheck adds the check's timer and activity to sel.
func (s *supervisorRun) watchCheck(sel workflow.Selector) {
	if t := s.check.fut; t != nil {
		sel.AddFuture(t, func(f workflow.Future) {
			if s.check.fired(f) && f.Get(s.ctx, nil) == nil {
				s.startCheck()
			}
		})
	}
	if f := s.checking; f != nil {
		sel.AddFuture(f, func(f workflow.Future) {
			s.checking = nil
			var closed []activities.ClosedChild
			if err := f.Get(s.ctx, &closed); err != nil {
				s.log.Warn("could not check the children's workflows", "path", s.in.Path, "error", err.Error())
				return
			}
			for _, c := range closed {
				switch _, watched := s.futures[c.Path]; {
				case watched:
				case slices.Contains(s.carry.Removing, c.Path):
					s.released(c.Path) // a removed run that closed
				default:
					s.markClosed(c.Path, c.Status)
				}
			}
		})
	}
}

// startCheck runs the check of the unwatched children.
func (s *supervisorRun) startCheck() {
	paths := s.unwatched()
	if len(paths) == 0 {
		return
	}
	ctx := workflow.WithActivityOptions(s.ctx, workflow.ActivityOptions{
		TaskQueue:           ControlQueue,
		StartToCloseTimeout: 30 * time.Second,
		RetryPolicy:         &temporal.RetryPolicy{MaximumAttempts: 1}, // the next check is the retry
		Summary:             "check the children of " + s.in.Path,
	})
	s.checking = workflow.ExecuteActivity(ctx, activities.ClosedChildrenName,
		activities.ClosedChildrenRequest{Parent: workflow.GetInfo(s.ctx).WorkflowExecution.ID, Paths: paths})
}
