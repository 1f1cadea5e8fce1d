package workflows

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/temporal"

	"github.com/steward-sh/steward/activities"
	"github.com/steward-sh/steward/internal/spec"
	"github.com/steward-sh/steward/internal/tick"
)

type tags = map[string]string

// A worker's metrics move with what it does: actions queued, restarts by
// reason, state transitions, timeouts, rejected signals and template
// errors.
func TestMetrics_WorkerCountsActionsRestartsTransitionsAndRejections(t *testing.T) {
	env, rec := newEnvWithMetrics(t)
	starts := 0
	env.OnActivity(activities.StartName, mock.Anything, mock.Anything).Return(func(_ context.Context, r activities.ActionRequest) (activities.ActionResult, error) {
		starts++
		if starts == 2 {
			return activities.ActionResult{}, temporal.NewTimeoutError(enumspb.TIMEOUT_TYPE_START_TO_CLOSE, nil)
		}
		return activities.ActionResult{Attempt: 1, Instance: "i"}, nil
	})
	env.OnActivity(activities.RestartName, mock.Anything, mock.Anything).Return(activities.ActionResult{Attempt: 1, Instance: "i"}, nil)
	n := stubNode("w", nil)
	n.Retry.MaxAttempts = 1
	bad := stubNode("w", nil)
	bad.Kind, bad.Stub = spec.KindHTTP, nil
	bad.HTTP = map[string]any{"health": map[string]any{"url": "http://{{ .Vars.nowhere }}/"}}
	at(env, time.Minute, func() { env.SignalWorkflow(SignalExit, tick.Exit{Instance: "i"}) }) // crash: backoff, then a start that times out
	at(env, 2*time.Minute, func() { env.SignalWorkflow(SignalRestart, nil) })                 // a manual restart
	at(env, 3*time.Minute, func() {
		env.SignalWorkflow(SignalDesired, "sideways")
		env.SignalWorkflow(SignalSpec, spec.Update{Spec: bad})
	})
	endAt(env, 4*time.Minute)
	env.ExecuteWorkflow(WorkerWorkflow, WorkerInput{Path: "w", Spec: n, Generation: 1})

	require.Equal(t, 3.0, rec.Sum(MetricActionQueued, tags{"action": "start", "kind": "stub"}), "first start, the automatic restart, its retry after the timeout")
	require.Equal(t, 1.0, rec.Sum(MetricActionTimeouts, tags{"action": "start", "kind": "stub"}))
	require.Equal(t, 2.0, rec.Sum(MetricRestarts, tags{"reason": "automatic"}), "after the crash, after the timeout")
	require.Equal(t, 1.0, rec.Sum(MetricRestarts, tags{"reason": "manual"}))
	require.Equal(t, 1.0, rec.Sum(MetricStateTransitions, tags{"from": "running", "to": "backoff", "kind": "stub"}), "the crash")
	require.Equal(t, 1.0, rec.Sum(MetricStateTransitions, tags{"from": "starting", "to": "backoff"}), "the timeout")
	require.Equal(t, 1.0, rec.Sum(MetricRejectedSignals, tags{"signal": "desired"}))
	require.Equal(t, 1.0, rec.Sum(MetricRejectedSignals, tags{"signal": "spec"}))
	require.Equal(t, 1.0, rec.Sum(MetricTemplateErrors, nil))
}

// A worker whose host is unreachable opens its circuit; when a probe gets
// through, it closes (the infrastructure recovered).
func TestMetrics_CircuitOpensAndCloses(t *testing.T) {
	env, rec := newEnvWithMetrics(t)
	first := true
	env.OnActivity(activities.StartName, mock.Anything, mock.Anything).Return(func(_ context.Context, r activities.ActionRequest) (activities.ActionResult, error) {
		if first {
			first = false
			return activities.ActionResult{}, temporal.NewTimeoutError(enumspb.TIMEOUT_TYPE_SCHEDULE_TO_START, nil)
		}
		return activities.ActionResult{Attempt: 1, Instance: "p"}, nil
	})
	env.OnActivity(activities.ObserveName, mock.Anything, mock.Anything).Return(activities.ActionResult{Attempt: 1, Observed: "exited"}, nil)
	n := spec.Node{Name: "p", Kind: spec.KindProcess, Process: map[string]any{"command": "sleep", "host": "h1"},
		Observe: &spec.Observe{Interval: spec.Dur(time.Minute)}}
	var mid Status
	at(env, 30*time.Second, func() { mid = query(t, env) })
	endAt(env, 5*time.Minute)
	env.ExecuteWorkflow(WorkerWorkflow, WorkerInput{Path: "p", Spec: n, Generation: 1})

	require.Equal(t, "unknown", mid.State, mid.Reason)
	require.Equal(t, 1.0, rec.Sum(MetricCircuitOpens, tags{"host": "h1"}))
	require.Equal(t, 1.0, rec.Sum(MetricCircuitCloses, tags{"host": "h1"}))
}

