package activities

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/steward-sh/steward/internal/leakcheck"
	"github.com/steward-sh/steward/internal/metricstest"
	"github.com/steward-sh/steward/internal/treestatus"
	"go.uber.org/zap/zaptest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/steward-sh/steward/internal/admission"
	"github.com/steward-sh/steward/internal/driver"
	"github.com/steward-sh/steward/internal/driver/process"
	"github.com/steward-sh/steward/internal/driver/stub"
	"github.com/steward-sh/steward/internal/spec"
)

const (
	wait = 5 * time.Second
	tick = 5 * time.Millisecond
)

// --- helpers ----------------------------------------------------------------

// probe wraps a driver: it records every request and reports when a driver
// call begins and ends.
type probe struct {
	driver.Driver
	mu       sync.Mutex
	reqs     []driver.Request
	entered  chan string
	returned chan error
}

func newProbe(d driver.Driver) *probe {
	return &probe{Driver: d, entered: make(chan string, 64), returned: make(chan error, 64)}
}

func (p *probe) record(action string, r driver.Request) {
	p.mu.Lock()
	p.reqs = append(p.reqs, r)
	p.mu.Unlock()
	select {
	case p.entered <- action:
	default: // nobody is watching: do not block the activity
	}
}

func (p *probe) done(err error) {
	select {
	case p.returned <- err:
	default:
	}
}

func (p *probe) requests() []driver.Request {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]driver.Request(nil), p.reqs...)
}

func (p *probe) Start(ctx context.Context, r driver.Request) (string, error) {
	p.record("start", r)
	id, err := p.Driver.Start(ctx, r)
	p.done(err)
	return id, err
}

func (p *probe) Stop(ctx context.Context, r driver.Request) error {
	p.record("stop", r)
	err := p.Driver.Stop(ctx, r)
	p.done(err)
	return err
}

func (p *probe) Restart(ctx context.Context, r driver.Request) (string, error) {
	p.record("restart", r)
	id, err := p.Driver.Restart(ctx, r)
	p.done(err)
	return id, err
}

func (p *probe) Observe(ctx context.Context, r driver.Request) (driver.Observation, error) {
	p.record("observe", r)
	obs, err := p.Driver.Observe(ctx, r)
	p.done(err)
	return obs, err
}

// fixture is a stub driver (pushing nowhere) behind a probe, and the
// activities dispatching to it.
type fixture struct {
	stub  *stub.Driver
	probe *probe
	acts  *Activities
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	s := stub.New(driver.NotifierFunc(func(context.Context, string, driver.Exit) error { return nil }), nil)
	t.Cleanup(s.Close)
	p := newProbe(s)
	return &fixture{stub: s, probe: p, acts: &Activities{Drivers: map[string]driver.Driver{spec.KindStub: p}}}
}

// activityEnv registers the activities as the worker does (prefixed names).
func (f *fixture) activityEnv() *testsuite.TestActivityEnvironment {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestActivityEnvironment()
	env.RegisterActivityWithOptions(f.acts, activity.RegisterOptions{Name: Prefix})
	return env
}

func stubReq(st *spec.Stub) ActionRequest {
	return ActionRequest{
		WorkflowID: "steward/shop/db",
		Path:       "shop/db",
		Seq:        3,
		Spec:       spec.Node{Name: "db", Kind: spec.KindStub, Stub: st},
	}
}

func result(t *testing.T, v converter.EncodedValue) ActionResult {
	t.Helper()
	var r ActionResult
	require.NoError(t, v.Get(&r))
	return r
}

// appError extracts the ApplicationError of a failed activity.
func appError(t *testing.T, err error) *temporal.ApplicationError {
	t.Helper()
	require.Error(t, err)
	var appErr *temporal.ApplicationError
	require.True(t, errors.As(err, &appErr), "not an ApplicationError: %#v", err)
	return appErr
}

func attemptOf(t *testing.T, appErr *temporal.ApplicationError) int32 {
	t.Helper()
	var n int32
	require.NoError(t, appErr.Details(&n), "error details should carry the attempt")
	return n
}

// --- TestActivityEnvironment ------------------------------------------------

