package workflows

import (
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/steward-sh/steward/activities"
	"github.com/steward-sh/steward/internal/tick"
	"github.com/steward-sh/steward/internal/treestatus"
	"github.com/steward-sh/steward/internal/versions"
)

// A worker's status and what it publishes of it: search attributes, the
// report to its supervisor (publish.go says when), the Web UI's details.

// afterEvent arms or disarms timers for the current state, upserts the
// search attributes and reports to the parent.
func (w *workerRun) afterEvent() {
	m := &w.carry.Memory
	if m.State != w.lastState {
		count(w.ctx, MetricStateTransitions, map[string]string{"from": string(w.lastState), "to": string(m.State), "kind": w.node.Kind})
		if host := w.node.RunsOn(); host != "" && (m.State == tick.Unknown) != (w.lastState == tick.Unknown) {
			name := MetricCircuitCloses
			if m.State == tick.Unknown {
				name = MetricCircuitOpens
			}
			count(w.ctx, name, map[string]string{"host": host})
		}
		w.carry.Since = workflow.Now(w.ctx)
		if !w.endedAt.IsZero() && w.endedAt.Before(w.carry.Since) {
			w.carry.Since = w.endedAt
		}
		w.journal(m)
		w.notes.transition(w.ctx, w.node.Notify, &w.carry.Troubled, &w.carry.NotifySeq, false, activities.Notification{
			Path: w.in.Path, State: string(m.State), Reason: m.Reason, Time: w.carry.Since, Generation: w.in.Generation}, string(w.lastState))
		w.lastState = m.State
	}
	w.actionEnded, w.endedAt = false, time.Time{}
	// Backoff timer: exactly one, for the current BackoffUntil.
	if m.State == tick.Backoff && w.flight == nil {
		w.backoff.set(w.ctx, m.BackoffUntil)
	} else {
		w.backoff.stop()
	}
	// Observe timer: only while running (or probing an unreachable host).
	// It is kept through an action (one that fires meanwhile is dropped):
	// most actions end where they began, in running.
	// From version 8 an unknown worker probes within
	// tick.UnknownProbeEvery: the timer its running state left armed (an
	// observe interval can be an hour) is armed again, shorter.
	if m.State == tick.Running || m.State == tick.Unknown {
		every := w.node.Observe.Interval.D()
		if versions.WorkerUnknownProbe.In(w.in.Version) {
			every = tick.ObserveEvery(m.State, every)
			if w.observeTimer != nil && w.flight == nil && every < w.observeEvery {
				w.observeCancel()
				w.observeTimer = nil
			}
		}
		if w.observeTimer == nil && w.flight == nil {
			tctx, cancel := workflow.WithCancel(w.ctx)
			w.observeTimer = workflow.NewTimer(tctx, every)
			w.observeCancel, w.observeEvery = cancel, every
		}
	} else if w.observeTimer != nil && w.flight == nil {
		w.observeCancel()
		w.observeTimer = nil
	}
	w.checkRollout()
	w.publish()
	w.armWake()
	workflow.SetCurrentDetails(w.ctx, treestatus.WorkerDetails(w.status()))
}

// journal records the transition from w.lastState to m.State, with the
// action whose end caused it, keeping the last JournalLimit.
func (w *workerRun) journal(m *tick.Memory) {
	e := JournalEntry{Time: w.carry.Since, From: string(w.lastState), State: string(m.State), Reason: m.Reason}
	if w.actionEnded {
		a := w.carry.LastAction
		e.Action = &a
	}
	w.carry.Journal = appendJournal(w.carry.Journal, e)
}

