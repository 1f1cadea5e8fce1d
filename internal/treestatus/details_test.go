package treestatus

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/steward-sh/steward/internal/spec"
)

// The Web UI's details of a worker and of a supervisor.
func TestDetails(t *testing.T) {
	w := Status{State: "backoff", Desired: "running", Reason: "exit status 1", Restarts: 2, ManualRestarts: 1, Generation: 3,
		LastAction:   ActionStatus{Name: "start", Status: "failed", Attempts: 1, Error: "exit status 1"},
		BackoffUntil: time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)}
	require.Equal(t, "**backoff** (desired running) — exit status 1\n\nrestarts: 2 automatic, 1 manual · generation 3"+
		"\n\nlast action: start failed (1 attempt): exit status 1\n\nrestart at 2026-11-27T10:00:00Z", WorkerDetails(w))
	w.LastAction.Attempts, w.LastAction.Error, w.BackoffUntil = 3, "", time.Time{}
	require.Contains(t, WorkerDetails(w), "(3 attempts)")

	s := Status{State: "running", Reason: "2/2 workers", Generation: 4, Revision: 7,
		Update:   &UpdateStatus{State: "rolling", Updated: 1, Total: 2, InFlight: []string{"t/b"}, Reason: "a | b"},
		Children: []Status{{Path: "t/a", Kind: "stub", State: "running", Desired: "running", Restarts: 1, Reason: "x|y"}}}
	d := SupervisorDetails(s)
	require.Contains(t, d, "**running** — 2/2 workers · generation 4")
	require.Contains(t, d, "revision 7 · update **rolling**: 1 of 2 updated · in flight: t/b — a / b")
	require.Contains(t, d, "| t/a | stub | running | running | 1 (+0 manual) | x/y |")
}

// Which changes of a worker's status are reported on their own.
func TestSameReport(t *testing.T) {
	a := Status{State: "running", Desired: "running", Generation: 2, Host: "h1"}
	b := a
	b.Restarts, b.Reason = 5, "other"
	require.True(t, SameReport(a, b, true), "counters and the reason ride along")
	b = a
	b.Host = "h2"
	require.False(t, SameReport(a, b, true), "where it runs, with placement")
	require.True(t, SameReport(a, b, false), "not without")
	b = a
	b.StaleCopies = []string{"h1/x"}
	require.False(t, SameReport(a, b, true))
	b = a
	b.Generation = 3
	require.False(t, SameReport(a, b, false))
}

// A record for a supervisor: no children, free text cut.
func TestNarrow(t *testing.T) {
	long := strings.Repeat("x", 300)
	st := Narrow(Status{Reason: long, LastAction: ActionStatus{Error: long}, Children: []Status{{Path: "a"}}})
	require.Nil(t, st.Children)
	require.Equal(t, strings.Repeat("x", MaxRecordText)+"…", st.Reason)
	require.Equal(t, st.Reason, st.LastAction.Error)
	require.Equal(t, "short", Narrow(Status{Reason: "short"}).Reason)
}

func TestUrgentChange(t *testing.T) {
	a := Status{State: "running", Generation: 1}
	b := a
	b.State, b.Restarts = "starting", 1
	require.False(t, UrgentChange(a, b), "a state alone can wait")
	for _, f := range []func(*Status){
		func(s *Status) { s.Terminations++ }, func(s *Status) { s.SuperviseSeq++ }, func(s *Status) { s.Generation++ },
		func(s *Status) { s.Desired = "stopped" }, func(s *Status) { s.AwaitingRestart = true }, func(s *Status) { s.Completed = true },
	} {
		b := a
		f(&b)
		require.True(t, UrgentChange(a, b), "%+v", b)
	}
}

// Which transitions are notified.
func TestNotifyEvent(t *testing.T) {
	for _, c := range []struct {
		from, to      string
		troubled, sup bool
		event         string
		troubledAfter bool
	}{
		{"running", "running", true, false, "", true},
		{"running", "failed", false, true, spec.EventGaveUp, true},
		{"running", "failed", false, false, spec.EventFailed, true},
		{"running", "unknown", false, false, spec.EventUnknown, true},
		{"backoff", "running", true, false, spec.EventRecovered, false},
		{"starting", "running", false, false, "", false},
		{"running", "backoff", false, false, "", false},
	} {
		event, after := NotifyEvent(c.from, c.to, c.troubled, c.sup)
		require.Equal(t, c.event, event, "%s -> %s", c.from, c.to)
		require.Equal(t, c.troubledAfter, after, "%s -> %s", c.from, c.to)
	}
}
