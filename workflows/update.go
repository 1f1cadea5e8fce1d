package workflows

import (
	"fmt"
	"slices"

	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/workflow"

	"github.com/steward-sh/steward/activities"
	"github.com/steward-sh/steward/internal/revision"
	"github.com/steward-sh/steward/internal/spec"
	"github.com/steward-sh/steward/internal/supervise"
	"github.com/steward-sh/steward/internal/tick"
	"github.com/steward-sh/steward/internal/treestatus"
	"github.com/steward-sh/steward/internal/versions"
)

// Rolling updates (supervisor code version 3 on): what an apply changes
// that restarts workers goes out under the supervisor's update policy.
// internal/supervise (update.go) decides: which worker goes when, when it
// counts as updated, when the update fails and what a revert sends back.
// This file picks the targets of a new spec, carries the core's commands
// out (spec signals, metrics, notifications) and shows the update in the
// status. A run of an older version applies every change at once, as its
// code did.

// updates reports whether this run rolls updates out.
func (s *supervisorRun) updates() bool { return versions.SupUpdates.In(s.in.Version) }

// beginUpdate replaces the update in progress (if any) with one of targets
// (none: the newer spec owes no worker a restart, and the old one ends as
// replaced).
func (s *supervisorRun) beginUpdate(targets []supervise.Target) {
	old := s.carry.Update
	if len(targets) == 0 {
		if old.Active() {
			_, replaced := supervise.NewUpdate(nil, spec.ResolvedUpdate{}, s.carry.Revision, s.in.Generation, workflow.Now(s.ctx), old)
			s.carry.Update = replaced
			s.updateEnded(supervise.UpdateCommand{State: supervise.UpdateReplaced, Reason: replaced.Reason})
		}
		return
	}
	workers := 0
	for _, c := range s.in.Spec.Children {
		if c.Kind != "" {
			workers++
		}
	}
	u, replaced := supervise.NewUpdate(targets, s.in.Spec.Update.Resolve(workers), s.carry.Revision, s.in.Generation, workflow.Now(s.ctx), old)
	if replaced != nil {
		s.updateEnded(supervise.UpdateCommand{State: supervise.UpdateReplaced, Reason: replaced.Reason})
	}
	s.carry.Update = &u
	s.log.Info("rolling update", "path", s.in.Path, "workers", len(targets), "maxParallel", u.Policy.MaxParallel, "generation", u.Generation)
}

// stepUpdate moves the update in progress by op and carries out what the
// core decides.
func (s *supervisorRun) stepUpdate(op supervise.UpdateOp) {
	if !s.carry.Update.Active() || s.shuttingDown {
		return
	}
	kids := make([]supervise.UpdateChild, 0, len(s.carry.Update.Targets))
	index := make(map[string]int, len(s.carry.Children))
	for i, r := range s.carry.Children {
		index[r.Name] = i
	}
	for _, t := range s.carry.Update.Targets {
		i, ok := index[t.Name]
		if !ok {
			kids = append(kids, supervise.UpdateChild{Name: t.Name, Gone: true})
			continue
		}
		r := s.carry.Children[i]
		kids = append(kids, supervise.UpdateChild{Name: r.Name, Gone: r.Lifecycle.Gone(), State: r.Status.State, Desired: r.Status.Desired,
			Reason: r.Status.Reason, Completed: r.Status.Completed, Since: r.Status.Since, Generation: r.Status.Generation, Terminations: r.Status.Terminations,
			Refused: refusal(s.in.Version, r.Status.LastAction)})
	}
	u, cmds := supervise.NextUpdate(supervise.UpdateSnapshot{Op: op, Now: workflow.Now(s.ctx), Update: *s.carry.Update, Children: kids, Generation: s.in.Generation,
		RevertPastSent: versions.SupRevertPastSent.In(s.in.Version), GenerationBounded: versions.SupGenerationBounded.In(s.in.Version),
		KeepPrevious: versions.SupRevertToWhatRuns.In(s.in.Version)})
	s.carry.Update = &u
	for _, c := range cmds {
		switch c.Kind {
		case supervise.SendNode:
			s.sendUpdate(c)
		case supervise.UpdateEnded:
			s.updateEnded(c)
		case supervise.KeepPrevious:
			s.keepPrevious(c.Keep)
		}
	}
}

