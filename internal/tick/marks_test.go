package tick

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Memory's JSON before Marks (its seven booleans were fields of their own),
// as that code encoded it: histories hold these bytes (continue-as-new
// inputs, status reports).
const (
	memoryJSONBeforeMarks      = `{"state":"running","reason":"r","hold":true,"instance":"i","runningSince":"2026-11-28T12:00:00Z","backoffUntil":"2026-11-28T12:00:01Z","consecutiveFailures":2,"failures":["2026-11-28T12:00:00Z"],"restarts":3,"manualRestarts":4,"pendingRestart":true,"pendingSpecRestart":true,"pendingAutoRestart":true,"supervisorHold":true,"terminations":5,"awaitingSupervisor":true,"pendingReload":true,"reloads":6}`
	emptyMemoryJSONBeforeMarks = `{"state":"stopped","reason":"","runningSince":"0001-01-01T00:00:00Z","backoffUntil":"0001-01-01T00:00:00Z","restarts":0,"manualRestarts":0}`
)

// A Memory encodes to the very bytes it did when its marks were booleans,
// and decodes from them: a run of this code continues one of the code
// before, and a report it sends reads the same to a supervisor of either.
func TestMemory_MarksEncodeAsTheBooleansTheyWere(t *testing.T) {
	at := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	all := Held | HeldBySupervisor | AwaitingSupervisor | RestartOwed | ReloadAsked
	full := Memory{State: Running, Reason: "r", Marks: all, Instance: "i", RunningSince: at, BackoffUntil: at.Add(time.Second),
		ConsecutiveFailures: 2, Failures: []time.Time{at}, Restarts: 3, ManualRestarts: 4, Terminations: 5, Reloads: 6}
	b, err := json.Marshal(full)
	require.NoError(t, err)
	require.Equal(t, memoryJSONBeforeMarks, string(b))
	b, err = json.Marshal(Memory{State: Stopped})
	require.NoError(t, err)
	require.Equal(t, emptyMemoryJSONBeforeMarks, string(b))

	var got Memory
	require.NoError(t, json.Unmarshal([]byte(memoryJSONBeforeMarks), &got))
	require.Equal(t, full, got)
	for _, n := range markNames { // each boolean is its own mark
		var one Memory
		require.NoError(t, json.Unmarshal([]byte(`{"state":"stopped","`+n.name+`":true}`), &one))
		require.Equal(t, n.mark, one.Marks, n.name)
	}
	// Inside a struct, by value and by pointer, as the workflows carry it.
	type carry struct {
		Memory Memory  `json:"memory"`
		Ptr    *Memory `json:"ptr"`
	}
	b, err = json.Marshal(carry{Memory: full, Ptr: &full})
	require.NoError(t, err)
	var c carry
	require.NoError(t, json.Unmarshal(b, &c))
	require.Equal(t, full, c.Memory)
	require.Equal(t, full, *c.Ptr)
}

func TestMarks(t *testing.T) {
	var m Marks
	require.Equal(t, "", m.String())
	m.Set(Held | RestartAsked)
	require.True(t, m.Has(Held))
	require.True(t, m.Has(Held|RestartAsked))
	require.False(t, m.Has(Held|ReloadAsked), "Has wants every mark")
	require.True(t, m.Any(RestartOwed))
	require.False(t, m.Any(ReloadAsked|HeldBySupervisor))
	require.Equal(t, "hold+pendingRestart", m.String())
	m.Clear(RestartOwed)
	require.Equal(t, Held, m)
	require.Len(t, markNames, 7, "every mark has its JSON name")
}
