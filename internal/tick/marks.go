package tick

import (
	"encoding/json"
	"strings"
	"time"
)

// Marks is the set of what a worker is held by and what it owes, beside
// its State: the one field that replaced seven booleans of Memory. Any
// combination is a value; these hold at every tick's end (tick_test's
// invariants check them):
//
//   - Held only in stopped or failed: the worker stays down until an
//     operator acts (a start, a restart, a desired change or a spec).
//   - AwaitingSupervisor only with Held: a coordinated worker that ended
//     and waits for its supervisor to restart it, with its siblings.
//   - HeldBySupervisor: the supervisor stopped it; the tick acts as if
//     stopped were desired until the supervisor (or the operator) restarts
//     it.
//   - RestartAsked, SupervisorRestartAsked, SpecRestartOwed: a restart
//     asked (by the operator, by the supervisor) or owed (a spec that
//     changes the driver) and not yet carried out; kept while an action
//     runs, so that none is lost, and cleared by the start that carries
//     it out. When more than one is set, the reason of the restart is the
//     operator's, then the supervisor's, then the spec's.
//   - ReloadAsked: an operator reload not yet carried out; never in
//     stopped, backoff or failed (nothing runs to reload).
type Marks uint8

// The marks.
const (
	Held Marks = 1 << iota
	HeldBySupervisor
	AwaitingSupervisor
	RestartAsked
	SupervisorRestartAsked
	SpecRestartOwed
	ReloadAsked
)

// RestartOwed is any restart not yet carried out.
const RestartOwed = RestartAsked | SupervisorRestartAsked | SpecRestartOwed

// markNames are the marks' names, in their bits' order: the keys of
// Memory's JSON (hold, supervisorHold, ...), kept from when each was a
// field of its own.
var markNames = []struct {
	mark Marks
	name string
}{
	{Held, "hold"}, {HeldBySupervisor, "supervisorHold"}, {AwaitingSupervisor, "awaitingSupervisor"},
	{RestartAsked, "pendingRestart"}, {SupervisorRestartAsked, "pendingAutoRestart"},
	{SpecRestartOwed, "pendingSpecRestart"}, {ReloadAsked, "pendingReload"},
}

// Has reports whether every mark of x is set.
func (m Marks) Has(x Marks) bool { return m&x == x }

// Any reports whether a mark of x is set.
func (m Marks) Any(x Marks) bool { return m&x != 0 }

// Set sets the marks of x.
func (m *Marks) Set(x Marks) { *m |= x }

// Clear clears the marks of x.
func (m *Marks) Clear(x Marks) { *m &^= x }

// String names the marks set, joined by "+" ("" for none).
func (m Marks) String() string {
	var names []string
	for _, n := range markNames {
		if m.Has(n.mark) {
			names = append(names, n.name)
		}
	}
	return strings.Join(names, "+")
}

// memoryJSON is Memory as JSON: the marks as the booleans they were, and
// every key in the order it had, so that a Memory encodes to the very
// bytes it did before Marks (histories carry it, in continue-as-new inputs
// and status reports, and older code reads them).
type memoryJSON struct {
	State               State       `json:"state"`
	Reason              string      `json:"reason"`
	Hold                bool        `json:"hold,omitempty"`
	Instance            string      `json:"instance,omitempty"`
	RunningSince        time.Time   `json:"runningSince,omitempty"`
	BackoffUntil        time.Time   `json:"backoffUntil,omitempty"`
	ConsecutiveFailures int         `json:"consecutiveFailures,omitempty"`
	Failures            []time.Time `json:"failures,omitempty"`
	Restarts            int         `json:"restarts"`
	ManualRestarts      int         `json:"manualRestarts"`
	PendingRestart      bool        `json:"pendingRestart,omitempty"`
	PendingSpecRestart  bool        `json:"pendingSpecRestart,omitempty"`
	PendingAutoRestart  bool        `json:"pendingAutoRestart,omitempty"`
	SupervisorHold      bool        `json:"supervisorHold,omitempty"`
	Terminations        int         `json:"terminations,omitempty"`
	AwaitingSupervisor  bool        `json:"awaitingSupervisor,omitempty"`
	PendingReload       bool        `json:"pendingReload,omitempty"`
	Reloads             int         `json:"reloads,omitempty"`
}

// MarshalJSON encodes m with its marks as booleans (memoryJSON).
func (m Memory) MarshalJSON() ([]byte, error) {
	return json.Marshal(memoryJSON{
		State: m.State, Reason: m.Reason, Hold: m.Marks.Has(Held), Instance: m.Instance,
		RunningSince: m.RunningSince, BackoffUntil: m.BackoffUntil, ConsecutiveFailures: m.ConsecutiveFailures,
		Failures: m.Failures, Restarts: m.Restarts, ManualRestarts: m.ManualRestarts,
		PendingRestart: m.Marks.Has(RestartAsked), PendingSpecRestart: m.Marks.Has(SpecRestartOwed),
		PendingAutoRestart: m.Marks.Has(SupervisorRestartAsked), SupervisorHold: m.Marks.Has(HeldBySupervisor),
		Terminations: m.Terminations, AwaitingSupervisor: m.Marks.Has(AwaitingSupervisor),
		PendingReload: m.Marks.Has(ReloadAsked), Reloads: m.Reloads,
	})
}

// UnmarshalJSON decodes what MarshalJSON (or the Memory before Marks)
// encoded.
func (m *Memory) UnmarshalJSON(b []byte) error {
	var j memoryJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	*m = Memory{State: j.State, Reason: j.Reason, Instance: j.Instance, RunningSince: j.RunningSince,
		BackoffUntil: j.BackoffUntil, ConsecutiveFailures: j.ConsecutiveFailures, Failures: j.Failures,
		Restarts: j.Restarts, ManualRestarts: j.ManualRestarts, Terminations: j.Terminations, Reloads: j.Reloads}
	for _, f := range []struct {
		on   bool
		mark Marks
	}{
		{j.Hold, Held}, {j.SupervisorHold, HeldBySupervisor}, {j.AwaitingSupervisor, AwaitingSupervisor},
		{j.PendingRestart, RestartAsked}, {j.PendingAutoRestart, SupervisorRestartAsked},
		{j.PendingSpecRestart, SpecRestartOwed}, {j.PendingReload, ReloadAsked},
	} {
		if f.on {
			m.Marks.Set(f.mark)
		}
	}
	return nil
}
