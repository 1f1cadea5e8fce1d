package workflows

import (
	"slices"

	"go.temporal.io/sdk/workflow"

	"github.com/steward-sh/steward/internal/spec"
	"github.com/steward-sh/steward/internal/supervise"
)

// The start window (supervisor code version 6; internal/supervise's
// window.go states it): a supervisor has at most supervise.StartWindow
// children starting at once, from their workflow's start to their first
// report. Its children wait as deferred (their node kept) and the
// dependency order's release starts them as slots free, with those that
// wait for their dependencies. A supervisor of version 5 or older starts
// every child in its first task, as it always did.

// holdsForSubtree reports whether a child supervisor holds its slot until
// its subtree has started (version 7), not until its first report.
func (s *supervisorRun) holdsForSubtree() bool { return s.in.Version >= 7 }

// slot is the child's hold on the window.
func (s *supervisorRun) slot(r ChildRecord) supervise.Slot {
	if s.holdsForSubtree() && r.isSupervisor() {
		return supervise.Slot{At: r.StartedAt, Hold: supervise.SubtreeHold}
	}
	return supervise.Slot{At: r.StartedAt, Hold: supervise.SlotHold}
}

// startedBy reports whether the child's report r frees its slot: any
// report, but, from version 7, a running child supervisor's only once its
// subtree has started (one that is stopped, failed or restarting its
// children frees it: it starts nothing of the window's now).
func (s *supervisorRun) startedBy(r Status) bool {
	return !s.holdsForSubtree() || !r.IsSupervisor() || r.SubtreeStarted || r.State != "running"
}

// noteSubtreeStarted records, once, that this supervisor's whole subtree
// has started (version 7): every child up (or desired stopped and down) at
// the generation it was handed, and each child supervisor's subtree
// started. Its record says so from then on (Status.SubtreeStarted), and
// its parent frees its slot of the window. It never goes back: the
// window paces a tree's start, not what happens to it later.
func (s *supervisorRun) noteSubtreeStarted() {
	if !s.holdsForSubtree() || s.carry.SubtreeStarted || s.ownState() != "running" {
		return
	}
	for _, r := range s.carry.Children {
		settled := isUp(r) || (r.Status.Desired == spec.DesiredStopped && isDown(r))
		if !settled || r.WantGeneration > r.Status.Generation || (r.isSupervisor() && isUp(r) && !r.Status.SubtreeStarted) {
			return
		}
	}
	s.carry.SubtreeStarted = true
}

// window is the start window's size for this run: 0 (none) before version 6.
func (s *supervisorRun) window() int {
	if s.in.Version >= 6 {
		return supervise.StartWindow
	}
	return 0
}

// startOrDefer records the children of nodes: from version 6, each deferred
// with its node, for release() to start through the window; before, each
// started at once (startChildren).
func (s *supervisorRun) startOrDefer(nodes []spec.Node) []ChildRecord {
	if s.window() == 0 {
		return s.startChildren(nodes)
	}
	recs := make([]ChildRecord, len(nodes))
	for i, c := range nodes {
		recs[i], _ = s.newRecord(c, supervise.WindowReason)
		if slices.Contains(s.carry.Removing, recs[i].Path) {
			recs[i].Status.Reason = removedRunReason
		}
		recs[i].Lifecycle, recs[i].Node = supervise.Deferred, &c
	}
	return recs
}

// armSlots sets the timer that looks at the window again when its first
// slot frees by itself (a child that has not reported for
// supervise.SlotHold), while children wait for one, and stops it once none
// waits. A timer already set is left to fire: a report that frees a slot
// sooner releases without it.
func (s *supervisorRun) armSlots() {
	if s.window() == 0 {
		return
	}
	if !slices.ContainsFunc(s.carry.Children, func(r ChildRecord) bool { return r.Lifecycle == supervise.Deferred }) {
		s.slotWake.stop() // nothing waits (a timer that fired is gone already)
		return
	}
	if s.slotWake.fut != nil {
		return
	}
	var held []supervise.Slot
	for _, r := range s.carry.Children {
		if r.Lifecycle == supervise.Live {
			held = append(held, s.slot(r))
		}
	}
	if at := supervise.SlotFreeAt(held, workflow.Now(s.ctx)); !at.IsZero() {
		s.slotWake.set(s.ctx, at)
	}
}