func TestStartSuccess(t *testing.T) {
	leakcheck.NoLeaks(t)
	f := newFixture(t)
	env := f.activityEnv()
	v, err := env.ExecuteActivity(StartName, stubReq(&spec.Stub{CrashAfter: spec.Duration(time.Hour)}))
	require.NoError(t, err)
	res := result(t, v)
	assert.Equal(t, int32(1), res.Attempt)
	assert.True(t, strings.HasPrefix(res.Instance, "stub/3/"), "instance %q", res.Instance)
	assert.Empty(t, res.Observed)
	assert.Equal(t, 1, f.stub.Armed(), "the started instance's crash timer is armed")
}

func TestMethodValuesAsActivities(t *testing.T) {
	leakcheck.NoLeaks(t)
	f := newFixture(t)
	var s testsuite.WorkflowTestSuite
	env := s.NewTestActivityEnvironment()
	env.RegisterActivity(f.acts)
	v, err := env.ExecuteActivity(f.acts.Start, stubReq(nil))
	require.NoError(t, err)
	res := result(t, v)
	assert.Equal(t, int32(1), res.Attempt)
	assert.NotEmpty(t, res.Instance)
}

func TestRequestReachesDriver(t *testing.T) {
	leakcheck.NoLeaks(t)
	f := newFixture(t)
	env := f.activityEnv()
	req := stubReq(&spec.Stub{Seed: 9})
	req.Instance = "stub/2/1700000000000000000"
	for _, name := range []string{StartName, StopName, RestartName, ObserveName} {
		_, err := env.ExecuteActivity(name, req)
		require.NoError(t, err, name)
	}
	got := f.probe.requests()
	require.Len(t, got, 4)
	for i, r := range got {
		assert.Equal(t, driver.Request{
			WorkflowID: "steward/shop/db",
			Path:       "shop/db",
			Spec:       req.Spec,
			Instance:   req.Instance,
			Seq:        3,
			Attempt:    1,
		}, r, "request %d", i)
	}
	var actions []string
	for range 4 {
		actions = append(actions, <-f.probe.entered)
	}
	assert.Equal(t, []string{"start", "stop", "restart", "observe"}, actions,
		"each activity name dispatches to its own driver method")
}

func TestPermanentFailureIsNonRetryable(t *testing.T) {
	leakcheck.NoLeaks(t)
	f := newFixture(t)
	env := f.activityEnv()
	for _, name := range []string{StartName, StopName, RestartName, ObserveName} {
		action := strings.ToLower(strings.TrimPrefix(name, Prefix))
		req := stubReq(&spec.Stub{Outcomes: map[string][]string{action: {spec.OutcomePermanent}}})
		_, err := env.ExecuteActivity(name, req)
		appErr := appError(t, err)
		assert.Equal(t, ErrPermanent, appErr.Type(), name)
		assert.True(t, appErr.NonRetryable(), name)
		assert.Equal(t, int32(1), attemptOf(t, appErr), name)
		assert.Contains(t, appErr.Error(), "permanently", name)
	}
}

func TestRetryableFailures(t *testing.T) {
	leakcheck.NoLeaks(t)
	f := newFixture(t)
	env := f.activityEnv()
	for _, outcome := range []string{spec.OutcomeFailure, spec.OutcomeError} {
		for _, name := range []string{StartName, StopName, RestartName, ObserveName} {
			action := strings.ToLower(strings.TrimPrefix(name, Prefix))
			req := stubReq(&spec.Stub{Outcomes: map[string][]string{action: {outcome}}})
			_, err := env.ExecuteActivity(name, req)
			appErr := appError(t, err)
			assert.Equal(t, ErrActionFailed, appErr.Type(), "%s %s", name, outcome)
			assert.False(t, appErr.NonRetryable(), "%s %s", name, outcome)
			assert.Equal(t, int32(1), attemptOf(t, appErr), "%s %s", name, outcome)
		}
	}
	// failureRate failures too.
	_, err := env.ExecuteActivity(StartName, stubReq(&spec.Stub{FailureRate: 1}))
	appErr := appError(t, err)
	assert.Equal(t, ErrActionFailed, appErr.Type())
	assert.False(t, appErr.NonRetryable())
}

