// Package tick is the pure decision function of a supervised worker.
//
// Next takes a Snapshot — what the worker remembers (Memory), what the
// operator wants (Desired, restart type, backoff policy), the workflow time,
// and the Event that woke it — and returns the Decision: the next Memory and
// at most one Action to run. It imports nothing from Temporal, performs no
// I/O, reads no clock and draws no random number: given the same Snapshot it
// returns the same Decision, which is what makes it safe inside a Temporal
// workflow and easy to test table by table.
//
// Contract with the caller (the worker workflow):
//   - While an action is in flight the caller does not call Next; it only
//     records what arrives (a new desired state, a restart request, a spec
//     change) into the Snapshot. When the action's result arrives it calls Next
//     with EventActionDone, and Next then sees everything that piled up.
//   - Manual restart requests and spec changes that need a restart are kept
//     in Memory (its Marks RestartAsked, SpecRestartOwed) so that none is lost
//     while an action runs; Next consumes them.
//   - A restart request also means "desired running": the caller sets Desired
//     before calling Next (systemctl restart starts a stopped unit too).
//   - ShouldCancel tells the caller whether a new desired state makes the
//     in-flight action pointless (a start when the operator asked to stop).
//   - Exits carry the instance they are about; an exit of an older instance
//     (one already restarted) is ignored.
//
// States (docs/contract.md): stopped, starting (a start or restart in flight),
// running, stopping (a stop in flight), backoff (a durable timer before an
// automatic restart), failed (given up until an operator acts). Held marks a
// worker that stays down until an operator acts (a transient or temporary
// service that exited, or any failed worker).
package tick

import (
	"fmt"
	"strings"
	"time"
)

// State of a supervised worker.
type State string

// States.
const (
	Stopped  State = "stopped"
	Starting State = "starting"
	Running  State = "running"
	Stopping State = "stopping"
	Backoff  State = "backoff"
	Failed   State = "failed"
	// Unknown: the worker's host is unreachable (no worker serves its task
	// queue). No action is issued there but periodic probes (observes);
	// when one gets through, the worker reconciles. It is not a failure.
	Unknown State = "unknown"
)

// AllStates lists every state, for tables and validation.
var AllStates = []State{Stopped, Starting, Running, Stopping, Backoff, Failed, Unknown}

// Desired state an operator asks for.
type Desired string

// Desired states.
const (
	WantRunning Desired = "running"
	WantStopped Desired = "stopped"
)

// RestartType says when a service that ended is started again (OTP).
type RestartType string

// Restart types.
const (
	Permanent RestartType = "permanent"
	Transient RestartType = "transient"
	Temporary RestartType = "temporary"
)

// Action is what the tick asks the workflow to run as an activity.
type Action string

// Actions. None means no action.
const (
	None    Action = ""
	Start   Action = "start"
	Stop    Action = "stop"
	Restart Action = "restart"
	Observe Action = "observe"
	// Reload asks the running service to re-read its configuration
	// (process.reload, http.reload): same instance, no restart.
	Reload Action = "reload"
)

// Event is what woke the tick.
type Event string

// Events.
const (
	// EventReconcile: the workflow (re)started, or the slow reconcile timer fired.
	EventReconcile Event = "reconcile"
	// EventDesired: the operator set the desired state.
	EventDesired Event = "desired"
	// EventRestart: the operator asked for a restart.
	EventRestart Event = "restart"
	// EventSpec: a new spec arrived (SpecNeedsRestart says if the running
	// service must restart to apply it).
	EventSpec Event = "spec"
	// EventActionDone: the in-flight action finished (Result).
	EventActionDone Event = "action_done"
	// EventBackoffExpired: the backoff timer fired.
	EventBackoffExpired Event = "backoff_expired"
	// EventExited: the driver reported that the service exited (Exit).
	EventExited Event = "exited"
	// EventSupervisorStop: the supervisor stops the service for a group
	// restart (one_for_all, rest_for_one) or because it gave up; the
	// operator's desired state is kept, and the service stays down until
	// EventSupervisorRestart (or an operator's restart or desired state).
	EventSupervisorStop Event = "supervisor_stop"
	// EventSupervisorRestart: the supervisor restarts the service (an
	// automatic restart: it counts in Restarts, not ManualRestarts).
	EventSupervisorRestart Event = "supervisor_restart"
	// EventReload: the operator asked for a reload. It is carried out
	// while the service runs (a start, restart or stop satisfies it or
	// makes it moot), and forgotten otherwise: a stopped service has no
	// configuration loaded.
	EventReload Event = "reload"
	// EventMoved: the service's host was lost and it moves to another
	// (Snapshot.Moved says why): the instance there is left to its host
	// (the workflow stops it there once the host is back), and the worker
	// starts afresh, as desired. It is no termination: nothing is counted.
	EventMoved Event = "moved"
)

