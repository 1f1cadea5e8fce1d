package workflows

import (
	"slices"
	"time"

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
	var held []time.Time
	for _, r := range s.carry.Children {
		if r.Lifecycle == supervise.Live {
			held = append(held, r.StartedAt)
		}
	}
	if at := supervise.SlotFreeAt(held, workflow.Now(s.ctx)); !at.IsZero() {
		s.slotWake.set(s.ctx, at)
	}
}
