package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/steward-sh/steward/workflows"
)

func fleetSpec(name string, groups, per int, stub string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "name: %s\nchildren:\n", name)
	for g := range groups {
		fmt.Fprintf(&b, "  - name: g%d\n    children:\n", g)
		for i := range per {
			fmt.Fprintf(&b, "      - {name: w%02d, kind: stub, stub: %s, observe: {interval: 1h}}\n", i, stub)
		}
	}
	return b.String()
}

// A rollout restart over 24 workers in two supervisors, 10 at a time: every
// worker restarts once (a manual restart), in spec order, and the summary
// says so.
func TestRolloutRestartOverAFleet(t *testing.T) {
	needServer(t)
	r := starter(t, "apply", "-f", writeSpec(t, fleetSpec("it-fleet", 2, 12, "{}")), "--wait")
	require.Equal(t, 0, r.code, r.stdout+r.stderr)
	t.Cleanup(func() { deleteTree(t, "it-fleet") })

	began := time.Now()
	r = starter(t, "rollout", "restart", "it-fleet", "--chunk", "10", "-o", "json")
	took := time.Since(began)
	require.Equal(t, 0, r.code, r.stdout+r.stderr)
	var res workflows.RolloutStatus
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &res), r.stdout)
	require.Equal(t, 24, res.Total)
	require.Equal(t, 24, res.Succeeded)
	require.Zero(t, res.Failed)
	require.Zero(t, res.Skipped)
	require.Equal(t, "completed", res.State)
	require.Equal(t, "it-fleet/g0/w00", res.Targets[0].Path, "spec order")
	require.Equal(t, "it-fleet/g1/w11", res.Targets[23].Path, "spec order")
	t.Logf("rollout restart of 24 workers at chunk 10: %s in the workflow, %s for the command (%.1f targets/s)",
		res.EndedAt.Sub(res.StartedAt).Round(time.Millisecond), took.Round(time.Millisecond), 24/res.EndedAt.Sub(res.StartedAt).Seconds())

	root := status(t, "it-fleet")
	for _, p := range res.Targets {
		w, ok := root.Find(p.Path)
		require.True(t, ok, p.Path)
		require.Equal(t, 1, w.ManualRestarts, p.Path)
		require.Equal(t, "running", w.State, p.Path)
	}
	// Chunks: the 11th target was sent only after the first ten finished.
	var firstChunkEnd time.Time
	for _, tg := range res.Targets[:10] {
		if tg.Finished.After(firstChunkEnd) {
			firstChunkEnd = tg.Finished
		}
	}
	require.False(t, res.Targets[10].Started.Before(firstChunkEnd))
}

// A second rollout over the same subtree, or an overlapping one, is refused
// while the first runs; `starter rollout cancel` stops the first, whose
// in-flight target finishes and whose rest are cancelled.
func TestRolloutRefusesASecondAndIsCancellable(t *testing.T) {
	needServer(t)
	r := starter(t, "apply", "-f", writeSpec(t, fleetSpec("it-slow", 1, 6, "{delay: 1500ms}")), "--wait")
	require.Equal(t, 0, r.code, r.stdout+r.stderr)
	t.Cleanup(func() { deleteTree(t, "it-slow") })

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out, errb, firstDone := starterInBackground(t, ctx, "rollout", "restart", "it-slow", "--chunk", "1", "-o", "json")

	eventually(t, time.Minute, func() (bool, string) {
		st, desc := rolloutStatus(t, "rollout:it-slow")
		return st.Total == 6 && st.State == "running", desc
	})
	second := starter(t, "rollout", "restart", "it-slow", "--chunk", "3")
	require.Equal(t, 1, second.code, second.stdout+second.stderr)
	require.Contains(t, second.stderr, "a rollout of it-slow is already running (rollout:it-slow)")
	overlap := starter(t, "rollout", "stop", "it-slow/g0")
	require.Equal(t, 1, overlap.code, overlap.stdout+overlap.stderr)
	require.Contains(t, overlap.stderr, "overlaps it-slow/g0")

	c := starter(t, "rollout", "cancel", "rollout:it-slow")
	require.Equal(t, 0, c.code, c.stdout+c.stderr)
	select {
	case err := <-firstDone:
		require.NoError(t, err, errb.String())
	case <-ctx.Done():
		t.Fatal("the cancelled rollout did not end")
	}
	var res workflows.RolloutStatus
	require.NoError(t, json.Unmarshal(out.Bytes(), &res), out.String()+errb.String())
	require.Equal(t, "cancelled", res.State)
	require.Equal(t, 6, res.Total)
	require.GreaterOrEqual(t, res.Succeeded, 1)
	require.GreaterOrEqual(t, res.Counts[workflows.TargetCancelled], 1)
	require.Equal(t, res.Total, res.Succeeded+res.Counts[workflows.TargetCancelled], "nothing failed or was left pending: %+v", res.Counts)
	require.Zero(t, res.Failed)
}

