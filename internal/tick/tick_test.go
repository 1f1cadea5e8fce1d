package tick

import (
	"fmt"
	"hash/fnv"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// now is the workflow time of every tick unless a test says otherwise.
var now = time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)

// exact is a backoff policy without jitter, so tests can state the delay:
// 1s, 2s, 4s, ... capped at 1m, reset after 1m of running.
var exact = BackoffPolicy{Initial: time.Second, Max: time.Minute, Multiplier: 2, ResetAfter: time.Minute}

const (
	oldInst = "i1" // the instance the worker knows about
	newInst = "i2" // the instance a start or restart brings up
)

// base returns a realistic memory for a state. Counters are non-zero so that
// a reset or an increment shows.
func base(st State) Memory {
	m := Memory{
		State:               st,
		Reason:              "base " + string(st),
		Restarts:            3,
		ManualRestarts:      2,
		ConsecutiveFailures: 2,
		Failures:            []time.Time{now.Add(-time.Hour)},
	}
	switch st {
	case Running, Stopping:
		m.Instance = oldInst
		m.RunningSince = now.Add(-10 * time.Second)
	case Backoff:
		m.BackoffUntil = now.Add(5 * time.Second)
	case Failed:
		m.Marks.Set(Held)
	}
	return m
}

func held(m Memory) Memory           { m.Marks.Set(Held); return m }
func pendingRestart(m Memory) Memory { m.Marks.Set(RestartAsked); return m }
func pendingSpec(m Memory) Memory    { m.Marks.Set(SpecRestartOwed); return m }

// restartInFlight is Starting with a restart of a running instance in flight.
func restartInFlight() Memory {
	m := base(Starting)
	m.Instance = oldInst
	m.RunningSince = now.Add(-10 * time.Second)
	return m
}

func ok(a Action) *Result { return &Result{Action: a, Outcome: Succeeded, Instance: newInst} }

func res(a Action, o Outcome) *Result { return &Result{Action: a, Outcome: o, Error: "boom"} }

func observed(o Observation) *Result {
	return &Result{Action: Observe, Outcome: Succeeded, Observed: o}
}

func crash(inst string) *Exit  { return &Exit{Instance: inst, Normal: false} }
func normal(inst string) *Exit { return &Exit{Instance: inst, Normal: true} }

// key is the part of Memory every table row asserts.
type key struct {
	State               State
	Marks               Marks
	Instance            string
	RunningSince        time.Time
	BackoffUntil        time.Time
	ConsecutiveFailures int
	Failures            int
	Restarts            int
	ManualRestarts      int
	Reloads             int
}

func keyOf(m Memory) key {
	return key{
		State: m.State, Marks: m.Marks, Instance: m.Instance, RunningSince: m.RunningSince,
		BackoffUntil: m.BackoffUntil, ConsecutiveFailures: m.ConsecutiveFailures,
		Failures: len(m.Failures), Restarts: m.Restarts, ManualRestarts: m.ManualRestarts, Reloads: m.Reloads,
	}
}

func superHeld(m Memory) Memory { m.Marks.Set(HeldBySupervisor); return m }
func awaiting(m Memory) Memory  { m.Marks.Set(Held | AwaitingSupervisor); return m }
func superHold(k *key)          { k.Marks.Set(HeldBySupervisor) }
func pendingAuto(k *key)        { k.Marks.Set(SupervisorRestartAsked) }
func notAwaiting(k *key)        { k.Marks.Clear(AwaitingSupervisor) }
func awaits(k *key)             { k.Marks.Set(Held | AwaitingSupervisor) }
func noSuperHold(k *key)        { k.Marks.Clear(HeldBySupervisor) }

// Common expected changes.
func noHold(k *key)    { k.Marks.Clear(Held) }
func manual(k *key)    { k.ManualRestarts++ }
func noPending(k *key) { k.Marks.Clear(RestartAsked | SpecRestartOwed) }
func failure(k *key)   { k.ConsecutiveFailures++; k.Failures++ }
func ended(k *key)     { k.Instance = ""; k.RunningSince = time.Time{} }
func noBackoff(k *key) { k.BackoffUntil = time.Time{} }
func automatic(k *key) { k.Restarts++ }
func backoffIn(d time.Duration) func(*key) {
	return func(k *key) { k.BackoffUntil = now.Add(d) }
}
func started(k *key) { k.Instance = newInst; k.RunningSince = now }

func all(fs ...func(*key)) func(*key) {
	return func(k *key) {
		for _, f := range fs {
			f(k)
		}
	}
}

type row struct {
	name    string
	mem     Memory
	desired Desired     // default WantRunning
	rt      RestartType // default Permanent
	ev      Event
	res     *Result
	exit    *Exit
	spec    bool      // SpecNeedsRestart
	at      time.Time // default now
	coord   bool      // Coordinated

	to       State
	act      Action
	manual   bool       // Decision.ManualRestart
	change   func(*key) // expected changes besides State; nil: none
	reason   string     // substring the reason must contain
	reasonEq string     // exact reason
}

func (r row) snapshot() Snapshot {
	s := Snapshot{
		Now: now, Memory: r.mem, Desired: WantRunning, RestartType: Permanent,
		Backoff: exact, JitterKey: 42, Event: r.ev, Result: r.res, Exit: r.exit,
		SpecNeedsRestart: r.spec, Coordinated: r.coord,
	}
	if r.desired != "" {
		s.Desired = r.desired
	}
	if r.rt != "" {
		s.RestartType = r.rt
	}
	if !r.at.IsZero() {
		s.Now = r.at
	}
	return s
}

