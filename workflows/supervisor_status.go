package workflows

// What a supervisor tells: its status and its details, metrics, search
// attributes, and its report to its parent.

import (
	"encoding/json"

	"go.temporal.io/sdk/workflow"

	"github.com/steward-sh/steward/activities"
	"github.com/steward-sh/steward/internal/spec"
	"github.com/steward-sh/steward/internal/supervise"
	"github.com/steward-sh/steward/internal/tick"
	"github.com/steward-sh/steward/internal/treestatus"
	"github.com/steward-sh/steward/internal/versions"
)

// ownState is the supervisor's state by its own record.
func (s *supervisorRun) ownState() string { return supervise.State(s.carry.Memory, s.carry.Desired) }

// own is the supervisor's own record: what it reports to its parent, and
// the head of its status answer. Its reason is its own (empty while it
// simply runs), never a count of what is below.
func (s *supervisorRun) own() Status {
	st := Status{
		Path: s.in.Path, Kind: spec.KindSupervisor, State: s.ownState(), Desired: s.carry.Desired,
		Generation: s.in.Generation, Since: s.carry.Since,
		RejectedSignals: s.carry.RejectedSignals, Restarts: s.carry.Restarts, ManualRestarts: s.carry.ManualRestarts,
		Terminations: s.carry.Terminations, SuperviseSeq: s.carry.SuperviseSeq, Strategy: s.strategy(),
		RecentRestarts: len(s.carry.RestartTimes),
	}
	st.Reason, st.BackoffUntil, st.AwaitingRestart = supervise.OwnReason(s.carry.Memory, s.carry.Desired, s.in.Parent != "")
	if s.in.ReportSubtree {
		st.Subtree = s.subtree()
	}
	st.SubtreeStarted = s.in.ReportStarted && s.carry.SubtreeStarted
	if s.updates() {
		st.Revision, st.Update = s.carry.Revision, s.updateStatus()
	}
	return st
}

// status is the answer of the status query: its own record and one record
// per direct child, and in its reason how many children are at their
// desired state (starter status assembles the tree from such answers).
func (s *supervisorRun) status() Status {
	st := s.own()
	st.Children = make([]Status, 0, len(s.carry.Children))
	at := 0
	owed := s.carry.Update.Owed() // nil unless an update runs
	for _, c := range s.carry.Children {
		cs := c.Status
		cs.Children = nil
		// A child that has not yet reported the spec it was sent is not at
		// its desired state, whatever it last said.
		cs.Applying = c.Lifecycle.Waits() || c.WantGeneration > cs.Generation || owed[c.Name]
		cs.WorkflowClosed = c.Lifecycle == supervise.Closed
		if cs.Settled() {
			at++
		}
		st.Children = append(st.Children, cs)
	}
	st.Reason = treestatus.WithChildCounts(st.Reason, at, len(st.Children))
	return st
}

// publish makes the status known after an event: search attributes, the
// report of its own record to the parent, and the Web UI's current details.
func (s *supervisorRun) publish() {
	if state := s.ownState(); state != s.lastState {
		s.carry.Since = workflow.Now(s.ctx)
		reason := s.own().Reason
		s.carry.Journal = appendJournal(s.carry.Journal, JournalEntry{Time: s.carry.Since, From: s.lastState, State: state, Reason: reason})
		s.notes.transition(s.ctx, s.in.Spec.Notify, &s.carry.Troubled, &s.carry.NotifySeq, true, activities.Notification{
			Path: s.in.Path, State: state, Reason: reason, Time: s.carry.Since, Generation: s.in.Generation}, s.lastState)
		s.lastState = state
	}
	s.noteSubtreeStarted()
	st := s.status()
	s.upsertState(st.State)
	s.report(false)
	workflow.SetCurrentDetails(s.ctx, treestatus.SupervisorDetails(st))
}

// gauges updates the per-supervisor gauges (no history event).
func (s *supervisorRun) gauges() {
	tags := map[string]string{"path": s.in.Path}
	gauge(s.ctx, MetricChildCount, tags, float64(len(s.carry.Children)))
	open := 0
	for _, c := range s.carry.Children {
		if c.Status.State == string(tick.Unknown) {
			open++
		}
	}
	gauge(s.ctx, MetricCircuitOpen, tags, float64(open))
	if s.updates() {
		s.updateGauge()
	}
}

func (s *supervisorRun) upsertSearch() { s.upsertState(s.ownState()) }

func (s *supervisorRun) upsertState(state string) {
	if state == s.searchState {
		return
	}
	err := workflow.UpsertTypedSearchAttributes(s.ctx, stateAttributes(versions.SupVersioned.In(s.in.Version), s.in.Path, spec.KindSupervisor, state)...)
	if err == nil {
		s.searchState = state
	}
}

// report signals its own record to the parent when it changed (or the
// supervisor ends). Its children's changes are not its parent's business.
func (s *supervisorRun) report(ended bool) {
	if s.in.Parent == "" {
		return
	}
	st := treestatus.Narrow(s.own())
	if u := st.Update; u != nil && versions.SupReportsUpdateState.In(s.in.Version) {
		// Its update's progress is its own answer's (starter status asks
		// it): reported, every worker updated was a signal and a task of
		// the parent's, the root's at the top, per worker.
		st.Update = &treestatus.UpdateStatus{Revision: u.Revision, Generation: u.Generation, State: u.State, Reason: u.Reason, Failed: u.Failed}
	}
	b, _ := json.Marshal(st)
	if !ended && s.lastReported != nil && string(b) == string(s.lastReported) {
		return
	}
	s.lastReported = b
	s.carry.ReportSeq = nextSeq(s.carry.ReportSeq, versions.SupReportSeqBounded.In(s.in.Version), s.ctx)
	f := workflow.SignalExternalWorkflow(s.ctx, s.in.Parent, "", SignalChild,
		ChildReport{Seq: s.carry.ReportSeq, Run: reportRun(s.ctx), Status: st, Ended: ended})
	s.out.add(f)
	if ended {
		_ = f.Get(s.ctx, nil) // see workerRun.report
	}
}
