package main

import (
	"context"
	"fmt"
	"time"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/workflow"
)

// The raw baseline of a start in steward's tree shape: a root workflow
// starts its groups as child workflows all at once, each group its leaves,
// each leaf runs one activity (its start) and tells its parent, then waits.
// It is the floor a tree of child workflows can reach on this server:
// steward's apply over it is apply_ratio_children.

// RawTreeInput shapes a raw tree: Groups groups of Per leaves.
type RawTreeInput struct {
	Groups, Per int
}

// rawStarted is the signal a raw leaf (or group) sends its parent once its
// start (or all its leaves') is done.
const rawStarted = "started"

// RawTree starts in.Groups RawGroup children at once and returns once every
// group has said all its leaves started; closing terminates the groups and
// with them the leaves (the default parent-close policy).
func RawTree(ctx workflow.Context, in RawTreeInput) error {
	for g := range in.Groups {
		cctx := workflow.WithChildOptions(ctx, workflow.ChildWorkflowOptions{WorkflowID: fmt.Sprintf("%s/g%02d", workflow.GetInfo(ctx).WorkflowExecution.ID, g)})
		workflow.ExecuteChildWorkflow(cctx, RawGroup, in.Per)
	}
	return waitStarted(ctx, in.Groups)
}

// RawGroup starts per RawLeaf children at once, tells its parent once every
// leaf started, then waits.
func RawGroup(ctx workflow.Context, per int) error {
	id := workflow.GetInfo(ctx).WorkflowExecution.ID
	for i := range per {
		cctx := workflow.WithChildOptions(ctx, workflow.ChildWorkflowOptions{WorkflowID: fmt.Sprintf("%s/w%03d", id, i)})
		workflow.ExecuteChildWorkflow(cctx, RawLeaf)
	}
	if err := waitStarted(ctx, per); err != nil {
		return err
	}
	if err := tellParent(ctx); err != nil {
		return err
	}
	return workflow.Await(ctx, func() bool { return false })
}

// RawLeaf runs one activity (its start), tells its parent, then waits.
func RawLeaf(ctx workflow.Context) error {
	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: time.Minute, DisableEagerExecution: !rawEager})
	if err := workflow.ExecuteActivity(actx, "noop", 0).Get(ctx, nil); err != nil {
		return err
	}
	if err := tellParent(ctx); err != nil {
		return err
	}
	return workflow.Await(ctx, func() bool { return false })
}

func tellParent(ctx workflow.Context) error {
	parent := workflow.GetInfo(ctx).ParentWorkflowExecution
	return workflow.SignalExternalWorkflow(ctx, parent.ID, "", rawStarted, nil).Get(ctx, nil)
}

func waitStarted(ctx workflow.Context, n int) error {
	ch := workflow.GetSignalChannel(ctx, rawStarted)
	for range n {
		ch.Receive(ctx, nil)
	}
	return nil
}

// rawTreeStart runs a raw tree of n leaves in groups of per until every
// leaf started, and returns how long it took.
func rawTreeStart(ctx context.Context, c client.Client, id string, n, per int) (time.Duration, error) {
	began := time.Now()
	run, err := rawStart(ctx, c, id, RawTree, RawTreeInput{Groups: (n + per - 1) / per, Per: per})
	if err != nil {
		return 0, err
	}
	if err := run.Get(ctx, nil); err != nil {
		return 0, fmt.Errorf("raw tree %s: %w", id, err)
	}
	return time.Since(began), nil
}
