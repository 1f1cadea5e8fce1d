package workflows

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	sdkpb "go.temporal.io/api/sdk/v1"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.uber.org/goleak"

	"github.com/steward-sh/steward/activities"
	"github.com/steward-sh/steward/internal/driver"
	"github.com/steward-sh/steward/internal/driver/stub"
	"github.com/steward-sh/steward/internal/metricstest"
	"github.com/steward-sh/steward/internal/spec"
	"github.com/steward-sh/steward/internal/tick"
	"github.com/steward-sh/steward/internal/treestatus"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m,
		// The testsuite keeps retrying an activity whose workflow continued
		// as new (TestNotify_UndeliveredIsCarriedOverContinueAsNew): its
		// retry loop, not ours, outlives the test.
		goleak.IgnoreAnyFunction("go.temporal.io/sdk/internal.(*testWorkflowEnvironmentImpl).executeActivityWithRetryForTest"),
		goleak.IgnoreTopFunction("go.temporal.io/sdk/internal.(*testWorkflowEnvironmentImpl).ExecuteActivity.func2"))
}

// newEnv is a time-skipping test environment with the real activities over
// the real stub driver registered.
func newEnv(t *testing.T) *testsuite.TestWorkflowEnvironment {
	t.Helper()
	env, _ := newEnvWithMetrics(t)
	return env
}

// newEnvWithMetrics is newEnv with the workflows' metrics recorded.
func newEnvWithMetrics(t *testing.T) (*testsuite.TestWorkflowEnvironment, *metricstest.Recorder) {
	t.Helper()
	var s testsuite.WorkflowTestSuite
	rec := metricstest.New()
	s.SetMetricsHandler(rec)
	env := s.NewTestWorkflowEnvironment()
	env.RegisterWorkflow(WorkerWorkflow)
	env.RegisterWorkflow(SupervisorWorkflow)
	d := stub.New(nil, nil)
	t.Cleanup(d.Close)
	acts := &activities.Activities{Drivers: map[string]driver.Driver{spec.KindStub: d}, Signal: testSignal(env)}
	env.RegisterActivityWithOptions(acts, activity.RegisterOptions{Name: activities.Prefix})
	env.RegisterActivityWithOptions(&activities.Control{}, activity.RegisterOptions{Name: activities.Prefix}) // mocked where used
	env.RegisterActivityWithOptions(&activities.Host{}, activity.RegisterOptions{Name: activities.Prefix})    // mocked where used
	env.RegisterWorkflow(HostWorkflow)
	// A supervisor's subscriptions to its workers' hosts are recorded
	// (hostSubscriptions), not sent.
	subs := &subscriptionLog{}
	hostSubscriptionLogs.Store(env, subs)
	t.Cleanup(func() { hostSubscriptionLogs.Delete(env) })
	env.OnActivity(activities.HostSubscribeName, mock.Anything, mock.Anything).Return(func(_ context.Context, r activities.HostSubscribeRequest) error {
		subs.add(r)
		return nil
	}).Maybe()
	return env, rec
}

// testSignal is the activities' Signal in the test environment: the
// signal goes to the workflow on the environment's own loop (a supervisor's
// hand-out reaches its children as a client's signal would).
func testSignal(env *testsuite.TestWorkflowEnvironment) func(context.Context, string, string, any) error {
	return func(_ context.Context, workflowID, name string, arg any) error {
		env.RegisterDelayedCallback(func() {
			_ = env.SignalWorkflowByID(workflowID, name, arg)
		}, 0)
		return nil
	}
}

// onHandOut mocks a supervisor's hand-outs: got hears of each delivery,
// which goes nowhere.
func onHandOut(env *testsuite.TestWorkflowEnvironment, got func(activities.Delivery)) {
	env.OnActivity(activities.HandOutName, mock.Anything, mock.Anything).Return(func(_ context.Context, r activities.HandOutRequest) ([]activities.Undelivered, error) {
		for _, d := range r.Deliveries {
			got(d)
		}
		return nil, nil
	})
}

