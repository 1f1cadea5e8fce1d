package supervise

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/steward-sh/steward/internal/spec"
)

// The supervisor's own state, reason and wake-up, memory by memory: every
// case of State, OwnReason and WakeAt has a row.
func TestOwnStateReasonAndWake(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	backoff := &Plan{Op: OpRestart, Reason: "one_for_all: a crashed", Phase: PhaseBackoff, Until: t0.Add(time.Second)}
	stepping := &Plan{Op: OpRestart, Reason: "one_for_all: a crashed", Phase: PhaseStopping, Sent: 3, Deadline: t0.Add(StepWait)}
	unsent := &Plan{Op: OpRestart, Reason: "r", Phase: PhaseStarting}
	for _, c := range []struct {
		name     string
		m        Memory
		desired  string
		parent   bool
		state    string
		reason   string
		until    time.Time
		awaiting bool
		wake     time.Time
	}{
		{name: "running", m: Memory{}, desired: spec.DesiredRunning, state: "running"},
		{name: "stopped by the operator", m: Memory{Plan: backoff}, desired: spec.DesiredStopped, state: "stopped", wake: backoff.Until},
		{name: "a plan in its backoff", m: Memory{Plan: backoff}, desired: spec.DesiredRunning, state: "backoff",
			reason: "one_for_all: a crashed (restart backoff)", until: backoff.Until, wake: backoff.Until},
		{name: "a plan waiting for a child", m: Memory{Plan: stepping}, desired: spec.DesiredRunning, state: PhaseStopping,
			reason: "one_for_all: a crashed (restart stopping)", wake: stepping.Deadline},
		{name: "a plan about to ask", m: Memory{Plan: unsent}, desired: spec.DesiredRunning, state: PhaseStarting, reason: "r (restart starting)"},
		{name: "gave up, cooling down, with a parent", m: Memory{Failed: true, Reason: "gave up", CooldownUntil: t0}, desired: spec.DesiredRunning, parent: true,
			state: "failed", reason: "gave up; trying again at 2026-01-01T00:00:00Z", until: t0, awaiting: true, wake: t0},
		{name: "gave up for good (temporary), a root", m: Memory{Failed: true, Reason: "gave up"}, desired: spec.DesiredRunning,
			state: "failed", reason: "gave up"},
		{name: "held by its supervisor", m: Memory{Held: true, Reason: "stopped by its supervisor"}, desired: spec.DesiredRunning,
			state: "stopped", reason: "stopped by its supervisor"},
	} {
		t.Run(c.name, func(t *testing.T) {
			require.Equal(t, c.state, State(c.m, c.desired))
			reason, until, awaiting := OwnReason(c.m, c.desired, c.parent)
			require.Equal(t, c.reason, reason)
			require.Equal(t, c.until, until)
			require.Equal(t, c.awaiting, awaiting)
			require.Equal(t, c.wake, WakeAt(c.m))
		})
	}
}

func TestCoordinatedStrategies(t *testing.T) {
	require.False(t, Coordinated(spec.OneForOne), "its workers restart themselves")
	require.True(t, Coordinated(spec.OneForAll))
	require.True(t, Coordinated(spec.RestForOne))
}

// How a child's end is summed up in the reason of the restart it causes.
func TestEndSummary(t *testing.T) {
	require.Equal(t, "gave up", endSummary(Child{Supervisor: true, Reason: "gave up: x"}))
	require.Equal(t, "workflow closed: terminated", endSummary(Child{Supervisor: true, Lifecycle: Closed, Reason: "workflow closed: terminated; more"}))
	require.Equal(t, "crashed (exit 1)", endSummary(Child{Reason: "crashed (exit 1); restarting in 1s"}))
	require.Equal(t, "ended", endSummary(Child{}))
}