// transitions has a row for every meaningful state x event combination (and
// TestTransitionTableCoversEveryStateAndEvent checks that none is missing).
// Backoff rows use the exact policy: ConsecutiveFailures 2 -> 3 gives 4s.
var transitions = []row{
	// ---- stopped ----
	{name: "stopped/reconcile/desired running: starts", mem: base(Stopped), ev: EventReconcile,
		to: Starting, act: Start, reasonEq: "desired running"},
	{name: "stopped/reconcile/desired stopped: stays stopped", mem: base(Stopped), desired: WantStopped, ev: EventReconcile,
		to: Stopped},
	{name: "stopped+hold/reconcile: stays held down", mem: held(base(Stopped)), ev: EventReconcile,
		to: Stopped},
	{name: "stopped+hold/desired running: operator start lifts the hold", mem: held(base(Stopped)), ev: EventDesired,
		to: Starting, act: Start, change: noHold, reasonEq: "desired running"},
	{name: "stopped/desired stopped: stale pending requests are dropped", mem: pendingSpec(pendingRestart(base(Stopped))), desired: WantStopped, ev: EventDesired,
		to: Stopped, change: noPending},
	{name: "stopped+hold/restart: starts as a manual restart", mem: held(base(Stopped)), ev: EventRestart,
		to: Starting, act: Start, manual: true, change: all(noHold, manual), reasonEq: "manual restart"},
	{name: "stopped+hold/spec needing restart: starts with the new spec", mem: held(base(Stopped)), ev: EventSpec, spec: true,
		to: Starting, act: Start, change: noHold, reasonEq: "spec changed"},
	{name: "stopped/spec needing restart/desired stopped: nothing to restart", mem: base(Stopped), desired: WantStopped, ev: EventSpec, spec: true,
		to: Stopped},
	{name: "stopped+hold/action_done stray result: ignored", mem: held(base(Stopped)), ev: EventActionDone, res: ok(Observe),
		to: Stopped},
	{name: "stopped+hold/backoff_expired stale timer: ignored", mem: held(base(Stopped)), ev: EventBackoffExpired,
		to: Stopped},
	{name: "stopped+hold/exited stale exit: ignored", mem: held(base(Stopped)), ev: EventExited, exit: crash(oldInst),
		to: Stopped},
	{name: "stopped/backoff_expired/desired running: starts (nothing holds it)", mem: base(Stopped), ev: EventBackoffExpired,
		to: Starting, act: Start, reasonEq: "desired running"},
	{name: "new worker/reconcile/desired stopped: becomes stopped", mem: Memory{}, desired: WantStopped, ev: EventReconcile,
		to: Stopped, reasonEq: "desired stopped"},
	{name: "new worker/reconcile/desired running: first start", mem: Memory{}, ev: EventReconcile,
		to: Starting, act: Start, reasonEq: "desired running"},

	// ---- starting (a start or restart in flight) ----
	{name: "starting/reconcile: waits for the action", mem: base(Starting), ev: EventReconcile,
		to: Starting},
	{name: "starting/desired stopped: waits (the caller cancels)", mem: base(Starting), desired: WantStopped, ev: EventDesired,
		to: Starting},
	{name: "starting/restart: recorded as pending", mem: base(Starting), ev: EventRestart,
		to: Starting, change: func(k *key) { k.Marks.Set(RestartAsked) }},
	{name: "starting/spec needing restart: recorded as pending", mem: base(Starting), ev: EventSpec, spec: true,
		to: Starting, change: func(k *key) { k.Marks.Set(SpecRestartOwed) }},
	{name: "starting/spec not needing restart: nothing", mem: base(Starting), ev: EventSpec,
		to: Starting},
	{name: "starting/backoff_expired stale timer: ignored", mem: base(Starting), ev: EventBackoffExpired,
		to: Starting},
	{name: "starting(restart)/exited old instance: ignored", mem: restartInFlight(), ev: EventExited, exit: crash(oldInst),
		to: Starting},
	{name: "starting/action_done start succeeded: running", mem: base(Starting), ev: EventActionDone, res: ok(Start),
		to: Running, change: started, reasonEq: "started"},
	{name: "starting(restart)/action_done restart succeeded: running the new instance", mem: restartInFlight(), ev: EventActionDone, res: ok(Restart),
		to: Running, change: started, reasonEq: "started"},
	{name: "starting/start succeeded with pending restart: the start satisfies it", mem: pendingRestart(base(Starting)), ev: EventActionDone, res: ok(Start),
		to: Running, change: all(started, noPending), reasonEq: "started"},
	{name: "starting/start succeeded with pending spec change: restarts", mem: pendingSpec(base(Starting)), ev: EventActionDone, res: ok(Start),
		to: Starting, act: Restart, change: all(started, noPending), reasonEq: "spec changed"},
	{name: "starting/start succeeded but desired stopped: stops", mem: base(Starting), desired: WantStopped, ev: EventActionDone, res: ok(Start),
		to: Stopping, act: Stop, change: started, reasonEq: "desired stopped"},
	{name: "starting/start failed: backoff", mem: base(Starting), ev: EventActionDone, res: res(Start, FailedOutcome),
		to: Backoff, change: all(failure, backoffIn(4*time.Second)), reasonEq: "start failed: boom; restarting in 4s"},
	{name: "starting/start timed out: backoff", mem: base(Starting), ev: EventActionDone, res: res(Start, TimedOut),
		to: Backoff, change: all(failure, backoffIn(4*time.Second)), reason: "start timed out: boom"},
	{name: "starting/start failed permanently: failed and held", mem: base(Starting), ev: EventActionDone, res: res(Start, PermanentFailure),
		to: Failed, change: all(failure, func(k *key) { k.Marks.Set(Held) }), reasonEq: "start failed permanently: boom (not retryable)"},
	{name: "starting/start failed, temporary: failed and held", mem: base(Starting), rt: Temporary, ev: EventActionDone, res: res(Start, FailedOutcome),
		to: Failed, change: all(failure, func(k *key) { k.Marks.Set(Held) }), reason: "temporary: not restarted"},
	{name: "starting/start failed, transient: backoff", mem: base(Starting), rt: Transient, ev: EventActionDone, res: res(Start, FailedOutcome),
		to: Backoff, change: all(failure, backoffIn(4*time.Second)), reason: "start failed"},
	{name: "starting/start failed permanently with pending restart: the operator wins", mem: pendingRestart(base(Starting)), ev: EventActionDone, res: res(Start, PermanentFailure),
		to: Starting, act: Start, manual: true, change: all(failure, manual, noPending), reasonEq: "manual restart"},
	{name: "starting/start failed permanently with pending spec change: retries with the new spec", mem: pendingSpec(base(Starting)), ev: EventActionDone, res: res(Start, PermanentFailure),
		to: Starting, act: Start, change: all(failure, noPending), reasonEq: "spec changed"},
	{name: "starting/start failed, desired stopped: stops, pending dropped", mem: pendingRestart(base(Starting)), desired: WantStopped, ev: EventActionDone, res: res(Start, FailedOutcome),
		to: Stopping, act: Stop, change: all(failure, noPending), reason: "desired stopped"},
	{name: "starting/start cancelled, desired stopped: stops", mem: base(Starting), desired: WantStopped, ev: EventActionDone, res: res(Start, Cancelled),
		to: Stopping, act: Stop, reasonEq: "start cancelled: desired stopped"},
	{name: "starting/start cancelled, desired running again: starts again", mem: base(Starting), ev: EventActionDone, res: res(Start, Cancelled),
		to: Starting, act: Start, reasonEq: "desired running"},
	// A refused action (the host's policy or signature check) ran nothing.
	{name: "starting/start refused: failed and held, nothing runs", mem: base(Starting), ev: EventActionDone, res: res(Start, Refused),
		to: Failed, change: all(failure, func(k *key) { k.Marks.Set(Held) }), reasonEq: "start refused: boom"},
	{name: "starting/start refused with pending manual restart: failed (it would be refused again)", mem: pendingRestart(base(Starting)), ev: EventActionDone, res: res(Start, Refused),
		to: Failed, change: all(failure, noPending, func(k *key) { k.Marks.Set(Held) }), reasonEq: "start refused: boom"},
	{name: "starting/start refused with pending spec change: the new spec is tried", mem: pendingSpec(base(Starting)), ev: EventActionDone, res: res(Start, Refused),
		to: Starting, act: Start, change: all(failure, noPending), reasonEq: "spec changed"},
	{name: "starting/start refused, desired stopped: stopped (nothing runs)", mem: base(Starting), desired: WantStopped, ev: EventActionDone, res: res(Start, Refused),
		to: Stopped, change: failure, reasonEq: "start refused: boom; desired stopped"},
	{name: "starting(restart)/restart refused: the old instance keeps running", mem: restartInFlight(), ev: EventActionDone, res: res(Restart, Refused),
		to: Running, reasonEq: "restart refused: boom"},
	{name: "starting(restart)/restart refused with pending manual restart: running (it would be refused again)", mem: pendingRestart(restartInFlight()), ev: EventActionDone, res: res(Restart, Refused),
		to: Running, change: noPending, reasonEq: "restart refused: boom"},
	{name: "starting(restart)/restart refused with a newer spec pending: restarts with it", mem: pendingSpec(restartInFlight()), ev: EventActionDone, res: res(Restart, Refused),
		to: Starting, act: Restart, change: noPending, reasonEq: "spec changed"},
	{name: "starting(restart)/restart refused, desired stopped: stops the old instance", mem: restartInFlight(), desired: WantStopped, ev: EventActionDone, res: res(Restart, Refused),
		to: Stopping, act: Stop, reasonEq: "restart refused: boom; desired stopped"},
	{name: "running/observe fine after a refused restart: the refusal stays the reason", mem: func() Memory { m := base(Running); m.Reason = "restart refused: boom"; return m }(),
		ev: EventActionDone, res: observed(ObservedRunning), to: Running, reasonEq: "restart refused: boom"},
	{name: "running/observe refused: running, reason says so", mem: base(Running), ev: EventActionDone, res: res(Observe, Refused),
		to: Running, reasonEq: "observe refused: boom"},
	{name: "starting/action_done of another action: ignored", mem: base(Starting), ev: EventActionDone, res: ok(Observe),
		to: Starting},
	{name: "starting/action_done without result: ignored", mem: base(Starting), ev: EventActionDone,
		to: Starting},

	// ---- running ----
	{name: "running/reconcile: observes", mem: base(Running), ev: EventReconcile,
		to: Running, act: Observe},
	{name: "running/desired stopped: stops", mem: base(Running), desired: WantStopped, ev: EventDesired,
		to: Stopping, act: Stop, reasonEq: "desired stopped"},
	{name: "running/desired running: nothing", mem: base(Running), ev: EventDesired,
		to: Running},
	{name: "running/restart: restarts, counted as manual", mem: base(Running), ev: EventRestart,
		to: Starting, act: Restart, manual: true, change: manual, reasonEq: "manual restart"},
	{name: "running/spec needing restart: restarts, not counted as manual", mem: base(Running), ev: EventSpec, spec: true,
		to: Starting, act: Restart, reasonEq: "spec changed"},
	{name: "running/spec not needing restart: nothing restarts", mem: base(Running), ev: EventSpec,
		to: Running},
	{name: "running/backoff_expired stale timer: ignored", mem: base(Running), ev: EventBackoffExpired,
		to: Running},
	{name: "running/exited crashed, permanent: backoff", mem: base(Running), ev: EventExited, exit: crash(oldInst),
		to: Backoff, change: all(ended, failure, backoffIn(4*time.Second)), reasonEq: "crashed; restarting in 4s"},
	{name: "running/exited normally, permanent: backoff, not a failure", mem: base(Running), ev: EventExited, exit: &Exit{Instance: oldInst, Normal: true, Reason: "done"},
		to: Backoff, change: all(ended, func(k *key) { k.ConsecutiveFailures++ }, backoffIn(4*time.Second)), reasonEq: "exited normally (done); restarting in 4s"},
	{name: "running/exited, other instance: ignored", mem: base(Running), ev: EventExited, exit: crash("i0"),
		to: Running},
	{name: "running/exited without exit payload: ignored", mem: base(Running), ev: EventExited,
		to: Running},
	{name: "running/exited crashed, desired stopped: stopped, not held", mem: base(Running), desired: WantStopped, ev: EventExited, exit: crash(oldInst),
		to: Stopped, change: all(ended, failure), reasonEq: "crashed"},
	{name: "running/exited crashed with pending restart: starts at once", mem: pendingRestart(base(Running)), ev: EventExited, exit: crash(oldInst),
		to: Starting, act: Start, manual: true, change: all(ended, failure, manual, noPending), reasonEq: "manual restart"},
	{name: "running/observe running: healthy", mem: base(Running), ev: EventActionDone, res: observed(ObservedRunning),
		to: Running, reasonEq: "running"},
	{name: "running/observe crashed: backoff", mem: base(Running), ev: EventActionDone, res: observed(ObservedCrashed),
		to: Backoff, change: all(ended, failure, backoffIn(4*time.Second)), reason: "crashed (observed: not running)"},
	{name: "running/observe exited, transient: stopped and held", mem: base(Running), rt: Transient, ev: EventActionDone, res: observed(ObservedExited),
		to: Stopped, change: all(ended, func(k *key) { k.ConsecutiveFailures++; k.Marks.Set(Held) }), reasonEq: "exited normally (observed: exited); transient: not restarted"},
	{name: "running/observe failed: still running, reason says so", mem: base(Running), ev: EventActionDone, res: res(Observe, FailedOutcome),
		to: Running, reasonEq: "observe failed: boom"},
	{name: "running/observe done with pending restart: restarts", mem: pendingRestart(base(Running)), ev: EventActionDone, res: observed(ObservedRunning),
		to: Starting, act: Restart, manual: true, change: all(manual, noPending), reasonEq: "manual restart"},
	{name: "running/observe done, desired stopped: stops", mem: base(Running), desired: WantStopped, ev: EventActionDone, res: observed(ObservedRunning),
		to: Stopping, act: Stop, reasonEq: "desired stopped"},
	{name: "running/action_done of a start: ignored", mem: base(Running), ev: EventActionDone, res: ok(Start),
		to: Running},

	// ---- stopping (a stop in flight) ----
	{name: "stopping/reconcile: waits for the stop", mem: base(Stopping), desired: WantStopped, ev: EventReconcile,
		to: Stopping},
	{name: "stopping/desired running: waits, the stop is never cancelled", mem: base(Stopping), ev: EventDesired,
		to: Stopping},
	{name: "stopping/restart: recorded as pending", mem: base(Stopping), ev: EventRestart,
		to: Stopping, change: func(k *key) { k.Marks.Set(RestartAsked) }},
	{name: "stopping/spec needing restart: recorded as pending", mem: base(Stopping), desired: WantStopped, ev: EventSpec, spec: true,
		to: Stopping, change: func(k *key) { k.Marks.Set(SpecRestartOwed) }},
	{name: "stopping/backoff_expired stale timer: ignored", mem: base(Stopping), desired: WantStopped, ev: EventBackoffExpired,
		to: Stopping},
	{name: "stopping/exited: ignored until the stop returns", mem: base(Stopping), desired: WantStopped, ev: EventExited, exit: normal(oldInst),
		to: Stopping},
	{name: "stopping/stop succeeded: stopped", mem: base(Stopping), desired: WantStopped, ev: EventActionDone, res: ok(Stop),
		to: Stopped, change: ended, reasonEq: "stopped"},
	{name: "stopping/stop succeeded, desired running again: starts", mem: base(Stopping), ev: EventActionDone, res: ok(Stop),
		to: Starting, act: Start, change: ended, reasonEq: "desired running"},
	{name: "stopping/stop succeeded with pending restart: starts as manual restart", mem: pendingRestart(base(Stopping)), ev: EventActionDone, res: ok(Stop),
		to: Starting, act: Start, manual: true, change: all(ended, manual, noPending), reasonEq: "manual restart"},
	{name: "stopping/stop failed: failed and held", mem: base(Stopping), desired: WantStopped, ev: EventActionDone, res: res(Stop, FailedOutcome),
		to: Failed, change: all(ended, func(k *key) { k.Marks.Set(Held) }), reasonEq: "stop failed: boom"},
	{name: "stopping/stop timed out: failed and held", mem: base(Stopping), desired: WantStopped, ev: EventActionDone, res: res(Stop, TimedOut),
		to: Failed, change: all(ended, func(k *key) { k.Marks.Set(Held) }), reasonEq: "stop timed out: boom"},
	{name: "stopping/stop cancelled: counts as stopped", mem: base(Stopping), desired: WantStopped, ev: EventActionDone, res: res(Stop, Cancelled),
		to: Stopped, change: ended, reasonEq: "stopped"},
	{name: "stopping/action_done of another action: ignored", mem: base(Stopping), desired: WantStopped, ev: EventActionDone, res: ok(Observe),
		to: Stopping},

	// ---- backoff (timer until now+5s) ----
	{name: "backoff/reconcile before the deadline: waits", mem: base(Backoff), ev: EventReconcile,
		to: Backoff},
	{name: "backoff/reconcile after the deadline: restarts (never late)", mem: base(Backoff), ev: EventReconcile, at: now.Add(6 * time.Second),
		to: Starting, act: Start, change: all(automatic, noBackoff), reasonEq: "automatic restart #4"},
	{name: "backoff/backoff_expired at the deadline: automatic restart", mem: base(Backoff), ev: EventBackoffExpired, at: now.Add(5 * time.Second),
		to: Starting, act: Start, change: all(automatic, noBackoff), reasonEq: "automatic restart #4"},
	{name: "backoff/backoff_expired early (stale timer): waits", mem: base(Backoff), ev: EventBackoffExpired,
		to: Backoff},
	{name: "backoff/desired stopped: stopped, timer cleared", mem: pendingSpec(base(Backoff)), desired: WantStopped, ev: EventDesired,
		to: Stopped, change: all(noBackoff, noPending), reasonEq: "stopped during backoff"},
	{name: "backoff/desired running: waits", mem: base(Backoff), ev: EventDesired,
		to: Backoff},
	{name: "backoff/restart: starts at once as manual restart", mem: base(Backoff), ev: EventRestart,
		to: Starting, act: Start, manual: true, change: all(manual, noBackoff), reasonEq: "manual restart"},
	{name: "backoff/spec not needing restart: replaces the pending restart", mem: base(Backoff), ev: EventSpec,
		to: Starting, act: Start, change: all(noBackoff, func(k *key) { k.ConsecutiveFailures = 0 }), reasonEq: "spec changed"},
	{name: "backoff/spec needing restart: starts fresh", mem: base(Backoff), ev: EventSpec, spec: true,
		to: Starting, act: Start, change: all(noBackoff, func(k *key) { k.ConsecutiveFailures = 0 }), reasonEq: "spec changed"},
	{name: "backoff/action_done stray result: waits", mem: base(Backoff), ev: EventActionDone, res: ok(Observe),
		to: Backoff},
	{name: "backoff/exited stale exit: waits", mem: base(Backoff), ev: EventExited, exit: crash(oldInst),
		to: Backoff},

	// ---- unknown (host unreachable: the circuit is open) ----
	{name: "starting/action_done unreachable: the circuit opens, nothing failed", mem: base(Starting), ev: EventActionDone, res: res(Start, Unreachable),
		to: Unknown, reasonEq: "boom"},
	{name: "running/observe unreachable: the circuit opens", mem: base(Running), ev: EventActionDone, res: res(Observe, Unreachable),
		to: Unknown, reasonEq: "boom"},
	{name: "unknown/reconcile: probes the host", mem: base(Unknown), ev: EventReconcile,
		to: Unknown, act: Observe},
	{name: "unknown/desired stopped: waits for the host", mem: base(Unknown), desired: WantStopped, ev: EventDesired,
		to: Unknown},
	{name: "unknown/restart: recorded, waits for the host", mem: base(Unknown), ev: EventRestart,
		to: Unknown, change: func(k *key) { k.Marks.Set(RestartAsked) }},
	{name: "unknown/spec needing restart: recorded, waits for the host", mem: base(Unknown), ev: EventSpec, spec: true,
		to: Unknown, change: func(k *key) { k.Marks.Set(SpecRestartOwed) }},
	{name: "unknown/action_done probe still unreachable: stays", mem: base(Unknown), ev: EventActionDone, res: res(Observe, Unreachable),
		to: Unknown},
	{name: "unknown/action_done probe finds it running: running again", mem: func() Memory {
		m := base(Unknown)
		m.Instance = oldInst
		m.RunningSince = now.Add(-time.Minute)
		return m
	}(),
		ev: EventActionDone, res: observed(ObservedRunning), to: Running, reasonEq: "host back: running"},
	{name: "unknown/action_done probe refused by the host that is back: taken as running", mem: func() Memory {
		m := base(Unknown)
		m.Instance = oldInst
		m.RunningSince = now.Add(-time.Minute)
		return m
	}(),
		ev: EventActionDone, res: res(Observe, Refused), to: Running, reasonEq: "host back; observe refused: boom"},
	{name: "unknown/action_done probe refused, no instance: reconciles by starting", mem: base(Unknown), ev: EventActionDone, res: res(Observe, Refused),
		to: Starting, act: Start, reasonEq: "desired running"},
	{name: "unknown/action_done probe finds nothing: reconciles by starting", mem: base(Unknown), ev: EventActionDone, res: observed(ObservedCrashed),
		to: Starting, act: Start, reasonEq: "desired running"},
	{name: "unknown/backoff_expired stale timer: stays", mem: base(Unknown), ev: EventBackoffExpired,
		to: Unknown},
	{name: "unknown/exited: left to the probe", mem: base(Unknown), ev: EventExited, exit: crash(oldInst),
		to: Unknown},

	// ---- failed (held) ----
	{name: "failed/reconcile: stays failed", mem: base(Failed), ev: EventReconcile,
		to: Failed},
	{name: "failed/restart: starts as manual restart", mem: base(Failed), ev: EventRestart,
		to: Starting, act: Start, manual: true, change: all(noHold, manual), reasonEq: "manual restart"},
	{name: "failed/desired running: starts", mem: base(Failed), ev: EventDesired,
		to: Starting, act: Start, change: noHold, reasonEq: "desired running"},
	{name: "failed/desired stopped: stops again (a failed stop may have left it up)", mem: base(Failed), desired: WantStopped, ev: EventDesired,
		to: Stopping, act: Stop, change: noHold, reasonEq: "desired stopped"},
	{name: "failed/spec: a new spec is tried", mem: base(Failed), ev: EventSpec,
		to: Starting, act: Start, change: noHold, reasonEq: "desired running"},
	{name: "failed/spec needing restart, desired stopped: stops, pending dropped", mem: base(Failed), desired: WantStopped, ev: EventSpec, spec: true,
		to: Stopping, act: Stop, change: noHold, reasonEq: "desired stopped"},
	{name: "failed/backoff_expired stale timer: stays failed", mem: base(Failed), ev: EventBackoffExpired,
		to: Failed},
	{name: "failed/exited stale exit: stays failed", mem: base(Failed), ev: EventExited, exit: crash(oldInst),
		to: Failed},
	{name: "failed/action_done stray result: stays failed", mem: base(Failed), ev: EventActionDone, res: ok(Start),
		to: Failed},
	{name: "failed without hold/reconcile: tries again", mem: Memory{State: Failed, Reason: "x", Restarts: 3, ManualRestarts: 2}, ev: EventReconcile,
		to: Starting, act: Start, reasonEq: "desired running"},

	// ---- a supervisor stops the service (group restart, giving up) ----
	{name: "stopped/supervisor_stop: stays stopped, held by the supervisor", mem: base(Stopped), ev: EventSupervisorStop,
		to: Stopped, change: superHold},
	{name: "starting/supervisor_stop: waits (the caller cancels)", mem: base(Starting), ev: EventSupervisorStop,
		to: Starting, change: superHold},
	{name: "running/supervisor_stop: stops, desired kept", mem: base(Running), ev: EventSupervisorStop,
		to: Stopping, act: Stop, change: superHold, reasonEq: "stopped by supervisor"},
	{name: "stopping/supervisor_stop: waits for the stop", mem: base(Stopping), ev: EventSupervisorStop,
		to: Stopping, change: superHold},
	{name: "stopping+supervisor hold/stop done: stopped by supervisor, not started", mem: superHeld(base(Stopping)), ev: EventActionDone, res: ok(Stop),
		to: Stopped, change: ended, reasonEq: "stopped by supervisor"},
	{name: "backoff/supervisor_stop: the pending restart is cancelled", mem: base(Backoff), ev: EventSupervisorStop,
		to: Stopped, change: all(superHold, noBackoff), reasonEq: "stopped by supervisor during backoff"},
	{name: "failed/supervisor_stop: stays failed", mem: base(Failed), ev: EventSupervisorStop,
		to: Failed, change: superHold},
	{name: "unknown/supervisor_stop: recorded; the probe decides", mem: base(Unknown), ev: EventSupervisorStop,
		to: Unknown, change: superHold},
	{name: "stopped+supervisor hold/reconcile: stays down", mem: superHeld(base(Stopped)), ev: EventReconcile,
		to: Stopped},
	{name: "stopped+supervisor hold/desired running: the operator's word wins", mem: superHeld(base(Stopped)), ev: EventDesired,
		to: Starting, act: Start, change: noSuperHold, reasonEq: "desired running"},
	{name: "stopped+supervisor hold/restart: a manual restart lifts it", mem: superHeld(base(Stopped)), ev: EventRestart,
		to: Starting, act: Start, manual: true, change: all(manual, noSuperHold), reasonEq: "manual restart"},

	// ---- a supervisor restarts the service ----
	{name: "stopped+awaiting/supervisor_restart: automatic restart", mem: awaiting(base(Stopped)), ev: EventSupervisorRestart,
		to: Starting, act: Start, change: all(noHold, notAwaiting, automatic), reasonEq: "restarted by supervisor (#4)"},
	{name: "stopped+supervisor hold/supervisor_restart: starts", mem: superHeld(base(Stopped)), ev: EventSupervisorRestart,
		to: Starting, act: Start, change: all(automatic, noSuperHold), reasonEq: "restarted by supervisor (#4)"},
	{name: "starting/supervisor_restart: recorded as pending", mem: base(Starting), ev: EventSupervisorRestart,
		to: Starting, change: pendingAuto},
	{name: "running/supervisor_restart: restarts, counted as automatic", mem: base(Running), ev: EventSupervisorRestart,
		to: Starting, act: Restart, change: automatic, reasonEq: "restarted by supervisor (#4)"},
	{name: "stopping/supervisor_restart: recorded, started after the stop", mem: superHeld(base(Stopping)), ev: EventSupervisorRestart,
		to: Stopping, change: func(k *key) { k.Marks.Clear(HeldBySupervisor); k.Marks.Set(SupervisorRestartAsked) }},
	{name: "backoff/supervisor_restart: starts now", mem: base(Backoff), ev: EventSupervisorRestart,
		to: Starting, act: Start, change: all(automatic, noBackoff), reasonEq: "restarted by supervisor (#4)"},
	{name: "failed/supervisor_restart: tried again", mem: base(Failed), ev: EventSupervisorRestart,
		to: Starting, act: Start, change: all(noHold, automatic), reasonEq: "restarted by supervisor (#4)"},
	{name: "unknown/supervisor_restart: recorded for when the host is back", mem: base(Unknown), ev: EventSupervisorRestart,
		to: Unknown, change: pendingAuto},
	{name: "stopped+supervisor hold/desired stopped: stays down", mem: superHeld(base(Stopped)), desired: WantStopped, ev: EventSupervisorRestart,
		to: Stopped, change: noSuperHold},

	// ---- coordinated workers leave restarts to the supervisor ----
	{name: "running/exited crashed, coordinated: stopped, awaiting the supervisor", mem: base(Running), coord: true, ev: EventExited, exit: crash(oldInst),
		to: Stopped, change: all(ended, failure, awaits), reasonEq: "crashed; the supervisor restarts it"},
	{name: "starting/start failed, coordinated: stopped, awaiting the supervisor", mem: base(Starting), coord: true, ev: EventActionDone, res: res(Start, FailedOutcome),
		to: Stopped, change: all(failure, awaits), reason: "the supervisor restarts it"},
	{name: "running/exited crashed, coordinated temporary: failed, not the supervisor's", mem: base(Running), coord: true, rt: Temporary, ev: EventExited, exit: crash(oldInst),
		to: Failed, change: all(ended, failure, func(k *key) { k.Marks.Set(Held) }), reason: "temporary: not restarted"},
	{name: "stopped+awaiting/reconcile: waits for the supervisor", mem: awaiting(base(Stopped)), coord: true, ev: EventReconcile,
		to: Stopped},

	// ---- reload ----
	{name: "stopped/reload: moot, forgotten", mem: base(Stopped), desired: WantStopped, ev: EventReload, to: Stopped},
	{name: "starting/reload: recorded for after the start", mem: base(Starting), ev: EventReload,
		to: Starting, change: func(k *key) { k.Marks.Set(ReloadAsked) }},
	{name: "running/reload: reloads, still running", mem: base(Running), ev: EventReload,
		to: Running, act: Reload, change: func(k *key) { k.Reloads = 1 }, reasonEq: "reloading"},
	{name: "running/reload done: reloaded", mem: base(Running), ev: EventActionDone, res: ok(Reload),
		to: Running, reasonEq: "reloaded"},
	{name: "running/reload failed: still running, reason says so", mem: base(Running), ev: EventActionDone, res: res(Reload, FailedOutcome),
		to: Running, reasonEq: "reload failed: boom"},
	{name: "stopping/reload: recorded (the stop makes it moot)", mem: base(Stopping), ev: EventReload,
		to: Stopping, change: func(k *key) { k.Marks.Set(ReloadAsked) }},
	{name: "backoff/reload: moot, forgotten", mem: base(Backoff), ev: EventReload, to: Backoff},
	{name: "failed/reload: moot, forgotten", mem: base(Failed), ev: EventReload, to: Failed},
	{name: "unknown/reload: kept for when the host is back", mem: base(Unknown), ev: EventReload,
		to: Unknown, change: func(k *key) { k.Marks.Set(ReloadAsked) }},

	// ---- moved off a lost host ----
	{name: "running/moved: the instance is left behind, started afresh", mem: base(Running), ev: EventMoved,
		to: Starting, act: Start, change: ended, reasonEq: "desired running"},
	{name: "unknown/moved: started afresh elsewhere", mem: withInstance(base(Unknown)), ev: EventMoved,
		to: Starting, act: Start, change: ended, reasonEq: "desired running"},
	{name: "unknown/moved, desired stopped: stopped, nothing started", mem: withInstance(base(Unknown)), desired: WantStopped, ev: EventMoved,
		to: Stopped, change: ended, reasonEq: "moved to another host"},
	{name: "stopped/moved: nothing ran, nothing moves", mem: base(Stopped), desired: WantStopped, ev: EventMoved, to: Stopped},
	{name: "starting/moved: the action in flight decides", mem: base(Starting), ev: EventMoved, to: Starting},
	{name: "stopping/moved: the action in flight decides", mem: base(Stopping), ev: EventMoved, to: Stopping},
	{name: "backoff/moved: waits as before", mem: base(Backoff), ev: EventMoved, to: Backoff},
	{name: "failed/moved: stays failed", mem: base(Failed), ev: EventMoved, to: Failed},

	// ---- corrupt memory ----
	{name: "unknown state: failed and held", mem: Memory{State: "zombie", Reason: "x"}, ev: EventReconcile,
		to: Failed, change: func(k *key) { k.Marks.Set(Held) }, reasonEq: `unknown state "zombie"`},
}

