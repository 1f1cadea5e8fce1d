package workflows

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/workflow"

	"github.com/steward-sh/steward/activities"
	"github.com/steward-sh/steward/internal/spec"
)

// Continue-as-new in the middle of a rollout (issue 13, "nothing lost at
// continue-as-new"), at the workflow level: the rollout continues as new
// between chunks, and a worker asked by the rollout update while the server
// suggests continue-as-new answers before it continues. The integration
// test TestRolloutWithContinueAsNewInTheMiddleLosesNoResult runs both
// together on a real server.

// continuedAs is the input of the next run when err is a continue-as-new.
func continuedAs[T any](t *testing.T, err error) (T, bool) {
	t.Helper()
	var next T
	var can *workflow.ContinueAsNewError
	if !errors.As(err, &can) {
		return next, false
	}
	require.NoError(t, converter.GetDefaultDataConverter().FromPayloads(can.Input, &next))
	return next, true
}

// The server suggests continue-as-new while every chunk is in flight: the
// rollout continues as new between chunks, every run after the first picks
// up at the next chunk, every target is handed out exactly once and every
// result arrives. No chunk waits for its timeout: each target's answer comes
// with its chunk's (a second), not at the hour's chunk timeout.
func TestRollout_ContinueAsNewBetweenChunksLosesNoResult(t *testing.T) {
	const n, chunk = 25, 10
	in := RolloutInput{Path: "fleet", Op: RolloutRestart, Targets: fleetTargets(n), Chunk: chunk}
	handed := map[string]int{}
	runs := 0
	var st RolloutStatus
	for {
		runs++
		require.LessOrEqual(t, runs, n, "the rollout does not end")
		env, _ := newEnvWithMetrics(t)
		env.RegisterWorkflow(RolloutWorkflow)
		// Suggested while each chunk is in flight: the rollout must finish
		// the chunk first.
		got := answerChunks(env, nil, func() { env.SetContinueAsNewSuggested(true) })
		env.ExecuteWorkflow(RolloutWorkflow, in)
		require.True(t, env.IsWorkflowCompleted())
		for _, c := range got.got {
			require.LessOrEqual(t, len(c), chunk)
			for _, p := range c {
				handed[p]++
			}
		}
		next, continued := continuedAs[RolloutInput](t, env.GetWorkflowError())
		if !continued {
			require.NoError(t, env.GetWorkflowError())
			require.NoError(t, env.GetWorkflowResult(&st))
			break
		}
		require.Len(t, got.got, 1, "run %d: one chunk, then continue-as-new between chunks", runs)
		require.NotNil(t, next.Carry)
		require.Equal(t, runs*chunk, next.Carry.Next, "the next run starts at the next chunk")
		for i, tg := range next.Carry.Targets[:next.Carry.Next] {
			require.Equal(t, TargetSucceeded, tg.Status, "target %d's result is carried", i)
		}
		in = next
	}
	require.Equal(t, 3, runs, "25 targets in chunks of 10, a run each")
	require.Equal(t, n, st.Total)
	require.Equal(t, n, st.Succeeded, "%+v", st.Counts)
	require.Equal(t, "completed", st.State)
	require.Len(t, handed, n)
	for p, times := range handed {
		require.Equal(t, 1, times, "%s handed out once", p)
	}
	for _, tg := range st.Targets {
		require.Less(t, tg.Finished.Sub(tg.Started), time.Minute, "%s answered with its chunk, not at the chunk timeout", tg.Path)
	}
}