// AllEvents lists every event, for tables.
var AllEvents = []Event{EventReconcile, EventDesired, EventRestart, EventSpec, EventActionDone, EventBackoffExpired, EventExited, EventSupervisorStop, EventSupervisorRestart, EventReload, EventMoved}

// Outcome of a finished action.
type Outcome string

// Outcomes.
const (
	Succeeded Outcome = "succeeded"
	// FailedOutcome: retryable failure, retries exhausted.
	FailedOutcome Outcome = "failed"
	// PermanentFailure: a non-retryable failure (retrying cannot help).
	PermanentFailure Outcome = "permanent"
	TimedOut         Outcome = "timeout"
	Cancelled        Outcome = "cancelled"
	// Unreachable: no worker picked the action up in time (its host is
	// down); the action never ran.
	Unreachable Outcome = "unreachable"
	// Refused: the host would not run the action's spec (its command
	// policy, or a signature it requires); the action ran nothing and
	// stopped nothing. A refused restart leaves the instance that ran
	// before it running.
	Refused Outcome = "refused"
)

// Observation is what an observe found.
type Observation string

// Observations.
const (
	ObservedRunning Observation = "running"
	ObservedExited  Observation = "exited"  // ended normally
	ObservedCrashed Observation = "crashed" // ended abnormally
)

// Result of a finished action.
type Result struct {
	Action   Action
	Outcome  Outcome
	Error    string
	Instance string      // the started instance, for start and restart
	Observed Observation // for observe
}

// Exit reports that an instance of the service ended.
type Exit struct {
	Instance string `json:"instance"`
	Normal   bool   `json:"normal"`
	Reason   string `json:"reason,omitempty"`
}

// BackoffPolicy is the restart backoff of docs/spec.md.
type BackoffPolicy struct {
	Initial    time.Duration
	Max        time.Duration
	Multiplier float64
	Jitter     float64 // 0..1: the delay is spread by ±Jitter of itself
	ResetAfter time.Duration
}

// MaxFailures bounds the failure history kept in Memory.
const MaxFailures = 32

// Memory is what a worker remembers between ticks. It is serializable and is
// carried across continue-as-new.
type Memory struct {
	State State `json:"state"`
	// Reason says, briefly, why the worker is in its state.
	Reason string `json:"reason"`
	// Marks: what holds the worker down and what it owes (marks.go says
	// which values occur together). Its JSON is the seven booleans each
	// mark was before (hold, pendingRestart, ...).
	Marks Marks `json:"-"`
	// Instance identifies the running instance of the service (driver-defined).
	Instance     string    `json:"instance,omitempty"`
	RunningSince time.Time `json:"runningSince,omitempty"`
	BackoffUntil time.Time `json:"backoffUntil,omitempty"`
	// ConsecutiveFailures drives the backoff; it resets after ResetAfter of
	// healthy running.
	ConsecutiveFailures int `json:"consecutiveFailures,omitempty"`
	// Failures is the failure history (most recent last, at most MaxFailures).
	Failures []time.Time `json:"failures,omitempty"`
	// Restarts counts automatic restarts; ManualRestarts operator restarts.
	Restarts       int `json:"restarts"`
	ManualRestarts int `json:"manualRestarts"`
	// Terminations counts ends of the service that its restart type
	// restarts (a crash, a failed start, a normal exit of a permanent
	// service): what a supervisor's restart intensity counts.
	Terminations int `json:"terminations,omitempty"`
	// Reloads counts the reloads carried out (asked of the service).
	Reloads int `json:"reloads,omitempty"`
}