func stubNode(name string, st *spec.Stub) spec.Node {
	if st == nil {
		st = &spec.Stub{}
	}
	// Observes are hourly: tests that mock starts must not have the real stub
	// observe a mock instance (it would read as gone).
	return spec.Node{Name: name, Kind: spec.KindStub, Stub: st,
		Retry:   &spec.Retry{InitialInterval: spec.Dur(100 * time.Millisecond), MaxInterval: spec.Dur(200 * time.Millisecond)},
		Observe: &spec.Observe{Interval: spec.Dur(time.Hour)}}
}

// query is the status of the workflow under test as `starter status` shows
// it: for a supervisor, the subtree assembled from its supervisors' answers.
func query(t *testing.T, env *testsuite.TestWorkflowEnvironment) Status {
	t.Helper()
	root := queryOwn(t, env)
	st, err := treestatus.Assemble(context.Background(), root.Path, func(_ context.Context, path string) (Status, error) {
		if path == root.Path {
			return root, nil
		}
		v, err := env.QueryWorkflowByID(path, QueryStatus)
		if err != nil {
			return Status{}, fmt.Errorf("%s: %v: %w", path, err, treestatus.ErrNotFound)
		}
		var st Status
		return st, v.Get(&st)
	}, treestatus.Options{Parallel: 1, Leaves: true})
	require.NoError(t, err)
	return st
}

// queryOwn is the status answer of the workflow under test itself.
func queryOwn(t *testing.T, env *testsuite.TestWorkflowEnvironment) Status {
	t.Helper()
	v, err := env.QueryWorkflow(QueryStatus)
	require.NoError(t, err)
	var st Status
	require.NoError(t, v.Get(&st))
	return st
}

// at runs fn at workflow time d (time skips while nothing runs).
func at(env *testsuite.TestWorkflowEnvironment, d time.Duration, fn func()) {
	env.RegisterDelayedCallback(fn, d)
}

// endAt cancels the workflow at d, so ExecuteWorkflow returns.
func endAt(env *testsuite.TestWorkflowEnvironment, d time.Duration) {
	env.RegisterDelayedCallback(env.CancelWorkflow, d)
}

func TestActionFlow_StartRunsInBackgroundAndNextTickSeesResult(t *testing.T) {
	env := newEnv(t)
	var checked bool
	at(env, time.Minute/2, func() {
		st := query(t, env)
		require.Equal(t, "running", st.State)
		require.Equal(t, "started", st.Reason)
		require.Equal(t, ActionStatus{Name: "start", Status: "succeeded", Attempts: 1}, st.LastAction)
		require.Equal(t, []Status{}, st.Children)
		checked = true
	})
	endAt(env, time.Minute)
	env.ExecuteWorkflow(WorkerWorkflow, WorkerInput{Path: "w", Spec: stubNode("w", &spec.Stub{Delay: spec.Duration(10 * time.Millisecond)}), Generation: 1})
	require.True(t, checked)
	st := query(t, env)
	require.Equal(t, "stopped", st.State, "a cancelled (deleted) worker stops its service")
	require.Equal(t, "deleted", st.Reason)
	require.Equal(t, "stop", st.LastAction.Name)
}

// The size-1 queue: while a start runs (a mock taking 4s of workflow time,
// under the 5s heartbeat timeout that a mock cannot feed), signals are recorded but no action is derived; the tick that sees
// the result acts on what piled up, once.
func TestBlocking_NoDerivationWhileAnActionRuns(t *testing.T) {
	env := newEnv(t)
	var starts, restarts atomic.Int32
	env.OnActivity(activities.StartName, mock.Anything, mock.Anything).After(4 * time.Second).Return(
		func(_ context.Context, _ activities.ActionRequest) (activities.ActionResult, error) {
			starts.Add(1)
			return activities.ActionResult{Attempt: 1, Instance: "i1"}, nil
		})
	env.OnActivity(activities.RestartName, mock.Anything, mock.Anything).Return(
		func(_ context.Context, _ activities.ActionRequest) (activities.ActionResult, error) {
			restarts.Add(1)
			return activities.ActionResult{Attempt: 1, Instance: "i2"}, nil
		})
	for _, d := range []time.Duration{time.Second, 2 * time.Second, 2500 * time.Millisecond} {
		at(env, d, func() { env.SignalWorkflow(SignalRestart, nil) })
	}
	at(env, 3*time.Second, func() { env.SignalWorkflow(SignalDesired, "running") })
	var during Status
	at(env, 3500*time.Millisecond, func() { during = query(t, env) })
	var after Status
	at(env, 10*time.Second, func() { after = query(t, env) })
	endAt(env, 20*time.Second)
	env.ExecuteWorkflow(WorkerWorkflow, WorkerInput{Path: "w", Spec: stubNode("w", nil), Generation: 1})

	require.Equal(t, "starting", during.State)
	require.Equal(t, "running", during.LastAction.Status, "the start is still in flight")
	require.EqualValues(t, 1, starts.Load(), "one start: nothing derived while it ran")
	// Restarts asked for during a start are satisfied by it (coalesced).
	require.EqualValues(t, 0, restarts.Load())
	require.Equal(t, "running", after.State)
	require.Equal(t, 0, after.ManualRestarts)
}