func TestTransitionTable(t *testing.T) {
	for _, r := range transitions {
		t.Run(r.name, func(t *testing.T) {
			d := Next(r.snapshot())

			want := keyOf(r.mem)
			want.State = r.to
			if r.change != nil {
				r.change(&want)
			}
			require.Equal(t, want, keyOf(d.Memory), "memory")
			require.Equal(t, r.act, d.Action, "action")
			require.Equal(t, r.manual, d.ManualRestart, "manual restart flag")

			switch {
			case r.reasonEq != "":
				require.Equal(t, r.reasonEq, d.Memory.Reason)
			case r.reason != "":
				require.Contains(t, d.Memory.Reason, r.reason)
			default:
				require.Equal(t, r.mem.Reason, d.Memory.Reason, "reason must not change without a transition")
			}
			if d.Memory.State != r.mem.State || d.Action != None {
				require.NotEmpty(t, d.Memory.Reason, "a transition carries a reason")
			}
		})
	}
}

func TestTransitionTableCoversEveryStateAndEvent(t *testing.T) {
	covered := map[State]map[Event]bool{}
	for _, r := range transitions {
		if covered[r.mem.State] == nil {
			covered[r.mem.State] = map[Event]bool{}
		}
		covered[r.mem.State][r.ev] = true
	}
	for _, st := range AllStates {
		for _, ev := range AllEvents {
			require.True(t, covered[st][ev], "no row for %s x %s", st, ev)
		}
	}
}

