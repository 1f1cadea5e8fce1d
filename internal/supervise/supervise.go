// Package supervise is the pure decision core of a supervisor, as
// internal/tick is for a worker: Next(Snapshot) returns the supervisor's
// next Memory and the Commands to carry out, each with its reason. It
// imports nothing from Temporal (only internal/spec and internal/tick);
// workflows.SupervisorWorkflow feeds it events and carries its commands out
// (signals, child starts, metrics, logs).
//
// How a supervisor answers the end of a child, after Erlang/OTP:
//
//   - A termination (an end its restart type restarts: a crash, a failed
//     start, a normal exit of a permanent worker, a child supervisor giving
//     up, a child workflow closed by hand) counts against the restart
//     intensity: more than MaxRestarts within Period, and the supervisor
//     gives up: it stops every child in reverse spec order and fails (its
//     parent answers that; the root retries after Cooldown, a temporary
//     supervisor stays down).
//   - one_for_one: a worker restarts itself (its own durable backoff timer,
//     no round trip through the supervisor); a child supervisor, or a child
//     whose workflow closed, is restarted by this supervisor after the
//     child's backoff.
//   - one_for_all: every child is stopped (reverse spec order) and, after
//     the backoff of the child that ended, started again in spec order.
//   - rest_for_one: the same for the child that ended and those after it.
//
// Workers under one_for_all and rest_for_one are coordinated: they do not
// restart themselves but wait for the group restart. A restart in progress
// is a Plan, carried in Memory (so across continue-as-new), driven one step
// at a time by events: stopping children one by one and waiting for each to
// be down, a durable backoff, then starting them one by one and waiting for
// each to be up. A new termination merges into the plan (nothing restarts
// twice), the operator's desired state or restart cancels it (Reset), and a
// spec change cuts its backoff short.
package supervise

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/steward-sh/steward/internal/spec"
	"github.com/steward-sh/steward/internal/tick"
)

// Plan operations.
const (
	OpRestart = "restart" // stop Stop, back off, start Start
	OpGiveUp  = "give-up" // stop every child, then fail
	OpHold    = "hold"    // stop every child for the parent, then stay stopped
)

// Plan phases.
const (
	PhaseStopping = "stopping"
	PhaseBackoff  = "backoff"
	PhaseStarting = "starting"
)

// Requests a supervisor sends a child (the `supervise` signal).
const (
	RequestStop    = "stop"
	RequestRestart = "restart"
)

// StepWait bounds how long a plan waits for one child to be down or up
// before it goes on without it.
const StepWait = 5 * time.Minute

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

// Memory is what a supervisor carries of its supervision.
type Memory struct {
	Reason         string `json:"reason,omitempty"`
	Restarts       int    `json:"restarts,omitempty"`
	ManualRestarts int    `json:"manualRestarts,omitempty"`
	// Terminations counts give-ups (what the parent's intensity counts).
	Terminations int `json:"terminations,omitempty"`
	// RestartTimes are the restarts within the intensity period.
	RestartTimes []time.Time `json:"restartTimes,omitempty"`
	Plan         *Plan       `json:"plan,omitempty"`
	// Failed: it gave up; CooldownUntil is when it tries again (zero for a
	// temporary supervisor: it stays down).
	Failed        bool      `json:"failed,omitempty"`
	CooldownUntil time.Time `json:"cooldownUntil,omitzero"`
	// Held: its own supervisor stopped it (a group restart).
	Held bool `json:"held,omitempty"`
	// SuperviseSeq is the last request handled from the parent; SentSeq
	// numbers the ones sent to the children.
	SuperviseSeq int64 `json:"superviseSeq,omitempty"`
	SentSeq      int64 `json:"sentSeq,omitempty"`
}

// Config is the supervisor's own part of the spec.
type Config struct {
	Path        string // for the backoff's jitter
	Strategy    string
	MaxRestarts int
	Period      time.Duration
	Cooldown    time.Duration
	Restart     string // its own restart type: temporary never retries
	// TerminationsBounded: a report counts at most
	// spec.MaxIntensityRestarts+1 terminations, whatever maxRestarts says
	// (versions.SupTerminationsBounded).
	TerminationsBounded bool
}

// Child is what the core knows of one child, in spec order.
type Child struct {
	Name       string
	Supervisor bool
	Restart    string // permanent, transient, temporary
	Backoff    tick.BackoffPolicy
	// As last reported (or seen).
	State        string
	Reason       string
	Desired      string
	Completed    bool
	SuperviseSeq int64
	// Lifecycle: Ended and Deferred children are left out of plans; a
	// Closed one is down already and is started anew by a plan.
	Lifecycle Lifecycle
	// Job: the child is a job, left out of plans: a group's stop or
	// restart does not stop or restart a job (its runs are its
	// schedule's, and a once job's run is not a service to restart).
	Job bool
}

