package workflows

import (
	"slices"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/steward-sh/steward/activities"
	"github.com/steward-sh/steward/internal/spec"
	"github.com/steward-sh/steward/internal/supervise"
	"github.com/steward-sh/steward/internal/versions"
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
		if _, ok := s.futures[rec.Path]; !ok && !rec.Gone() {
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

// A child supervisor closed after an earlier run of this supervisor handed
// it its subtree: this run holds only the child's own fields (pruneSpec),
// so it reads the subtree's spec back from the subtree's workflows
// (activities.SubtreeSpec: the closed workflow answers its own level, its
// child supervisors theirs) and starts the child anew with it; the new run
// adopts the children still running, with the spec they hold. A subtree
// that cannot be read back waits for the operator to apply the tree again.

// readBack is a read-back of a closed child supervisor's spec in progress.
type readBack struct {
	path string
	fut  workflow.Future
}

// mayReadBack reports whether this run may read back the subtree spec of
// the closed child supervisor at path: it is at it already, or its history
// allows (not one recorded before read-backs existed).
func (s *supervisorRun) mayReadBack(path string) bool {
	if slices.ContainsFunc(s.readBacks, func(r readBack) bool { return r.path == path }) {
		return true
	}
	return versions.SupVersioned.In(s.in.Version) || workflow.GetVersion(s.ctx, "read-back-closed-supervisor", workflow.DefaultVersion, 1) != workflow.DefaultVersion
}

// startReadBack reads back the subtree spec of the closed child supervisor
// at path (once at a time).
func (s *supervisorRun) startReadBack(path string) {
	if slices.ContainsFunc(s.readBacks, func(r readBack) bool { return r.path == path }) {
		return
	}
	ctx := workflow.WithActivityOptions(s.ctx, workflow.ActivityOptions{
		TaskQueue: ControlQueue,
		// One query per supervisor of the subtree, each a replay of its
		// history: minutes for a large subtree at worst.
		StartToCloseTimeout:    2 * time.Minute,
		ScheduleToCloseTimeout: 10 * time.Minute,
		RetryPolicy:            &temporal.RetryPolicy{InitialInterval: time.Second, MaximumInterval: 30 * time.Second, NonRetryableErrorTypes: []string{"InvalidSpec", "NotFound"}},
		Summary:                "read back the spec of " + path,
	})
	s.readBacks = append(s.readBacks, readBack{path: path,
		fut: workflow.ExecuteActivity(ctx, activities.SubtreeSpecName, activities.SubtreeSpecRequest{Path: path})})
}

// watchReadBacks adds the read-backs in progress to sel, in the order they
// began.
func (s *supervisorRun) watchReadBacks(sel workflow.Selector) {
	for _, r := range s.readBacks {
		sel.AddFuture(r.fut, func(f workflow.Future) {
			s.readBacks = slices.DeleteFunc(s.readBacks, func(x readBack) bool { return x.fut == f })
			var node spec.Node
			err := f.Get(s.ctx, &node)
			s.onReadBack(r.path, node, err)
		})
	}
}

// onReadBack starts the closed child supervisor at path anew with its
// read-back spec, when the core says so (supervise.AfterReadBack).
func (s *supervisorRun) onReadBack(path string, node spec.Node, err error) {
	i := slices.IndexFunc(s.carry.Children, func(r ChildRecord) bool { return r.Path == path && r.Lifecycle != supervise.Deferred })
	r := supervise.ReadBack{Found: i >= 0, ShuttingDown: s.shuttingDown, StaysDown: supervise.StaysDown(s.carry.Memory, s.carry.Desired), Name: node.Name}
	if i >= 0 {
		r.Lifecycle, r.Want = s.carry.Children[i].Lifecycle, s.carry.Children[i].Name
	}
	if err != nil {
		r.Err = rootMessage(err)
	}
	start, why := supervise.AfterReadBack(r)
	if !start {
		if why != "" {
			s.carry.Children[i].Status.Reason = why
			if !r.StaysDown {
				s.log.Warn("could not read back a closed child supervisor's spec", "path", path, "reason", why)
			}
		}
		return
	}
	// The child's own fields as this run holds them now (its desired state,
	// vars, strategy as last applied), over the subtree read back: the copy
	// the child held was handed down earlier (a stopped parent hands it
	// down stopped).
	rec := s.carry.Children[i]
	own, _ := s.fullChild(rec.Name)
	own.Children = node.Children
	fresh := s.startChildren([]spec.Node{own})[0]
	fresh.WantGeneration = rec.WantGeneration
	s.carry.Children[i] = fresh
	s.log.Info("child supervisor started anew with its read-back spec", "path", path)
}