// TestNextPropertiesHoldForAllInputs drives Next through every state, event,
// desired state, restart type, result and exit, and checks invariants that
// must hold whatever the input.
func TestNextPropertiesHoldForAllInputs(t *testing.T) {
	states := append(slices.Clone(AllStates), "", "bogus")
	actions := []Action{None, Start, Stop, Restart, Observe, Reload}
	outcomes := []Outcome{Succeeded, FailedOutcome, PermanentFailure, TimedOut, Cancelled, Unreachable, Refused, "weird"}
	observations := []Observation{"", ObservedRunning, ObservedExited, ObservedCrashed}
	results := []*Result{nil}
	for _, a := range actions {
		for _, o := range outcomes {
			for _, ob := range observations {
				results = append(results, &Result{Action: a, Outcome: o, Error: "e", Instance: newInst, Observed: ob})
			}
		}
	}
	exits := []*Exit{nil, crash(oldInst), normal(oldInst), crash("other"), normal("other")}
	policy := BackoffPolicy{Initial: time.Second, Max: time.Minute, Multiplier: 2, Jitter: 0.1, ResetAfter: time.Minute}
	validState := map[State]bool{}
	for _, s := range AllStates {
		validState[s] = true
	}
	validAction := map[Action]bool{None: true, Start: true, Stop: true, Restart: true, Observe: true, Reload: true}

	n := 0
	for _, st := range states {
		for _, ev := range AllEvents {
			payloads := []Snapshot{{}}
			switch ev {
			case EventActionDone:
				payloads = nil
				for _, r := range results {
					payloads = append(payloads, Snapshot{Result: r})
				}
			case EventExited:
				payloads = nil
				for _, e := range exits {
					payloads = append(payloads, Snapshot{Exit: e})
				}
			case EventSpec:
				payloads = []Snapshot{{}, {SpecNeedsRestart: true}}
			}
			for _, p := range payloads {
				for _, desired := range []Desired{WantRunning, WantStopped} {
					for _, rt := range []RestartType{Permanent, Transient, Temporary} {
						for bits := 0; bits < 128; bits++ {
							hold, pr, ps, late, inst := bits&1 != 0, bits&2 != 0, bits&4 != 0, bits&8 != 0, bits&16 != 0
							// Supervisor-held (with or without a pending automatic
							// restart) and coordinated workers.
							superHold, coordinated := bits&32 != 0, bits&64 != 0
							if hold && st != Stopped && st != Failed && st != "bogus" {
								continue // Hold is only ever kept in stopped or failed
							}
							m := Memory{State: st, Reason: "r", Marks: marksOf(hold, pr, ps, superHold, !superHold && pr && coordinated),
								Restarts: 1, ManualRestarts: 1, ConsecutiveFailures: 1, Failures: []time.Time{now.Add(-time.Minute)},
								Terminations: 4}
							if st == Backoff {
								m.BackoffUntil = now.Add(time.Second)
							}
							if inst {
								m.Instance = oldInst
								m.RunningSince = now.Add(-2 * time.Minute)
							}
							at := now
							if late {
								at = now.Add(time.Hour)
							}
							s := p
							s.Now, s.Memory, s.Desired, s.RestartType, s.Backoff, s.JitterKey, s.Event = at, m, desired, rt, policy, 7, ev
							s.Coordinated = coordinated
							checkInvariants(t, s, validState, validAction)
							n++
						}
					}
				}
			}
		}
	}
	require.Greater(t, n, 100000, "the property test must actually cover the input space")
}