// Kind of event.
type Kind int

// Events.
const (
	// Changed: something the plan may wait for changed (a child's report, a
	// delivery failed); only the plan moves on.
	Changed Kind = iota
	// Terminated: N new terminations of Children[Child].
	Terminated
	// Wake: the wake timer fired (WakeAt).
	Wake
	// Supervised: the parent's request (Request).
	Supervised
	// Reset: the operator set the desired state; what it overrides goes (a
	// plan, a give-up and its cooldown, a hold).
	Reset
	// OperatorRestart: the operator restarted the supervisor: Reset, and
	// the intensity starts over.
	OperatorRestart
	// SpecChanged: a new spec; a pending restart's backoff ends now.
	SpecChanged
)

// Request is a supervise request from the parent.
type Request struct {
	// Seq orders a supervisor's requests; the child echoes the last one.
	Seq int64 `json:"seq"`
	// Op is RequestStop or RequestRestart.
	Op     string `json:"op"`
	Reason string `json:"reason,omitempty"`
}

// Snapshot is what Next decides from.
type Snapshot struct {
	Kind     Kind
	Child, N int     // Terminated
	Request  Request // Supervised
	Now      time.Time
	Desired  string // the supervisor's desired state: running or stopped
	Memory   Memory
	Config   Config
	Children []Child
	// Undeliverable is the seq of a supervise request that could not be
	// delivered (the child's workflow is not running): 0 if none.
	Undeliverable int64
	// SeqByTime (versions.SupReportSeqBounded): the supervise requests it
	// sends are numbered past Now (in ns), and one it takes from its
	// parent numbered past Now plus SeqSkew is not taken as acknowledged
	// (it is carried out still). A request sent by hand with a huge
	// number pinned what a child acknowledges: every later request counted
	// as answered before the child had carried it out.
	SeqByTime bool
}

// NotAfter is the highest supervise request number taken at now
// (Snapshot.SeqByTime; 0: any).
func NotAfter(byTime bool, now time.Time) int64 {
	if !byTime {
		return 0
	}
	return now.Add(SeqSkew).UnixNano()
}

// Acknowledged is a child's (or this supervisor's) acknowledgement after
// a supervise request numbered seq: the highest number taken, seq only if
// it is not past notAfter (NotAfter).
func Acknowledged(held, seq, notAfter int64) int64 {
	if seq > held && (notAfter == 0 || seq <= notAfter) {
		return seq
	}
	return held
}

// CommandKind is what a command asks of the workflow.
type CommandKind int

// Commands.
const (
	// Send the `supervise` signal (Request, Seq) to Child.
	Send CommandKind = iota
	// StartAnew: start a new workflow for Child, whose workflow closed.
	StartAnew
	// GroupRestart: a group restart was planned (a metric).
	GroupRestart
	// GaveUp: the supervisor gives up (a metric and a warning).
	GaveUp
	// Skipped: Child did not answer a plan step in time, or could not be
	// asked; the plan went on without it (a warning).
	Skipped
)

// Command is one thing for the workflow to do, with its reason.
type Command struct {
	Kind    CommandKind
	Child   string
	Request string // Send: RequestStop or RequestRestart
	Seq     int64  // Send
	Reason  string
}

// Next applies the event to the memory, moves a plan in progress on as far
// as it can go now, and returns the memory and the commands to carry out.
func Next(s Snapshot) (Memory, []Command) {
	d := &decider{s: s, m: s.Memory}
	d.m.RestartTimes = slices.Clone(s.Memory.RestartTimes)
	if p := s.Memory.Plan; p != nil {
		cp := *p
		d.m.Plan = &cp
	}
	switch s.Kind {
	case Terminated:
		d.terminated(s.Child, s.N)
	case Wake:
		d.wake()
	case Supervised:
		d.supervised(s.Request)
	case Reset:
		d.reset()
	case OperatorRestart:
		d.reset()
		d.m.RestartTimes = nil
		d.m.ManualRestarts++
	case SpecChanged:
		if p := d.m.Plan; p != nil && p.Phase == PhaseBackoff {
			p.Until = s.Now
		}
	}
	d.advance()
	return d.m, d.cmds
}