func TestBlocking_RestartDuringObserveRunsOnceAfterIt(t *testing.T) {
	env := newEnv(t)
	var restarts atomic.Int32
	env.OnActivity(activities.StartName, mock.Anything, mock.Anything).Return(activities.ActionResult{Attempt: 1, Instance: "i1"}, nil)
	env.OnActivity(activities.ObserveName, mock.Anything, mock.Anything).After(4*time.Second).Return(activities.ActionResult{Attempt: 1, Observed: "running"}, nil)
	env.OnActivity(activities.RestartName, mock.Anything, mock.Anything).Return(
		func(_ context.Context, _ activities.ActionRequest) (activities.ActionResult, error) {
			restarts.Add(1)
			return activities.ActionResult{Attempt: 1, Instance: "i2"}, nil
		})
	node := stubNode("w", nil)
	node.Observe = &spec.Observe{Interval: spec.Dur(time.Minute)}
	// The observe starts at 1m and ends at 1m4s; two restarts arrive during it.
	at(env, time.Minute+time.Second, func() { env.SignalWorkflow(SignalRestart, nil) })
	at(env, time.Minute+2*time.Second, func() { env.SignalWorkflow(SignalRestart, nil) })
	var during, after Status
	at(env, time.Minute+3*time.Second, func() { during = query(t, env) })
	at(env, time.Minute+10*time.Second, func() { after = query(t, env) })
	endAt(env, time.Minute+20*time.Second)
	env.ExecuteWorkflow(WorkerWorkflow, WorkerInput{Path: "w", Spec: node, Generation: 1})

	require.Equal(t, "running", during.State)
	require.Equal(t, 0, during.ManualRestarts, "no restart while the observe is in flight")
	require.EqualValues(t, 1, restarts.Load(), "the piled-up restarts run once, after the observe")
	require.Equal(t, 1, after.ManualRestarts)
	require.Equal(t, ActionStatus{Name: "restart", Status: "succeeded", Attempts: 1}, after.LastAction)
}

func TestRetry_FailsTwiceSucceedsThird(t *testing.T) {
	env := newEnv(t)
	node := stubNode("w", &spec.Stub{Outcomes: map[string][]string{"start": {"failure", "failure", "success"}}})
	var st Status
	at(env, time.Minute, func() { st = query(t, env) })
	endAt(env, 2*time.Minute)
	env.ExecuteWorkflow(WorkerWorkflow, WorkerInput{Path: "w", Spec: node, Generation: 1})
	require.Equal(t, "running", st.State)
	require.Equal(t, ActionStatus{Name: "start", Status: "succeeded", Attempts: 3}, st.LastAction)
}

func TestRetry_ExhaustedGoesToBackoffWithAttemptsAndError(t *testing.T) {
	env := newEnv(t)
	node := stubNode("w", &spec.Stub{Outcomes: map[string][]string{"start": {"failure", "failure", "failure", "success"}}})
	node.Backoff = &spec.Backoff{Initial: spec.Dur(time.Hour), Max: spec.Dur(time.Hour)}
	var st Status
	at(env, time.Minute, func() { st = query(t, env) })
	endAt(env, 2*time.Minute)
	env.ExecuteWorkflow(WorkerWorkflow, WorkerInput{Path: "w", Spec: node, Generation: 1})
	require.Equal(t, "backoff", st.State)
	require.Equal(t, "failed", st.LastAction.Status)
	require.Equal(t, 3, st.LastAction.Attempts, "the default retry policy tries 3 times")
	require.Contains(t, st.LastAction.Error, "simulated failure, attempt 3")
	require.False(t, st.BackoffUntil.IsZero())
}