// keepPrevious makes each target's previous node its node in this run's
// spec (supervise.KeepPrevious): what it runs after a revert, or when the
// update never sent it its new one.
func (s *supervisorRun) keepPrevious(targets []supervise.Target) {
	for _, t := range targets {
		for _, kids := range [][]spec.Node{s.in.Spec.Children, s.full.Children} {
			if j := slices.IndexFunc(kids, func(c spec.Node) bool { return c.Name == t.Name }); j >= 0 && !kids[j].IsSupervisor() {
				kids[j] = *t.Previous
			}
		}
	}
	s.policies = nil
}

// refusal says what a host refused of a start or restart, from a child's
// last action ("" when it refused none, and in a run of supervisor code
// version 3, which counted a refused restart as an update).
func refusal(version int, a treestatus.ActionStatus) string {
	if !versions.SupRefusalFailsUpdate.In(version) || a.Status != string(tick.Refused) || (a.Name != string(tick.Start) && a.Name != string(tick.Restart)) {
		return ""
	}
	return fmt.Sprintf("%s refused, running as before: %s", a.Name, a.Error)
}

// sendUpdate sends one target its node: the current spec's, or the
// previous one the core carries when reverting.
func (s *supervisorRun) sendUpdate(c supervise.UpdateCommand) {
	i := s.childIndex(c.Child)
	if i < 0 {
		return
	}
	rec := &s.carry.Children[i]
	var node spec.Node
	if c.Node != nil {
		node = *c.Node
		if s.carry.Desired == spec.DesiredStopped {
			node.Desired = spec.DesiredStopped
		}
	} else {
		n, ok := s.fullChild(c.Child)
		if !ok {
			return
		}
		node = s.childNode(n)
	}
	rec.Digest, rec.WantGeneration = c.Digest, c.Generation
	s.sendSpec(*rec, node)
}

// updateEnded counts the end of an update (or its failure before a
// revert), and tells the webhook of a failure and of a revert.
func (s *supervisorRun) updateEnded(c supervise.UpdateCommand) {
	count(s.ctx, MetricUpdates, map[string]string{"result": c.State})
	s.log.Info("rolling update", "path", s.in.Path, "state", c.State, "reverting", c.Reverting, "reason", c.Reason)
	event := ""
	switch c.State {
	case supervise.UpdateFailed:
		event = spec.EventUpdateFailed
	case supervise.UpdateReverted:
		event = spec.EventReverted
	}
	if event != "" {
		s.notes.announce(s.ctx, s.in.Spec.Notify, &s.carry.NotifySeq, event, activities.Notification{
			Path: s.in.Path, State: s.ownState(), Reason: c.Reason, Time: workflow.Now(s.ctx), Generation: s.in.Generation})
	}
}

// onUpdateSignal is the operator's promote, pause, resume or cancel.
func (s *supervisorRun) onUpdateSignal(raw converter.RawValue) {
	var op string
	err := decodeRaw(raw, &op)
	ops := map[string]supervise.UpdateOp{"promote": supervise.UpdatePromote, "pause": supervise.UpdatePause, "resume": supervise.UpdateResume, "cancel": supervise.UpdateCancel}
	o, ok := ops[op]
	if err == nil && !ok {
		err = fmt.Errorf("got %q", op)
	}
	if err != nil {
		s.reject(SignalUpdate, fmt.Errorf("payload must be \"promote\", \"pause\", \"resume\" or \"cancel\": %w", err))
		return
	}
	s.stepUpdate(o)
}

// updateStatus is the update as status shows it (nil: none yet).
func (s *supervisorRun) updateStatus() *treestatus.UpdateStatus {
	u := s.carry.Update
	if u == nil {
		return nil
	}
	updated, total := u.Counts()
	st := &treestatus.UpdateStatus{Revision: u.Revision, Generation: u.Generation, State: u.ShownState(), Updated: updated, Total: total, Reason: u.Reason, Failed: u.Failed}
	for _, t := range u.Targets {
		if t.Phase == supervise.TargetSent && u.Active() {
			st.InFlight = append(st.InFlight, t.Name)
		}
	}
	return st
}

