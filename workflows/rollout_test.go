package workflows

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/steward-sh/steward/activities"
	"github.com/steward-sh/steward/internal/metricstest"
	"github.com/steward-sh/steward/internal/rolloutcore"
	"github.com/steward-sh/steward/internal/spec"
	"github.com/steward-sh/steward/internal/tick"
	"github.com/steward-sh/steward/internal/versions"
)

// Rollout tests come in two halves. RolloutWorkflow's own logic (chunks,
// fail-fast, cancel, counts) runs with its chunk activity answered by the
// test (a target's outcome from a table, after a second); a worker's answer
// to the rollout update is tested on WorkerWorkflow itself (workerUpdate).
// The integration tests run both halves together on a real server.

func fleetTargets(n int) []string {
	var out []string
	for i := range n {
		out = append(out, fmt.Sprintf("fleet/w%02d", i))
	}
	return out
}

// chunks records the chunks the rollout handed out, in order.
type chunks struct {
	mu  sync.Mutex
	got [][]string
}

func (c *chunks) add(req activities.RolloutChunkRequest) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var paths []string
	for _, t := range req.Targets {
		paths = append(paths, t.Path)
	}
	c.got = append(c.got, paths)
}

// answerChunks answers every chunk activity a second after it starts, with
// each target's outcome from outcome (default succeeded), after calling
// during (if set) while the chunk is in flight; it records the chunks.
func answerChunks(env *testsuite.TestWorkflowEnvironment, outcome map[string]activities.RolloutOutcome, during func()) *chunks {
	got := &chunks{}
	env.OnActivity(activities.RolloutChunkName, mock.Anything, mock.Anything).After(time.Second).Return(
		func(_ context.Context, req activities.RolloutChunkRequest) ([]activities.ChunkResult, error) {
			got.add(req)
			if during != nil {
				during()
			}
			var out []activities.ChunkResult
			for _, tg := range req.Targets {
				o, ok := outcome[tg.Path]
				if !ok {
					o = activities.RolloutOutcome{Status: TargetSucceeded}
				}
				out = append(out, activities.ChunkResult{Seq: tg.Seq, Path: tg.Path, RolloutOutcome: o})
			}
			return out, nil
		})
	return got
}

type rolloutCase struct {
	n        int
	in       RolloutInput
	outcome  map[string]activities.RolloutOutcome // by path; default succeeded
	duringFn func(env *testsuite.TestWorkflowEnvironment)
}

func runRollout(t *testing.T, c rolloutCase) (RolloutStatus, *chunks, *metricstest.Recorder) {
	t.Helper()
	env, rec := newEnvWithMetrics(t)
	env.RegisterWorkflow(RolloutWorkflow)
	got := answerChunks(env, c.outcome, nil)
	if c.duringFn != nil {
		c.duringFn(env)
	}
	c.in.Path = "fleet"
	if c.in.Op == "" {
		c.in.Op = RolloutRestart
	}
	c.in.Targets = fleetTargets(c.n)
	env.ExecuteWorkflow(RolloutWorkflow, c.in)
	require.NoError(t, env.GetWorkflowError())
	var st RolloutStatus
	require.NoError(t, env.GetWorkflowResult(&st))
	return st, got, rec
}

// Targets go in spec order, a chunk at a time: every chunk is at most the
// bound, starts after the one before it ended, and the summary counts
// every target.
func TestRollout_ChunksInOrderWithinTheBound(t *testing.T) {
	st, got, _ := runRollout(t, rolloutCase{n: 12, in: RolloutInput{Chunk: 5}})
	require.Equal(t, "completed", st.State)
	require.Equal(t, 12, st.Total)
	require.Equal(t, 12, st.Succeeded)
	all := fleetTargets(12)
	require.Equal(t, [][]string{all[:5], all[5:10], all[10:]}, got.got)
	for c := 5; c < 12; c += 5 {
		require.False(t, st.Targets[c].Started.Before(st.Targets[c-1].Finished), "chunk at %d started before the one before it ended", c)
	}
	for _, tg := range st.Targets {
		require.Equal(t, TargetSucceeded, tg.Status, tg.Path)
		require.False(t, tg.Finished.Before(tg.Started), tg.Path)
	}
}

