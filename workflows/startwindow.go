package workflows

import (
	"slices"

	"go.temporal.io/sdk/workflow"

	"github.com/steward-sh/steward/internal/spec"
	"github.com/steward-sh/steward/internal/supervise"
	"github.com/steward-sh/steward/internal/versions"
)

// The start window (supervisor code version 6; internal/supervise's
// window.go states it): a supervisor has at most supervise.StartWindow
// children starting at once, from their workflow's start to their first
// report. Its children wait as deferred (their node kept) and the
// dependency order's release starts them as slots free, with those that
// wait for their dependencies. A supervisor of version 5 or older starts
// every child in its first task, as it always did. From version 7 a child
// supervisor started while siblings wait holds its slot until its whole
// subtree has started (internal/supervise's SubtreeHold at most).

// holdUntilStarted says whether a child supervisor started now holds its
// slot until its whole subtree has started (version 7): when the children
// started now leave siblings waiting for the window (holding the slot
// paces them; with nobody waiting it would cost the child a report for
// nothing), or when this supervisor's own slot waits for its subtree
// (its started-ness needs its child supervisors').
func (s *supervisorRun) holdUntilStarted() bool {
	return versions.SupSubtreeHold.In(s.in.Version) && (s.othersWait || s.in.ReportStarted)
}

// slot is the child's hold on the window.
func (s *supervisorRun) slot(r ChildRecord) supervise.Slot {
	if r.UntilStarted {
		return supervise.Slot{At: r.StartedAt, Hold: supervise.SubtreeHold}
	}
	return supervise.Slot{At: r.StartedAt, Hold: supervise.SlotHold}
}

// startedBy reports whether the report r of the child rec frees its slot:
// any report, but a child supervisor's that holds it until its subtree has
// started (version 7) only once it says so, or once it is not running (a
// child supervisor stopped, failed or restarting its children starts
// nothing of the window's now).
func startedBy(rec ChildRecord, r Status) bool {
	return !rec.UntilStarted || r.SubtreeStarted || r.State != "running"
}

// noteSubtreeStarted records, once, that this supervisor's whole subtree
// has started, for a supervisor whose parent holds its slot until then
// (ReportStarted, version 7): every child up (or desired stopped and down)
// at the generation it was handed, and each child supervisor's subtree
// started. Its record says so from then on (Status.SubtreeStarted), and
// its parent frees its slot. It never goes back: the window paces a
// tree's start, not what happens to it later.
func (s *supervisorRun) noteSubtreeStarted() {
	if !s.in.ReportStarted || s.carry.SubtreeStarted || s.ownState() != "running" {
		return
	}
	for _, r := range s.carry.Children {
		if !subtreeStarted(r) {
			return
		}
	}
	s.carry.SubtreeStarted = true
}

// subtreeStarted: the child has started at the generation it was handed: a
// worker up (or desired stopped and down), a child supervisor running with
// its own subtree started (its record says so when its slot waited for
// it) or desired stopped.
func subtreeStarted(r ChildRecord) bool {
	if r.WantGeneration > r.Status.Generation {
		return false
	}
	if r.IsSupervisor() {
		if r.Lifecycle.Gone() || r.Lifecycle == supervise.Deferred {
			return false
		}
		if r.Status.Desired == spec.DesiredStopped {
			return true
		}
		return r.Status.State == "running" && (!r.UntilStarted || r.Status.SubtreeStarted)
	}
	return settled(r)
}

// window is the start window's size for this run: 0 (none) before version 6.
func (s *supervisorRun) window() int {
	if versions.SupStartWindow.In(s.in.Version) {
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
		recs[i], _ = s.newRecord(c, "")
		recs[i].Status.Reason = supervise.WindowHold(slices.Contains(s.carry.Removing, recs[i].Path))
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
