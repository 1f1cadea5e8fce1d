package workflows

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/steward-sh/steward/internal/spec"
	"github.com/steward-sh/steward/internal/tick"
)

// Supervision: how a supervisor answers the end of a child.
//
// A child reports every change; a rise of its Terminations (an end that its
// restart type restarts: a crash, a failed start, a normal exit of a
// permanent worker, a child supervisor giving up) is a termination the
// supervisor must answer, as OTP's supervisor does:
//
//   - The restart counts against the restart intensity: more than
//     maxRestarts within period, and the supervisor gives up (see giveUp).
//   - one_for_one: a worker restarts itself (its own durable backoff timer,
//     no round trip through the supervisor); a child supervisor is
//     restarted by this supervisor after the child's backoff.
//   - one_for_all: every child is stopped (reverse spec order), and after
//     the backoff of the child that ended, started again in spec order.
//   - rest_for_one: the same for the child that ended and those after it.
//
// Workers under one_for_all and rest_for_one are coordinated: they do not
// restart themselves but wait (stopped, awaitingRestart) for the group
// restart. A restart in progress is a Plan, carried across continue-as-new,
// driven one step at a time by events (child reports, a timer): stopping
// children one by one and waiting for each to be down, a durable backoff
// timer, then starting them one by one and waiting for each to be up.
// A new termination merges into the plan (the restart never happens twice),
// a stop or a desired state from the operator cancels it, and a spec change
// cuts its backoff short.

// Plan operations.
const (
	opRestart = "restart" // stop Stop, back off, start Start
	opGiveUp  = "give-up" // stop every child, then fail
	opHold    = "hold"    // stop every child for the parent, then stay stopped
)

// Plan phases.
const (
	phaseStopping = "stopping"
	phaseBackoff  = "backoff"
	phaseStarting = "starting"
)

// childStepWait bounds how long a plan waits for one child to be down or up
// before it goes on without it.
const childStepWait = 5 * time.Minute

// Plan is a restart (or stop) of some children in progress.
type Plan struct {
	Op     string `json:"op"`
	Reason string `json:"reason"`
	// Stop and Start are child names in the order they are handled.
	Stop  []string `json:"stop,omitempty"`
	Start []string `json:"start,omitempty"`
	Phase string   `json:"phase"`
	// Next is the index of the child being handled in the phase's list.
	Next int `json:"next"`
	// Sent is the seq of the request sent to that child (0: not yet).
	Sent     int64     `json:"sent,omitempty"`
	Deadline time.Time `json:"deadline,omitempty"`
	// Delay is the backoff between stopping and starting; Until its end.
	Delay time.Duration `json:"delay,omitempty"`
	Until time.Time     `json:"until,omitempty"`
}

// coordinated reports whether this supervisor restarts its workers itself.
func coordinated(strategy string) bool {
	return strategy == spec.OneForAll || strategy == spec.RestForOne
}

func (s *supervisorRun) strategy() string { return s.in.Spec.Resolved().Strategy }

func (s *supervisorRun) intensity() spec.Intensity { return *s.in.Spec.Resolved().Intensity }

func (s *supervisorRun) childIndex(name string) int {
	return slices.IndexFunc(s.carry.Children, func(r ChildRecord) bool { return r.Name == name })
}