// A supervisor's gauges and counters: children, open circuits among them,
// reconciliations, group restarts, give-ups; and a spec change's travel to
// the leaves (depth and duration).
func TestMetrics_SupervisorGaugesCountersAndPropagation(t *testing.T) {
	env, rec := newEnvWithMetrics(t)
	mockActions(env)
	mkSub := func(xStub *spec.Stub) spec.Node {
		sub := withStrategy(tree("sub", stubNode("x", xStub), stubNode("y", nil)), spec.OneForAll)
		sub.Intensity = &spec.Intensity{MaxRestarts: 1, Period: spec.Dur(time.Hour)}
		return sub
	}
	root := tree("root", mkSub(nil), stubNode("z", nil))
	changed := tree("root", mkSub(&spec.Stub{Delay: spec.Duration(time.Millisecond)}), stubNode("z", &spec.Stub{Delay: spec.Duration(time.Millisecond)}))
	at(env, time.Minute, func() { crashChild(env, "root/sub/x") })   // a group restart
	at(env, 2*time.Minute, func() { crashChild(env, "root/sub/x") }) // over the intensity: sub gives up
	at(env, 3*time.Minute, func() { env.SignalWorkflow(SignalSpec, spec.Update{Spec: changed}) })
	at(env, 4*time.Minute, func() {
		env.SignalWorkflow(SignalChild, ChildReport{Seq: env.Now().UnixNano() + 1<<20, Status: Status{Path: "root/z", Kind: "stub", State: "unknown", Desired: "running", Children: []Status{}}})
	})
	endAt(env, 5*time.Minute)
	env.ExecuteWorkflow(SupervisorWorkflow, SupervisorInput{Path: "root", Spec: root, Generation: 1})

	cc, ok := rec.Last(MetricChildCount, tags{"path": "root"})
	require.True(t, ok)
	require.Equal(t, 2.0, cc)
	cc, _ = rec.Last(MetricChildCount, tags{"path": "root/sub"})
	require.Equal(t, 2.0, cc)
	open, _ := rec.Last(MetricCircuitOpen, tags{"path": "root"})
	require.Equal(t, 1.0, open, "z reported an unreachable host")
	require.GreaterOrEqual(t, rec.Sum(MetricGroupRestarts, tags{"strategy": "one_for_all"}), 1.0)
	require.Equal(t, 1.0, rec.Sum(MetricGiveUps, nil))
	require.Equal(t, 1.0, rec.Sum(MetricReconciliations, tags{"strategy": "one_for_one"}), "the root's")
	require.Equal(t, 1.0, rec.Sum(MetricReconciliations, tags{"strategy": "one_for_all"}), "sub's, handed down")
	depths := rec.Points(MetricPropagationDepth, nil)
	deepest := 0.0
	for _, p := range depths {
		deepest = max(deepest, p.Value)
	}
	require.Equal(t, 2.0, deepest, "root -> sub -> x: two levels")
	require.NotEmpty(t, rec.Points(MetricPropagationDuration, nil))
}

// A rollout counts its targets by outcome.
func TestMetrics_RolloutCountsTargets(t *testing.T) {
	_, _, rec := runRollout(t, rolloutCase{n: 4, in: RolloutInput{Chunk: 2, FailFast: true},
		outcome: map[string]activities.RolloutOutcome{"fleet/w01": boom}})
	require.Equal(t, 1.0, rec.Sum(MetricRolloutTargets, tags{"op": "restart", "status": "succeeded"}))
	require.Equal(t, 1.0, rec.Sum(MetricRolloutTargets, tags{"op": "restart", "status": "failed"}))
	require.Equal(t, 2.0, rec.Sum(MetricRolloutTargets, tags{"op": "restart", "status": "skipped"}))
}