// Snapshot is everything one tick decides from.
type Snapshot struct {
	Now         time.Time
	Memory      Memory
	Desired     Desired
	RestartType RestartType
	Backoff     BackoffPolicy
	// JitterKey makes the backoff jitter of this worker its own (a hash of
	// its path) while staying deterministic.
	JitterKey uint64
	// Coordinated: the supervisor restarts this worker together with its
	// siblings (one_for_all, rest_for_one), so an end that calls for a
	// restart leaves it stopped, AwaitingSupervisor, instead of in backoff.
	Coordinated bool

	Event            Event
	Result           *Result // EventActionDone
	Exit             *Exit   // EventExited
	SpecNeedsRestart bool    // EventSpec
	// ExitWhileUnknown: an exit of the instance is acted on while the host
	// is unknown (its worker came back and found the service ended); the
	// workflow sets it for histories recorded since (workflow.GetVersion).
	ExitWhileUnknown bool
	// Moved is why the service moved (EventMoved).
	Moved string
}

// Decision is the outcome of one tick.
type Decision struct {
	Memory Memory
	Action Action
	// ManualRestart marks an action that carries out an operator restart.
	ManualRestart bool
}

// Next derives the next memory and action from a snapshot. It never panics:
// an event that means nothing in a state leaves the worker as it is.
func Next(s Snapshot) Decision {
	m := s.Memory
	m.Failures = append([]time.Time(nil), s.Memory.Failures...)
	t := &ticker{s: s, d: Decision{Memory: m}}
	t.d.Memory = Absorb(t.d.Memory, s.Event, s.SpecNeedsRestart)
	if t.d.Memory.Marks.Has(HeldBySupervisor) {
		// The supervisor keeps it down: act as if stopped were desired.
		t.s.Desired = WantStopped
	}
	if r := s.Result; s.Event == EventActionDone && r != nil && r.Outcome == Unreachable && awaited(t.d.Memory.State, r.Action) {
		// The circuit opens: the action never ran, nothing failed.
		t.to(Unknown, r.Error)
		return t.d
	}
	if s.Event == EventMoved && t.d.Memory.Instance != "" && movable(t.d.Memory.State) {
		t.moved()
		return t.d
	}
	switch t.d.Memory.State {
	case Stopped, "":
		t.stopped()
	case Starting:
		t.starting()
	case Running:
		t.running()
	case Stopping:
		t.stopping()
	case Backoff:
		t.backoff()
	case Failed:
		t.failed()
	case Unknown:
		t.unknown()
	default:
		t.to(Failed, fmt.Sprintf("unknown state %q", t.d.Memory.State))
		t.d.Memory.Marks.Set(Held)
	}
	switch t.d.Memory.State {
	case Stopped, Backoff, Failed:
		// Nothing runs: a reload is moot (the next start loads the
		// configuration anyway).
		t.d.Memory.Marks.Clear(ReloadAsked)
	}
	return t.d
}

// awaited reports whether a state is waiting for the result of action.
func awaited(st State, a Action) bool {
	switch st {
	case Starting:
		return a == Start || a == Restart
	case Stopping:
		return a == Stop
	case Running:
		return a == Observe || a == Reload
	}
	return false
}

// ShouldCancel reports whether the in-flight action is made pointless by the
// desired state: a start, restart or observe when the operator wants the
// service stopped. A stop is never cancelled: the next tick starts the
// service again if it is wanted.
func ShouldCancel(inFlight Action, desired Desired) bool {
	// (A probe of an unreachable host is an observe too: cancelling it just
	// probes again later.)
	return desired == WantStopped && (inFlight == Start || inFlight == Restart || inFlight == Observe)
}

type ticker struct {
	s Snapshot
	d Decision
}

func (t *ticker) m() *Memory { return &t.d.Memory }

// Absorb records in Memory what an event asks for, whatever the state, and
// derives nothing: the caller uses it for events that arrive while an action
// is in flight (and while draining signals before continue-as-new), so that
// the next tick acts on them. Next applies it first, too.
func Absorb(m Memory, e Event, specNeedsRestart bool) Memory {
	switch e {
	case EventRestart:
		m.Marks.Set(RestartAsked)
		m.Marks.Clear(Held)
	case EventSpec:
		if specNeedsRestart {
			m.Marks.Set(SpecRestartOwed)
		}
		m.Marks.Clear(Held)
	case EventDesired:
		m.Marks.Clear(Held | HeldBySupervisor) // the operator's word wins
	case EventSupervisorStop:
		m.Marks.Set(HeldBySupervisor)
		m.Marks.Clear(SupervisorRestartAsked)
	case EventSupervisorRestart:
		m.Marks.Clear(HeldBySupervisor | Held)
		m.Marks.Set(SupervisorRestartAsked)
	case EventReload:
		m.Marks.Set(ReloadAsked)
	}
	if e == EventRestart {
		m.Marks.Clear(HeldBySupervisor)
	}
	return m
}