func TestUnknownKind(t *testing.T) {
	leakcheck.NoLeaks(t)
	f := newFixture(t)
	env := f.activityEnv()
	for _, kind := range []string{spec.KindProcess, spec.KindHTTP, ""} {
		req := stubReq(nil)
		req.Spec.Kind = kind
		_, err := env.ExecuteActivity(StartName, req)
		appErr := appError(t, err)
		assert.Equal(t, ErrUnknownKind, appErr.Type(), "kind %q", kind)
		assert.True(t, appErr.NonRetryable(), "kind %q", kind)
		assert.Equal(t, int32(1), attemptOf(t, appErr), "kind %q", kind)
	}
	assert.Empty(t, f.probe.requests(), "no driver is called for an unknown kind")
}

func TestObserve(t *testing.T) {
	leakcheck.NoLeaks(t)
	f := newFixture(t)
	env := f.activityEnv()
	st := &spec.Stub{CrashAfter: spec.Duration(time.Hour)}
	v, err := env.ExecuteActivity(StartName, stubReq(st))
	require.NoError(t, err)
	started := result(t, v)

	req := stubReq(st)
	req.Instance = started.Instance
	v, err = env.ExecuteActivity(ObserveName, req)
	require.NoError(t, err)
	res := result(t, v)
	assert.Equal(t, string(driver.Running), res.Observed)
	assert.Equal(t, int32(1), res.Attempt)
	assert.Empty(t, res.Instance)

	// A crashed one, and one the driver cannot read.
	short := &spec.Stub{CrashAfter: spec.Duration(time.Millisecond)}
	v, err = env.ExecuteActivity(StartName, stubReq(short))
	require.NoError(t, err)
	req = stubReq(short)
	req.Instance = result(t, v).Instance
	require.Eventually(t, func() bool {
		v, err := env.ExecuteActivity(ObserveName, req)
		var res ActionResult
		return err == nil && v.Get(&res) == nil && res.Observed == string(driver.Crashed)
	}, wait, tick)

	req.Instance = "not-an-instance"
	v, err = env.ExecuteActivity(ObserveName, req)
	require.NoError(t, err)
	assert.Equal(t, string(driver.Crashed), result(t, v).Observed)
}

func TestStopAndRestart(t *testing.T) {
	leakcheck.NoLeaks(t)
	f := newFixture(t)
	env := f.activityEnv()
	st := &spec.Stub{CrashAfter: spec.Duration(time.Hour)}
	v, err := env.ExecuteActivity(StartName, stubReq(st))
	require.NoError(t, err)
	first := result(t, v).Instance
	require.Equal(t, 1, f.stub.Armed())

	req := stubReq(st)
	req.Instance = first
	req.Seq = 4
	v, err = env.ExecuteActivity(RestartName, req)
	require.NoError(t, err)
	res := result(t, v)
	assert.Equal(t, int32(1), res.Attempt)
	require.NotEmpty(t, res.Instance)
	assert.NotEqual(t, first, res.Instance)
	assert.Equal(t, 1, f.stub.Armed(), "restart replaces the old timer by the new one")

	req.Instance = res.Instance
	req.Seq = 5
	v, err = env.ExecuteActivity(StopName, req)
	require.NoError(t, err)
	before := time.Now()
	res = result(t, v)
	assert.False(t, res.Done.IsZero(), "a success says when it happened")
	assert.False(t, res.Done.After(before), "dated when the action succeeded")
	res.Done = time.Time{}
	assert.Equal(t, ActionResult{Attempt: 1}, res)
	assert.Zero(t, f.stub.Armed(), "stop disarms the instance")

	// Stopping what is not running succeeds.
	v, err = env.ExecuteActivity(StopName, req)
	require.NoError(t, err)
	res = result(t, v)
	res.Done = time.Time{}
	assert.Equal(t, ActionResult{Attempt: 1}, res)
}