// WakeAt is when the supervisor must wake without an event: the end of a
// plan's backoff or step, or of the cooldown after giving up (zero: never).
func WakeAt(m Memory) time.Time {
	if p := m.Plan; p != nil {
		switch {
		case p.Phase == PhaseBackoff:
			return p.Until
		case p.Sent > 0:
			return p.Deadline
		}
		return time.Time{}
	}
	if m.Failed {
		return m.CooldownUntil
	}
	return time.Time{}
}

// State is the supervisor's state by its memory and desired state.
func State(m Memory, desired string) string {
	p := m.Plan
	switch {
	case desired == spec.DesiredStopped:
		return "stopped"
	case p != nil && p.Phase == PhaseBackoff:
		return string(tick.Backoff)
	case p != nil:
		return p.Phase
	case m.Failed:
		return string(tick.Failed)
	case m.Held:
		return "stopped"
	}
	return "running"
}

// Coordinated reports whether a supervisor of this strategy restarts its
// workers itself (they do not restart themselves).
func Coordinated(strategy string) bool {
	return strategy == spec.OneForAll || strategy == spec.RestForOne
}

type decider struct {
	s    Snapshot
	m    Memory
	cmds []Command
}

func (d *decider) emit(c Command) { d.cmds = append(d.cmds, c) }

func (d *decider) index(name string) int {
	return slices.IndexFunc(d.s.Children, func(c Child) bool { return c.Name == name })
}

// terminated answers n new terminations of the child at index i.
func (d *decider) terminated(i, n int) {
	if i < 0 || i >= len(d.s.Children) || n <= 0 {
		return
	}
	c := d.s.Children[i]
	if c.Restart == spec.RestartTemporary || d.s.Desired == spec.DesiredStopped || d.m.Failed || d.m.Held {
		return
	}
	if p := d.m.Plan; p != nil {
		if p.Op == OpGiveUp || p.Op == OpHold {
			return // everything is being stopped anyway
		}
		if d.planWillStart(c.Name) {
			return // the plan restarts it: this end is part of it
		}
	}
	now, cfg := d.s.Now, d.s.Config
	// At most MaxRestarts+1 of them are counted: more give up all the
	// same (and give-up clears the times), so the decision is the one every
	// n makes. A forged report's n of 2^62 appended that many times in one
	// workflow task, until the SDK called it a deadlock, replay after
	// replay, and the worker process ran out of memory. A maxRestarts the
	// spec limits did not hold (a first input, a spec taken before them)
	// could be as large: from supervisor 13 at most
	// spec.MaxIntensityRestarts+1 are counted whatever it says.
	if cfg.MaxRestarts < math.MaxInt {
		n = min(n, cfg.MaxRestarts+1)
	}
	if cfg.TerminationsBounded {
		n = min(n, spec.MaxIntensityRestarts+1)
	}
	for range n {
		d.m.RestartTimes = append(d.m.RestartTimes, now)
	}
	d.m.RestartTimes = slices.DeleteFunc(d.m.RestartTimes, func(t time.Time) bool { return now.Sub(t) >= cfg.Period })
	why := c.Name + " " + endSummary(c)
	if len(d.m.RestartTimes) > cfg.MaxRestarts {
		d.giveUp(fmt.Sprintf("gave up: more than %d restarts in %s (last: %s)", cfg.MaxRestarts, cfg.Period, why))
		return
	}
	var targets []string
	switch cfg.Strategy {
	case spec.OneForAll:
		for _, o := range d.s.Children {
			targets = append(targets, o.Name)
		}
	case spec.RestForOne:
		for _, o := range d.s.Children[i:] {
			targets = append(targets, o.Name)
		}
	default: // one_for_one
		if !c.Supervisor && c.Lifecycle != Closed {
			return // a worker restarts itself (a closed one cannot)
		}
		targets = []string{c.Name}
	}
	delay := tick.BackoffDelay(c.Backoff, len(d.m.RestartTimes), tick.HashKey(cfg.Path))
	d.planRestart(targets, fmt.Sprintf("%s: %s", cfg.Strategy, why), delay)
}

// endSummary says briefly how a child ended: "gave up", or its reason up to
// the first ';' ("crashed (exit 1)", "workflow closed: terminated").
func endSummary(c Child) string {
	if c.Supervisor && c.Lifecycle != Closed {
		return "gave up"
	}
	if r := firstClause(c.Reason); r != "" {
		return r
	}
	return "ended"
}

