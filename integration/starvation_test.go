package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/testsuite"

	"github.com/steward-sh/steward/internal/telemetry"
	"github.com/steward-sh/steward/workflows"
)

// Issue 25: on a server where a 100-worker tree had been applied and rolled
// out twice, `starter apply --wait` of 40 x 100 workers printed "0 of 4000"
// and nothing more, `starter status` failed with "query hbig/g06: context
// deadline exceeded", and the shared workflow queue's backlog (826 tasks)
// was not dispatched for minutes: the worker's workflow pollers all polled
// its sticky queue, which the workers' completing actions kept busy.
//
// This test does what that operator did, with the product's own commands,
// on a server of its own (the rest of the suite's load stays out of it) and
// a worker built without the race detector (4,000 workflows under it would
// measure the detector). While the apply runs it asks `starter status`
// every few seconds, and the server for the shared workflow queue's
// pollers and backlog. It asserts that every status call answers, that the
// shared queue is polled all along and drains, and that the apply
// completes. STEWARD_STARVATION_WORKER_FLAGS adds worker flags:
// "--workflow-poller-scaling fixed --workflow-pollers 2" is the worker
// before the fix (the SDK's default pollers), against which it fails.
func TestScale_ApplyWaitAndStatusOf4000WorkersAfterOtherTrees_Issue25(t *testing.T) {
	needServer(t)
	if testing.Short() {
		t.Skip("4,000 workers: not in -short")
	}
	dir := t.TempDir()
	workerPlain := filepath.Join(dir, "worker")
	out, err := exec.Command("go", "build", "-o", workerPlain, "../worker").CombinedOutput()
	require.NoError(t, err, "%s", out)

	addr, c := ownServer(t)

	w, err := startWorkerBin(workerPlain, "worker-starvation", addr, append([]string{"--pool-size", "20", "--host", "it-starvation", "--state-dir", filepath.Join(dir, "state")}, strings.Fields(os.Getenv("STEWARD_STARVATION_WORKER_FLAGS"))...)...)
	require.NoError(t, err)
	t.Cleanup(w.stop)

	run := func(timeout time.Duration, args ...string) result {
		return runAt(t, starterBin, addr, timeout, args...)
	}

	// Other trees first, as on an operator's server.
	r := run(5*time.Minute, "apply", "-f", writeSpec(t, fleetSpec("it-small", 1, 100, "{delay: 0s}")), "--wait")
	require.Equal(t, 0, r.code, r.stdout+r.stderr)
	for range 2 {
		r = run(5*time.Minute, "rollout", "restart", "it-small", "--chunk", "20", "-o", "json")
		require.Equal(t, 0, r.code, r.stdout+r.stderr)
	}

	applied := make(chan result, 1)
	go func() {
		applied <- run(25*time.Minute, "apply", "-f", writeSpec(t, fleetSpec("it-big", 40, 100, "{delay: 0s}")), "--wait", "--timeout", "5m")
	}()
	var mu sync.Mutex
	var statusFailures []string
	var samples []string
	calls, staleCalls, notPolled := 0, 0, 0
	var final result
	for done := false; !done; {
		select {
		case final = <-applied:
			done = true
		case <-time.After(3 * time.Second):
		}
		s := run(2*time.Minute, "status", "it-big", "-o", "json")
		var st workflows.Status
		mu.Lock()
		calls++
		if s.code != 0 || json.Unmarshal([]byte(s.stdout), &st) != nil {
			statusFailures = append(statusFailures, fmt.Sprintf("exit %d: %s", s.code, strings.TrimSpace(s.stderr)))
		} else if len(st.StaleNodes()) > 0 {
			staleCalls++
		}
		mu.Unlock()
		qctx, qcancel := context.WithTimeout(context.Background(), 10*time.Second)
		h, err := telemetry.DescribeQueue(qctx, c, "default", workflows.TaskQueue, enumspb.TASK_QUEUE_TYPE_WORKFLOW)
		qcancel()
		if err == nil {
			samples = append(samples, fmt.Sprintf("backlog %d (oldest %s), pollers %d, last poll %s ago", h.Backlog, h.BacklogAge.Round(time.Second), h.Pollers, time.Since(h.LastPoll).Round(time.Second)))
			// A queue with tasks waiting is polled without pause by a worker
			// that polls it at all (a poll that finds a task returns at
			// once, and the poller asks again): tasks waiting while no poll
			// came for 10 s is the starved queue.
			if h.Pollers == 0 || (h.Backlog > 0 && time.Since(h.LastPoll) > 10*time.Second) {
				notPolled++
			}
		}
	}
	t.Logf("apply --wait: %s", tail(final.stdout+final.stderr, 800))
	t.Logf("%d status calls, %d with stale rows; shared workflow queue samples: %s", calls, staleCalls, strings.Join(samples, "; "))
	require.Equal(t, 0, final.code, "apply --wait of 4,000 workers completes: %s", tail(final.stdout+final.stderr, 2000))
	require.Contains(t, final.stdout, "it-big: all 4000 workers at their desired state")
	require.Empty(t, statusFailures, "every `starter status` during the apply answered")
	require.Zero(t, notPolled, "the shared workflow queue was polled whenever tasks waited in it")
	// The shared queue drains: nothing is left waiting in it.
	eventually(t, 2*time.Minute, func() (bool, string) {
		qctx, qcancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer qcancel()
		h, err := telemetry.DescribeQueue(qctx, c, "default", workflows.TaskQueue, enumspb.TASK_QUEUE_TYPE_WORKFLOW)
		return err == nil && h.Backlog == 0, fmt.Sprintf("%+v %v", h, err)
	})
	st := func() workflows.Status {
		s := run(2*time.Minute, "status", "it-big", "-o", "json")
		require.Equal(t, 0, s.code, s.stderr)
		var st workflows.Status
		require.NoError(t, json.Unmarshal([]byte(s.stdout), &st))
		return st
	}()
	at, total := st.AtDesired()
	require.Equal(t, 4000, total)
	require.Equal(t, 4000, at)
	require.Empty(t, st.StaleNodes(), "once the tree settled, every supervisor answers")
}

// ownServer starts a dev server of the test's own, with the settings of the
// suite's (the table of docs/design.md), stopped at the test's end.
func ownServer(t *testing.T) (addr string, c client.Client) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	server, err := testsuite.StartDevServer(ctx, testsuite.DevServerOptions{
		ExistingPath: temporal, LogLevel: "error", ClientOptions: &client.Options{Logger: quiet{}},
		ExtraArgs: devServerSettings,
	})
	require.NoError(t, err)
	t.Cleanup(func() { _ = server.Stop() })
	return server.FrontendHostPort(), server.Client()
}