// A worker asked by the rollout update while the server suggests
// continue-as-new answers the update first (its restart runs and the answer
// goes out), then continues as new with the restart counted: the answer is
// never lost with the run that owed it.
func TestRolloutUpdate_ContinueAsNewWaitsForTheAnswer(t *testing.T) {
	env := newEnv(t)
	env.OnActivity(activities.StartName, mock.Anything, mock.Anything).Return(activities.ActionResult{Attempt: 1, Instance: "i1"}, nil)
	var restarts atomic.Int32
	// The restart takes 3 s of workflow time: the suggestion comes while it
	// is in flight.
	env.OnActivity(activities.RestartName, mock.Anything, mock.Anything).After(3 * time.Second).Return(
		func(context.Context, activities.ActionRequest) (activities.ActionResult, error) {
			restarts.Add(1)
			return activities.ActionResult{Attempt: 1, Instance: "i2"}, nil
		})
	out := workerUpdate(t, env, time.Minute, RolloutRestart)
	at(env, time.Minute+time.Second, func() { env.SetContinueAsNewSuggested(true) })
	endAt(env, time.Hour) // not reached: the run continues as new first
	env.ExecuteWorkflow(WorkerWorkflow, WorkerInput{Path: "fleet/w", Spec: stubNode("w", nil), Generation: 1})

	next, continued := continuedAs[WorkerInput](t, env.GetWorkflowError())
	require.True(t, continued, "got %v", env.GetWorkflowError())
	require.Equal(t, TargetSucceeded, out.Status, "the update has its answer: %+v", out)
	require.EqualValues(t, 1, restarts.Load())
	require.NotNil(t, next.Carry)
	require.Equal(t, 1, next.Carry.Memory.ManualRestarts, "the restart is carried")
	require.Equal(t, "running", string(next.Carry.Memory.State))
	require.Equal(t, "i2", next.Carry.Memory.Instance)
}

// Regression: a rollout restart asked while the worker's start (or restart)
// is in flight is satisfied by it, as an operator's restart is (tick: a
// restart asked for during a start); its answer used to wait for the whole
// budget (2m45s here) and come as a timeout, failing the target (and, with
// --fail-fast, stopping the rollout) although the service had just started.
func TestRolloutUpdate_RestartAskedDuringAStartIsSatisfiedByIt(t *testing.T) {
	env := newEnv(t)
	var starts, restarts atomic.Int32
	env.OnActivity(activities.StartName, mock.Anything, mock.Anything).After(3 * time.Second).Return(
		func(context.Context, activities.ActionRequest) (activities.ActionResult, error) {
			starts.Add(1)
			return activities.ActionResult{Attempt: 1, Instance: "i1"}, nil
		})
	env.OnActivity(activities.RestartName, mock.Anything, mock.Anything).Return(
		func(context.Context, activities.ActionRequest) (activities.ActionResult, error) {
			restarts.Add(1)
			return activities.ActionResult{Attempt: 1, Instance: "i2"}, nil
		})
	out := workerUpdate(t, env, time.Second, RolloutRestart) // the first start is in flight until 3 s
	answered := false
	at(env, 10*time.Second, func() { answered = out.Status != "" })
	runWorker(env, stubNode("w", nil), 10*time.Minute)
	require.True(t, answered, "answered when the start succeeded, not at the budget")
	require.Equal(t, TargetSucceeded, out.Status, out.Error)
	require.EqualValues(t, 1, starts.Load())
	require.EqualValues(t, 0, restarts.Load(), "the start in flight satisfied the restart")
}

// Regression (review of the reload): a rollout reload asked while the
// worker's start is in flight is satisfied by the start (the new instance
// loads the configuration); its answer used to wait for the whole budget
// and come as a timeout.
func TestRolloutUpdate_ReloadAskedDuringAStartIsSatisfiedByIt(t *testing.T) {
	env := newEnv(t)
	env.OnActivity(activities.StartName, mock.Anything, mock.Anything).After(3*time.Second).Return(activities.ActionResult{Attempt: 1, Instance: "i1"}, nil)
	var reloads atomic.Int32
	env.OnActivity(activities.ReloadName, mock.Anything, mock.Anything).Return(
		func(context.Context, activities.ActionRequest) (activities.ActionResult, error) {
			reloads.Add(1)
			return activities.ActionResult{Attempt: 1, Instance: "i1"}, nil
		}).Maybe()
	out := workerUpdate(t, env, time.Second, RolloutReload) // the first start is in flight until 3 s
	answered := false
	at(env, 10*time.Second, func() { answered = out.Status != "" })
	endAt(env, 10*time.Minute)
	n := spec.Node{Name: "w", Kind: spec.KindProcess, Process: map[string]any{"command": "sleep", "reload": map[string]any{}}}
	env.ExecuteWorkflow(WorkerWorkflow, WorkerInput{Path: "fleet/w", Spec: n, Generation: 1, Version: WorkerVersion})
	require.True(t, answered, "answered when the start succeeded, not at the budget")
	require.Equal(t, TargetSucceeded, out.Status, out.Error)
	require.EqualValues(t, 0, reloads.Load(), "the start in flight satisfied the reload")
}