// updateGauge is the update's progress: updated/total, 1 when none runs.
func (s *supervisorRun) updateGauge() {
	v := 1.0
	if u := s.carry.Update; u.Active() {
		if updated, total := u.Counts(); total > 0 {
			v = float64(updated) / float64(total)
		}
	}
	gauge(s.ctx, MetricUpdateProgress, map[string]string{"path": s.in.Path}, v)
}

// rollTargets marks, in the new spec's children (wanted, in the order of
// next), those whose change the rolling update carries out, with the node
// each was last handed (prev; by the spec before): a kept worker whose
// service runs and whose change restarts it (updateTarget). Reconcile
// makes them the update's targets, if it sends them a node at all.
func (s *supervisorRun) rollTargets(wanted []supervise.Wanted, old []ChildRecord, prev func(name string) (spec.Node, bool), next []spec.Node) {
	if !s.updates() {
		return
	}
	at := make(map[string]int, len(old))
	for i, rec := range old {
		at[rec.Name] = i
	}
	for j := range wanted {
		i, kept := at[wanted[j].Name]
		if !kept {
			continue
		}
		before, ok := prev(wanted[j].Name)
		if ok && supervise.UpdateTarget(old[i], before, s.inherit(next[j])) {
			wanted[j].Roll = &before
		}
	}
}

// lastHanded is the node the child was last handed, by the spec before
// (old, as it was handed down): what it runs, unless the update in
// progress still owes it its node (then what that update kept).
func (s *supervisorRun) lastHanded(old spec.Node) func(name string) (spec.Node, bool) {
	owed := map[string]*spec.Node{}
	if u := s.carry.Update; u.Active() && u.State != supervise.UpdateReverting {
		for _, t := range u.Targets {
			if t.Phase == supervise.TargetPending && t.Previous != nil {
				owed[t.Name] = t.Previous
			}
		}
	}
	before := make(map[string]int, len(old.Children))
	for i, c := range old.Children {
		before[c.Name] = i
	}
	return func(name string) (spec.Node, bool) {
		if n, ok := owed[name]; ok {
			return *n, true
		}
		if i, ok := before[name]; ok {
			return spec.Inherit(old, old.Children[i]), true
		}
		return spec.Node{}, false
	}
}

// countRevision sets the tree's revision of a new spec: the one its
// supervisor hands down, or, at the root, the next one when the apply
// changes anything (plan: Reconcile's, its update targets changes too;
// before: the supervisor's own level until now). It reports
// whether the root counted a new one.
func (s *supervisorRun) countRevision(u spec.Update, before spec.Node, plan supervise.Reconciled) bool {
	if u.Revision > 0 && (s.in.Parent != "" || !versions.SupReportSeqBounded.In(s.in.Version)) {
		// (A root counts its own from version 11: a revision sent to it,
		// by hand, of MaxInt64 wrapped its count, and its revisions log
		// dropped every apply after it.)
		s.carry.Revision = u.Revision
		return false
	}
	if s.in.Parent != "" {
		return false // a spec sent around the tree (the temporal CLI) is no revision of it
	}
	changed := len(plan.Cancel) > 0 || len(plan.Targets) > 0 || spec.Digest(before) != spec.Digest(s.in.Spec)
	for _, p := range plan.Children {
		changed = changed || p.Action != supervise.Untouched
	}
	if changed {
		s.carry.Revision = max(s.carry.Revision, 1) + 1
	}
	return changed
}

// tellRevisions tells the tree's revisions (RevisionsWorkflow) which
// revision the apply with ID request became, or that it changed nothing:
// a root's, from version 4 on, for an apply that named itself. A spec sent
// around the starter (the temporal CLI) is no entry of the log, though the
// root counts it: the log's numbers skip it.
func (s *supervisorRun) tellRevisions(request string, changed bool) {
	if request == "" || s.in.Parent != "" || !versions.SupTellsRevisions.In(s.in.Version) {
		return
	}
	s.out.add(workflow.SignalExternalWorkflow(s.ctx, RevisionsID(s.in.Path), "", SignalTaken,
		revision.Taken{Request: request, Revision: s.carry.Revision, Changed: changed}))
}