// A rollout survives a worker process restart: killed in the middle, the
// new worker process goes on where it was, and every target succeeds once.
func TestRolloutGoesOnAcrossAWorkerRestart(t *testing.T) {
	needServer(t)
	r := starter(t, "apply", "-f", writeSpec(t, fleetSpec("it-durable", 1, 6, "{delay: 700ms}")), "--wait")
	require.Equal(t, 0, r.code, r.stdout+r.stderr)
	t.Cleanup(func() { deleteTree(t, "it-durable") })

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out, errb, done := starterInBackground(t, ctx, "rollout", "restart", "it-durable", "--chunk", "2", "-o", "json")

	eventually(t, time.Minute, func() (bool, string) {
		st, desc := rolloutStatus(t, "rollout:it-durable")
		return st.Succeeded >= 2, desc
	})
	mainWorker.kill()
	w, err := startWorker("worker-rollout")
	require.NoError(t, err)
	mainWorker = w

	select {
	case err := <-done:
		require.NoError(t, err, errb.String())
	case <-ctx.Done():
		t.Fatal("the rollout did not end after the worker restart")
	}
	var res workflows.RolloutStatus
	require.NoError(t, json.Unmarshal(out.Bytes(), &res), out.String()+errb.String())
	require.Equal(t, 6, res.Succeeded, "%+v", res.Counts)
	root := status(t, "it-durable")
	for _, tg := range res.Targets {
		w, _ := root.Find(tg.Path)
		require.Equal(t, 1, w.ManualRestarts, "%s restarted exactly once", tg.Path)
	}
}

// rolloutStatus queries a rollout with the temporal CLI.
func rolloutStatus(t *testing.T, id string) (workflows.RolloutStatus, string) {
	t.Helper()
	q := temporalCLI(t, "workflow", "query", "--workflow-id", id, "--name", "status", "-o", "json")
	var st workflows.RolloutStatus
	if q.code != 0 {
		return st, q.stderr
	}
	var res struct {
		QueryResult []workflows.RolloutStatus `json:"queryResult"`
	}
	if err := json.Unmarshal([]byte(q.stdout), &res); err != nil || len(res.QueryResult) == 0 {
		return st, fmt.Sprintf("%v: %s", err, q.stdout)
	}
	return res.QueryResult[0], fmt.Sprintf("%+v", res.QueryResult[0].Counts)
}

// starterInBackground runs the starter without waiting for it: its output,
// and a channel that gets its end.
func starterInBackground(t *testing.T, ctx context.Context, args ...string) (out, errb *bytes.Buffer, done <-chan error) {
	t.Helper()
	cmd := exec.CommandContext(ctx, starterBin, args...)
	cmd.Env = append(os.Environ(), "TEMPORAL_ADDRESS="+address)
	out, errb = &bytes.Buffer{}, &bytes.Buffer{}
	cmd.Stdout, cmd.Stderr = out, errb
	require.NoError(t, cmd.Start())
	ch := make(chan error, 1)
	go func() { ch <- cmd.Wait() }()
	return out, errb, ch
}

// Regression (issue 13, hole 2): a result sent just before a continue-as-new
// could be lost, and its chunk waited for its timeout (1 h). With a history
// limit of 40 events (10 for the rollouts), the workers, their supervisors
// and the rollouts all continue as new in the middle of rollouts: every
// target answers, and the rollouts end in well under their chunk timeout.
func TestRolloutWithContinueAsNewInTheMiddleLosesNoResult(t *testing.T) {
	needServer(t)
	r := starter(t, "apply", "-f", writeSpec(t, fleetSpec("it-can", 2, 6, "{}")), "--history-limit", "40", "--wait")
	require.Equal(t, 0, r.code, r.stdout+r.stderr)
	began := time.Now()
	for range 3 {
		r = starter(t, "rollout", "restart", "it-can", "--chunk", "4", "--history-limit", "10", "-o", "json")
		require.Equal(t, 0, r.code, r.stdout+r.stderr)
		var res workflows.RolloutStatus
		require.NoError(t, json.Unmarshal([]byte(r.stdout), &res))
		require.Equal(t, 12, res.Succeeded, r.stdout)
	}
	require.Less(t, time.Since(began), 5*time.Minute, "no chunk waited for its timeout")
	// They did continue as new.
	for _, id := range []string{"it-can/g0/w00", "it-can/g1", workflows.RolloutID("it-can")} {
		require.Positive(t, continuedRuns(t, id), "%s continued as new", id)
	}
	st := status(t, "it-can")
	w, _ := st.Find("it-can/g0/w00")
	require.Equal(t, 3, w.ManualRestarts, "the counters crossed continue-as-new")
	deleteTree(t, "it-can")
}