func checkInvariants(t *testing.T, s Snapshot, validState map[State]bool, validAction map[Action]bool) {
	t.Helper()
	var d Decision
	func() {
		defer func() {
			if p := recover(); p != nil {
				t.Fatalf("Next panicked: %v\nsnapshot: %+v", p, s)
			}
		}()
		d = Next(s)
	}()
	fail := func(format string, args ...any) {
		t.Helper()
		t.Fatalf("%s\nsnapshot: %+v result: %+v exit: %+v\ndecision: %+v", fmt.Sprintf(format, args...), s, s.Result, s.Exit, d)
	}
	in, out := s.Memory, d.Memory
	if !validState[out.State] {
		fail("state %q is not in AllStates", out.State)
	}
	if !validAction[d.Action] {
		fail("unknown action %q", d.Action)
	}
	if again := Next(s); !equalDecision(again, d) {
		fail("Next is not deterministic: %+v", again)
	}
	switch d.Action {
	case Start, Restart:
		if out.State != Starting {
			fail("%s issued outside starting", d.Action)
		}
		if out.Marks.Has(RestartAsked) || out.Marks.Has(SpecRestartOwed) {
			fail("a start or restart must consume pending requests")
		}
	case Stop:
		if out.State != Stopping {
			fail("stop issued outside stopping")
		}
	case Observe:
		if out.State != Running && out.State != Unknown {
			fail("observe issued outside running and unknown (a probe)")
		}
	case Reload:
		if out.State != Running || out.Instance != in.Instance || out.Reloads != in.Reloads+1 {
			fail("reload issued outside running, on another instance, or not counted")
		}
	}
	if out.Marks.Has(ReloadAsked) && out.State != Running && out.State != Starting && out.State != Stopping && out.State != Unknown {
		fail("a reload pending in %s, where nothing runs", out.State)
	}
	if s.Desired == WantStopped && (d.Action == Start || d.Action == Restart || (d.Action == Observe && out.State != Unknown)) {
		fail("desired stopped but %s issued", d.Action)
	}
	// (A held worker with a pending restart is unreachable: a restart lifts
	// the hold, and pending requests are only recorded during an action.)
	if out.Marks.Has(Held) && !(in.Marks.Has(Held) && in.Marks.Has(RestartAsked)) && (d.Action != None || (out.State != Stopped && out.State != Failed)) {
		fail("held worker must be stopped or failed and idle")
	}
	if d.ManualRestart != (out.ManualRestarts == in.ManualRestarts+1) || (!d.ManualRestart && out.ManualRestarts != in.ManualRestarts) {
		fail("ManualRestart flag and counter disagree: %d -> %d", in.ManualRestarts, out.ManualRestarts)
	}
	if d.ManualRestart && d.Action != Start && d.Action != Restart {
		fail("manual restart without a start or restart")
	}
	if out.Marks.Has(HeldBySupervisor) && (d.Action == Start || d.Action == Restart) {
		fail("supervisor holds the worker down but %s issued", d.Action)
	}
	if s.Coordinated && out.State == Backoff && in.State != Backoff {
		fail("coordinated worker backed off on its own instead of waiting for its supervisor")
	}
	if out.Terminations != in.Terminations && out.Terminations != in.Terminations+1 {
		fail("terminations jumped %d -> %d", in.Terminations, out.Terminations)
	}
	if out.Marks.Has(AwaitingSupervisor) && (!s.Coordinated || out.State != Stopped || !out.Marks.Has(Held)) {
		fail("awaiting the supervisor outside a coordinated, held, stopped worker")
	}
	if out.Restarts != in.Restarts && out.Restarts != in.Restarts+1 {
		fail("automatic restarts jumped %d -> %d", in.Restarts, out.Restarts)
	}
	if s.RestartType == Temporary && in.State != Backoff && out.Restarts != in.Restarts && !in.Marks.Has(SupervisorRestartAsked) && s.Event != EventSupervisorRestart {
		fail("temporary worker restarted automatically")
	}
	if out.State != in.State && out.Reason == "" {
		fail("transition without a reason")
	}
	if len(out.Failures) > MaxFailures {
		fail("failure history unbounded: %d", len(out.Failures))
	}
	if out.State == Backoff && in.State != Backoff && !out.BackoffUntil.After(s.Now) {
		fail("entered backoff without a future deadline")
	}
	// Size-1 queue: while an action is in flight nothing new is derived.
	inFlightDone := s.Event == EventActionDone && s.Result != nil &&
		((in.State == Starting && (s.Result.Action == Start || s.Result.Action == Restart)) ||
			(in.State == Stopping && s.Result.Action == Stop))
	if (in.State == Starting || in.State == Stopping) && !inFlightDone {
		if d.Action != None || out.State != in.State {
			fail("derived %s / %s while an action was in flight", d.Action, out.State)
		}
	}
	// An action leaving starting/stopping without an action would stall.
	if (out.State == Starting || out.State == Stopping) && d.Action == None && (in.State != out.State || inFlightDone) {
		fail("entered %s without issuing its action", out.State)
	}
}

func equalDecision(a, b Decision) bool {
	return a.Action == b.Action && a.ManualRestart == b.ManualRestart &&
		keyOf(a.Memory) == keyOf(b.Memory) && a.Memory.Reason == b.Memory.Reason &&
		slices.Equal(a.Memory.Failures, b.Memory.Failures)
}

func TestRestartTypesOnNormalAndAbnormalExit(t *testing.T) {
	cases := []struct {
		rt       RestartType
		normal   bool
		to       State
		hold     bool
		failures int // failure history length afterwards (base has 1)
	}{
		{Permanent, true, Backoff, false, 1},
		{Permanent, false, Backoff, false, 2},
		{Transient, true, Stopped, true, 1},
		{Transient, false, Backoff, false, 2},
		{Temporary, true, Stopped, true, 1},
		{Temporary, false, Failed, true, 2},
	}
	for _, c := range cases {
		name := fmt.Sprintf("%s/normal=%v", c.rt, c.normal)
		t.Run(name, func(t *testing.T) {
			s := Snapshot{Now: now, Memory: base(Running), Desired: WantRunning, RestartType: c.rt, Backoff: exact,
				Event: EventExited, Exit: &Exit{Instance: oldInst, Normal: c.normal}}
			d := Next(s)
			require.Equal(t, c.to, d.Memory.State)
			require.Equal(t, c.hold, d.Memory.Marks.Has(Held))
			require.Equal(t, None, d.Action)
			require.Len(t, d.Memory.Failures, c.failures)
			require.Empty(t, d.Memory.Instance)
			require.NotEmpty(t, d.Memory.Reason)
			if c.to == Backoff {
				require.Equal(t, now.Add(4*time.Second), d.Memory.BackoffUntil)
			} else {
				require.Contains(t, d.Memory.Reason, string(c.rt)+": not restarted")
				require.True(t, d.Memory.BackoffUntil.IsZero())
			}

			// Whatever it decided, a later reconcile must not restart a held
			// worker, and the backoff timer must.
			s2 := s
			s2.Memory, s2.Event, s2.Exit = d.Memory, EventReconcile, nil
			s2.Now = now.Add(time.Hour)
			d2 := Next(s2)
			if c.hold {
				require.Equal(t, None, d2.Action)
				require.Equal(t, c.to, d2.Memory.State)
				require.Equal(t, 3, d2.Memory.Restarts)
			} else {
				require.Equal(t, Start, d2.Action)
				require.Equal(t, 4, d2.Memory.Restarts)
			}
		})
	}
}

func TestStaleExitOfAnOlderInstanceIsIgnored(t *testing.T) {
	for _, st := range []State{Running, Starting, Backoff, Stopped} {
		for _, desired := range []Desired{WantRunning, WantStopped} {
			if st == Running && desired == WantStopped {
				continue // running + desired stopped stops on any tick (table)
			}
			t.Run(fmt.Sprintf("%s/%s", st, desired), func(t *testing.T) {
				m := base(st)
				m.Instance = newInst
				if st == Stopped {
					m.Marks.Set(Held)
				}
				s := Snapshot{Now: now, Memory: m, Desired: desired, RestartType: Permanent, Backoff: exact,
					Event: EventExited, Exit: crash(oldInst)}
				d := Next(s)
				if st == Backoff && desired == WantStopped {
					require.Equal(t, Stopped, d.Memory.State) // the desired state, not the exit
					return
				}
				require.Equal(t, m, d.Memory)
				require.Equal(t, None, d.Action)
			})
		}
	}
}