// A cancelled activity context reaches the driver: a stub "timeout" outcome
// (which hangs until its context ends) returns promptly, and the activity
// reports a cancellation, not an ActionFailed to be retried.
//
// TestActivityEnvironment always schedules with HeartbeatTimeout 0 (so the
// heartbeat loop does not run here) and a StartToClose of 10 minutes, and
// offers no cancel call; the activity context derives from the worker's
// BackgroundActivityContext, which is what this test cancels, with the cause
// a server-side cancel carries. The heartbeat path itself is tested with the
// workflow test environment below.
func TestCancelledContextStopsHangingAction(t *testing.T) {
	leakcheck.NoLeaks(t)
	f := newFixture(t)
	bg, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	var s testsuite.WorkflowTestSuite
	env := s.NewTestActivityEnvironment()
	env.SetWorkerOptions(worker.Options{BackgroundActivityContext: bg})
	env.RegisterActivityWithOptions(f.acts, activity.RegisterOptions{Name: Prefix})

	done := make(chan error, 1)
	go func() {
		_, err := env.ExecuteActivity(StartName, stubReq(&spec.Stub{Outcomes: map[string][]string{"start": {spec.OutcomeTimeout}}}))
		done <- err
	}()
	select {
	case <-f.probe.entered:
	case <-time.After(wait):
		t.Fatal("driver not called")
	}
	require.Never(t, func() bool { return len(done) > 0 }, 50*time.Millisecond, tick, "the timeout outcome must hang")
	begin := time.Now()
	cancel(temporal.NewCanceledError())

	select {
	case err := <-f.probe.returned:
		require.ErrorIs(t, err, context.Canceled, "the driver sees its context cancelled")
	case <-time.After(wait):
		t.Fatal("driver still blocked after the activity context was cancelled")
	}
	var err error
	select {
	case err = <-done:
	case <-time.After(wait):
		t.Fatal("activity did not return")
	}
	assert.Less(t, time.Since(begin), wait)
	require.Error(t, err)
	assert.True(t, temporal.IsCanceledError(err), "a cancelled action is reported as cancelled, got %v", err)
	var appErr *temporal.ApplicationError
	if errors.As(err, &appErr) {
		assert.NotEqual(t, ErrActionFailed, appErr.Type(), "a cancellation must not become a retryable ActionFailed")
		assert.NotEqual(t, ErrPermanent, appErr.Type())
	}
}

// --- TestWorkflowEnvironment: heartbeat and retry ---------------------------

// actWorkflow runs one action with the given options; when cancelAfter > 0
// it cancels the action after that long (workflow time, which runs on the
// wall clock while an activity is running).
func actWorkflow(ctx workflow.Context, name string, req ActionRequest, opts workflow.ActivityOptions, cancelAfter time.Duration) (ActionResult, error) {
	actx, cancel := workflow.WithCancel(ctx)
	actx = workflow.WithActivityOptions(actx, opts)
	fut := workflow.ExecuteActivity(actx, name, req)
	if cancelAfter > 0 {
		if err := workflow.Sleep(ctx, cancelAfter); err != nil {
			return ActionResult{}, err
		}
		cancel()
	}
	var res ActionResult
	err := fut.Get(ctx, &res)
	return res, err
}

func (f *fixture) workflowEnv(t *testing.T) *testsuite.TestWorkflowEnvironment {
	t.Helper()
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	env.RegisterWorkflow(actWorkflow)
	env.RegisterActivityWithOptions(f.acts, activity.RegisterOptions{Name: Prefix})
	env.SetTestTimeout(30 * time.Second)
	return env
}

// With a heartbeat timeout, the activity heartbeats (carrying its attempt),
// and a cancellation from the workflow reaches the driver through the
// heartbeat: a hanging "timeout" outcome returns promptly, long before its
// StartToClose.
func TestHeartbeatDeliversCancellation(t *testing.T) {
	leakcheck.NoLeaks(t)
	f := newFixture(t)
	env := f.workflowEnv(t)
	var hbMu sync.Mutex
	var beats []int32
	env.SetOnActivityHeartbeatListener(func(_ *activity.Info, details converter.EncodedValues) {
		var n int32
		if details.HasValues() && details.Get(&n) == nil {
			hbMu.Lock()
			beats = append(beats, n)
			hbMu.Unlock()
		}
	})
	req := stubReq(&spec.Stub{Outcomes: map[string][]string{"start": {spec.OutcomeTimeout}}})
	opts := workflow.ActivityOptions{
		// Longer than the wait below, yet short enough that a failing run
		// does not leave the hung driver call to the next test.
		StartToCloseTimeout: 8 * time.Second,
		HeartbeatTimeout:    300 * time.Millisecond,
		RetryPolicy:         &temporal.RetryPolicy{MaximumAttempts: 1},
		WaitForCancellation: true,
	}
	begin := time.Now()
	env.ExecuteWorkflow(actWorkflow, StartName, req, opts, 200*time.Millisecond)
	require.True(t, env.IsWorkflowCompleted())
	werr := env.GetWorkflowError()
	require.Error(t, werr)
	assert.True(t, temporal.IsCanceledError(werr), "workflow sees the action cancelled: %v", werr)

	select {
	case err := <-f.probe.returned:
		require.ErrorIs(t, err, context.Canceled)
	case <-time.After(wait):
		t.Fatal("cancellation did not reach the driver through the heartbeat")
	}
	assert.Less(t, time.Since(begin), 8*time.Second, "cancellation came with the deadline, not the heartbeat")

	hbMu.Lock()
	defer hbMu.Unlock()
	require.NotEmpty(t, beats, "the activity heartbeats when a heartbeat timeout is set")
	for _, n := range beats {
		assert.Equal(t, int32(1), n, "heartbeat details carry the attempt")
	}
}