func TestTimeout_StatusSaysTimeout(t *testing.T) {
	env := newEnv(t)
	node := stubNode("w", &spec.Stub{Outcomes: map[string][]string{"start": {"timeout"}}})
	node.Timeouts = &spec.Timeouts{Start: spec.Dur(300 * time.Millisecond)}
	node.Retry.MaxAttempts = 1
	node.Backoff = &spec.Backoff{Initial: spec.Dur(time.Hour), Max: spec.Dur(time.Hour)}
	var st Status
	at(env, time.Minute, func() { st = query(t, env) })
	endAt(env, 2*time.Minute)
	env.ExecuteWorkflow(WorkerWorkflow, WorkerInput{Path: "w", Spec: node, Generation: 1})
	require.Equal(t, "timeout", st.LastAction.Status)
	require.Equal(t, "start", st.LastAction.Name)
	require.Equal(t, 1, st.LastAction.Attempts)
	require.Equal(t, "backoff", st.State)
	require.Contains(t, st.Reason, "timed out")
}

func TestPermanentFailure_OneAttemptNotRetried(t *testing.T) {
	env := newEnv(t)
	node := stubNode("w", &spec.Stub{Outcomes: map[string][]string{"start": {"permanent", "success"}}})
	node.Retry.MaxAttempts = 5
	var attempts atomic.Int32
	env.SetOnActivityStartedListener(func(info *activity.Info, _ context.Context, _ converter.EncodedValues) {
		if info.ActivityType.Name == activities.StartName {
			attempts.Add(1)
		}
	})
	var st Status
	at(env, time.Hour, func() { st = query(t, env) })
	endAt(env, 2*time.Hour)
	env.ExecuteWorkflow(WorkerWorkflow, WorkerInput{Path: "w", Spec: node, Generation: 1})
	require.EqualValues(t, 1, attempts.Load())
	require.Equal(t, "failed", st.State)
	require.Equal(t, ActionStatus{Name: "start", Status: "permanent", Attempts: 1, Error: st.LastAction.Error}, st.LastAction)
	require.Contains(t, st.LastAction.Error, "failed permanently")
	require.Contains(t, st.Reason, "not retryable")
}

// Cleanup: a stop while a start is in flight cancels the start and then
// stops the service. (The test environment completes a cancelled activity at
// once; that the cancellation reaches the driver through the heartbeat is
// checked against the real server in the integration tests.)
func TestCleanup_StopDuringStartCancelsIt(t *testing.T) {
	env := newEnv(t)
	env.OnActivity(activities.StartName, mock.Anything, mock.Anything).After(4*time.Second).Return(activities.ActionResult{Attempt: 1, Instance: "late"}, nil)
	var cancelled atomic.Bool
	env.SetOnActivityCanceledListener(func(info *activity.Info) {
		if info.ActivityType.Name == activities.StartName {
			cancelled.Store(true)
		}
	})
	var during, st Status
	at(env, 2*time.Second, func() { during = query(t, env); env.SignalWorkflow(SignalDesired, "stopped") })
	at(env, 2*time.Minute, func() { st = query(t, env) })
	endAt(env, 3*time.Minute)
	env.ExecuteWorkflow(WorkerWorkflow, WorkerInput{Path: "w", Spec: stubNode("w", nil), Generation: 1})
	require.Equal(t, "starting", during.State)
	require.True(t, cancelled.Load(), "the in-flight start was cancelled")
	require.Equal(t, "stopped", st.State)
	require.Equal(t, "stopped", st.Desired)
	require.Equal(t, ActionStatus{Name: "stop", Status: "succeeded", Attempts: 1}, st.LastAction)
}