func TestBackoffDelayGrowsExponentiallyAndCapsAtMax(t *testing.T) {
	want := []time.Duration{1, 2, 4, 8, 16, 32, 60, 60}
	for i, w := range want {
		require.Equal(t, w*time.Second, BackoffDelay(exact, i+1, 99), "n=%d", i+1)
	}
	require.Equal(t, time.Second, BackoffDelay(exact, 0, 99), "n<1 counts as the first")
	require.Equal(t, time.Second, BackoffDelay(exact, -5, 99), "n<1 counts as the first")
	require.Equal(t, time.Minute, BackoffDelay(exact, 1_000_000, 99), "huge n is capped, no overflow")
	jittered := exact
	jittered.Jitter = 0.5
	for k := uint64(0); k < 20; k++ {
		require.Equal(t, BackoffDelay(jittered, 1, k), BackoffDelay(jittered, 0, k), "n<1 draws as the first, too")
	}

	p := exact
	p.Multiplier = 3
	require.Equal(t, 9*time.Second, BackoffDelay(p, 3, 0))
	p.Multiplier = 0.5 // below 1: no growth (never shrinks)
	require.Equal(t, time.Second, BackoffDelay(p, 5, 0))
	p = exact
	p.Initial = 2 * time.Minute // initial above max: capped
	require.Equal(t, time.Minute, BackoffDelay(p, 1, 0))
	p.Initial = 0
	require.Equal(t, time.Duration(0), BackoffDelay(p, 4, 0))
}

func TestBackoffDelayJitterStaysWithinBounds(t *testing.T) {
	p := exact
	p.Jitter = 0.2
	for n := 1; n <= 10; n++ {
		nominal := BackoffDelay(exact, n, 0)
		lo := time.Duration(float64(nominal) * 0.8)
		hi := time.Duration(float64(nominal) * 1.2)
		if hi > p.Max {
			hi = p.Max
		}
		var below, above bool
		for k := uint64(0); k < 1000; k++ {
			d := BackoffDelay(p, n, HashKey(fmt.Sprintf("plant/w-%d", k)))
			require.GreaterOrEqual(t, d, lo, "n=%d key=%d", n, k)
			require.LessOrEqual(t, d, hi, "n=%d key=%d", n, k)
			below = below || d < nominal*95/100
			above = above || d > nominal*105/100
		}
		require.True(t, below, "n=%d: jitter never lowered the delay", n)
		if nominal < p.Max {
			require.True(t, above, "n=%d: jitter never raised the delay", n)
		}
	}
}

func TestBackoffDelayJitterIsDeterministicPerKeyAndDiffersAcrossKeys(t *testing.T) {
	p := exact
	p.Jitter = 0.5
	a, b := HashKey("plant/line-1/press"), HashKey("plant/line-1/oven")
	for n := 1; n <= 5; n++ {
		require.Equal(t, BackoffDelay(p, n, a), BackoffDelay(p, n, a), "same key, same n")
	}
	require.NotEqual(t, BackoffDelay(p, 1, a), BackoffDelay(p, 1, b), "different keys")
	// The draw depends on n too: the jitter factor differs between attempts.
	f1 := float64(BackoffDelay(p, 1, a)) / float64(time.Second)
	f2 := float64(BackoffDelay(p, 2, a)) / float64(2*time.Second)
	require.Greater(t, math.Abs(f1-f2), 1e-6)

	distinct := map[time.Duration]bool{}
	for k := uint64(0); k < 100; k++ {
		distinct[BackoffDelay(p, 1, k)] = true
	}
	require.Greater(t, len(distinct), 95, "sequential keys must spread")
}

func TestBackoffDelayJitterAboveOneNeverGoesNegative(t *testing.T) {
	p := exact
	p.Jitter = 5
	sawZero := false
	for k := uint64(0); k < 200; k++ {
		d := BackoffDelay(p, 1, k)
		require.GreaterOrEqual(t, d, time.Duration(0))
		require.LessOrEqual(t, d, p.Max)
		sawZero = sawZero || d == 0
	}
	require.True(t, sawZero, "large negative jitter clamps at 0")
}

func TestHashKeyIsFNV1a(t *testing.T) {
	for _, s := range []string{"", "a", "plant", "plant/line-1/press"} {
		h := fnv.New64a()
		_, _ = h.Write([]byte(s))
		require.Equal(t, h.Sum64(), HashKey(s), s)
	}
	require.NotEqual(t, HashKey("plant/a"), HashKey("plant/b"))
}

func TestUnitIsInZeroOne(t *testing.T) {
	for k := uint64(0); k < 1000; k++ {
		u := unit(k*0x12345, uint64(k%7))
		require.GreaterOrEqual(t, u, 0.0)
		require.Less(t, u, 1.0)
	}
	require.Less(t, unit(^uint64(0), ^uint64(0)), 1.0)
}

func TestBackoffGrowsAcrossConsecutiveStartFailures(t *testing.T) {
	m := Memory{State: Stopped}
	at := now
	var delays []time.Duration
	for i := 0; i < 5; i++ {
		d := Next(Snapshot{Now: at, Memory: m, Desired: WantRunning, RestartType: Permanent, Backoff: exact, Event: EventReconcile})
		if i > 0 {
			d = Next(Snapshot{Now: at, Memory: m, Desired: WantRunning, RestartType: Permanent, Backoff: exact, Event: EventBackoffExpired})
			require.Equal(t, i, d.Memory.Restarts)
		}
		require.Equal(t, Start, d.Action)
		at = at.Add(100 * time.Millisecond)
		d = Next(Snapshot{Now: at, Memory: d.Memory, Desired: WantRunning, RestartType: Permanent, Backoff: exact,
			Event: EventActionDone, Result: res(Start, FailedOutcome)})
		require.Equal(t, Backoff, d.Memory.State)
		require.Equal(t, i+1, d.Memory.ConsecutiveFailures)
		delays = append(delays, d.Memory.BackoffUntil.Sub(at))
		m = d.Memory
		at = m.BackoffUntil
	}
	require.Equal(t, []time.Duration{1 * time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 16 * time.Second}, delays)
}

func TestConsecutiveFailuresResetAfterResetAfterOfRunning(t *testing.T) {
	crashAfter := func(ran time.Duration) Decision {
		m := base(Running)
		m.ConsecutiveFailures = 5
		m.RunningSince = now.Add(-ran)
		return Next(Snapshot{Now: now, Memory: m, Desired: WantRunning, RestartType: Permanent, Backoff: exact,
			Event: EventExited, Exit: crash(oldInst)})
	}

	d := crashAfter(exact.ResetAfter)
	require.Equal(t, 1, d.Memory.ConsecutiveFailures, "ran for resetAfter: the count starts over")
	require.Equal(t, now.Add(exact.Initial), d.Memory.BackoffUntil)

	d = crashAfter(exact.ResetAfter - time.Nanosecond)
	require.Equal(t, 6, d.Memory.ConsecutiveFailures, "ran just short of resetAfter: the count goes on")
	require.Equal(t, now.Add(32*time.Second), d.Memory.BackoffUntil)

	// A start that fails never ran: no reset.
	m := base(Starting)
	m.ConsecutiveFailures = 5
	d = Next(Snapshot{Now: now, Memory: m, Desired: WantRunning, RestartType: Permanent, Backoff: exact,
		Event: EventActionDone, Result: res(Start, FailedOutcome)})
	require.Equal(t, 6, d.Memory.ConsecutiveFailures)
}

func TestZeroBackoffRestartsAtOnce(t *testing.T) {
	p := exact
	p.Initial = 0
	d := Next(Snapshot{Now: now, Memory: base(Running), Desired: WantRunning, RestartType: Permanent, Backoff: p,
		Event: EventExited, Exit: crash(oldInst)})
	require.Equal(t, Starting, d.Memory.State)
	require.Equal(t, Start, d.Action)
	require.Equal(t, 4, d.Memory.Restarts)
	require.False(t, d.ManualRestart)
	require.True(t, d.Memory.BackoffUntil.IsZero())
	require.Equal(t, "crashed; automatic restart #4", d.Memory.Reason)
}

func TestBackoffJitterUsesTheWorkersKey(t *testing.T) {
	p := exact
	p.Jitter = 0.3
	until := func(key uint64) time.Time {
		return Next(Snapshot{Now: now, Memory: base(Running), Desired: WantRunning, RestartType: Permanent, Backoff: p,
			JitterKey: key, Event: EventExited, Exit: crash(oldInst)}).Memory.BackoffUntil
	}
	a, b := HashKey("plant/a"), HashKey("plant/b")
	require.Equal(t, now.Add(BackoffDelay(p, 3, a)), until(a))
	require.Equal(t, until(a), until(a))
	require.NotEqual(t, until(a), until(b))
}

func TestPendingRequestsDuringAnInFlightActionAreConsumedByTheNextActionDone(t *testing.T) {
	snap := func(m Memory, ev Event, r *Result) Snapshot {
		return Snapshot{Now: now, Memory: m, Desired: WantRunning, RestartType: Permanent, Backoff: exact, Event: ev, Result: r}
	}

	t.Run("restart during observe: restart after it", func(t *testing.T) {
		d := Next(snap(pendingRestart(base(Running)), EventActionDone, observed(ObservedRunning)))
		require.Equal(t, Restart, d.Action)
		require.True(t, d.ManualRestart)
		require.Equal(t, 3, d.Memory.ManualRestarts)
		require.False(t, d.Memory.Marks.Has(RestartAsked))
	})

	t.Run("restart during stop: recorded, then a manual start", func(t *testing.T) {
		d := Next(snap(base(Stopping), EventRestart, nil))
		require.Equal(t, None, d.Action)
		require.True(t, d.Memory.Marks.Has(RestartAsked))
		require.Equal(t, 2, d.Memory.ManualRestarts, "not counted before it is acted on")

		d = Next(snap(d.Memory, EventActionDone, ok(Stop)))
		require.Equal(t, Start, d.Action)
		require.True(t, d.ManualRestart)
		require.Equal(t, 3, d.Memory.ManualRestarts)
		require.False(t, d.Memory.Marks.Has(RestartAsked))
		require.Equal(t, "manual restart", d.Memory.Reason)

		// Consumed: the next tick does not restart again.
		d = Next(snap(d.Memory, EventActionDone, ok(Start)))
		require.Equal(t, Running, d.Memory.State)
		require.Equal(t, None, d.Action)
		require.Equal(t, 3, d.Memory.ManualRestarts)
	})

	t.Run("spec change during start: restart after it succeeds, once", func(t *testing.T) {
		d := Next(Snapshot{Now: now, Memory: base(Starting), Desired: WantRunning, RestartType: Permanent, Backoff: exact,
			Event: EventSpec, SpecNeedsRestart: true})
		require.Equal(t, None, d.Action)
		require.True(t, d.Memory.Marks.Has(SpecRestartOwed))

		d = Next(snap(d.Memory, EventActionDone, ok(Start)))
		require.Equal(t, Restart, d.Action)
		require.False(t, d.Memory.Marks.Has(SpecRestartOwed))

		d = Next(snap(d.Memory, EventActionDone, ok(Restart)))
		require.Equal(t, Running, d.Memory.State)
		require.Equal(t, None, d.Action)
	})

	t.Run("restart during a failing start: manual start, not backoff", func(t *testing.T) {
		d := Next(snap(pendingRestart(base(Starting)), EventActionDone, res(Start, FailedOutcome)))
		require.Equal(t, Start, d.Action)
		require.Equal(t, Starting, d.Memory.State)
		require.True(t, d.Memory.BackoffUntil.IsZero())
		require.Equal(t, 3, d.Memory.ManualRestarts)
		require.Equal(t, 3, d.Memory.Restarts)
	})
}