// planWillStart reports whether the plan in progress will (re)start the
// child and has not asked it to yet.
func (d *decider) planWillStart(name string) bool {
	p := d.m.Plan
	if p == nil || !slices.Contains(p.Start, name) {
		return false
	}
	if p.Phase != PhaseStarting {
		return true
	}
	return slices.Index(p.Start, name) > p.Next || (slices.Index(p.Start, name) == p.Next && p.Sent == 0)
}

// planRestart stops targets (reverse spec order), waits delay, and starts
// them again (spec order). A restart already planned is merged in: the
// children it has not started yet join this one.
func (d *decider) planRestart(targets []string, reason string, delay time.Duration) {
	if p := d.m.Plan; p != nil && p.Op == OpRestart {
		for _, n := range p.Start {
			if d.planWillStart(n) && !slices.Contains(targets, n) {
				targets = append(targets, n)
			}
		}
	}
	var ordered []string
	for _, c := range d.s.Children {
		if slices.Contains(targets, c.Name) && c.Lifecycle != Deferred && c.Lifecycle != Ended { // closed ones start anew
			ordered = append(ordered, c.Name)
		}
	}
	p := &Plan{Op: OpRestart, Reason: reason, Phase: PhaseStopping, Delay: delay}
	for i := len(ordered) - 1; i >= 0; i-- {
		p.Stop = append(p.Stop, ordered[i])
	}
	for _, n := range ordered {
		if d.restartable(n) {
			p.Start = append(p.Start, n)
		}
	}
	d.m.Plan = p
	d.emit(Command{Kind: GroupRestart, Reason: reason})
}

// restartable: a group restart starts the child again (OTP: a temporary
// child is never restarted; a child the operator stopped stays stopped).
func (d *decider) restartable(name string) bool {
	i := d.index(name)
	if i < 0 {
		return false
	}
	c := d.s.Children[i]
	return c.Restart != spec.RestartTemporary && c.Desired != spec.DesiredStopped && !c.Completed
}

// giveUp stops every child in reverse order and then fails.
func (d *decider) giveUp(reason string) {
	d.m.RestartTimes = nil
	d.m.Plan = &Plan{Op: OpGiveUp, Reason: reason, Phase: PhaseStopping, Stop: d.present(true)}
	d.emit(Command{Kind: GaveUp, Reason: reason})
}