// stopWhy is the reason of a stop the tick decides.
func (t *ticker) stopWhy() string {
	if t.m().Marks.Has(HeldBySupervisor) {
		return "stopped by supervisor"
	}
	return "desired stopped"
}

func (t *ticker) to(st State, reason string) {
	t.m().State = st
	t.m().Reason = reason
}

func (t *ticker) act(a Action) { t.d.Action = a }

func (t *ticker) clearPending() {
	// A start loads the configuration, so a reload asked is done with too;
	// a stop makes it moot.
	t.m().Marks.Clear(RestartOwed | ReloadAsked)
}

// start issues a start; manual restarts and spec changes take precedence in
// the reason.
func (t *ticker) start(reason string) {
	m := t.m()
	if m.Marks.Has(RestartAsked) {
		reason = "manual restart"
		m.ManualRestarts++
		t.d.ManualRestart = true
	} else if m.Marks.Has(SupervisorRestartAsked) {
		m.Restarts++
		reason = fmt.Sprintf("restarted by supervisor (#%d)", m.Restarts)
	} else if m.Marks.Has(SpecRestartOwed) {
		reason = "spec changed"
	}
	t.clearPending()
	m.Marks.Clear(Held | AwaitingSupervisor)
	m.BackoffUntil = time.Time{}
	t.to(Starting, reason)
	t.act(Start)
}

func (t *ticker) stopped() {
	m := t.m()
	if t.s.Desired != WantRunning {
		t.clearPending()
		if m.State == "" {
			t.to(Stopped, t.stopWhy())
		}
		return
	}
	if m.Marks.Has(Held) && !m.Marks.Has(RestartAsked) {
		return
	}
	t.start("desired running")
}

func (t *ticker) starting() {
	r := t.s.Result
	if t.s.Event != EventActionDone || r == nil || (r.Action != Start && r.Action != Restart) {
		return
	}
	m := t.m()
	switch r.Outcome {
	case Succeeded:
		m.Instance = r.Instance
		m.RunningSince = t.s.Now
		m.Marks.Clear(RestartAsked | ReloadAsked) // a restart or reload asked during a start is satisfied by it
		t.to(Running, "started")
		switch {
		case t.s.Desired == WantStopped:
			t.to(Stopping, t.stopWhy())
			t.act(Stop)
		case m.Marks.Has(SupervisorRestartAsked):
			t.start("")
		case m.Marks.Has(SpecRestartOwed):
			m.Marks.Clear(SpecRestartOwed)
			t.to(Starting, "spec changed")
			t.act(Restart)
		}
	case Cancelled:
		if t.s.Desired == WantStopped {
			t.clearPending()
			t.to(Stopping, fmt.Sprintf("%s cancelled: %s", r.Action, t.stopWhy()))
			t.act(Stop)
			return
		}
		t.start("desired running")
	case Refused:
		if r.Action == Restart && m.Instance != "" {
			t.refusedRestart(fmt.Sprintf("%s refused: %s", r.Action, r.Error))
			return
		}
		// A refused start: nothing runs, and retrying cannot help.
		t.recordFailure()
		m.Instance = ""
		m.RunningSince = time.Time{}
		why := fmt.Sprintf("%s refused: %s", r.Action, r.Error)
		switch {
		case t.s.Desired == WantStopped:
			t.clearPending()
			t.to(Stopped, why+"; "+t.stopWhy())
		case m.Marks.Has(SpecRestartOwed): // a newer spec may be admitted
			t.start(why)
		default:
			t.clearPending()
			t.hold(Failed, why)
		}
	default: // failed, timeout, permanent
		t.recordFailure()
		// Whatever ran before a failed restart is not known to run now.
		m.Instance = ""
		m.RunningSince = time.Time{}
		why := fmt.Sprintf("%s %s: %s", r.Action, outcomeWord(r.Outcome), r.Error)
		switch {
		case t.s.Desired == WantStopped:
			t.clearPending()
			t.to(Stopping, why+"; "+t.stopWhy())
			t.act(Stop)
		case m.Marks.Any(RestartOwed):
			t.start(why)
		case r.Outcome == PermanentFailure:
			t.hold(Failed, why+" (not retryable)")
		case t.s.RestartType == Temporary:
			t.hold(Failed, why+"; temporary: not restarted")
		default:
			t.scheduleRestart(why)
		}
	}
}

