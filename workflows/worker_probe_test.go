package workflows

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/steward-sh/steward/activities"
	"github.com/steward-sh/steward/internal/spec"
	"github.com/steward-sh/steward/internal/versions"
)

// unknownAfterALoadSpike runs a worker (observe interval an hour) at
// version, whose manual restart at minute 1 no worker takes in time (a
// load spike: unreachable), with its host taking actions again from 90 s
// on, and returns its state at minute 3.
func unknownAfterALoadSpike(t *testing.T, version int) (mid, final Status) {
	env := newEnv(t)
	var away atomic.Bool
	unreachable := func() error { return temporal.NewTimeoutError(enumspb.TIMEOUT_TYPE_SCHEDULE_TO_START, nil) }
	env.OnActivity(activities.StartName, mock.Anything, mock.Anything).Return(activities.ActionResult{Attempt: 1, Instance: "i1"}, nil)
	env.OnActivity(activities.RestartName, mock.Anything, mock.Anything).Return(func(context.Context, activities.ActionRequest) (activities.ActionResult, error) {
		if away.Load() {
			return activities.ActionResult{}, unreachable()
		}
		return activities.ActionResult{Attempt: 1, Instance: "i2"}, nil
	})
	env.OnActivity(activities.ObserveName, mock.Anything, mock.Anything).Return(func(context.Context, activities.ActionRequest) (activities.ActionResult, error) {
		if away.Load() {
			return activities.ActionResult{}, unreachable()
		}
		return activities.ActionResult{Attempt: 1, Observed: "running"}, nil
	}).Maybe()
	at(env, time.Minute, func() {
		away.Store(true)
		env.SignalWorkflow(SignalRestart, nil)
	})
	at(env, 85*time.Second, func() { mid = query(t, env) })
	at(env, 90*time.Second, func() { away.Store(false) })
	at(env, 3*time.Minute, func() { final = query(t, env) })
	endAt(env, 4*time.Minute)
	env.ExecuteWorkflow(WorkerWorkflow, WorkerInput{Path: "p/w", Spec: stubNode("w", nil), Generation: 1, Version: version})
	return mid, final
}

// Regression (the PostgreSQL soak): a worker whose restart no worker took
// within unreachableAfter under load went unknown and stayed so for more
// than ten minutes, its host up all along: it probed again only at its
// observe interval (an hour). From worker version 8 it probes within
// tick.UnknownProbeEvery.
func TestWorker_AWorkerLeftUnknownByALoadSpikeProbesAgainWithin30s(t *testing.T) {
	mid, final := unknownAfterALoadSpike(t, WorkerVersion)
	require.Equal(t, "unknown", mid.State, "the restart was not taken: %+v", mid)
	require.Equal(t, "running", final.State, "probed again within 30 s of its host's return: %+v", final)

	_, old := unknownAfterALoadSpike(t, versions.WorkerUnknownProbe.Since-1)
	require.Equal(t, "unknown", old.State, "version 7 waits its observe interval: %+v", old)
}

// Regression (the PostgreSQL soak): a hand-out whose local activity failed
// under load sent its spec (generation 4) again by signal, which came after
// the next hand-out's Update (generation 8, a move to another host): the
// worker took the older spec back, undoing the move, and its supervisor
// counted it applying for good. From worker version 8 a spec signal older
// than the worker's generation is dropped, as an older Update is.
func TestWorker_AnOlderSpecSignalAfterANewerUpdateIsDropped(t *testing.T) {
	run := func(version int) Status {
		env := newEnv(t)
		mockActions(env)
		older, newer := stubNode("w", nil), stubNode("w", &spec.Stub{Delay: spec.Duration(time.Millisecond)})
		at(env, time.Minute, func() {
			env.UpdateWorkflow(UpdateSpec, "u8", &testsuite.TestUpdateCallback{
				OnAccept: func() {}, OnReject: func(err error) { t.Errorf("rejected: %v", err) }, OnComplete: func(any, error) {},
			}, spec.Update{Generation: 8, Spec: newer})
		})
		at(env, time.Minute+10*time.Second, func() { env.SignalWorkflow(SignalSpec, spec.Update{Generation: 4, Spec: older, Resent: true}) })
		var st Status
		at(env, 2*time.Minute, func() { st = query(t, env) })
		endAt(env, 3*time.Minute)
		env.ExecuteWorkflow(WorkerWorkflow, WorkerInput{Path: "p/w", Spec: older, Generation: 2, Version: version})
		return st
	}
	require.EqualValues(t, 8, run(WorkerVersion).Generation, "the newer spec holds")
	require.EqualValues(t, 4, run(versions.WorkerSignalSpecOrder.Since-1).Generation, "version 7 went back")
}

// A supervisor that adopts its children (applied again after its run was
// terminated: it begins at generation 1) sends them its own generation,
// lower than theirs, by signal, not marked resent: taken.
func TestWorker_AnAdoptingSupervisorsLowerSpecIsTaken(t *testing.T) {
	env := newEnv(t)
	mockActions(env)
	changed := stubNode("w", &spec.Stub{Delay: spec.Duration(time.Millisecond)})
	at(env, time.Minute, func() { env.SignalWorkflow(SignalSpec, spec.Update{Generation: 1, Spec: changed}) })
	var st Status
	at(env, 2*time.Minute, func() { st = query(t, env) })
	endAt(env, 3*time.Minute)
	env.ExecuteWorkflow(WorkerWorkflow, WorkerInput{Path: "p/w", Spec: stubNode("w", nil), Generation: 5, Version: WorkerVersion})
	require.EqualValues(t, 1, st.Generation, "its new supervisor's spec is taken")
	require.Zero(t, st.RejectedSignals)
}