// present lists the names of the children whose workflow is there or
// closed (reverse: in stop order).
func (d *decider) present(reverse bool) []string {
	var out []string
	for _, c := range d.s.Children {
		if c.Lifecycle != Deferred && c.Lifecycle != Ended {
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
func (d *decider) restartAll(reason string) {
	p := &Plan{Op: OpRestart, Reason: reason, Phase: PhaseStopping, Stop: d.present(true)}
	for _, n := range d.present(false) {
		if d.restartable(n) {
			p.Start = append(p.Start, n)
		}
	}
	d.m.Plan = p
}

func isDown(c Child) bool { return IsDown(c.State) }

// IsDown reports whether a child in state runs nothing: stopped, failed, or
// on a host that cannot be reached.
func IsDown(state string) bool {
	return state == "stopped" || state == "failed" || state == string(tick.Unknown)
}

func isSettled(c Child) bool {
	return c.State != string(tick.Starting) && c.State != string(tick.Stopping) && !(c.Supervisor && c.State == string(tick.Backoff))
}

// advance moves the plan on as far as it can go now.
func (d *decider) advance() {
	for d.m.Plan != nil {
		p := d.m.Plan
		switch p.Phase {
		case PhaseStopping:
			if p.Next >= len(p.Stop) {
				d.stopped(p)
				continue
			}
			if !d.step(p, p.Stop[p.Next], RequestStop, isDown) {
				return
			}
		case PhaseBackoff:
			if d.s.Now.Before(p.Until) {
				return
			}
			p.Phase, p.Next, p.Sent = PhaseStarting, 0, 0
		case PhaseStarting:
			if p.Next >= len(p.Start) {
				d.m.Plan = nil
				d.m.Reason = "restarted: " + p.Reason
				continue
			}
			if !d.step(p, p.Start[p.Next], RequestRestart, isSettled) {
				return
			}
		default:
			d.m.Plan = nil
		}
	}
}

// step handles one child of a phase: it sends the request once and reports
// whether the child is done with it (it acknowledged the request and its
// state satisfies done, or it is gone, or it could not be asked, or the step
// timed out), moving the plan to the next child.
func (d *decider) step(p *Plan, name, req string, done func(Child) bool) bool {
	next := func() bool { p.Next, p.Sent, p.Deadline = p.Next+1, 0, time.Time{}; return true }
	i := d.index(name)
	if i < 0 || d.s.Children[i].Lifecycle == Ended || d.s.Children[i].Lifecycle == Deferred || d.s.Children[i].Job {
		return next()
	}
	c := d.s.Children[i]
	if c.Lifecycle == Closed {
		// Down already; to restart it, its workflow starts anew.
		if req == RequestRestart {
			d.emit(Command{Kind: StartAnew, Child: name, Reason: p.Reason})
		}
		return next()
	}
	if p.Sent == 0 {
		d.m.SentSeq++
		if d.s.SeqByTime {
			d.m.SentSeq = max(d.m.SentSeq, d.s.Now.UnixNano())
		}
		p.Sent = d.m.SentSeq
		p.Deadline = d.s.Now.Add(StepWait)
		d.emit(Command{Kind: Send, Child: name, Request: req, Seq: p.Sent, Reason: p.Reason})
		return false
	}
	if c.SuperviseSeq >= p.Sent && done(c) {
		return next()
	}
	if !d.s.Now.Before(p.Deadline) || d.s.Undeliverable == p.Sent {
		d.emit(Command{Kind: Skipped, Child: name, Request: req, Reason: fmt.Sprintf("%s did not answer the %s request in time; going on", name, req)})
		return next()
	}
	return false
}

// stopped ends the stop phase of a plan.
func (d *decider) stopped(p *Plan) {
	now := d.s.Now
	switch p.Op {
	case OpGiveUp:
		d.m.Plan = nil
		d.m.Failed = true
		d.m.Terminations++
		d.m.Reason = p.Reason
		if d.s.Config.Restart != spec.RestartTemporary {
			d.m.CooldownUntil = now.Add(d.s.Config.Cooldown)
		}
	case OpHold:
		d.m.Plan = nil
		d.m.Held = true
		d.m.Reason = "stopped by its supervisor: " + p.Reason
	default:
		p.Phase, p.Next, p.Sent = PhaseBackoff, 0, 0
		p.Until = now.Add(p.Delay)
	}
}

// wake: a cooldown that has passed restarts the children.
func (d *decider) wake() {
	m := &d.m
	if m.Plan == nil && m.Failed && !m.CooldownUntil.IsZero() && !d.s.Now.Before(m.CooldownUntil) {
		m.Failed = false
		m.CooldownUntil = time.Time{}
		m.Restarts++
		d.restartAll(fmt.Sprintf("cooldown of %s over: trying again", d.s.Config.Cooldown))
	}
}

// supervised carries out the parent's stop or restart of this subtree.
func (d *decider) supervised(r Request) {
	d.m.SuperviseSeq = Acknowledged(d.m.SuperviseSeq, r.Seq, NotAfter(d.s.SeqByTime, d.s.Now))
	d.m.Failed = false
	d.m.CooldownUntil = time.Time{}
	if r.Op == RequestStop {
		d.m.Plan = &Plan{Op: OpHold, Reason: r.Reason, Phase: PhaseStopping, Stop: d.present(true)}
		return
	}
	d.m.Held = false
	d.m.RestartTimes = nil
	d.m.Restarts++
	d.restartAll("restarted by its supervisor: " + r.Reason)
}

// reset drops what the operator's desired state or restart overrides: a
// plan in progress, a give-up and its cooldown, a hold.
func (d *decider) reset() {
	d.m.Plan = nil
	d.m.Failed = false
	d.m.Held = false
	d.m.CooldownUntil = time.Time{}
}

// OwnReason is the supervisor's own reason by its memory (empty while it
// simply runs).
func OwnReason(m Memory, desired string, hasParent bool) (reason string, backoffUntil time.Time, awaitingRestart bool) {
	state := State(m, desired)
	p := m.Plan
	switch {
	case state == "stopped" || state == "running":
		if m.Held {
			return m.Reason, time.Time{}, false
		}
		return "", time.Time{}, false
	case p != nil:
		r := fmt.Sprintf("%s (%s %s)", p.Reason, p.Op, p.Phase)
		if p.Phase == PhaseBackoff {
			return r, p.Until, false
		}
		return r, time.Time{}, false
	}
	r := m.Reason
	if !m.CooldownUntil.IsZero() {
		r += "; trying again at " + m.CooldownUntil.UTC().Format(time.RFC3339)
	}
	return r, m.CooldownUntil, hasParent
}

// firstClause is a reason up to its first ';'.
func firstClause(r string) string {
	c, _, _ := strings.Cut(r, ";")
	return c
}
