package activities

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/steward-sh/steward/internal/spec"
)

// startIn runs the action name of req in a workflow, with heartbeat
// timeout hb and one attempt: the workflow's view of it.
func startIn(t *testing.T, f *fixture, name string, req ActionRequest, hb time.Duration) error {
	t.Helper()
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	env.RegisterActivityWithOptions(f.acts, activity.RegisterOptions{Name: Prefix})
	env.RegisterWorkflowWithOptions(func(ctx workflow.Context) error {
		ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
			StartToCloseTimeout: time.Minute, HeartbeatTimeout: hb,
			RetryPolicy: &temporal.RetryPolicy{MaximumAttempts: 1},
		})
		return workflow.ExecuteActivity(ctx, name, req).Get(ctx, nil)
	}, workflow.RegisterOptions{Name: "act"})
	env.ExecuteWorkflow("act")
	require.True(t, env.IsWorkflowCompleted())
	return env.GetWorkflowError()
}

// asProcess makes req a process service's, served by the fixture's probe
// (over the stub driver, which reads req's stub block for its delay).
func asProcess(f *fixture, req ActionRequest) ActionRequest {
	f.acts.Drivers[spec.KindProcess] = f.probe
	req.Spec.Kind = spec.KindProcess
	return req
}

// actions are the driver's calls so far, in order.
func actions(f *fixture) []string {
	var out []string
	for {
		select {
		case a := <-f.probe.entered:
			out = append(out, a)
		default:
			return out
		}
	}
}

func actionOf(name string) string { return strings.ToLower(strings.TrimPrefix(name, Prefix)) }

// The defect: a restart in flight on a host as it froze finished when the
// host went on, after the server had timed its attempt out. Its process
// ran, owned by no workflow (the workflow had moved the service to another
// host), beside the one the move started. Now the action asks the server
// whether its attempt is still known, and stops what it started if not.
func TestAbandoned_AStartWhoseAttemptTimedOutWhileItRanStopsItsInstance(t *testing.T) {
	for _, name := range []string{StartName, RestartName} {
		f := newFixture(t)
		asked := 0
		f.acts.Heartbeat = func(context.Context, []byte, ...any) error {
			asked++
			return serviceerror.NewNotFound("activity already timed out")
		}
		req := asProcess(f, stubReq(&spec.Stub{Delay: spec.Duration(1200 * time.Millisecond), CrashAfter: spec.Duration(time.Hour)}))
		err := startIn(t, f, name, req, time.Second)
		require.Error(t, err, name)
		require.Contains(t, err.Error(), "no longer knows this attempt", name)
		require.Equal(t, 1, asked, name)
		require.Equal(t, []string{actionOf(name), "stop"}, actions(f), name)
		require.True(t, strings.HasPrefix(f.probe.requests()[1].Instance, "stub/3/"), "%s: the stop names the instance it started", name)
	}
}

// The server is asked only by an action that ran its heartbeat timeout or
// longer (before that, it cannot have timed the attempt out), and one it
// still knows goes on as before.
func TestAbandoned_OnlyASlowActionAsksAndAKnownOneGoesOn(t *testing.T) {
	for _, tc := range []struct {
		delay time.Duration
		asks  int
	}{{0, 0}, {1200 * time.Millisecond, 1}} {
		f := newFixture(t)
		asked := 0
		f.acts.Heartbeat = func(context.Context, []byte, ...any) error { asked++; return nil }
		req := asProcess(f, stubReq(&spec.Stub{Delay: spec.Duration(tc.delay), CrashAfter: spec.Duration(time.Hour)}))
		require.NoError(t, startIn(t, f, StartName, req, time.Second))
		require.Equal(t, tc.asks, asked, "delay %s", tc.delay)
		require.Equal(t, []string{"start"}, actions(f), "no stop")
	}
}

// An action that completes after its report and whose completion the
// server refuses as unknown stops what it started.
func TestAbandoned_ACompletionRefusedAsUnknownStopsTheInstance(t *testing.T) {
	f, _, _ := asyncFixture(t, nil)
	f.acts.Complete = func(context.Context, []byte, any, error) error {
		return serviceerror.NewNotFound("activity already timed out")
	}
	env := f.activityEnv()
	_, err := env.ExecuteActivity(StartName, asProcess(f, reportingReq()))
	require.ErrorIs(t, err, activity.ErrResultPending)
	WaitReports(f.acts)
	require.Equal(t, []string{"start", "stop"}, actions(f))
	require.True(t, strings.HasPrefix(f.probe.requests()[1].Instance, "stub/3/"), "the stop names the instance it started")
}

// Only a process service's start is stopped so: an http worker's stop is
// its service's own stop request whatever the instance (a retry on another
// worker process may have started what the workflow owns), and a job's
// run is taken by its next attempt.
func TestAbandoned_OnlyAProcessServicesStart(t *testing.T) {
	job := spec.Node{Kind: spec.KindProcess, Job: &spec.Job{Every: spec.Dur(time.Minute)}}
	for _, tc := range []struct {
		name string
		n    spec.Node
		want bool
	}{
		{StartName, spec.Node{Kind: spec.KindProcess}, true},
		{RestartName, spec.Node{Kind: spec.KindProcess}, true},
		{StopName, spec.Node{Kind: spec.KindProcess}, false},
		{StartName, spec.Node{Kind: spec.KindHTTP}, false},
		{StartName, spec.Node{Kind: spec.KindStub}, false},
		{StartName, job, false},
		{RunJobName, job, false},
	} {
		require.Equal(t, tc.want, abandons(tc.name, tc.n), "%s of %s (job %t)", tc.name, tc.n.Kind, tc.n.IsJob())
	}
	f := newFixture(t)
	asked := 0
	f.acts.Heartbeat = func(context.Context, []byte, ...any) error {
		asked++
		return serviceerror.NewNotFound("activity already timed out")
	}
	req := stubReq(&spec.Stub{Delay: spec.Duration(1200 * time.Millisecond), CrashAfter: spec.Duration(time.Hour)})
	require.NoError(t, startIn(t, f, StartName, req, time.Second), "a stub's start is not asked about")
	require.Zero(t, asked)
}