func TestShouldCancel(t *testing.T) {
	cases := []struct {
		inFlight Action
		desired  Desired
		want     bool
	}{
		{Start, WantStopped, true},
		{Restart, WantStopped, true},
		{Observe, WantStopped, true},
		{Stop, WantStopped, false},
		{None, WantStopped, false},
		{Start, WantRunning, false},
		{Restart, WantRunning, false},
		{Observe, WantRunning, false},
		{Stop, WantRunning, false}, // a stop is never cancelled
		{None, WantRunning, false},
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("%s/%s", c.inFlight, c.desired), func(t *testing.T) {
			require.Equal(t, c.want, ShouldCancel(c.inFlight, c.desired))
		})
	}
}

func TestPermanentStartFailureFailsAndHoldsWithoutRestarting(t *testing.T) {
	for _, rt := range []RestartType{Permanent, Transient, Temporary} {
		t.Run(string(rt), func(t *testing.T) {
			s := Snapshot{Now: now, Memory: base(Starting), Desired: WantRunning, RestartType: rt, Backoff: exact,
				Event: EventActionDone, Result: res(Start, PermanentFailure)}
			d := Next(s)
			require.Equal(t, Failed, d.Memory.State)
			require.True(t, d.Memory.Marks.Has(Held))
			require.Equal(t, None, d.Action)
			require.True(t, d.Memory.BackoffUntil.IsZero())
			require.Contains(t, d.Memory.Reason, "not retryable")

			for _, ev := range []Event{EventReconcile, EventBackoffExpired, EventActionDone, EventExited} {
				s2 := Snapshot{Now: now.Add(24 * time.Hour), Memory: d.Memory, Desired: WantRunning, RestartType: rt,
					Backoff: exact, Event: ev, Exit: crash(oldInst)}
				d2 := Next(s2)
				require.Equal(t, Failed, d2.Memory.State, ev)
				require.Equal(t, None, d2.Action, ev)
				require.Equal(t, 3, d2.Memory.Restarts, ev)
			}
		})
	}
}

func TestFailedWorkerRestartEventStartsWithManualRestartCounted(t *testing.T) {
	s := Snapshot{Now: now, Memory: base(Failed), Desired: WantRunning, RestartType: Temporary, Backoff: exact, Event: EventRestart}
	d := Next(s)
	require.Equal(t, Starting, d.Memory.State)
	require.Equal(t, Start, d.Action)
	require.True(t, d.ManualRestart)
	require.Equal(t, 3, d.Memory.ManualRestarts)
	require.Equal(t, 3, d.Memory.Restarts, "a manual restart is not automatic")
	require.False(t, d.Memory.Marks.Has(Held))
	require.False(t, d.Memory.Marks.Has(RestartAsked))
	require.Equal(t, "manual restart", d.Memory.Reason)
}

func TestBackoffWithDesiredStoppedStopsAndCancelsTheTimer(t *testing.T) {
	for _, ev := range AllEvents {
		t.Run(string(ev), func(t *testing.T) {
			s := Snapshot{Now: now, Memory: base(Backoff), Desired: WantStopped, RestartType: Permanent, Backoff: exact, Event: ev}
			d := Next(s)
			require.Equal(t, Stopped, d.Memory.State)
			require.Equal(t, None, d.Action)
			require.True(t, d.Memory.BackoffUntil.IsZero())
			require.Equal(t, 3, d.Memory.Restarts)

			// The old timer firing later must not start it.
			d2 := Next(Snapshot{Now: now.Add(time.Minute), Memory: d.Memory, Desired: WantStopped, RestartType: Permanent,
				Backoff: exact, Event: EventBackoffExpired})
			require.Equal(t, Stopped, d2.Memory.State)
			require.Equal(t, None, d2.Action)
		})
	}
}

func TestBackoffTimerExpiryStartsAnAutomaticRestartOnce(t *testing.T) {
	m := base(Backoff)
	snap := func(m Memory, at time.Time) Snapshot {
		return Snapshot{Now: at, Memory: m, Desired: WantRunning, RestartType: Permanent, Backoff: exact, Event: EventBackoffExpired}
	}

	d := Next(snap(m, m.BackoffUntil.Add(-time.Nanosecond)))
	require.Equal(t, Backoff, d.Memory.State, "never early")
	require.Equal(t, None, d.Action)

	d = Next(snap(m, m.BackoffUntil))
	require.Equal(t, Starting, d.Memory.State)
	require.Equal(t, Start, d.Action)
	require.Equal(t, 4, d.Memory.Restarts)
	require.Equal(t, 2, d.Memory.ManualRestarts)
	require.False(t, d.ManualRestart)
	require.True(t, d.Memory.BackoffUntil.IsZero())
	require.Equal(t, "automatic restart #4", d.Memory.Reason)

	// A duplicate timer event while the start runs changes nothing.
	d2 := Next(snap(d.Memory, m.BackoffUntil.Add(time.Second)))
	require.Equal(t, None, d2.Action)
	require.Equal(t, 4, d2.Memory.Restarts)
}

func TestFailureHistoryIsBoundedAtMaxFailures(t *testing.T) {
	hist := make([]time.Time, MaxFailures, MaxFailures+8) // spare capacity: an append could alias
	for i := range hist {
		hist[i] = now.Add(time.Duration(i-MaxFailures) * time.Minute)
	}
	orig := slices.Clone(hist)
	m := base(Running)
	m.Failures = hist

	d := Next(Snapshot{Now: now, Memory: m, Desired: WantRunning, RestartType: Permanent, Backoff: exact,
		Event: EventExited, Exit: crash(oldInst)})
	require.Len(t, d.Memory.Failures, MaxFailures)
	require.Equal(t, now, d.Memory.Failures[MaxFailures-1], "most recent last")
	require.Equal(t, orig[1], d.Memory.Failures[0], "oldest dropped")
	require.Equal(t, orig, hist, "the caller's history is not modified")
	require.Equal(t, time.Time{}, hist[:MaxFailures+1][MaxFailures], "spare capacity untouched")

	// Growing below the bound.
	m.Failures = orig[:3]
	d = Next(Snapshot{Now: now, Memory: m, Desired: WantRunning, RestartType: Permanent, Backoff: exact,
		Event: EventExited, Exit: crash(oldInst)})
	require.Len(t, d.Memory.Failures, 4)
}

func TestNextDoesNotShareTheFailureSliceWithItsInput(t *testing.T) {
	m := base(Running)
	m.Failures = make([]time.Time, 1, 4)
	d := Next(Snapshot{Now: now, Memory: m, Desired: WantRunning, RestartType: Permanent, Backoff: exact, Event: EventReconcile})
	d.Memory.Failures[0] = now
	require.True(t, m.Failures[0].IsZero())
}

func TestOutcomeWords(t *testing.T) {
	require.Equal(t, "timed out", outcomeWord(TimedOut))
	require.Equal(t, "failed permanently", outcomeWord(PermanentFailure))
	require.Equal(t, "refused", outcomeWord(Refused))
	require.Equal(t, "cancelled", outcomeWord(Cancelled))
	require.Equal(t, "failed", outcomeWord(FailedOutcome))
	require.Equal(t, "failed", outcomeWord("weird"))
}

// ---- suspected bugs: the tests state the behaviour believed correct ----

// A restart of a running service (manual or for a spec change) keeps the old
// RunningSince. If the restart fails, the worker goes to backoff still
// carrying it, and every later start failure "resets" ConsecutiveFailures
// because Now-RunningSince >= ResetAfter: the backoff never grows.
func TestFailedRestartOfARunningServiceStillGrowsTheBackoff(t *testing.T) {
	at := now
	snap := func(m Memory, ev Event, r *Result) Snapshot {
		return Snapshot{Now: at, Memory: m, Desired: WantRunning, RestartType: Permanent, Backoff: exact, Event: ev, Result: r}
	}
	m := base(Running)
	m.ConsecutiveFailures = 0
	m.RunningSince = now.Add(-2 * time.Minute) // ran for longer than resetAfter

	d := Next(snap(m, EventRestart, nil))
	require.Equal(t, Restart, d.Action)
	d = Next(snap(d.Memory, EventActionDone, res(Restart, FailedOutcome)))
	require.Equal(t, Backoff, d.Memory.State)
	require.Equal(t, 1, d.Memory.ConsecutiveFailures, "the healthy run resets the count before this failure")

	at = d.Memory.BackoffUntil
	d = Next(snap(d.Memory, EventBackoffExpired, nil))
	require.Equal(t, Start, d.Action)
	d = Next(snap(d.Memory, EventActionDone, res(Start, FailedOutcome)))
	require.Equal(t, Backoff, d.Memory.State)
	require.Equal(t, 2, d.Memory.ConsecutiveFailures, "a second consecutive failure must grow the backoff")
	require.Equal(t, at.Add(2*time.Second), d.Memory.BackoffUntil)
	require.True(t, d.Memory.RunningSince.IsZero(), "nothing is running in backoff")
}