// publish makes a change of status known: the search attributes and the
// report to the parent. A change while an action is in flight waits for the
// action's end, or for its `slow` signal (publish.go), unless the
// supervisor acts on it.
func (w *workerRun) publish() {
	// A spec that waits for an observe in flight to restart the service
	// (absorbed: PendingSpecRestart) is an action begun too: its new
	// generation waits for the restart's success report. Reported now, in
	// a running state since before the update sent it, the generation
	// left nothing for that success report to change, which was then
	// skipped, and a rolling update waited for ever (version 5).
	pendingRestart := versions.WorkerReportOrder.In(w.in.Version) && w.flight != nil && w.flight.action == tick.Observe && w.carry.Memory.Marks.Has(tick.SpecRestartOwed)
	if w.flight != nil && (w.flight.action != tick.Observe || pendingRestart) {
		last := w.lastReported
		if w.in.Parent == "" || last == nil || !w.urgentDuringAction(*last, w.status()) {
			return
		}
	}
	w.publishNow()
}

// urgentDuringAction is urgentChange while an action runs. From worker
// code version 5 a new generation alone waits for the action's end: the
// action a new spec begins (its restart) ends in a report that carries the
// generation (its success report, sent by its activity the moment it
// succeeds), or is slow and published after activities.SlowAfter. Version
// 4 reported the generation at once, in a transient state: a second report
// per restart, and a second task of the supervisor's, which a rolling
// update's round waited behind.
func (w *workerRun) urgentDuringAction(last, now Status) bool {
	if versions.WorkerReportOrder.In(w.in.Version) {
		now.Generation = last.Generation
	}
	return treestatus.UrgentChange(last, now)
}

// publishNow publishes the current status.
func (w *workerRun) publishNow() {
	w.upsertSearch()
	w.report(false)
}

func (w *workerRun) searchKey() string { return string(w.carry.Memory.State) + "/" + w.node.Kind }

func (w *workerRun) upsertSearch() {
	state := string(w.carry.Memory.State)
	key := w.searchKey()
	if key == w.searchState {
		return
	}
	err := workflow.UpsertTypedSearchAttributes(w.ctx, stateAttributes(versions.WorkerVersioned.In(w.in.Version), w.in.Path, w.node.Kind, state)...)
	if err != nil {
		w.log.Warn("could not upsert search attributes", "error", err.Error())
		return
	}
	w.searchState = key
}

func (w *workerRun) status() Status {
	m := w.carry.Memory
	s := Status{
		Path: w.in.Path, Kind: w.node.Kind, State: string(m.State), Desired: string(w.carry.Desired),
		Reason: m.Reason, Restarts: m.Restarts, ManualRestarts: m.ManualRestarts, Reloads: m.Reloads, CodeVersion: w.in.Version,
		Generation: w.in.Generation, LastAction: w.carry.LastAction, Children: []Status{},
		Since: w.carry.Since, RejectedSignals: w.carry.RejectedSignals, Instance: m.Instance, Host: w.carry.Host(w.node.RunsOn()), StaleCopies: w.carry.Copies(),
		Terminations: m.Terminations, AwaitingRestart: m.Marks.Has(tick.AwaitingSupervisor), SuperviseSeq: w.carry.SuperviseSeq,
	}
	if m.State == tick.Backoff {
		s.BackoffUntil = m.BackoffUntil
	}
	// (A worker awaiting its supervisor's restart is not completed.)
	s.Completed = m.State == tick.Stopped && m.Marks.Has(tick.Held) && !m.Marks.Has(tick.AwaitingSupervisor) && s.Desired == string(tick.WantRunning)
	return s
}

