package rolloutcore

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/steward-sh/steward/internal/spec"
	"github.com/steward-sh/steward/internal/tick"
	"github.com/steward-sh/steward/internal/treestatus"
)

// Each operation's answer from the worker's memory: succeeded, failed
// (with the reason and the action's error), not yet, or a timeout once
// late.
func TestVerdict(t *testing.T) {
	asked := t0
	base := Watch{BaseManual: 1, BaseTerminations: 2, BaseReloads: 3, Asked: asked}
	running := tick.Memory{State: tick.Running, ManualRestarts: 1, Terminations: 2, Reloads: 3, RunningSince: asked.Add(-time.Hour), Reason: "started"}
	with := func(f func(*tick.Memory)) tick.Memory { m := running; f(&m); return m }
	ok := treestatus.ActionStatus{Name: string(tick.Start), Status: string(tick.Succeeded)}
	failedAction := treestatus.ActionStatus{Name: string(tick.Restart), Status: "failed", Error: "exit status 1"}
	for _, c := range []struct {
		name    string
		op      string
		m       tick.Memory
		last    treestatus.ActionStatus
		late    bool
		started bool
		status  string
		why     string
	}{
		{"stop: stopped", OpStop, with(func(m *tick.Memory) { m.State = tick.Stopped }), ok, false, false, Succeeded, ""},
		{"stop: still running", OpStop, running, ok, false, false, "", ""},
		{"stop: failed", OpStop, with(func(m *tick.Memory) { m.State, m.Reason = tick.Failed, "gave up" }), failedAction, false, false, Failed, "gave up: exit status 1"},
		{"stop: late", OpStop, running, ok, true, false, Timeout, "not stopped within 1m0s (state running: started)"},
		{"start: running", OpStart, running, ok, false, false, Succeeded, ""},
		{"start: ended again", OpStart, with(func(m *tick.Memory) { m.State, m.Terminations, m.Reason = tick.Backoff, 3, "crashed" }), ok, false, false, Failed, "crashed"},
		{"start: held stopped", OpStart, with(func(m *tick.Memory) { m.State, m.Reason = tick.Stopped, "held"; m.Marks.Set(tick.Held) }), ok, false, false, Failed, "held"},
		{"start: unreachable", OpStart, with(func(m *tick.Memory) { m.State, m.Reason = tick.Unknown, "host lost" }), ok, false, false, Failed, "host lost"},
		{"start: starting, late", OpStart, with(func(m *tick.Memory) { m.State = tick.Starting }), ok, true, false, Timeout, "not running within 1m0s (state starting: started)"},
		{"restart: counted and running", OpRestart, with(func(m *tick.Memory) { m.ManualRestarts = 2 }), ok, false, false, Succeeded, ""},
		{"restart: not yet", OpRestart, running, ok, false, false, "", ""},
		{"restart: satisfied by a start in flight", OpRestart, with(func(m *tick.Memory) { m.RunningSince = asked.Add(time.Second) }), ok, false, true, Succeeded, ""},
		{"restart: run since, but the old version's answer", OpRestart, with(func(m *tick.Memory) { m.RunningSince = asked.Add(time.Second) }), ok, false, false, "", ""},
		{"restart: restarted and failed", OpRestart, with(func(m *tick.Memory) { m.ManualRestarts, m.State, m.Reason = 2, tick.Failed, "bad config" }), failedAction, false, false, Failed, "bad config: exit status 1"},
		{"restart: ended again", OpRestart, with(func(m *tick.Memory) { m.Terminations, m.State, m.Reason = 3, tick.Backoff, "crashed" }), ok, false, false, Failed, "crashed"},
		{"reload: carried out", OpReload, with(func(m *tick.Memory) { m.Reloads = 4 }), treestatus.ActionStatus{Name: string(tick.Reload), Status: string(tick.Succeeded)}, false, false, Succeeded, ""},
		{"reload: carried out, failed", OpReload, with(func(m *tick.Memory) { m.Reloads = 4 }), treestatus.ActionStatus{Name: string(tick.Reload), Status: "failed", Error: "no such signal"}, false, false, Failed, "started: no such signal"},
		{"reload: still running", OpReload, with(func(m *tick.Memory) { m.Reloads = 4; m.Marks.Set(tick.ReloadAsked) }), treestatus.ActionStatus{Name: string(tick.Reload), Status: "running"}, false, false, "", ""},
		{"reload: started since", OpReload, with(func(m *tick.Memory) { m.RunningSince = asked }), ok, false, false, Succeeded, ""},
		{"reload: not running", OpReload, with(func(m *tick.Memory) { m.State, m.Reason = tick.Stopped, "stopped" }), ok, false, false, Failed, "stopped"},
	} {
		w := base
		w.Op = c.op
		status, why := Verdict(w, c.m, c.last, c.late, time.Minute, func() bool { return c.started })
		require.Equal(t, c.status, status, c.name)
		require.Equal(t, c.why, why, c.name)
	}
}

// A restart's "run since" needs the time it was asked, a running service
// and no restart pending.
func TestRestartedSince(t *testing.T) {
	m := tick.Memory{State: tick.Running, RunningSince: t0}
	require.True(t, RestartedSince(Watch{Asked: t0}, m))
	require.False(t, RestartedSince(Watch{}, m), "asked at no known time")
	require.False(t, RestartedSince(Watch{Asked: t0.Add(time.Second)}, m), "running since before")
	m.Marks.Set(tick.RestartAsked)
	require.False(t, RestartedSince(Watch{Asked: t0}, m), "a restart still pending")
}

// An operation's budget: its actions' timeouts over every attempt, the
// retry waits between, and a stop before a start.
func TestBudget(t *testing.T) {
	n := spec.Node{Name: "w", Kind: spec.KindStub,
		Timeouts: &spec.Timeouts{Start: spec.Dur(10 * time.Second), Stop: spec.Dur(5 * time.Second), Restart: spec.Dur(20 * time.Second)},
		Retry:    &spec.Retry{MaxAttempts: 3, MaxInterval: spec.Dur(time.Second)}}
	require.Equal(t, 17*time.Second, Budget(n, OpStop))                 // 3 x 5s + 2 x 1s
	require.Equal(t, 32*time.Second, Budget(n, OpReload))               // 3 x 10s + 2s
	require.Equal(t, 17*time.Second+32*time.Second, Budget(n, OpStart)) // a stop, then a start
	require.Equal(t, 17*time.Second+62*time.Second, Budget(n, OpRestart))
}