// onTerminated answers n new terminations of the child at index i.
func (s *supervisorRun) onTerminated(i, n int) {
	rec := s.carry.Children[i]
	node := s.childSpec(rec.Name).Resolved()
	if node.Restart == spec.RestartTemporary || s.carry.Desired == spec.DesiredStopped || s.carry.Failed || s.carry.Held {
		return
	}
	if p := s.carry.Plan; p != nil {
		if p.Op == opGiveUp || p.Op == opHold {
			return // everything is being stopped anyway
		}
		if s.planWillStart(rec.Name) {
			return // the plan restarts it: this end is part of it
		}
	}
	now := workflow.Now(s.ctx)
	in := s.intensity()
	for range n {
		s.carry.RestartTimes = append(s.carry.RestartTimes, now)
	}
	s.carry.RestartTimes = slices.DeleteFunc(s.carry.RestartTimes, func(t time.Time) bool { return now.Sub(t) >= in.Period.D() })
	why := rec.Name + " " + endSummary(rec)
	if len(s.carry.RestartTimes) > in.MaxRestarts {
		s.giveUp(fmt.Sprintf("gave up: more than %d restarts in %s (last: %s)", in.MaxRestarts, in.Period.D(), why))
		return
	}
	var targets []string
	switch s.strategy() {
	case spec.OneForAll:
		for _, c := range s.carry.Children {
			targets = append(targets, c.Name)
		}
	case spec.RestForOne:
		for _, c := range s.carry.Children[i:] {
			targets = append(targets, c.Name)
		}
	default: // one_for_one
		if !rec.isSupervisor() && !rec.Closed {
			return // a worker restarts itself (a closed one cannot)
		}
		targets = []string{rec.Name}
	}
	delay := tick.BackoffDelay(backoffPolicy(node), len(s.carry.RestartTimes), tick.HashKey(s.in.Path))
	s.planRestart(targets, fmt.Sprintf("%s: %s", s.strategy(), why), delay)
}

// endSummary says briefly how a child ended: "crashed (exit 1)", "gave up",
// "workflow closed: terminated".
func endSummary(rec ChildRecord) string {
	if rec.isSupervisor() && !rec.Closed {
		return "gave up"
	}
	r, _, _ := strings.Cut(rec.Status.Reason, ";")
	if r == "" {
		return "ended"
	}
	return r
}

func backoffPolicy(n spec.Node) tick.BackoffPolicy {
	b := n.Resolved().Backoff
	return tick.BackoffPolicy{Initial: b.Initial.D(), Max: b.Max.D(), Multiplier: b.Multiplier, Jitter: *b.Jitter, ResetAfter: b.ResetAfter.D()}
}

// planWillStart reports whether the plan in progress will (re)start the
// child and has not asked it to yet.
func (s *supervisorRun) planWillStart(name string) bool {
	p := s.carry.Plan
	if p == nil || !slices.Contains(p.Start, name) {
		return false
	}
	if p.Phase != phaseStarting {
		return true
	}
	return slices.Index(p.Start, name) > p.Next || (slices.Index(p.Start, name) == p.Next && p.Sent == 0)
}

// planRestart stops targets (reverse spec order), waits delay, and starts
// them again (spec order). A restart already planned is merged in: the
// children it has not started yet join this one.
func (s *supervisorRun) planRestart(targets []string, reason string, delay time.Duration) {
	if p := s.carry.Plan; p != nil && p.Op == opRestart {
		for _, n := range p.Start {
			if s.planWillStart(n) && !slices.Contains(targets, n) {
				targets = append(targets, n)
			}
		}
	}
	// Spec order.
	var ordered []string
	for _, c := range s.carry.Children {
		if slices.Contains(targets, c.Name) && !c.Deferred && !c.Ended { // closed ones start anew
			ordered = append(ordered, c.Name)
		}
	}
	p := &Plan{Op: opRestart, Reason: reason, Phase: phaseStopping, Delay: delay}
	for i := len(ordered) - 1; i >= 0; i-- {
		p.Stop = append(p.Stop, ordered[i])
	}
	for _, n := range ordered {
		if s.restartable(n) {
			p.Start = append(p.Start, n)
		}
	}
	s.carry.Plan = p
	count(s.ctx, MetricGroupRestarts, map[string]string{"strategy": s.strategy()})
}

// restartable: a group restart starts the child again (OTP: a temporary
// child is never restarted; a child the operator stopped stays stopped).
func (s *supervisorRun) restartable(name string) bool {
	i := s.childIndex(name)
	if i < 0 {
		return false
	}
	rec := s.carry.Children[i]
	return s.childSpec(name).Resolved().Restart != spec.RestartTemporary &&
		rec.Status.Desired != spec.DesiredStopped && !rec.Status.Completed
}