// report signals the parent when the status changed.
func (w *workerRun) report(ended bool) {
	if w.in.Parent == "" {
		return
	}
	st := w.status()
	maybe := w.maybeReported
	w.maybeReported = nil
	if !ended && w.lastReported != nil && sameReportOf(w.in.Version, *w.lastReported, st) {
		// Unchanged since the last report, unless a failed action's
		// activity told the supervisor of a success first (a new path:
		// versioned, and asked only then).
		if maybe == nil || sameReportOf(w.in.Version, *maybe, st) ||
			(!versions.WorkerVersioned.In(w.in.Version) && workflow.GetVersion(w.ctx, "report-after-failed-action", workflow.DefaultVersion, 1) != 1) {
			return
		}
	}
	w.lastReported = &st
	st = treestatus.Narrow(st)
	ctx := w.ctx
	if ended {
		ctx, _ = workflow.NewDisconnectedContext(w.ctx)
	}
	// Fire and forget: a parent that is gone must not stall the worker. The
	// last report is awaited: a signal initiated by a workflow that closes
	// in the same task may never be delivered.
	f := workflow.SignalExternalWorkflow(ctx, w.in.Parent, "", SignalChild, ChildReport{Seq: w.nextReportSeq(), Run: reportRun(w.ctx), Status: st, Ended: ended})
	w.out.add(f)
	if ended {
		_ = f.Get(ctx, nil)
	}
}

// Report numbers. The supervisor applies a child's report only when its
// number is higher than the last it applied. An action's success report
// is made when the action starts (successReport), for its activity to send
// the moment it succeeds; the task that starts the action also reports the
// transient state the worker enters (starting, stopping). Numbered in that
// order, the success report came second by number and first by time, and
// was dropped as stale: the supervisor learnt of the success only from the
// worker's next task, two hops later (a rolling update waits on it for
// each worker). From worker code version 5 the success report takes the
// number after the next, and a report of the same task takes the one it
// left free.

// reserveSuccessSeq numbers an action's success report.
func (w *workerRun) reserveSuccessSeq() int64 {
	byTime := versions.WorkerReportSeqByTime.In(w.in.Version)
	if !versions.WorkerReportOrder.In(w.in.Version) {
		w.carry.ReportSeq = nextSeq(w.carry.ReportSeq, byTime, w.ctx)
		return w.carry.ReportSeq
	}
	w.carry.ReportSeq = nextSeq(w.carry.ReportSeq, byTime, w.ctx) + 1
	w.seqFree, w.seqFreeAt = w.carry.ReportSeq-1, workflow.GetInfo(w.ctx).GetCurrentHistoryLength()
	return w.carry.ReportSeq
}

// nextReportSeq numbers a report of the workflow's own: the number a
// success report of this same task left free, or the next one.
func (w *workerRun) nextReportSeq() int64 {
	if free := w.seqFree; free > 0 {
		w.seqFree = 0
		if w.seqFreeAt == workflow.GetInfo(w.ctx).GetCurrentHistoryLength() {
			return free
		}
	}
	w.carry.ReportSeq = nextSeq(w.carry.ReportSeq, versions.WorkerReportSeqByTime.In(w.in.Version), w.ctx)
	return w.carry.ReportSeq
}

// nextSeq is the number of a report to a supervisor after last: one more,
// and, byTime, at least the time in ns (WorkerReportSeqByTime,
// JobReportSeqByTime, SupReportSeqBounded). Numbered by time, a report
// forged with a huge number is one the supervisor refuses, and the real
// ones after it are still newer than whatever it took before.
func nextSeq(last int64, byTime bool, ctx workflow.Context) int64 {
	if byTime {
		return max(last+1, workflow.Now(ctx).UnixNano())
	}
	return last + 1
}

// sameReportOf is treestatus.SameReport for a run of version: from
// worker code version 5, where the worker runs counts too (fleet.md).
func sameReportOf(version int, a, b Status) bool {
	return treestatus.SameReport(a, b, versions.WorkerReportOrder.In(version))
}

// reportRun names the run a report comes from: the first run of the
// workflow's chain (stable across continue-as-new), which the supervisor
// knows the child by. (The SDK's test environment sets no first run; its
// run is the one its supervisor started there.)
func reportRun(ctx workflow.Context) string {
	info := workflow.GetInfo(ctx)
	if info.FirstRunID != "" {
		return info.FirstRunID
	}
	return info.WorkflowExecution.RunID
}