var boom = activities.RolloutOutcome{Status: TargetFailed, Error: "restart failed: boom"}

// With fail-fast, no chunk starts after a failure: the rest are skipped.
func TestRollout_FailFastSkipsTheRest(t *testing.T) {
	st, got, _ := runRollout(t, rolloutCase{n: 9, in: RolloutInput{Chunk: 3, FailFast: true},
		outcome: map[string]activities.RolloutOutcome{"fleet/w04": boom}})
	require.Equal(t, 9, st.Total)
	require.Equal(t, 5, st.Succeeded, "chunks 1 and 2 ran, but for w04")
	require.Equal(t, 1, st.Failed)
	require.Equal(t, 3, st.Skipped)
	require.Equal(t, TargetFailed, st.Targets[4].Status)
	require.Contains(t, st.Targets[4].Error, "boom")
	for _, tg := range st.Targets[6:] {
		require.Equal(t, TargetSkipped, tg.Status, tg.Path)
	}
	require.Len(t, got.got, 2, "no chunk after the failing one")
}

// Without fail-fast every chunk runs and failures are counted.
func TestRollout_ContinueOnFailureCountsThem(t *testing.T) {
	st, _, _ := runRollout(t, rolloutCase{n: 6, in: RolloutInput{Chunk: 2},
		outcome: map[string]activities.RolloutOutcome{"fleet/w01": boom, "fleet/w04": {Status: TargetTimeout, Error: "not running within 1m"}}})
	require.Equal(t, 4, st.Succeeded)
	require.Equal(t, 2, st.Failed)
	require.Zero(t, st.Skipped)
	require.Equal(t, 1, st.Counts[TargetFailed])
	require.Equal(t, 1, st.Counts[TargetTimeout])
}

// A cancel mid-rollout: the chunk in flight finishes, the rest are
// cancelled.
func TestRollout_CancelMidRollout(t *testing.T) {
	st, got, _ := runRollout(t, rolloutCase{n: 9, in: RolloutInput{Chunk: 3},
		duringFn: func(env *testsuite.TestWorkflowEnvironment) {
			// The first chunk's activity takes 1s.
			at(env, 500*time.Millisecond, func() { env.SignalWorkflow(SignalCancel, nil) })
		}})
	require.Equal(t, "cancelled", st.State)
	require.Equal(t, 3, st.Succeeded, "the chunk in flight finished")
	require.Equal(t, 6, st.Counts[TargetCancelled])
	require.Len(t, got.got, 1)
}

// A chunk whose activity fails for good fails its targets, with the cause.
func TestRollout_AChunkThatFailsFailsItsTargets(t *testing.T) {
	env, _ := newEnvWithMetrics(t)
	env.RegisterWorkflow(RolloutWorkflow)
	env.OnActivity(activities.RolloutChunkName, mock.Anything, mock.Anything).Return(nil, fmt.Errorf("no control queue"))
	env.ExecuteWorkflow(RolloutWorkflow, RolloutInput{Path: "fleet", Op: RolloutStop, Targets: fleetTargets(2), Chunk: 2})
	var st RolloutStatus
	require.NoError(t, env.GetWorkflowResult(&st))
	require.Equal(t, 2, st.Failed)
	require.Contains(t, st.Targets[0].Error, "no control queue")
}

// A rollout started by hand with a carry at target -1 failed its task for
// good (an index out of range); now it ends at once, refused, as does one
// whose chunks would each hold a control slot for years.
func TestRollout_AForgedInputIsRefusedNotPanicked(t *testing.T) {
	for _, in := range []RolloutInput{
		{Path: "x", Op: RolloutRestart, Targets: []string{"a"}, Carry: &RolloutCarry{Targets: []RolloutTarget{{Path: "a", Status: TargetPending}}, Next: -1}},
		{Path: "x", Op: RolloutRestart, Targets: []string{"sink"}, Chunk: 1, ChunkTimeout: 10 * 365 * 24 * time.Hour},
	} {
		env := newEnv(t)
		env.RegisterWorkflow(RolloutWorkflow)
		env.ExecuteWorkflow(RolloutWorkflow, in)
		require.True(t, env.IsWorkflowCompleted())
		err := env.GetWorkflowError()
		require.ErrorContains(t, err, "invalid rollout")
		var app *temporal.ApplicationError
		require.ErrorAs(t, err, &app)
		require.True(t, app.NonRetryable())
	}
}

