package workflows

import (
	"slices"

	"go.temporal.io/sdk/workflow"

	"github.com/steward-sh/steward/internal/spec"
	"github.com/steward-sh/steward/internal/supervise"
	"github.com/steward-sh/steward/internal/tick"
	"github.com/steward-sh/steward/internal/versions"
)

// Supervision: how a supervisor answers the end of a child (strategies,
// restart intensity, giving up and cooldown, group restarts as plans) is
// decided by the pure core internal/supervise, whose package comment
// states it. This file is the workflow's side: it builds the core's
// snapshot from the children's records and the spec, and carries out its
// commands (supervise signals, child workflows started anew, metrics,
// logs).

func (s *supervisorRun) strategy() string { return s.in.Spec.Resolved().Strategy }

func (s *supervisorRun) childIndex(name string) int {
	return slices.IndexFunc(s.carry.Children, func(r ChildRecord) bool { return r.Name == name })
}

// config is the supervisor's own part of the spec, for the core.
func (s *supervisorRun) config() supervise.Config {
	n := s.in.Spec.Resolved()
	return supervise.Config{Path: s.in.Path, Strategy: n.Strategy, MaxRestarts: n.Intensity.MaxRestarts,
		Period: n.Intensity.Period.D(), Cooldown: n.Intensity.Cooldown.D(), Restart: n.Restart,
		TerminationsBounded: versions.SupTerminationsBounded.In(s.in.Version)}
}

// children is the core's view of the children, in spec order.
func (s *supervisorRun) children() []supervise.Child {
	out := make([]supervise.Child, len(s.carry.Children))
	for i, rec := range s.carry.Children {
		p := s.policy(rec.Name)
		out[i] = supervise.Child{Name: rec.Name, Supervisor: rec.IsSupervisor(), Restart: p.restart, Backoff: p.backoff,
			State: rec.Status.State, Reason: rec.Status.Reason, Desired: rec.Status.Desired, Completed: rec.Status.Completed,
			SuperviseSeq: rec.Status.SuperviseSeq, Lifecycle: rec.Lifecycle, Job: p.job}
	}
	return out
}

// childPolicy is what the core needs of a child's spec: its restart type
// and backoff, resolved with their defaults.
type childPolicy struct {
	restart string
	backoff tick.BackoffPolicy
	job     bool
}

// policy is the named child's childPolicy, resolved once per spec (every
// event feeds the core every child; resolving each spec anew made a
// supervisor's task grow with its children twice over). A child without a
// spec (a removed one) gets the defaults.
func (s *supervisorRun) policy(name string) childPolicy {
	if s.policies == nil {
		s.policies = make(map[string]childPolicy, len(s.in.Spec.Children))
		for _, c := range s.in.Spec.Children {
			s.policies[c.Name] = policyOf(c)
		}
	}
	if p, ok := s.policies[name]; ok {
		return p
	}
	return policyOf(spec.Node{Name: name})
}

func policyOf(n spec.Node) childPolicy {
	n = n.Resolved()
	return childPolicy{restart: n.Restart, backoff: backoffPolicy(n), job: n.IsJob()}
}

func backoffPolicy(n spec.Node) tick.BackoffPolicy {
	b := n.Resolved().Backoff
	return tick.BackoffPolicy{Initial: b.Initial.D(), Max: b.Max.D(), Multiplier: b.Multiplier, Jitter: *b.Jitter, ResetAfter: b.ResetAfter.D()}
}

// decide feeds one event to the core and carries out its commands.
func (s *supervisorRun) decide(snap supervise.Snapshot) {
	if s.shuttingDown {
		return // deleted: it stops its children, and nothing else
	}
	snap.Now = workflow.Now(s.ctx)
	snap.Desired = s.carry.Desired
	snap.Memory = s.carry.Memory
	snap.Config = s.config()
	snap.Children = s.children()
	snap.SeqByTime = versions.SupReportSeqBounded.In(s.in.Version)
	if f := s.stepSignal; f != nil && f.IsReady() && f.Get(s.ctx, nil) != nil {
		snap.Undeliverable = s.stepSeq
	}
	mem, cmds := supervise.Next(snap)
	s.carry.Memory = mem
	for _, c := range cmds {
		s.carryOut(c)
	}
}

// carryOut does what a command of the core asks.
func (s *supervisorRun) carryOut(c supervise.Command) {
	switch c.Kind {
	case supervise.Send:
		i := s.childIndex(c.Child)
		if i < 0 {
			return
		}
		f := workflow.SignalExternalWorkflow(s.ctx, s.carry.Children[i].Path, "", SignalSupervise, supervise.Request{Seq: c.Seq, Op: c.Request, Reason: c.Reason})
		s.out.add(f)
		s.stepSignal, s.stepSeq = f, c.Seq
	case supervise.StartAnew:
		if i := s.childIndex(c.Child); i >= 0 {
			s.restartClosed(i)
		}
	case supervise.GroupRestart:
		count(s.ctx, MetricGroupRestarts, map[string]string{"strategy": s.strategy()})
	case supervise.GaveUp:
		s.log.Warn("supervisor gives up", "path", s.in.Path, "reason", c.Reason)
		count(s.ctx, MetricGiveUps, nil)
	case supervise.Skipped:
		s.log.Warn("child did not answer the supervisor in time; going on", "path", s.childPath(c.Child), "op", c.Request)
	}
}

// onTerminated answers n new terminations of the child at index i.
func (s *supervisorRun) onTerminated(i, n int) {
	s.decide(supervise.Snapshot{Kind: supervise.Terminated, Child: i, N: n})
}

// advance moves a plan in progress on as far as it can go now.
func (s *supervisorRun) advance() { s.decide(supervise.Snapshot{Kind: supervise.Changed}) }

// onWake handles the wake timer (a cooldown's or a plan's).
func (s *supervisorRun) onWake() { s.decide(supervise.Snapshot{Kind: supervise.Wake}) }

// armWake keeps exactly one wake timer, for the earlier of supervise.WakeAt
// and the rolling update's supervise.UpdateWakeAt.
//
// From version 7 a timer set for an earlier moment stays when the wake
// moves later: a rolling update moves it with every worker it counts as
// updated (each sent worker's healthy deadline, the progress deadline),
// and each move was a cancelled timer and a new one, two events and a
// timer task of the server's, in most of the supervisor's tasks during an
// update. The timer kept may wake the run early; that decides nothing
// (every deadline of the core and of the update is looked at against the
// time) and arms the later one.
func (s *supervisorRun) armWake() {
	at := supervise.WakeAt(s.carry.Memory)
	if u := supervise.UpdateWakeAt(s.carry.Update); !u.IsZero() && (at.IsZero() || u.Before(at)) {
		at = u
	}
	if versions.SupKeepWakeTimer.In(s.in.Version) && !at.IsZero() && s.wake.fut != nil && !s.wake.at.After(at) {
		return // the timer set wakes the run first
	}
	s.wake.set(s.ctx, at)
}

// onSupervise carries out the parent's stop or restart of this subtree.
func (s *supervisorRun) onSupervise(r SuperviseRequest) {
	s.decide(supervise.Snapshot{Kind: supervise.Supervised, Request: r})
}

// resetSupervision drops what the operator's desired state overrides: a
// plan in progress, a give-up and its cooldown, a hold.
func (s *supervisorRun) resetSupervision() {
	s.decide(supervise.Snapshot{Kind: supervise.Reset})
	s.clearQueued()
}