// giveUp stops every child in reverse order and then fails (reported to
// the parent, which applies its own strategy; the root retries after its
// cooldown).
func (s *supervisorRun) giveUp(reason string) {
	s.carry.RestartTimes = nil
	s.carry.Plan = &Plan{Op: opGiveUp, Reason: reason, Phase: phaseStopping, Stop: s.allChildren(true)}
	s.log.Warn("supervisor gives up", "path", s.in.Path, "reason", reason)
	count(s.ctx, MetricGiveUps, nil)
}

// allChildren lists the names of the children (reversed: in stop order).
func (s *supervisorRun) allChildren(reverse bool) []string {
	var out []string
	for _, c := range s.carry.Children {
		if !c.Deferred && !c.Ended {
			out = append(out, c.Name)
		}
	}
	if reverse {
		slices.Reverse(out)
	}
	return out
}

// restartAll plans a restart of every child that should run: all stop
// (reverse order; what is down already acknowledges at once), then start in
// spec order.
func (s *supervisorRun) restartAll(reason string) {
	p := &Plan{Op: opRestart, Reason: reason, Phase: phaseStopping, Stop: s.allChildren(true)}
	for _, n := range s.allChildren(false) {
		if s.restartable(n) {
			p.Start = append(p.Start, n)
		}
	}
	s.carry.Plan = p
}

// superviseChild sends a supervise request and returns its seq.
func (s *supervisorRun) superviseChild(rec ChildRecord, op, reason string) int64 {
	s.carry.SentSeq++
	seq := s.carry.SentSeq
	f := workflow.SignalExternalWorkflow(s.ctx, rec.Path, "", SignalSupervise, SuperviseRequest{Seq: seq, Op: op, Reason: reason})
	s.send(f)
	s.stepSignal, s.stepSeq = f, seq
	return seq
}

func isDown(st Status) bool {
	return st.State == "stopped" || st.State == "failed" || st.State == string(tick.Unknown)
}

func isSettled(st Status) bool {
	return st.State != string(tick.Starting) && st.State != string(tick.Stopping) && !(st.Kind == spec.KindSupervisor && st.State == string(tick.Backoff))
}

// advance moves the plan on as far as it can go now.
func (s *supervisorRun) advance() {
	now := workflow.Now(s.ctx)
	for s.carry.Plan != nil {
		p := s.carry.Plan
		switch p.Phase {
		case phaseStopping:
			if p.Next >= len(p.Stop) {
				s.stopped(p)
				continue
			}
			if !s.step(p, p.Stop[p.Next], SuperviseStop, isDown, now) {
				return
			}
		case phaseBackoff:
			if now.Before(p.Until) {
				return
			}
			p.Phase, p.Next, p.Sent = phaseStarting, 0, 0
		case phaseStarting:
			if p.Next >= len(p.Start) {
				s.carry.Plan = nil
				s.carry.Reason = "restarted: " + p.Reason
				continue
			}
			if !s.step(p, p.Start[p.Next], SuperviseRestart, isSettled, now) {
				return
			}
		default:
			s.carry.Plan = nil
		}
	}
}

// step handles one child of a phase: it sends the request once and
// reports whether the child is done with it (it acknowledged the request
// and its reported state satisfies done, or it is gone, or the step timed
// out), moving the plan to the next child.
func (s *supervisorRun) step(p *Plan, name, op string, done func(Status) bool, now time.Time) bool {
	i := s.childIndex(name)
	next := func() bool { p.Next, p.Sent, p.Deadline = p.Next+1, 0, time.Time{}; return true }
	if i < 0 || s.carry.Children[i].Ended || s.carry.Children[i].Deferred {
		return next()
	}
	if s.carry.Children[i].Closed {
		// Down already; to restart it, its workflow starts anew.
		if op == SuperviseRestart {
			s.restartClosed(i)
		}
		return next()
	}
	rec := s.carry.Children[i]
	if p.Sent == 0 {
		p.Sent = s.superviseChild(rec, op, p.Reason)
		p.Deadline = now.Add(childStepWait)
		return false
	}
	if rec.Status.SuperviseSeq >= p.Sent && done(rec.Status) {
		return next()
	}
	if !now.Before(p.Deadline) || s.stepFailed(p.Sent) {
		s.log.Warn("child did not answer the supervisor in time; going on", "path", rec.Path, "op", op)
		return next()
	}
	return false
}

