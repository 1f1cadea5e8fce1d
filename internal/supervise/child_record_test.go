package supervise

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/steward-sh/steward/internal/spec"
	"github.com/steward-sh/steward/internal/treestatus"
)

// A record written by supervisor version 2 (its lifecycle as booleans) is
// read as the lifecycle it meant; a record written now carries the
// lifecycle and none of the booleans.
func TestChildRecord_ReadsTheBooleansOfVersion2(t *testing.T) {
	for _, c := range []struct {
		json string
		want Lifecycle
		seen int
	}{
		{`{"name":"a","path":"r/a","digest":"d","status":{}}`, Live, 0},
		{`{"name":"a","path":"r/a","digest":"d","status":{},"held":true}`, HeldStart, 0},
		{`{"name":"a","path":"r/a","digest":"d","status":{},"pendingStop":true}`, PendingStop, 0},
		{`{"name":"a","path":"r/a","digest":"d","status":{},"held":true,"pendingStop":true,"restart":true}`, RestartStop, 0},
		{`{"name":"a","path":"r/a","digest":"d","status":{},"held":true,"restart":true}`, RestartStart, 0},
		{`{"name":"a","path":"r/a","digest":"d","status":{},"deferred":true,"node":{"name":"a"}}`, Deferred, 0},
		{`{"name":"a","path":"r/a","digest":"d","status":{},"closed":true,"held":true}`, Closed, 0},
		{`{"name":"a","path":"r/a","digest":"d","status":{},"ended":true}`, Ended, 0},
		{`{"name":"a","path":"r/a","digest":"d","status":{},"adopted":true,"seenTerminations":0}`, Live, UnseenTerminations},
		{`{"name":"a","path":"r/a","digest":"d","status":{},"seenTerminations":4}`, Live, 4},
		{`{"name":"a","path":"r/a","digest":"d","status":{},"lifecycle":"restartStart"}`, RestartStart, 0},
	} {
		var r ChildRecord
		require.NoError(t, json.Unmarshal([]byte(c.json), &r), c.json)
		require.Equal(t, c.want, r.Lifecycle, c.json)
		require.Equal(t, c.seen, r.SeenTerminations, c.json)
		require.Equal(t, "r/a", r.Path, c.json)
		b, err := json.Marshal(r)
		require.NoError(t, err)
		for _, old := range []string{`"held":`, `"pendingStop":`, `"restart":`, `"deferred":`, `"closed":`, `"ended":`, `"adopted":`} {
			require.NotContains(t, string(b), old, "written anew: %s", b)
		}
		var again ChildRecord
		require.NoError(t, json.Unmarshal(b, &again))
		require.Equal(t, r, again, "round trip of %s", b)
	}
	var r ChildRecord
	require.Error(t, json.Unmarshal([]byte(`{"name":1}`), &r), "a bad record is an error, not a zero record")
}

// A rolling update carries out the restart of a worker whose service runs
// and whose change restarts it; nothing else.
func TestUpdateTarget(t *testing.T) {
	running := ChildRecord{Name: "web", Status: treestatus.Status{Kind: spec.KindProcess, State: "running"}}
	prev := spec.Node{Name: "web", Kind: spec.KindProcess, Process: map[string]any{"command": "/bin/a"}}
	next := spec.Node{Name: "web", Kind: spec.KindProcess, Process: map[string]any{"command": "/bin/b"}}
	require.True(t, UpdateTarget(running, prev, next))
	require.False(t, UpdateTarget(running, prev, prev), "no restart")
	stopped := next
	stopped.Desired = spec.DesiredStopped
	require.False(t, UpdateTarget(running, prev, stopped), "stopping it is not an update")
	down := running
	down.Status.State = "backoff"
	require.False(t, UpdateTarget(down, prev, next), "its service does not run")
	ended := running
	ended.Lifecycle = Ended
	require.False(t, UpdateTarget(ended, prev, next))
	sup := running
	sup.Status.Kind = spec.KindSupervisor
	require.False(t, UpdateTarget(sup, prev, next))
	require.False(t, UpdateTarget(running, spec.Node{Name: "web"}, next), "nothing handed before")
	job := next
	job.Job = &spec.Job{Every: spec.Dur(time.Hour)}
	require.False(t, UpdateTarget(running, prev, job))
}