func TestExit_CrashBacksOffThenRestartsAndStaleExitIsIgnored(t *testing.T) {
	env := newEnv(t)
	var starts atomic.Int32
	env.OnActivity(activities.StartName, mock.Anything, mock.Anything).Return(
		func(_ context.Context, _ activities.ActionRequest) (activities.ActionResult, error) {
			n := starts.Add(1)
			return activities.ActionResult{Attempt: 1, Instance: "i" + string(rune('0'+n))}, nil
		})
	node := stubNode("w", nil)
	node.Backoff = &spec.Backoff{Initial: spec.Dur(10 * time.Second), Max: spec.Dur(time.Minute), Jitter: new(float64)}
	at(env, time.Minute, func() { env.SignalWorkflow(SignalExit, map[string]any{"instance": "old", "normal": false}) })
	var afterStale, inBackoff, after Status
	at(env, time.Minute+time.Second, func() { afterStale = query(t, env) })
	at(env, 2*time.Minute, func() {
		env.SignalWorkflow(SignalExit, map[string]any{"instance": "i1", "normal": false, "reason": "boom"})
	})
	at(env, 2*time.Minute+5*time.Second, func() { inBackoff = query(t, env) })
	at(env, 3*time.Minute, func() { after = query(t, env) })
	endAt(env, 4*time.Minute)
	env.ExecuteWorkflow(WorkerWorkflow, WorkerInput{Path: "w", Spec: node, Generation: 1})

	require.Equal(t, "running", afterStale.State, "an exit of another instance is ignored")
	require.Equal(t, "backoff", inBackoff.State)
	require.Contains(t, inBackoff.Reason, "crashed (boom)")
	require.Equal(t, 2*time.Minute+10*time.Second, inBackoff.BackoffUntil.Sub(startTime(env, inBackoff)))
	require.Equal(t, "running", after.State)
	require.Equal(t, 1, after.Restarts)
	require.EqualValues(t, 2, starts.Load())
}

// startTime recovers the workflow's start from a status taken in backoff:
// Since is when backoff began, 2m after the start in that test.
func startTime(_ *testsuite.TestWorkflowEnvironment, st Status) time.Time {
	return st.Since.Add(-2 * time.Minute)
}

func TestBadSignalPayloadsAreRejectedCountedAndTheWorkflowGoesOn(t *testing.T) {
	env := newEnv(t)
	at(env, time.Minute, func() {
		env.SignalWorkflow(SignalDesired, "sideways")
		env.SignalWorkflow(SignalDesired, 42)
		env.SignalWorkflow(SignalDesired, nil)
		env.SignalWorkflow(SignalSpec, map[string]any{"spec": map[string]any{"name": "w", "kind": "nope"}})
		env.SignalWorkflow(SignalSpec, map[string]any{"spec": map[string]any{"name": "other", "kind": "stub"}})
		env.SignalWorkflow(SignalExit, "garbage")
	})
	var st Status
	at(env, 2*time.Minute, func() { st = query(t, env) })
	at(env, 3*time.Minute, func() { env.SignalWorkflow(SignalDesired, "stopped") })
	var later Status
	at(env, 4*time.Minute, func() { later = query(t, env) })
	endAt(env, 5*time.Minute)
	env.ExecuteWorkflow(WorkerWorkflow, WorkerInput{Path: "w", Spec: stubNode("w", nil), Generation: 1})
	require.Equal(t, 6, st.RejectedSignals)
	require.Equal(t, "running", st.State)
	require.Equal(t, "running", st.Desired)
	require.Equal(t, "stopped", later.State, "good signals still work after bad ones")
}