// stepFailed: the request could not be delivered (the child's workflow is
// not running): waiting for it is pointless.
func (s *supervisorRun) stepFailed(seq int64) bool {
	return s.stepSignal != nil && s.stepSeq == seq && s.stepSignal.IsReady() && s.stepSignal.Get(s.ctx, nil) != nil
}

// stopped ends the stop phase of a plan.
func (s *supervisorRun) stopped(p *Plan) {
	now := workflow.Now(s.ctx)
	switch p.Op {
	case opGiveUp:
		s.carry.Plan = nil
		s.carry.Failed = true
		s.carry.Terminations++
		s.carry.Reason = p.Reason
		if s.in.Spec.Resolved().Restart != spec.RestartTemporary {
			s.carry.CooldownUntil = now.Add(s.intensity().Cooldown.D())
		}
	case opHold:
		s.carry.Plan = nil
		s.carry.Held = true
		s.carry.Reason = "stopped by its supervisor: " + p.Reason
	default:
		p.Phase, p.Next, p.Sent = phaseBackoff, 0, 0
		p.Until = now.Add(p.Delay)
	}
}

// wakeAt is when the supervisor must wake up without an event: the end of
// a plan's backoff or step, or of the cooldown after giving up.
func (s *supervisorRun) wakeAt() time.Time {
	if p := s.carry.Plan; p != nil {
		switch {
		case p.Phase == phaseBackoff:
			return p.Until
		case p.Sent > 0:
			return p.Deadline
		}
		return time.Time{}
	}
	if s.carry.Failed {
		return s.carry.CooldownUntil
	}
	return time.Time{}
}

// onWake handles the wake timer: a cooldown that has passed restarts the
// children; then the plan moves on.
func (s *supervisorRun) onWake() {
	now := workflow.Now(s.ctx)
	if s.carry.Plan == nil && s.carry.Failed && !s.carry.CooldownUntil.IsZero() && !now.Before(s.carry.CooldownUntil) {
		s.carry.Failed = false
		s.carry.CooldownUntil = time.Time{}
		s.carry.Restarts++
		s.restartAll(fmt.Sprintf("cooldown of %s over: trying again", s.intensity().Cooldown.D()))
	}
	s.advance()
}

// armWake keeps exactly one wake timer, for wakeAt.
func (s *supervisorRun) armWake() { s.wake.set(s.ctx, s.wakeAt()) }

// onSupervise carries out the parent's stop or restart of this subtree.
func (s *supervisorRun) onSupervise(r SuperviseRequest) {
	if r.Seq > s.carry.SuperviseSeq {
		s.carry.SuperviseSeq = r.Seq
	}
	s.carry.Failed = false
	s.carry.CooldownUntil = time.Time{}
	if r.Op == SuperviseStop {
		s.carry.Plan = &Plan{Op: opHold, Reason: r.Reason, Phase: phaseStopping, Stop: s.allChildren(true)}
		return
	}
	s.carry.Held = false
	s.carry.RestartTimes = nil
	s.carry.Restarts++
	s.restartAll("restarted by its supervisor: " + r.Reason)
}

// resetSupervision drops what the operator's desired state or restart
// overrides: a plan in progress, a give-up and its cooldown, a hold.
func (s *supervisorRun) resetSupervision() {
	s.carry.Plan = nil
	s.carry.Failed = false
	s.carry.Held = false
	s.carry.CooldownUntil = time.Time{}
}
