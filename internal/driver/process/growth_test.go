package process

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/steward-sh/steward/internal/driver"
)

// startShort starts n services that each end 300 ms after their start,
// and waits for their ends; it returns their instances.
func startShort(t *testing.T, d *Driver, rec *recorder, prefix string, n int) []string {
	t.Helper()
	var ids []string
	for i := range n {
		id, err := d.Start(context.Background(), req(fmt.Sprintf("%s/s%d", prefix, i), map[string]any{
			"command": "sh", "args": []string{"-c", "sleep 0.3"}, "startSeconds": "100ms",
		}))
		require.NoError(t, err)
		ids = append(ids, id)
	}
	for range n {
		select {
		case <-rec.ch:
		case <-time.After(20 * time.Second):
			t.Fatal("a service did not end")
		}
	}
	return ids
}

// Every service that ever ran on a host (every job run, whose log is its
// own) left its log's last sample in the driver for as long as the worker
// ran: half a million a year for an every-minute job.
func TestDriver_TheSamplesOfLogsNoProcessWritesAreForgotten(t *testing.T) {
	need(t, "sh")
	rec := newRecorder()
	d, _ := newDriver(t, rec)
	startShort(t, d, rec, "samples", 5)
	require.Eventually(t, func() bool {
		d.rotMu.Lock()
		defer d.rotMu.Unlock()
		return len(d.samples) == 0
	}, 10*time.Second, 50*time.Millisecond, "the rotator forgets them within a round")
}

// A service whose process ended and that was never started here again
// (deleted while it crashed, moved away) kept its entry, its command and
// its environment in the driver for as long as the worker ran.
func TestDriver_ServicesThatEndedAreForgottenPastABound(t *testing.T) {
	need(t, "sh")
	defer func(n int) { maxEndedProcs = n }(maxEndedProcs)
	maxEndedProcs = 3
	rec := newRecorder()
	d, _ := newDriver(t, rec)
	ids := startShort(t, d, rec, "ended", 6)
	d.mu.Lock()
	held := len(d.procs)
	d.mu.Unlock()
	require.Equal(t, 3, held, "the last three ended are kept for an observe")
	obs, err := d.Observe(context.Background(), driver.Request{WorkflowID: "ended/s5", Instance: ids[5]})
	require.NoError(t, err)
	require.Equal(t, driver.Exited, obs, "the newest keeps how it ended")
	obs, err = d.Observe(context.Background(), driver.Request{WorkflowID: "ended/s0", Instance: ids[0]})
	require.NoError(t, err)
	require.Equal(t, driver.Crashed, obs, "a forgotten one observes as an unknown instance does")
}