// refusedRestart: the host refused a restart's spec before it stopped
// anything, so the instance that ran goes on running. A newer spec that
// came meanwhile is tried; a stop is carried out; anything else asked
// meanwhile would be refused again.
func (t *ticker) refusedRestart(why string) {
	m := t.m()
	switch {
	case t.s.Desired == WantStopped:
		t.clearPending()
		t.to(Stopping, why+"; "+t.stopWhy())
		t.act(Stop)
	case m.Marks.Has(SpecRestartOwed):
		t.clearPending()
		t.to(Starting, "spec changed")
		t.act(Restart)
	default:
		reload := m.Marks.Has(ReloadAsked) // the old instance runs on: a reload asked still applies to it
		t.clearPending()
		t.to(Running, why)
		if reload {
			m.Marks.Set(ReloadAsked)
			t.runningIntent()
		}
	}
}

func (t *ticker) running() {
	m := t.m()
	switch t.s.Event {
	case EventExited:
		if e := t.s.Exit; e != nil && e.Instance == m.Instance {
			t.exited(!e.Normal, e.Reason)
			return
		}
	case EventActionDone:
		if r := t.s.Result; r != nil && r.Action == Reload {
			if r.Outcome == Succeeded {
				m.Reason = "reloaded"
			} else {
				// The service runs on with what it had loaded (systemd
				// keeps a unit whose reload failed active, too).
				m.Reason = fmt.Sprintf("reload %s: %s", outcomeWord(r.Outcome), r.Error)
			}
		}
		if r := t.s.Result; r != nil && r.Action == Observe {
			switch {
			case r.Outcome != Succeeded:
				m.Reason = fmt.Sprintf("observe %s: %s", outcomeWord(r.Outcome), r.Error)
			case r.Observed == ObservedCrashed:
				t.exited(true, "observed: not running")
				return
			case r.Observed == ObservedExited:
				t.exited(false, "observed: exited")
				return
			default:
				// A refused spec's reason stays until something else
				// happens: the service runs, but not what was asked.
				if m.Reason != "started" && m.Reason != "running" && m.Reason != "reloaded" && !strings.HasPrefix(m.Reason, string(Restart)+" refused: ") {
					m.Reason = "running"
				}
			}
		}
	}
	t.runningIntent()
}

// runningIntent acts on what the operator asked of a running service.
func (t *ticker) runningIntent() {
	m := t.m()
	switch {
	case t.s.Desired == WantStopped:
		t.clearPending()
		t.to(Stopping, t.stopWhy())
		t.act(Stop)
	case m.Marks.Has(RestartAsked):
		m.ManualRestarts++
		t.d.ManualRestart = true
		t.clearPending()
		t.to(Starting, "manual restart")
		t.act(Restart)
	case m.Marks.Has(SupervisorRestartAsked):
		m.Restarts++
		t.clearPending()
		t.to(Starting, fmt.Sprintf("restarted by supervisor (#%d)", m.Restarts))
		t.act(Restart)
	case m.Marks.Has(SpecRestartOwed):
		t.clearPending()
		t.to(Starting, "spec changed")
		t.act(Restart)
	case m.Marks.Has(ReloadAsked):
		m.Marks.Clear(ReloadAsked)
		m.Reloads++
		m.Reason = "reloading"
		t.act(Reload)
	case t.s.Event == EventReconcile:
		t.act(Observe)
	}
}

// exited handles the end of the running instance.
func (t *ticker) exited(abnormal bool, why string) {
	m := t.m()
	t.countEnd()
	if abnormal {
		t.addFailure()
	}
	m.Instance = ""
	m.RunningSince = time.Time{}
	word := "exited normally"
	if abnormal {
		word = "crashed"
	}
	if why != "" {
		word += " (" + why + ")"
	}
	switch {
	case t.s.Desired == WantStopped:
		t.clearPending()
		t.to(Stopped, word)
	case m.Marks.Any(RestartOwed):
		t.start(word)
	case t.s.RestartType == Permanent:
		t.scheduleRestart(word)
	case t.s.RestartType == Transient && abnormal:
		t.scheduleRestart(word)
	case abnormal: // temporary
		t.hold(Failed, word+"; temporary: not restarted")
	default:
		t.hold(Stopped, fmt.Sprintf("%s; %s: not restarted", word, t.s.RestartType))
	}
}

