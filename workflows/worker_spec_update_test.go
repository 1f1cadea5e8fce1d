package workflows

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/testsuite"

	"github.com/steward-sh/steward/activities"
	"github.com/steward-sh/steward/internal/spec"
	"github.com/steward-sh/steward/internal/versions"
)

// specUpdate sends the worker under test its spec by the `spec` Update at
// d; rejected records whether the validator refused it.
func specUpdate(t *testing.T, env *testsuite.TestWorkflowEnvironment, d time.Duration, id string, u spec.Update, rejected *atomic.Bool) {
	t.Helper()
	at(env, d, func() {
		env.UpdateWorkflow(UpdateSpec, id, &testsuite.TestUpdateCallback{
			OnAccept:   func() {},
			OnReject:   func(error) { rejected.Store(true) },
			OnComplete: func(_ any, err error) { require.NoError(t, err) },
		}, u)
	})
}

// A worker takes a spec by Update as by signal: a driver change restarts
// it once and the generation is the supervisor's; a spec for another
// worker is refused by the validator (the hand-out then signals it, and
// the signal counts it); a spec older than the worker's generation (a
// timed-out hand-out's signal overtaken by a newer Update) is dropped.
func TestSpecUpdate_AppliedAsASignalledSpecIs(t *testing.T) {
	env := newEnv(t)
	restarts := countRestarts(env)
	newDriver := stubNode("w", &spec.Stub{Delay: spec.Duration(time.Millisecond)})
	var wrongRejected, okRejected, oldRejected atomic.Bool
	var a, b Status
	specUpdate(t, env, time.Minute, "u1", spec.Update{Generation: 4, Spec: newDriver}, &okRejected)
	at(env, 2*time.Minute, func() { a = query(t, env) })
	specUpdate(t, env, 3*time.Minute, "u2", spec.Update{Generation: 5, Spec: stubNode("other", nil)}, &wrongRejected)
	specUpdate(t, env, 4*time.Minute, "u3", spec.Update{Generation: 3, Spec: stubNode("w", nil)}, &oldRejected)
	at(env, 5*time.Minute, func() { b = query(t, env) })
	endAt(env, 6*time.Minute)
	env.ExecuteWorkflow(WorkerWorkflow, WorkerInput{Path: "w", Spec: stubNode("w", nil), Generation: 1, Version: versions.WorkerSpecUpdate.Since})

	require.False(t, okRejected.Load())
	require.EqualValues(t, 4, a.Generation)
	require.Equal(t, "running", a.State)
	require.EqualValues(t, 1, restarts.Load(), "the driver change restarted it once")
	require.True(t, wrongRejected.Load(), "another worker's spec is refused")
	require.False(t, oldRejected.Load(), "an older spec is accepted, and dropped")
	require.EqualValues(t, 4, b.Generation, "the older spec was not applied")
	require.EqualValues(t, 1, restarts.Load(), "nor restarted anything")
	require.Zero(t, b.RejectedSignals, "a refused Update is no rejected signal (its signal would be)")
}

// A spec that came by Update while the run continues as new is applied to
// the carried state, never lost.
func TestSpecUpdate_DrainedBeforeContinueAsNew(t *testing.T) {
	env := newEnv(t)
	env.OnActivity(activities.StartName, mock.Anything, mock.Anything).Return(activities.ActionResult{Attempt: 1, Instance: "i1"}, nil)
	env.OnActivity(activities.RestartName, mock.Anything, mock.Anything).Return(activities.ActionResult{Attempt: 1, Instance: "i2"}, nil)
	var rejected atomic.Bool
	at(env, time.Minute, func() {
		env.SetContinueAsNewSuggested(true)
		env.UpdateWorkflow(UpdateSpec, "u7", &testsuite.TestUpdateCallback{
			OnAccept: func() {}, OnReject: func(error) { rejected.Store(true) }, OnComplete: func(any, error) {},
		}, spec.Update{Generation: 7, Spec: stubNode("w", nil)})
	})
	env.ExecuteWorkflow(WorkerWorkflow, WorkerInput{Path: "w", Spec: stubNode("w", nil), Generation: 1, Version: versions.WorkerSpecUpdate.Since})

	next, continued := continuedAs[WorkerInput](t, env.GetWorkflowError())
	require.True(t, continued, "got %v", env.GetWorkflowError())
	require.False(t, rejected.Load())
	require.EqualValues(t, 7, next.Generation, "the spec Update was applied before the run continued as new")
}

// The old branch: a run of worker code version 5 has no spec Update (it
// refuses it as unknown, as the code that began it would, and takes its
// spec by signal).
func TestSpecUpdate_AVersion5RunRefusesIt(t *testing.T) {
	env := newEnv(t)
	countRestarts(env)
	var rejected atomic.Bool
	var st Status
	specUpdate(t, env, time.Minute, "u1", spec.Update{Generation: 4, Spec: stubNode("w", nil)}, &rejected)
	at(env, 2*time.Minute, func() { env.SignalWorkflow(SignalSpec, spec.Update{Generation: 5, Spec: stubNode("w", nil)}) })
	at(env, 3*time.Minute, func() { st = query(t, env) })
	endAt(env, 4*time.Minute)
	env.ExecuteWorkflow(WorkerWorkflow, WorkerInput{Path: "w", Spec: stubNode("w", nil), Generation: 1, Version: versions.WorkerSpecUpdate.Since - 1})
	require.True(t, rejected.Load(), "a version-5 run refuses the spec Update")
	require.EqualValues(t, 5, st.Generation, "and takes its spec by signal")
	require.Equal(t, versions.WorkerSpecUpdate.Since-1, st.CodeVersion)
}