// Control for the test above: without a heartbeat timeout there is no
// heartbeat, so the cancellation never reaches the driver, and only the
// StartToClose deadline ends the hanging action.
func TestWithoutHeartbeatOnlyDeadlineEndsHangingAction(t *testing.T) {
	leakcheck.NoLeaks(t)
	f := newFixture(t)
	env := f.workflowEnv(t)
	beats := make(chan struct{}, 16)
	env.SetOnActivityHeartbeatListener(func(*activity.Info, converter.EncodedValues) { beats <- struct{}{} })
	req := stubReq(&spec.Stub{Outcomes: map[string][]string{"start": {spec.OutcomeTimeout}}})
	opts := workflow.ActivityOptions{
		StartToCloseTimeout: time.Second,
		RetryPolicy:         &temporal.RetryPolicy{MaximumAttempts: 1},
		WaitForCancellation: true,
	}
	env.ExecuteWorkflow(actWorkflow, StartName, req, opts, 100*time.Millisecond)
	require.True(t, env.IsWorkflowCompleted())
	select {
	case err := <-f.probe.returned:
		require.ErrorIs(t, err, context.DeadlineExceeded, "only the deadline can end it")
	case <-time.After(wait):
		t.Fatal("driver never returned")
	}
	assert.Empty(t, beats, "no heartbeat without a heartbeat timeout")
}

// Temporal retries ActionFailed (the attempt moves on through the scripted
// outcomes) and the result says on which attempt it succeeded.
func TestRetriedUntilSuccess(t *testing.T) {
	leakcheck.NoLeaks(t)
	f := newFixture(t)
	env := f.workflowEnv(t)
	req := stubReq(&spec.Stub{Outcomes: map[string][]string{"start": {spec.OutcomeFailure, spec.OutcomeError, spec.OutcomeSuccess}}})
	opts := workflow.ActivityOptions{
		StartToCloseTimeout: 10 * time.Second,
		HeartbeatTimeout:    time.Second,
		RetryPolicy:         &temporal.RetryPolicy{InitialInterval: 10 * time.Millisecond, MaximumAttempts: 5},
	}
	env.ExecuteWorkflow(actWorkflow, StartName, req, opts, time.Duration(0))
	require.True(t, env.IsWorkflowCompleted())
	require.NoError(t, env.GetWorkflowError())
	var res ActionResult
	require.NoError(t, env.GetWorkflowResult(&res))
	assert.Equal(t, int32(3), res.Attempt)
	assert.NotEmpty(t, res.Instance)
	var attempts []int32
	for _, r := range f.probe.requests() {
		attempts = append(attempts, r.Attempt)
	}
	assert.Equal(t, []int32{1, 2, 3}, attempts)
}