func (t *ticker) stopping() {
	r := t.s.Result
	if t.s.Event != EventActionDone || r == nil || r.Action != Stop {
		return
	}
	m := t.m()
	m.Instance = ""
	m.RunningSince = time.Time{}
	if r.Outcome != Succeeded && r.Outcome != Cancelled {
		why := fmt.Sprintf("stop %s: %s", outcomeWord(r.Outcome), r.Error)
		if m.Marks.Has(RestartAsked) && t.s.Desired == WantRunning {
			t.start(why) // the operator's restart still stands
			return
		}
		t.clearPending()
		t.hold(Failed, why)
		return
	}
	t.to(Stopped, "stopped")
	if m.Marks.Has(HeldBySupervisor) {
		m.Reason = "stopped by supervisor"
	}
	if t.s.Desired == WantRunning {
		t.start("desired running")
	}
}

func (t *ticker) backoff() {
	m := t.m()
	switch {
	case t.s.Desired == WantStopped:
		t.clearPending()
		m.BackoffUntil = time.Time{}
		why := "stopped during backoff"
		if m.Marks.Has(HeldBySupervisor) {
			why = "stopped by supervisor during backoff"
		}
		t.to(Stopped, why)
	case m.Marks.Any(RestartAsked | SupervisorRestartAsked):
		t.start("")
	case m.Marks.Has(SpecRestartOwed) || t.s.Event == EventSpec:
		m.ConsecutiveFailures = 0 // a new spec is a fresh start
		t.start("spec changed")
	case !t.s.Now.Before(m.BackoffUntil):
		m.Restarts++
		t.start(fmt.Sprintf("automatic restart #%d", m.Restarts))
	}
}

func (t *ticker) failed() {
	m := t.m()
	if m.Marks.Has(Held) && !m.Marks.Has(RestartAsked) {
		return
	}
	if t.s.Desired == WantStopped {
		t.clearPending()
		// A failed stop may have left the service up: stopping again is safe.
		t.to(Stopping, t.stopWhy())
		t.act(Stop)
		return
	}
	t.start("desired running")
}

// moved leaves the instance behind and starts afresh from stopped. A
// worker held (failed, or kept down by its supervisor) stays held.
func (t *ticker) moved() {
	m := t.m()
	m.Instance = ""
	m.RunningSince = time.Time{}
	m.Marks.Clear(ReloadAsked)
	why := t.s.Moved
	if why == "" {
		why = "moved to another host"
	}
	t.to(Stopped, why)
	t.stopped()
}

// movable: states in which an instance runs (or may) on its host.
func movable(st State) bool { return st == Running || st == Unknown }

// unknown probes the unreachable host (an observe on each reconcile) and,
// once a probe gets through, reconciles from what it found.
func (t *ticker) unknown() {
	m := t.m()
	r := t.s.Result
	switch {
	case t.s.Event == EventReconcile:
		t.act(Observe)
		return
	case t.s.Event == EventExited:
		if e := t.s.Exit; t.s.ExitWhileUnknown && e != nil && e.Instance == m.Instance && m.Instance != "" {
			t.exited(!e.Normal, e.Reason) // the host is back: start again as the restart type says
		}
		return
	case t.s.Event != EventActionDone || r == nil || r.Action != Observe || r.Outcome == Unreachable:
		return // still unreachable, or nothing learned: wait for the next probe
	}
	if r.Outcome == Succeeded && r.Observed == ObservedRunning && m.Instance != "" {
		t.to(Running, "host back: running")
		t.runningIntent()
		return
	}
	if r.Outcome == Refused && m.Instance != "" {
		// The host is back but would not look (its probes are the
		// refused spec's): the instance is taken as running; had it
		// ended meanwhile, the host's worker reports that exit itself.
		t.to(Running, "host back; observe refused: "+r.Error)
		t.runningIntent()
		return
	}
	// The host is back and the service is not running there (or its state
	// could not be read): start from stopped, as the spec says.
	m.Instance = ""
	m.RunningSince = time.Time{}
	t.to(Stopped, "host back")
	t.stopped()
}