func TestSpecChange_RestartsOnlyWhenTheDriverChanged(t *testing.T) {
	env := newEnv(t)
	restarts := countRestarts(env)
	timeoutsOnly := stubNode("w", nil)
	timeoutsOnly.Timeouts = &spec.Timeouts{Start: spec.Dur(5 * time.Second)}
	newDriver := stubNode("w", &spec.Stub{Delay: spec.Duration(time.Millisecond)})
	var a, b Status
	at(env, time.Minute, func() { env.SignalWorkflow(SignalSpec, spec.Update{Generation: 2, Spec: timeoutsOnly}) })
	at(env, 2*time.Minute, func() { a = query(t, env) })
	at(env, 3*time.Minute, func() { env.SignalWorkflow(SignalSpec, newDriver) }) // a bare node is accepted too
	at(env, 4*time.Minute, func() { b = query(t, env) })
	endAt(env, 5*time.Minute)
	env.ExecuteWorkflow(WorkerWorkflow, WorkerInput{Path: "w", Spec: stubNode("w", nil), Generation: 1})
	require.EqualValues(t, 2, a.Generation)
	require.Equal(t, "started", a.Reason, "a timeouts-only change does not restart")
	require.EqualValues(t, 3, b.Generation, "a bare node takes the next generation")
	require.EqualValues(t, 1, restarts.Load(), "a driver change restarts once")
	require.Equal(t, "running", b.State)
}

// Continue-as-new keeps the state and loses no signal: signals sent in the
// same instant as the suggestion are either handled or drained into the
// carried state.
func TestContinueAsNew_KeepsStateAndLosesNoSignal(t *testing.T) {
	env := newEnv(t)
	env.OnActivity(activities.StartName, mock.Anything, mock.Anything).Return(activities.ActionResult{Attempt: 1, Instance: "i1"}, nil)
	env.OnActivity(activities.RestartName, mock.Anything, mock.Anything).Return(activities.ActionResult{Attempt: 1, Instance: "i2"}, nil)
	at(env, time.Minute, func() {
		env.SignalWorkflow(SignalRestart, nil)
	})
	at(env, 2*time.Minute, func() {
		env.SetContinueAsNewSuggested(true)
		// Buffered together: the loop takes one, then drains the rest into
		// the carried state before continuing as new.
		env.SignalWorkflowSkippingWorkflowTask(SignalDesired, "sideways") // rejected, and counted
		env.SignalWorkflowSkippingWorkflowTask(SignalSpec, spec.Update{Generation: 7, Spec: stubNode("w", nil)})
		env.SignalWorkflowSkippingWorkflowTask(SignalRestart, nil)
		env.SignalWorkflow(SignalExit, map[string]any{"instance": "i2", "normal": false})
	})
	env.ExecuteWorkflow(WorkerWorkflow, WorkerInput{Path: "w", Spec: stubNode("w", nil), Generation: 1})

	err := env.GetWorkflowError()
	next, continued := continuedAs[WorkerInput](t, err)
	require.True(t, continued, "got %v", err)
	require.NotNil(t, next.Carry)
	require.EqualValues(t, 7, next.Generation, "the spec signal was applied")
	require.Equal(t, 1, next.Carry.RejectedSignals)
	require.Equal(t, "running", string(next.Carry.Desired))
	// The second restart either ran before the continue-as-new or is carried
	// as pending: it is never lost, and never run twice.
	m := next.Carry.Memory
	pending := 0
	if m.Marks.Has(tick.RestartAsked) {
		pending = 1
	}
	require.Equal(t, 2, m.ManualRestarts+pending, "both restarts are accounted for: %+v", m)
	// The exit of i2 is either carried for the next run or already handled.
	if len(next.Carry.PendingExits) > 0 {
		require.Equal(t, "i2", next.Carry.PendingExits[0].Instance)
	} else {
		require.NotEqual(t, "i2", m.Instance, "the exit of i2 was handled")
	}
	require.Equal(t, "w", next.Path)
	require.Positive(t, next.Carry.Seq)
}

