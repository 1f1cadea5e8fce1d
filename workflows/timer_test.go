package workflows

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"
)

// childContexts counts the cancellable contexts the SDK keeps under ctx
// (its cancel context's children), reading the SDK's unexported fields:
// -1 when they are not where SDK v1.50 keeps them.
func childContexts(ctx workflow.Context) int {
	v := reflect.ValueOf(ctx)
	for v.IsValid() && v.Kind() == reflect.Pointer && !v.IsNil() {
		e := v.Elem()
		switch e.Type().Name() {
		case "cancelCtx":
			nodes := e.FieldByName("children").FieldByName("nodes")
			if !nodes.IsValid() {
				return -1
			}
			return nodes.Len()
		case "valueCtx":
			v = e.FieldByName("Context").Elem()
		default:
			return -1
		}
	}
	return -1
}

// Regression: a worker's idle heap grew with every action and every
// timer it had run since its last continue-as-new. The SDK keeps a
// cancellable context among its parent's children until it is cancelled,
// and a fired timer's or an ended action's context never was: about twenty
// objects each, kept while the workflow stays in the worker's cache and
// marked at every garbage collection.
func TestFinishedTimersAndActionsReleaseTheirContexts_IdleHeapGrowth(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	env.RegisterActivityWithOptions(func(context.Context) error { return nil }, activity.RegisterOptions{Name: "noop"})
	type counts struct{ Before, Armed, Fired, Running, Ended int }
	env.RegisterWorkflowWithOptions(func(ctx workflow.Context) (counts, error) {
		var c counts
		c.Before = childContexts(ctx)
		// A deadline (backoff, wake-up) that fires.
		var d deadline
		d.set(ctx, workflow.Now(ctx).Add(time.Second))
		c.Armed = childContexts(ctx)
		fut := d.fut
		if err := fut.Get(ctx, nil); err != nil {
			return c, err
		}
		d.fired(fut)
		c.Fired = childContexts(ctx)
		// An action, as launch and onActionDone run one.
		actx, cancel := workflow.WithCancel(ctx)
		actx = workflow.WithActivityOptions(actx, workflow.ActivityOptions{StartToCloseTimeout: time.Minute})
		act := workflow.ExecuteActivity(actx, "noop")
		c.Running = childContexts(ctx)
		if err := act.Get(ctx, nil); err != nil {
			return c, err
		}
		releaseContext(cancel)
		c.Ended = childContexts(ctx)
		return c, nil
	}, workflow.RegisterOptions{Name: "contexts"})
	env.ExecuteWorkflow("contexts")
	require.NoError(t, env.GetWorkflowError())
	var c counts
	require.NoError(t, env.GetWorkflowResult(&c))
	require.GreaterOrEqual(t, c.Before, 0, "the SDK keeps its contexts' children elsewhere now: see whether finished ones are still kept")
	require.Equal(t, counts{Before: c.Before, Armed: c.Before + 1, Fired: c.Before, Running: c.Before + 1, Ended: c.Before}, c)
}
