package process

import (
	"context"
	"errors"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A service deleted while its host's worker was away: its workflow ended
// deleted (the stop could not reach the host), and the host's next worker
// adopted the process from its record and held it, supervised by nothing,
// for as long as it ran.
func TestDriver_AProcessWhoseWorkflowClosedIsStoppedAtTheSecondLook(t *testing.T) {
	need(t, "sleep")
	d, _ := newDriver(t, newRecorder())
	d.StateDir = t.TempDir()
	start := func(wfID string) string {
		id, err := d.Start(context.Background(), req(wfID, map[string]any{"command": "sleep", "args": []string{"600"}, "startSeconds": "100ms"}))
		require.NoError(t, err)
		return id
	}
	deleted, owned, unknown := start("tree/deleted"), start("tree/owned"), start("tree/unknown")
	owner := func(_ context.Context, wfID string) (bool, error) {
		switch wfID {
		case "tree/deleted":
			return false, nil
		case "tree/unknown":
			return false, errors.New("server unavailable") // says nothing either way
		}
		return true, nil
	}
	suspects := d.sweepOrphans(context.Background(), owner, nil)
	require.Equal(t, map[string]bool{deleted: true}, suspects)
	require.True(t, alive(pidOf(deleted)), "one look is not enough (a workflow restarted meanwhile adopts it)")
	d.sweepOrphans(context.Background(), owner, suspects)
	require.Eventually(t, func() bool { return !alive(pidOf(deleted)) }, 10*time.Second, 50*time.Millisecond)
	require.Eventually(t, func() bool { _, err := os.Stat(d.recordPath("tree/deleted")); return os.IsNotExist(err) }, 10*time.Second, 50*time.Millisecond,
		"its record goes with it: the next worker adopts nothing")
	require.True(t, alive(pidOf(owned)))
	require.True(t, alive(pidOf(unknown)))
	_, err := os.Stat(d.recordPath("tree/owned"))
	require.NoError(t, err)
}

// A workflow seen closed at one look and running at the next (closed by
// hand, started again by its supervisor) keeps its process.
func TestDriver_AWorkflowStartedAgainBetweenTwoLooksKeepsItsProcess(t *testing.T) {
	need(t, "sleep")
	d, _ := newDriver(t, newRecorder())
	id, err := d.Start(context.Background(), req("tree/again", map[string]any{"command": "sleep", "args": []string{"600"}, "startSeconds": "100ms"}))
	require.NoError(t, err)
	closed := true
	owner := func(context.Context, string) (bool, error) { return !closed, nil }
	suspects := d.sweepOrphans(context.Background(), owner, nil)
	closed = false
	suspects = d.sweepOrphans(context.Background(), owner, suspects)
	require.Empty(t, suspects)
	closed = true
	d.sweepOrphans(context.Background(), owner, suspects)
	require.True(t, alive(pidOf(id)))
}