// A continued run picks up where the last one stopped.
func TestContinueAsNew_NextRunResumesFromCarry(t *testing.T) {
	env := newEnv(t)
	var restarts atomic.Int32
	env.OnActivity(activities.ObserveName, mock.Anything, mock.Anything).Return(activities.ActionResult{Attempt: 1, Observed: "running"}, nil)
	env.OnActivity(activities.RestartName, mock.Anything, mock.Anything).Return(
		func(_ context.Context, req activities.ActionRequest) (activities.ActionResult, error) {
			restarts.Add(1)
			require.Equal(t, "i7", req.Instance, "the restart is about the carried instance")
			require.EqualValues(t, 43, req.Seq, "action numbering continues")
			return activities.ActionResult{Attempt: 1, Instance: "i8"}, nil
		})
	carry := &WorkerCarry{Desired: "running", Seq: 42, RejectedSignals: 2, LastAction: ActionStatus{Name: "start", Status: "succeeded", Attempts: 1}}
	carry.Memory.State = "running"
	carry.Memory.Instance = "i7"
	carry.Memory.Restarts = 3
	carry.Memory.Marks.Set(tick.RestartAsked)
	var st Status
	at(env, time.Minute, func() { st = query(t, env) })
	endAt(env, 2*time.Minute)
	env.ExecuteWorkflow(WorkerWorkflow, WorkerInput{Path: "w", Spec: stubNode("w", nil), Generation: 7, Carry: carry})
	require.EqualValues(t, 1, restarts.Load())
	require.Equal(t, 3, st.Restarts)
	require.Equal(t, 1, st.ManualRestarts)
	require.Equal(t, 2, st.RejectedSignals)
	require.EqualValues(t, 7, st.Generation)
	require.Equal(t, "running", st.State)
}

func TestInvalidWorkerSpecFailsTheWorkflowNonRetryably(t *testing.T) {
	env := newEnv(t)
	env.ExecuteWorkflow(WorkerWorkflow, WorkerInput{Path: "w", Spec: spec.Node{Name: "w", Kind: "bogus"}})
	var appErr *temporal.ApplicationError
	require.True(t, errors.As(env.GetWorkflowError(), &appErr))
	require.Equal(t, "InvalidSpec", appErr.Type())
	require.Contains(t, appErr.Error(), `unknown kind "bogus"`)
}

// A transient service that exits normally stays stopped, and counts as
// settled (completed) rather than as short of its desired state.
func TestTransientNormalExitIsCompletedAndSettled(t *testing.T) {
	env := newEnv(t)
	env.OnActivity(activities.StartName, mock.Anything, mock.Anything).Return(activities.ActionResult{Attempt: 1, Instance: "i1"}, nil)
	node := stubNode("w", nil)
	node.Restart = spec.RestartTransient
	at(env, time.Minute, func() { env.SignalWorkflow(SignalExit, map[string]any{"instance": "i1", "normal": true}) })
	var st Status
	at(env, 2*time.Minute, func() { st = query(t, env) })
	endAt(env, 3*time.Minute)
	env.ExecuteWorkflow(WorkerWorkflow, WorkerInput{Path: "w", Spec: node, Generation: 1})
	require.Equal(t, "stopped", st.State)
	require.Equal(t, "running", st.Desired)
	require.True(t, st.Completed)
	at, total := st.AtDesired()
	require.Equal(t, 1, at)
	require.Equal(t, 1, total)
}

// The Web UI shows a worker's state as "Current Details" (served by the
// built-in metadata query, no history event).
func TestCurrentDetailsShowTheStateInTheWebUI(t *testing.T) {
	env := newEnv(t)
	var details string
	at(env, time.Minute, func() {
		v, err := env.QueryWorkflow("__temporal_workflow_metadata")
		require.NoError(t, err)
		var md sdkpb.WorkflowMetadata
		require.NoError(t, v.Get(&md))
		details = md.GetCurrentDetails()
	})
	endAt(env, 2*time.Minute)
	env.ExecuteWorkflow(WorkerWorkflow, WorkerInput{Path: "w", Spec: stubNode("w", nil), Generation: 1})
	require.Contains(t, details, "**running** (desired running) — started")
	require.Contains(t, details, "last action: start succeeded (1 attempt)")
}