// The NonRetryable flag alone stops retries: this RetryPolicy does not list
// ErrPermanent among its non-retryable types.
func TestPermanentNotRetried(t *testing.T) {
	leakcheck.NoLeaks(t)
	f := newFixture(t)
	env := f.workflowEnv(t)
	req := stubReq(&spec.Stub{Outcomes: map[string][]string{"start": {spec.OutcomePermanent, spec.OutcomeSuccess}}})
	opts := workflow.ActivityOptions{
		StartToCloseTimeout: 10 * time.Second,
		RetryPolicy:         &temporal.RetryPolicy{InitialInterval: 10 * time.Millisecond, MaximumAttempts: 5},
	}
	env.ExecuteWorkflow(actWorkflow, StartName, req, opts, time.Duration(0))
	require.True(t, env.IsWorkflowCompleted())
	appErr := appError(t, env.GetWorkflowError())
	assert.Equal(t, ErrPermanent, appErr.Type())
	assert.True(t, appErr.NonRetryable())
	assert.Equal(t, int32(1), attemptOf(t, appErr))
	assert.Len(t, f.probe.requests(), 1, "a permanent failure is tried once")
}

// The action metrics move: execution time by outcome, and the pool's
// utilization up while an action runs and back down after it.
func TestMetricsExecutionDurationByStatusAndPoolUtilization(t *testing.T) {
	leakcheck.NoLeaks(t)
	f := newFixture(t)
	rec := metricstest.New()
	f.acts.Metrics, f.acts.PoolSize = rec, 4
	env := f.activityEnv()
	_, err := env.ExecuteActivity(StartName, stubReq(&spec.Stub{}))
	require.NoError(t, err)
	_, err = env.ExecuteActivity(StartName, stubReq(&spec.Stub{Outcomes: map[string][]string{"start": {"failure"}}}))
	require.Error(t, err)
	_, err = env.ExecuteActivity(StopName, stubReq(&spec.Stub{}))
	require.NoError(t, err)

	ok := rec.Points(MetricExecutionDuration, map[string]string{"action": "start", "kind": "stub", "status": "success"})
	require.Len(t, ok, 1)
	require.Len(t, rec.Points(MetricExecutionDuration, map[string]string{"action": "start", "status": "failure"}), 1)
	require.Len(t, rec.Points(MetricExecutionDuration, map[string]string{"action": "stop", "status": "success"}), 1)
	util := rec.Points(MetricPoolUtilization, nil)
	require.Len(t, util, 6, "up and down for each of the three actions")
	require.Equal(t, 0.25, util[0].Value, "one of four slots in use")
	require.Equal(t, 0.0, util[1].Value)
}

// An action still running after SlowAfter tells its workflow (once, with
// its seq); a quick one does not.
func TestSlowActionTellsItsWorkflow(t *testing.T) {
	f := newFixture(t)
	var mu sync.Mutex
	var told []string
	f.acts.Slow = func(_ context.Context, wf string, seq int64) error {
		mu.Lock()
		defer mu.Unlock()
		told = append(told, fmt.Sprintf("%s#%d", wf, seq))
		return nil
	}
	env := f.activityEnv()
	_, err := env.ExecuteActivity(StartName, stubReq(&spec.Stub{}))
	require.NoError(t, err)
	mu.Lock()
	require.Empty(t, told, "a quick start is not slow")
	mu.Unlock()
	_, err = env.ExecuteActivity(StartName, stubReq(&spec.Stub{Delay: spec.Duration(SlowAfter + 300*time.Millisecond)}))
	require.NoError(t, err)
	mu.Lock()
	defer mu.Unlock()
	require.Equal(t, []string{"steward/shop/db#3"}, told)
}

