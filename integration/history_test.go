package integration

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/steward-sh/steward/workflows"
)

// starter history shows a worker's transitions, oldest first, with reasons
// and the actions that caused them, across continue-as-new runs.
func TestHistoryShowsTransitionsAcrossRuns(t *testing.T) {
	needServer(t)
	r := starter(t, "apply", "-f", writeSpec(t, `
name: it-hist
children:
  - {name: w, kind: stub, stub: {delay: 20ms}}
`), "--history-limit", "30", "--wait")
	require.Equal(t, 0, r.code, r.stdout+r.stderr)
	t.Cleanup(func() { deleteTree(t, "it-hist") })
	firstRun := runOf(t, "it-hist/w")

	for range 3 {
		r = starter(t, "stop", "it-hist/w")
		require.Equal(t, 0, r.code, r.stderr)
		waitState(t, "it-hist/w", "stopped", time.Minute)
		r = starter(t, "start", "it-hist/w")
		require.Equal(t, 0, r.code, r.stderr)
		waitState(t, "it-hist/w", "running", time.Minute)
	}
	require.NotEqual(t, firstRun, runOf(t, "it-hist/w"), "the worker continued as new (history limit 30)")

	r = starter(t, "history", "it-hist/w", "-n", "100", "-o", "json")
	require.Equal(t, 0, r.code, r.stderr)
	var entries []workflows.JournalEntry
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &entries), r.stdout)
	var states []string
	for _, e := range entries {
		states = append(states, e.From+">"+e.State)
	}
	require.Equal(t, "stopped>starting", states[0], "%v", states)
	require.Equal(t, "running>stopping", states[2], "%v", states)
	require.Len(t, states, 2+3*4, "start, then 3 x (stop, start): every transition, across runs: %v", states)
	for i := 1; i < len(entries); i++ {
		require.False(t, entries[i].Time.Before(entries[i-1].Time), "oldest first")
		require.Equal(t, entries[i-1].State, entries[i].From, "a chain of transitions")
	}
	require.NotNil(t, entries[1].Action, "running came from the start action")
	require.Equal(t, "start", entries[1].Action.Name)
	require.Equal(t, "succeeded", entries[1].Action.Status)

	if r := starter(t, "history", "it-hist/w", "-n", "3"); r.code == 0 {
		t.Logf("starter history it-hist/w -n 3:\n%s", r.stdout)
	}
	r = starter(t, "history", "it-hist/w", "-n", "2")
	require.Equal(t, 0, r.code, r.stderr)
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	require.Len(t, lines, 3, r.stdout)
	require.Contains(t, lines[0], "TIME")
	require.Contains(t, lines[2], "running")
	require.Contains(t, lines[2], "start succeeded")

	// A supervisor's history: the transitions of its own state.
	r = starter(t, "history", "it-hist", "-o", "json")
	require.Equal(t, 0, r.code, r.stderr)
	var sup []workflows.JournalEntry
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &sup), r.stdout)
	require.NotEmpty(t, sup)
	require.Equal(t, "created", sup[0].Reason)
	require.Equal(t, "running", sup[0].State)
}