// An operator restart that arrives while a stop is in flight is recorded as
// pending (the package doc: "none is lost while an action runs; Next consumes
// them"). If the stop then fails, it is silently dropped and the worker is
// held failed although desired is running; a failing start, by contrast,
// lets a pending restart win over even a permanent failure.
func TestFailedStopDoesNotLoseAPendingManualRestart(t *testing.T) {
	d := Next(Snapshot{Now: now, Memory: pendingRestart(base(Stopping)), Desired: WantRunning, RestartType: Permanent,
		Backoff: exact, Event: EventActionDone, Result: res(Stop, FailedOutcome)})
	require.Equal(t, Starting, d.Memory.State)
	require.Equal(t, Start, d.Action)
	require.True(t, d.ManualRestart)
	require.Equal(t, 3, d.Memory.ManualRestarts)
}

// BackoffDelay treats Max <= 0 as "no cap" (every cap is guarded by
// p.Max > 0), but the growth loop runs only while d < Max, so with Max 0 the
// delay never grows past Initial. Unreachable from a validated spec (the
// default max is 1m and backoff.max must be > 0), hence low severity.
func TestBackoffDelayWithoutMaxStillGrows(t *testing.T) {
	p := BackoffPolicy{Initial: time.Second, Multiplier: 2}
	require.Equal(t, 8*time.Second, BackoffDelay(p, 4, 0))
}

func TestAbsorbRecordsRequestsWithoutDeriving(t *testing.T) {
	for _, st := range AllStates {
		for _, ev := range AllEvents {
			for _, spec := range []bool{false, true} {
				in := held(base(st))
				got := Absorb(in, ev, spec)
				want := in
				switch ev {
				case EventRestart:
					want.Marks.Set(RestartAsked)
					want.Marks.Clear(Held)
				case EventSpec:
					if spec {
						want.Marks.Set(SpecRestartOwed)
					}
					want.Marks.Clear(Held)
				case EventDesired:
					want.Marks.Clear(Held)
				case EventSupervisorStop:
					want.Marks.Set(HeldBySupervisor)
				case EventSupervisorRestart:
					want.Marks.Set(SupervisorRestartAsked)
					want.Marks.Clear(Held)
				case EventReload:
					want.Marks.Set(ReloadAsked) // a held worker stays held
				}
				require.Equal(t, want, got, "%s x %s spec=%v", st, ev, spec)
			}
		}
	}
	// Pending requests already recorded stay recorded.
	m := Absorb(pendingSpec(pendingRestart(base(Stopping))), EventSpec, false)
	require.True(t, m.Marks.Has(RestartAsked))
	require.True(t, m.Marks.Has(SpecRestartOwed))
}

// While an action is in flight the caller may use Absorb or Next for
// arriving requests: both must record the same thing and derive nothing.
func TestNextDuringAnInFlightActionEqualsAbsorb(t *testing.T) {
	for _, m := range []Memory{base(Starting), restartInFlight(), base(Stopping)} {
		for _, ev := range []Event{EventReconcile, EventDesired, EventRestart, EventSpec, EventBackoffExpired, EventExited} {
			for _, desired := range []Desired{WantRunning, WantStopped} {
				s := Snapshot{Now: now, Memory: m, Desired: desired, RestartType: Permanent, Backoff: exact,
					Event: ev, Exit: crash(oldInst), SpecNeedsRestart: true}
				d := Next(s)
				require.Equal(t, None, d.Action, "%s x %s", m.State, ev)
				require.Equal(t, Absorb(m, ev, true), d.Memory, "%s x %s", m.State, ev)
			}
		}
	}
}

// Terminations counts exactly the ends a restart type restarts: what a
// supervisor's restart intensity counts.
func TestTerminationsCountRestartsDueOnly(t *testing.T) {
	for _, c := range []struct {
		name  string
		rt    RestartType
		exit  *Exit
		coord bool
		want  int
	}{
		{"permanent crash", Permanent, crash(oldInst), false, 1},
		{"permanent normal exit", Permanent, normal(oldInst), false, 1},
		{"transient crash", Transient, crash(oldInst), false, 1},
		{"transient normal exit", Transient, normal(oldInst), false, 0},
		{"temporary crash", Temporary, crash(oldInst), false, 0},
		{"coordinated crash", Permanent, crash(oldInst), true, 1},
		{"stale exit", Permanent, crash("other"), false, 0},
	} {
		d := Next(Snapshot{Now: now, Memory: base(Running), Desired: WantRunning, RestartType: c.rt, Backoff: exact,
			Event: EventExited, Exit: c.exit, Coordinated: c.coord})
		require.Equal(t, c.want, d.Memory.Terminations, c.name)
	}
}

// An exit of the instance while the host is unknown (its worker came back
// and found the service ended) is a crash, restarted after its backoff;
// histories recorded before that change ignore it (ExitWhileUnknown unset).
func TestExitWhileUnknown(t *testing.T) {
	m := base(Unknown)
	m.Instance = newInst
	s := Snapshot{Now: now, Memory: m, Desired: WantRunning, RestartType: Permanent, Backoff: exact,
		Event: EventExited, Exit: crash(newInst)}
	d := Next(s)
	require.Equal(t, Unknown, d.Memory.State, "without the flag: as before")
	require.Equal(t, None, d.Action)

	s.ExitWhileUnknown = true
	d = Next(s)
	require.Equal(t, Backoff, d.Memory.State)
	require.Contains(t, d.Memory.Reason, "crashed")
	require.Empty(t, d.Memory.Instance)

	s.Exit = crash(oldInst)
	d = Next(s)
	require.Equal(t, Unknown, d.Memory.State, "an older instance's exit is ignored")
}

// A reload of a running service: asked, it runs as its own action while
// the service stays running (same instance, restarts unchanged), counts,
// and its result is the reason; a failed reload leaves the service running.
func TestReloadOfARunningService(t *testing.T) {
	m := base(Running)
	m.Instance = "i1"
	d := Next(Snapshot{Now: now, Memory: m, Desired: WantRunning, RestartType: Permanent, Backoff: exact, Event: EventReload})
	require.Equal(t, Reload, d.Action)
	require.Equal(t, Running, d.Memory.State)
	require.Equal(t, "reloading", d.Memory.Reason)
	require.Equal(t, 1, d.Memory.Reloads)
	require.False(t, d.Memory.Marks.Has(ReloadAsked))

	ok := Next(Snapshot{Now: now, Memory: d.Memory, Desired: WantRunning, RestartType: Permanent, Backoff: exact, Event: EventActionDone, Result: res(Reload, Succeeded)})
	require.Equal(t, None, ok.Action)
	require.Equal(t, Running, ok.Memory.State)
	require.Equal(t, "reloaded", ok.Memory.Reason)
	require.Equal(t, "i1", ok.Memory.Instance)
	require.Equal(t, m.Restarts, ok.Memory.Restarts)
	require.Equal(t, m.ManualRestarts, ok.Memory.ManualRestarts)

	r := res(Reload, FailedOutcome)
	r.Error = "exit status 3"
	bad := Next(Snapshot{Now: now, Memory: d.Memory, Desired: WantRunning, RestartType: Permanent, Backoff: exact, Event: EventActionDone, Result: r})
	require.Equal(t, Running, bad.Memory.State)
	require.Equal(t, "reload failed: exit status 3", bad.Memory.Reason)
	require.Equal(t, "i1", bad.Memory.Instance)

	// The host went away during it: the circuit opens, as for an observe.
	un := Next(Snapshot{Now: now, Memory: d.Memory, Desired: WantRunning, RestartType: Permanent, Backoff: exact, Event: EventActionDone, Result: res(Reload, Unreachable)})
	require.Equal(t, Unknown, un.Memory.State)
}

// A reload asked of a service that does not run is forgotten, and one
// asked during a start (or with a restart) is satisfied by it.
func TestReloadWhileNotRunning(t *testing.T) {
	for _, st := range []State{Stopped, Backoff, Failed} {
		d := Next(Snapshot{Now: now, Memory: base(st), Desired: WantStopped, RestartType: Permanent, Backoff: exact, Event: EventReload})
		require.NotEqual(t, Reload, d.Action, st)
		require.False(t, d.Memory.Marks.Has(ReloadAsked), "%s: a reload of a stopped service is moot", st)
	}
	m := Absorb(base(Starting), EventReload, false)
	d := Next(Snapshot{Now: now, Memory: m, Desired: WantRunning, RestartType: Permanent, Backoff: exact, Event: EventActionDone, Result: res(Start, Succeeded)})
	require.Equal(t, None, d.Action, "the start loaded the configuration")
	require.False(t, d.Memory.Marks.Has(ReloadAsked))
	require.Zero(t, d.Memory.Reloads)

	r := base(Running)
	r = Absorb(Absorb(r, EventReload, false), EventRestart, false)
	d = Next(Snapshot{Now: now, Memory: r, Desired: WantRunning, RestartType: Permanent, Backoff: exact, Event: EventRestart})
	require.Equal(t, Restart, d.Action)
	require.False(t, d.Memory.Marks.Has(ReloadAsked), "the restart satisfies the reload")
}

func withInstance(m Memory) Memory {
	m.Instance = oldInst
	m.RunningSince = now.Add(-10 * time.Second)
	return m
}

// An unknown worker probes within UnknownProbeEvery whatever its observe
// interval; every other state keeps the spec's interval.
func TestObserveEvery_AnUnknownHostIsProbedWithin30s(t *testing.T) {
	for _, c := range []struct {
		st       State
		interval time.Duration
		want     time.Duration
	}{
		{Unknown, time.Hour, UnknownProbeEvery},
		{Unknown, 0, UnknownProbeEvery},
		{Unknown, 5 * time.Second, 5 * time.Second},
		{Running, time.Hour, time.Hour},
		{Running, 5 * time.Second, 5 * time.Second},
	} {
		require.Equal(t, c.want, ObserveEvery(c.st, c.interval), "%s every %s", c.st, c.interval)
	}
}

// marksOf is the marks set by the property test's bits.
func marksOf(hold, restart, spec, superHold, auto bool) Marks {
	var m Marks
	for _, f := range []struct {
		on   bool
		mark Marks
	}{{hold, Held}, {restart, RestartAsked}, {spec, SpecRestartOwed}, {superHold, HeldBySupervisor}, {auto, SupervisorRestartAsked}} {
		if f.on {
			m.Set(f.mark)
		}
	}
	return m
}