// A host's guard refuses a process start or restart before its driver
// hears of it: a non-retryable Refused error naming the rule, counted. A
// stop or an observe goes on without the refused spec's probes; other
// kinds pass.
func TestGuardRefusesBeforeTheDriverRuns(t *testing.T) {
	leakcheck.NoLeaks(t)
	f := newFixture(t)
	f.acts.Drivers[spec.KindProcess] = f.probe
	policy, err := admission.ParsePolicy([]byte("commands: [/usr/bin/sleep]\n"))
	require.NoError(t, err)
	rec := metricstest.New()
	var logged []string
	f.acts.Guard, f.acts.Metrics = &admission.Guard{Policy: policy}, rec
	f.acts.Log = func(msg string, kv ...any) { logged = append(logged, fmt.Sprint(append([]any{msg}, kv...)...)) }
	env := f.activityEnv()
	req := stubReq(nil)
	req.Spec = spec.Node{Name: "db", Kind: spec.KindProcess, Process: map[string]any{"command": "/bin/sh", "health": map[string]any{"exec": []any{"/bin/sh", "-c", "id"}}}}
	want := "policy (inline): command /bin/sh is not allowed"
	if sh, err := filepath.EvalSymlinks("/bin/sh"); err == nil && sh != "/bin/sh" {
		want = "policy (inline): command /bin/sh (resolved to " + sh + ") is not allowed" // judged by the file it runs
	}
	for _, name := range []string{StartName, RestartName} {
		_, err := env.ExecuteActivity(name, req)
		appErr := appError(t, err)
		assert.Equal(t, ErrRefused, appErr.Type(), name)
		assert.True(t, appErr.NonRetryable(), name)
		assert.Equal(t, want, appErr.Message(), name)
		assert.Equal(t, int32(1), attemptOf(t, appErr), name)
	}
	assert.Empty(t, f.probe.requests(), "the driver never heard of them")
	for _, name := range []string{StopName, ObserveName} {
		_, err = env.ExecuteActivity(name, req)
		require.NoError(t, err, name)
	}
	for _, r := range f.probe.requests() {
		assert.Equal(t, map[string]any{"command": "/bin/sh"}, r.Spec.Process, "a stop or an observe runs without the refused spec's probes")
	}
	allowed := req
	allowed.Spec.Process = map[string]any{"command": "/usr/bin/sleep"}
	_, err = env.ExecuteActivity(StartName, allowed)
	require.NoError(t, err)
	_, err = env.ExecuteActivity(StartName, stubReq(nil))
	require.NoError(t, err, "not a process: not the policy's business")
	assert.Len(t, f.probe.requests(), 4)
	assert.EqualValues(t, 1, rec.Sum(MetricRefusedActions, map[string]string{"action": "start", "rule": "policy"}))
	assert.EqualValues(t, 1, rec.Sum(MetricRefusedActions, map[string]string{"action": "restart", "rule": "policy"}))
	assert.Len(t, logged, 2, "%v", logged)
}

// RunJob runs a job's process to its end (a real process, awaited by the
// process driver): the end is its result, completed into the run's record;
// a record whose job is not the run's own (its workflow ID names it) is
// told to nobody.
func TestRunJobAwaitsTheEndAndTellsOnlyItsOwnJob(t *testing.T) {
	pushed := 0
	d := process.New(t.TempDir(), driver.NotifierFunc(func(context.Context, string, driver.Exit) error { pushed++; return nil }), zaptest.NewLogger(t))
	t.Cleanup(d.Close)
	var signals []string
	acts := &Activities{Drivers: map[string]driver.Driver{spec.KindProcess: d},
		Signal: func(_ context.Context, id, name string, _ any) error {
			signals = append(signals, id+" "+name)
			return nil
		}}
	var s testsuite.WorkflowTestSuite
	env := s.NewTestActivityEnvironment()
	env.RegisterActivityWithOptions(acts, activity.RegisterOptions{Name: Prefix})
	n := spec.Node{Name: "backup", Kind: spec.KindProcess, Process: map[string]any{"command": "sh", "args": []string{"-c", "exit 3"}},
		Job: &spec.Job{Every: spec.Dur(time.Minute)}}
	v, err := env.ExecuteActivity(RunJobName, ActionRequest{WorkflowID: "t/backup/run-1", Path: "t/backup", Spec: n,
		Deadline: time.Now().Add(time.Minute), OnEnd: &JobEnd{Job: "t/backup", Signal: "jobRun", Run: treestatus.JobRun{Generation: 4}}})
	require.NoError(t, err)
	res := result(t, v)
	require.NotNil(t, res.Exit)
	require.Equal(t, 3, *res.Exit.Code)
	require.NotNil(t, res.Run)
	require.Equal(t, treestatus.RunFailed, res.Run.Outcome)
	require.Equal(t, 3, *res.Run.ExitCode)
	require.Equal(t, int64(4), res.Run.Generation)
	require.False(t, res.Run.StartedAt.IsZero())
	require.False(t, res.Run.EndedAt.Before(res.Run.StartedAt))
	require.False(t, res.Told, "the test's workflow ID is not a run of t/backup")
	require.Empty(t, signals)
	require.Zero(t, pushed, "an awaited end is not pushed")
}