// workerUpdate sends the worker under test the rollout update at d and
// returns where its answer will be.
func workerUpdate(t *testing.T, env *testsuite.TestWorkflowEnvironment, d time.Duration, op string) *activities.RolloutOutcome {
	t.Helper()
	out := &activities.RolloutOutcome{}
	at(env, d, func() {
		env.UpdateWorkflow(activities.UpdateRollout, "u-"+op, &testsuite.TestUpdateCallback{
			OnAccept: func() {},
			OnReject: func(err error) { require.Fail(t, "update rejected", err.Error()) },
			OnComplete: func(v any, err error) {
				require.NoError(t, err)
				*out = v.(activities.RolloutOutcome)
			},
		}, activities.RolloutOp{Op: op})
	})
	return out
}

func runWorker(env *testsuite.TestWorkflowEnvironment, n spec.Node, until time.Duration) {
	endAt(env, until)
	env.ExecuteWorkflow(WorkerWorkflow, WorkerInput{Path: "fleet/" + n.Name, Spec: n, Generation: 1})
}

// A worker answers the restart update when its service runs again after a
// manual restart, without a timer of its own.
func TestRolloutUpdate_RestartSucceeds(t *testing.T) {
	env := newEnv(t)
	log := mockActions(env)
	out := workerUpdate(t, env, time.Minute, RolloutRestart)
	var st Status
	at(env, 2*time.Minute, func() { st = queryOwn(t, env) })
	runWorker(env, stubNode("w", nil), 3*time.Minute)
	require.Equal(t, TargetSucceeded, out.Status, out.Error)
	require.Equal(t, []string{"fleet/w"}, log.of("restart"))
	require.Equal(t, 1, st.ManualRestarts)
}

// A restart that fails is answered as failed, with the action's error.
func TestRolloutUpdate_RestartThatFailsIsFailed(t *testing.T) {
	env := newEnv(t)
	env.OnActivity(activities.StartName, mock.Anything, mock.Anything).Return(activities.ActionResult{Attempt: 1, Instance: "i"}, nil)
	env.OnActivity(activities.RestartName, mock.Anything, mock.Anything).Return(activities.ActionResult{}, fmt.Errorf("boom"))
	out := workerUpdate(t, env, time.Minute, RolloutRestart)
	n := stubNode("w", nil)
	n.Retry.MaxAttempts = 1
	n.Backoff = &spec.Backoff{Initial: spec.Dur(time.Hour)}
	runWorker(env, n, 3*time.Minute)
	require.Equal(t, TargetFailed, out.Status)
	require.Contains(t, out.Error, "boom")
}

// A start that cannot get there within its budget (its service waits out
// an hour's backoff) is answered as a timeout at the budget, not later.
func TestRolloutUpdate_StartBeyondItsBudgetTimesOut(t *testing.T) {
	env := newEnv(t)
	mockActions(env)
	n := stubNode("w", nil)
	n.Backoff = &spec.Backoff{Initial: spec.Dur(time.Hour)}
	at(env, 30*time.Second, func() {
		env.SignalWorkflow(SignalExit, tick.Exit{Instance: "fleet/w", Reason: "test crash"})
	})
	out := workerUpdate(t, env, time.Minute, RolloutStart)
	answered := false
	at(env, time.Minute+rolloutcore.Budget(n, RolloutStart)+time.Second, func() { answered = out.Status != "" })
	runWorker(env, n, 10*time.Minute)
	require.Equal(t, TargetTimeout, out.Status, out.Error)
	require.Contains(t, out.Error, "not running within")
	require.True(t, answered, "answered within its budget, %s", rolloutcore.Budget(n, RolloutStart))
}

// Stop: answered once the service is stopped.
func TestRolloutUpdate_Stop(t *testing.T) {
	env := newEnv(t)
	log := mockActions(env)
	out := workerUpdate(t, env, time.Minute, RolloutStop)
	runWorker(env, stubNode("w", nil), 3*time.Minute)
	require.Equal(t, TargetSucceeded, out.Status, out.Error)
	require.Equal(t, []string{"fleet/w"}, log.of("stop"))
}

