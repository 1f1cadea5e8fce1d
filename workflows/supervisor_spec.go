package workflows

// A supervisor's spec: a new one taken (onSpec), and the specs it sends its
// children.

import (
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/workflow"

	"github.com/steward-sh/steward/internal/spec"
	"github.com/steward-sh/steward/internal/supervise"
	"github.com/steward-sh/steward/internal/versions"
)

func (s *supervisorRun) reject(signal string, err error) {
	s.carry.RejectedSignals++
	count(s.ctx, MetricRejectedSignals, map[string]string{"signal": signal})
	if signal == SignalSpec && templateProblem(err) {
		count(s.ctx, MetricTemplateErrors, nil)
	}
	s.log.Warn("rejected signal", "signal", signal, "path", s.in.Path, "error", err.Error(), "rejected", s.carry.RejectedSignals)
}

// onSpec reconciles the children with a new spec: new children start,
// removed ones are cancelled (they stop and end), changed ones get their new
// spec; unchanged ones are not touched.
func (s *supervisorRun) onSpec(raw converter.RawValue) {
	u, err := decodeUpdate(raw)
	var taken supervise.SpecTaken
	if err == nil {
		r := s.in.Spec.Resolved()
		held := supervise.SpecHeld{Path: s.in.Path, Name: s.in.Spec.Name, Generation: s.in.Generation,
			Desired: r.Desired, Strategy: r.Strategy, Limits: func() bool { return s.limits.holds(s.ctx) }, Now: workflow.Now(s.ctx),
			Jobs: versions.SupJobs.In(s.in.Version), GenerationBounded: versions.SupGenerationBounded.In(s.in.Version)}
		for _, c := range s.in.Spec.Children {
			if c.IsJob() {
				held.JobNames = append(held.JobNames, c.Name)
			} else {
				held.Services = append(held.Services, c.Name)
			}
		}
		taken, err = supervise.TakeSpec(held, u)
	}
	if err != nil {
		s.reject(SignalSpec, err)
		return
	}
	u.Spec.Children = spec.StartOrder(s.expand(u.Spec))
	if u.ReportSubtree != nil {
		s.in.ReportSubtree = *u.ReportSubtree
	}
	s.in.Generation = taken.Generation
	recordPropagation(s.ctx, u)
	// What this supervisor hands down carries where the change began.
	s.origin, s.depth = taken.Origin, taken.Depth
	count(s.ctx, MetricReconciliations, map[string]string{"strategy": u.Spec.Resolved().Strategy})
	if taken.DesiredChanged {
		s.carry.Desired = u.Spec.Resolved().Desired
		s.resetSupervision()
	}
	strategyChanged := taken.StrategyChanged
	before := s.in.Spec
	s.full = u.Spec
	s.in.Spec, s.policies = pruneSpec(u.Spec), nil

	// What the spec does to each child is the core's (supervise.Reconcile);
	// this carries it out: cancels (dependants first), spec signals, new
	// starts.
	old := s.carry.Children
	in := supervise.ReconcileInput{Children: make([]supervise.Current, len(old)), Spec: make([]supervise.Wanted, len(u.Spec.Children)),
		Generation: s.in.Generation, StrategyChanged: strategyChanged, Resend: versions.SupResendNewer.In(s.in.Version),
		GenerationBounded: versions.SupGenerationBounded.In(s.in.Version)}
	for i, rec := range old {
		in.Children[i] = supervise.Current{Name: rec.Name, Lifecycle: rec.Lifecycle, Digest: rec.Digest, WantGeneration: rec.WantGeneration, Reported: rec.Status.Generation}
	}
	for j, c := range u.Spec.Children {
		in.Spec[j] = supervise.Wanted{Name: c.Name, Digest: s.childDigest(c)}
	}
	s.rollTargets(in.Spec, old, s.lastHanded(before), u.Spec.Children)
	plan := supervise.Reconcile(in)
	if s.updates() {
		s.tellRevisions(u.Request, s.countRevision(u, before, plan))
	}
	targets := plan.Targets
	for _, i := range plan.Cancel {
		path := old[i].Path
		f := workflow.RequestCancelExternalWorkflow(s.ctx, path, "")
		s.out.add(f)
		s.cancels = append(s.cancels, pendingCancel{path: path, fut: f})
		s.carry.Removing = append(s.carry.Removing, path)
	}
	s.carry.Children = make([]ChildRecord, len(u.Spec.Children))
	var added []spec.Node
	var addedAt []int
	for j, p := range plan.Children {
		c := u.Spec.Children[j]
		if p.Action == supervise.AddChild {
			added, addedAt = append(added, c), append(addedAt, j)
			continue
		}
		rec := old[p.From]
		rec.Digest, rec.WantGeneration = p.Digest, p.WantGeneration
		switch p.Action {
		case supervise.KeepNode:
			rec.Node = &c
		case supervise.SendSpec:
			s.sendSpec(rec, s.childNode(c))
		}
		s.carry.Children[j] = rec
	}
	s.handOut() // before the new children's starts are awaited
	for k, rec := range s.startOrDefer(added) {
		s.carry.Children[addedAt[k]] = rec
	}
	if s.updates() {
		s.beginUpdate(targets)
	}
	// Now that the children have their new spec: a pending restart's
	// backoff ends, and children whose workflow closed start anew (this
	// run has their whole spec).
	s.decide(supervise.Snapshot{Kind: supervise.SpecChanged})
	s.restartClosedChildren("the spec was applied")
	s.upsertSearch()
	s.replace() // a host lost or draining meanwhile; the hosts' subscriptions
}

// specUpdate is the spec signal for a child: its node, this generation, and
// whether this supervisor restarts it (a worker under a sibling strategy).
// sendSpec sends the child its node n (as handed down), numbered with the
// generation its record wants.
func (s *supervisorRun) sendSpec(rec ChildRecord, n spec.Node) {
	u := s.specUpdate(n)
	u.Generation = rec.WantGeneration
	s.signalSpec(rec, u)
}

func (s *supervisorRun) specUpdate(n spec.Node) spec.Update {
	co := supervise.Coordinated(s.strategy())
	u := spec.Update{Generation: s.in.Generation, Spec: n, Coordinated: &co, Origin: s.origin, Depth: s.depth}
	if n.IsSupervisor() && s.reportsSubtree(n.Name) {
		report := true
		u.ReportSubtree = &report
	}
	if n.IsSupervisor() && s.updates() {
		u.Revision = s.carry.Revision
	}
	return u
}