// Regression: exits that arrive during an action were kept in one slot, so a
// stale exit arriving after the real one hid the crash until the next observe.
func TestExitsDuringAnActionAreAllSeenAfterIt(t *testing.T) {
	env := newEnv(t)
	env.OnActivity(activities.StartName, mock.Anything, mock.Anything).Return(activities.ActionResult{Attempt: 1, Instance: "i1"}, nil)
	env.OnActivity(activities.ObserveName, mock.Anything, mock.Anything).After(4*time.Second).Return(activities.ActionResult{Attempt: 1, Observed: "running"}, nil)
	node := stubNode("w", nil)
	node.Observe = &spec.Observe{Interval: spec.Dur(time.Minute)}
	node.Backoff = &spec.Backoff{Initial: spec.Dur(time.Hour), Max: spec.Dur(time.Hour)}
	// The observe runs from 1m to 1m4s; the real exit, then a stale one, arrive during it.
	at(env, time.Minute+time.Second, func() {
		env.SignalWorkflow(SignalExit, map[string]any{"instance": "i1", "normal": false, "reason": "boom"})
	})
	at(env, time.Minute+2*time.Second, func() { env.SignalWorkflow(SignalExit, map[string]any{"instance": "i0", "normal": false}) })
	var st Status
	at(env, time.Minute+10*time.Second, func() { st = query(t, env) })
	endAt(env, 2*time.Minute)
	env.ExecuteWorkflow(WorkerWorkflow, WorkerInput{Path: "w", Spec: node, Generation: 1})
	require.Equal(t, "backoff", st.State, "%+v", st)
	require.Contains(t, st.Reason, "crashed (boom)")
}

func TestActivityOptionsRouteProcessesToTheirHost(t *testing.T) {
	stubOpts := ActivityOptions(stubNode("w", nil), "start")
	require.Equal(t, TaskQueue, stubOpts.TaskQueue, "the global pool")
	local := spec.Node{Name: "p", Kind: spec.KindProcess, Process: map[string]any{"command": "sleep"}}
	require.Equal(t, "steward-host-local", ActivityOptions(local, "start").TaskQueue)
	remote := spec.Node{Name: "p", Kind: spec.KindProcess, Process: map[string]any{"command": "sleep", "host": "web-1"}}
	require.Equal(t, "steward-host-web-1", ActivityOptions(remote, "stop").TaskQueue)
	require.Equal(t, spec.DefaultStopTimeout, ActivityOptions(remote, "stop").StartToCloseTimeout)
}

// A signal under a name the workflow does not know is dropped, counted as
// rejected (at the next wake-up) and logged; the workflow goes on.
func TestUnknownSignalNamesAreRejectedCountedAndTheWorkflowGoesOn(t *testing.T) {
	env, rec := newEnvWithMetrics(t)
	var st Status
	at(env, time.Minute, func() {
		env.SignalWorkflow("desried", "stopped") // a typo
		env.SignalWorkflow(SignalDesired, "stopped")
	})
	at(env, 2*time.Minute, func() { st = query(t, env) })
	endAt(env, 3*time.Minute)
	env.ExecuteWorkflow(WorkerWorkflow, WorkerInput{Path: "w", Spec: stubNode("w", nil), Generation: 1})
	require.Equal(t, 1, st.RejectedSignals)
	require.Equal(t, "stopped", st.State, "the known signal was acted on")
	require.Equal(t, 1.0, rec.Sum(MetricRejectedSignals, map[string]string{"signal": "unknown"}))
}

// hostSubscriptionLogs holds each test environment's subscriptionLog.
var hostSubscriptionLogs sync.Map

type subscriptionLog struct {
	mu   sync.Mutex
	reqs []activities.HostSubscribeRequest
}

func (l *subscriptionLog) add(r activities.HostSubscribeRequest) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.reqs = append(l.reqs, r)
}

// hostSubscriptions are the subscriptions sent in env, in order.
func hostSubscriptions(env *testsuite.TestWorkflowEnvironment) []activities.HostSubscribeRequest {
	v, _ := hostSubscriptionLogs.Load(env)
	l := v.(*subscriptionLog)
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]activities.HostSubscribeRequest(nil), l.reqs...)
}

// countRestarts mocks a start (instance i1) and counts the restarts
// (instance i2) of the worker under test.
func countRestarts(env *testsuite.TestWorkflowEnvironment) *atomic.Int32 {
	var restarts atomic.Int32
	env.OnActivity(activities.StartName, mock.Anything, mock.Anything).Return(activities.ActionResult{Attempt: 1, Instance: "i1"}, nil)
	env.OnActivity(activities.RestartName, mock.Anything, mock.Anything).Return(
		func(_ context.Context, _ activities.ActionRequest) (activities.ActionResult, error) {
			restarts.Add(1)
			return activities.ActionResult{Attempt: 1, Instance: "i2"}, nil
		})
	return &restarts
}