// A reload asked by a rollout (worker version 3): answered succeeded once
// the reload action succeeded, failed with its error when it failed; the
// service is not restarted either way.
func TestRolloutUpdate_Reload(t *testing.T) {
	for _, c := range []struct {
		name   string
		err    error
		status string
	}{
		{"succeeds", nil, TargetSucceeded},
		{"fails", temporal.NewNonRetryableApplicationError("reload: exit status 3", activities.ErrPermanent, nil), TargetFailed},
	} {
		t.Run(c.name, func(t *testing.T) {
			env := newEnv(t)
			env.OnActivity(activities.StartName, mock.Anything, mock.Anything).Return(activities.ActionResult{Attempt: 1, Instance: "i1"}, nil)
			env.OnActivity(activities.ObserveName, mock.Anything, mock.Anything).Return(activities.ActionResult{Attempt: 1, Observed: "running"}, nil).Maybe()
			env.OnActivity(activities.ReloadName, mock.Anything, mock.Anything).Return(activities.ActionResult{Attempt: 1, Instance: "i1"}, c.err)
			out := workerUpdate(t, env, time.Minute, RolloutReload)
			var st Status
			at(env, 2*time.Minute, func() { st = queryOwn(t, env) })
			endAt(env, 3*time.Minute)
			n := spec.Node{Name: "w", Kind: spec.KindProcess, Process: map[string]any{"command": "sleep", "reload": map[string]any{}}}
			env.ExecuteWorkflow(WorkerWorkflow, WorkerInput{Path: "fleet/w", Spec: n, Generation: 1, Version: WorkerVersion})
			require.Equal(t, c.status, out.Status, out.Error)
			require.Equal(t, 1, st.Reloads)
			require.Equal(t, "running", st.State)
			require.Equal(t, "i1", st.Instance)
			if c.err != nil {
				require.Contains(t, out.Error, "exit status 3")
			}
		})
	}
}

// The rollout op reload is rollout version 2's; version 1 refuses it as
// its code did.
func TestRollout_ReloadIsVersion2s(t *testing.T) {
	st, _, _ := runRollout(t, rolloutCase{n: 2, in: RolloutInput{Op: RolloutReload, Chunk: 2, Version: 2}})
	require.Equal(t, 2, st.Succeeded)

	env := newEnv(t)
	env.RegisterWorkflow(RolloutWorkflow)
	env.ExecuteWorkflow(RolloutWorkflow, RolloutInput{Path: "fleet", Op: RolloutReload, Targets: fleetTargets(1), Chunk: 1, Version: 1})
	require.ErrorContains(t, env.GetWorkflowError(), `unknown rollout op "reload"`)
}

// Regression (attack review): a rollout started by hand with a chunk of
// 100,000 made one activity ask that many targets at once (a goroutine and
// an Update call each). From rollout version 3 a chunk is at most
// rolloutcore.MaxChunk; version 2 takes what it is given.
func TestRollout_AChunkIsAtMostMaxChunk(t *testing.T) {
	for _, version := range []int{versions.RolloutChunkBounded.Since - 1, RolloutVersion} {
		env := newEnv(t)
		env.RegisterWorkflow(RolloutWorkflow)
		var mu sync.Mutex
		var sizes []int
		env.OnActivity(activities.RolloutChunkName, mock.Anything, mock.Anything).Return(func(_ context.Context, r activities.RolloutChunkRequest) ([]activities.ChunkResult, error) {
			mu.Lock()
			sizes = append(sizes, len(r.Targets))
			mu.Unlock()
			var out []activities.ChunkResult
			for _, tg := range r.Targets {
				out = append(out, activities.ChunkResult{Seq: tg.Seq, Path: tg.Path})
			}
			return out, nil
		})
		env.ExecuteWorkflow(RolloutWorkflow, RolloutInput{Path: "fleet", Op: RolloutRestart, Targets: fleetTargets(1500), Chunk: 100_000, Version: version})
		require.NoError(t, env.GetWorkflowError())
		mu.Lock()
		if versions.RolloutChunkBounded.In(version) {
			require.Equal(t, []int{1000, 500}, sizes, "version %d", version)
		} else {
			require.Equal(t, []int{1500}, sizes, "version %d", version)
		}
		mu.Unlock()
	}
}