func (t *ticker) hold(st State, reason string) {
	t.m().Marks.Set(Held)
	t.to(st, reason)
}

// scheduleRestart enters backoff (or restarts at once when the delay is 0);
// a coordinated worker leaves the restart to its supervisor.
func (t *ticker) scheduleRestart(why string) {
	m := t.m()
	m.Terminations++
	if t.s.Coordinated {
		m.Marks.Set(AwaitingSupervisor)
		t.hold(Stopped, why+"; the supervisor restarts it")
		return
	}
	delay := BackoffDelay(t.s.Backoff, m.ConsecutiveFailures, t.s.JitterKey)
	if delay <= 0 {
		m.Restarts++
		t.start(fmt.Sprintf("%s; automatic restart #%d", why, m.Restarts))
		return
	}
	m.BackoffUntil = t.s.Now.Add(delay)
	t.to(Backoff, fmt.Sprintf("%s; restarting in %s", why, delay.Round(time.Millisecond)))
}

// countEnd counts an end of the service (a failed start, a crash, an exit)
// towards the backoff, after resetting it if the service had run long enough.
func (t *ticker) countEnd() {
	m := t.m()
	if !m.RunningSince.IsZero() && t.s.Now.Sub(m.RunningSince) >= t.s.Backoff.ResetAfter {
		m.ConsecutiveFailures = 0
	}
	m.ConsecutiveFailures++
}

func (t *ticker) addFailure() {
	m := t.m()
	m.Failures = append(m.Failures, t.s.Now)
	if len(m.Failures) > MaxFailures {
		m.Failures = m.Failures[len(m.Failures)-MaxFailures:]
	}
}

func (t *ticker) recordFailure() {
	t.countEnd()
	t.addFailure()
}

func outcomeWord(o Outcome) string {
	switch o {
	case TimedOut:
		return "timed out"
	case PermanentFailure:
		return "failed permanently"
	case Cancelled:
		return "cancelled"
	case Refused:
		return "refused"
	}
	return "failed"
}

// BackoffDelay is the delay before automatic restart number n (n >= 1
// consecutive failures): Initial * Multiplier^(n-1), capped at Max, spread by
// ±Jitter with a deterministic draw from (key, n), and capped at Max again.
func BackoffDelay(p BackoffPolicy, n int, key uint64) time.Duration {
	if n < 1 {
		n = 1
	}
	d := float64(p.Initial)
	mult := p.Multiplier
	if mult < 1 {
		mult = 1
	}
	const ceiling = float64(1 << 62) // no overflow of time.Duration
	for i := 1; i < n && (p.Max <= 0 || d < float64(p.Max)) && d < ceiling; i++ {
		d *= mult
	}
	d = min(d, ceiling)
	if p.Max > 0 && d > float64(p.Max) {
		d = float64(p.Max)
	}
	if p.Jitter > 0 {
		u := unit(key, uint64(n))
		d *= 1 + p.Jitter*(2*u-1)
	}
	if p.Max > 0 && d > float64(p.Max) {
		d = float64(p.Max)
	}
	if d < 0 {
		d = 0
	}
	return time.Duration(d)
}

// unit maps (key, n) to [0, 1) with splitmix64: deterministic, well spread.
func unit(key, n uint64) float64 {
	z := key + n*0x9e3779b97f4a7c15
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	z ^= z >> 31
	return float64(z>>11) / float64(1<<53)
}

// HashKey is a stable 64-bit FNV-1a hash of s, for JitterKey.
func HashKey(s string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 1099511628211
	}
	return h
}

// UnknownProbeEvery bounds how long a worker whose host is unreachable
// waits between probes: an observe interval can be an hour, and a host that
// was only slow to take one action (a load spike past unreachableAfter) is
// back long before that.
const UnknownProbeEvery = 30 * time.Second

// ObserveEvery is how long the observe timer of a worker in state st runs:
// the spec's interval, or UnknownProbeEvery while the host is unknown when
// that is sooner.
func ObserveEvery(st State, interval time.Duration) time.Duration {
	if st == Unknown && (interval <= 0 || interval > UnknownProbeEvery) {
		return UnknownProbeEvery
	}
	return interval
}
