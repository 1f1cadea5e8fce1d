package activities

import (
	"context"
	"errors"
	"fmt"
	"github.com/steward-sh/steward/internal/admission"
	"strings"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
)

// ClosedChildrenName is the activity a supervisor runs to learn which of its
// children's workflows closed while it held no future for them (they were
// started by an earlier run, before continue-as-new).
const ClosedChildrenName = Prefix + "ClosedChildren"

// ClosedChildrenRequest names a supervisor's workflow and the paths to check.
type ClosedChildrenRequest struct {
	Parent string   `json:"parent"`
	Paths  []string `json:"paths"`
}

// ClosedChild is a child whose workflow is not running, and how it closed
// ("terminated", "timed out", "completed", ..., "not found").
type ClosedChild struct {
	Path   string `json:"path"`
	Status string `json:"status"`
}

// Control holds the control-plane activities: a supervisor's look at its
// children's workflows, and a rollout's chunks. They talk to Temporal
// through the worker process's client, and run on the control task queue
// (workflows.ControlQueue), never in the action pool: a chunk waits for
// the actions it asked for, and must not hold a slot they need.
type Control struct {
	Client    client.Client
	Namespace string
	// Guard is the host's admission (nil or open: none). A notification
	// is nobody's signed spec (any worker process of the namespace may
	// deliver any node's): on a guarded host it resolves no secret and
	// reaches no URL that the host's policy does not allow (NotifyAllowed).
	Guard *admission.Guard
}

// ClosedChildren lists which of req.Paths have no running workflow. One
// visibility query lists the parent's running children; only the paths it
// does not list (few, unless something went wrong) are described one by
// one, because visibility lags: a path counts as closed only when its
// workflow's own description says so.
func (c *Control) ClosedChildren(ctx context.Context, req ClosedChildrenRequest) ([]ClosedChild, error) {
	running := map[string]bool{}
	var token []byte
	for {
		resp, err := c.Client.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{
			Namespace: c.Namespace, NextPageToken: token, PageSize: 1000,
			Query: fmt.Sprintf("ParentWorkflowId = '%s' AND ExecutionStatus = 'Running'", strings.ReplaceAll(req.Parent, "'", "")),
		})
		if err != nil {
			return nil, fmt.Errorf("list the children of %s: %w", req.Parent, err)
		}
		for _, e := range resp.GetExecutions() {
			running[e.GetExecution().GetWorkflowId()] = true
		}
		if token = resp.GetNextPageToken(); len(token) == 0 {
			break
		}
	}
	var closed []ClosedChild
	for _, p := range req.Paths {
		if running[p] {
			continue
		}
		d, err := c.Client.DescribeWorkflowExecution(ctx, p, "")
		var nf *serviceerror.NotFound
		switch {
		case errors.As(err, &nf):
			closed = append(closed, ClosedChild{Path: p, Status: "not found"})
		case err != nil:
			return nil, fmt.Errorf("describe %s: %w", p, err)
		case d.GetWorkflowExecutionInfo().GetStatus() != enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING:
			closed = append(closed, ClosedChild{Path: p, Status: closeWord(d.GetWorkflowExecutionInfo().GetStatus())})
		}
	}
	return closed, nil
}

// closeWord says how a workflow closed, as a supervisor's reason puts it.
func closeWord(s enumspb.WorkflowExecutionStatus) string {
	switch s {
	case enumspb.WORKFLOW_EXECUTION_STATUS_TERMINATED:
		return "terminated"
	case enumspb.WORKFLOW_EXECUTION_STATUS_TIMED_OUT:
		return "timed out"
	case enumspb.WORKFLOW_EXECUTION_STATUS_CANCELED:
		return "cancelled"
	case enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED:
		return "completed"
	case enumspb.WORKFLOW_EXECUTION_STATUS_CONTINUED_AS_NEW:
		return "continued as new" // a later run is not running either
	}
	return "failed"
}
