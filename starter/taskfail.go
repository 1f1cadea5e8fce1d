package main

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"

	"github.com/steward-sh/steward/internal/treestatus"
	"github.com/steward-sh/steward/workflows"
)

// taskFailureEvents bounds the events a diagnosis reads, newest first, in
// pages of taskFailurePage: a task that keeps failing has its first
// failure among the last few events (the server writes no event for the
// attempts after it), unless signals kept arriving since.
const (
	taskFailurePage   = 100
	taskFailureEvents = 200
)

// diagnoseTimeout bounds the diagnoses of one status when its bounds set
// no FallbackDeadline.
const diagnoseTimeout = 5 * time.Second

// taskFailure is treestatus.Diagnose on the server: it describes the
// workflow at path, and when its pending workflow task is a retry (attempt
// above 1: the task failed or timed out before) reads the history
// backwards to its last failed (or timed out) workflow task for the cause
// and message. Nil when the task is not failing, or the workflow is gone.
func taskFailure(c client.Client, namespace string) treestatus.Diagnose {
	return func(ctx context.Context, path string) (*treestatus.TaskFailure, error) {
		d, err := c.DescribeWorkflowExecution(ctx, path, "")
		if err != nil {
			return nil, err
		}
		p := d.GetPendingWorkflowTask()
		if p.GetAttempt() <= 1 {
			return nil, nil
		}
		f := &treestatus.TaskFailure{Attempts: int(p.GetAttempt())}
		exec := &commonpb.WorkflowExecution{WorkflowId: path, RunId: d.GetWorkflowExecutionInfo().GetExecution().GetRunId()}
		var token []byte
		for read := 0; read < taskFailureEvents; {
			resp, err := c.WorkflowService().GetWorkflowExecutionHistoryReverse(ctx, &workflowservice.GetWorkflowExecutionHistoryReverseRequest{
				Namespace: namespace, Execution: exec, MaximumPageSize: taskFailurePage, NextPageToken: token})
			if err != nil {
				return f, nil // the attempts say enough: the task keeps failing
			}
			for _, e := range resp.GetHistory().GetEvents() {
				read++
				switch e.GetEventType() {
				case enumspb.EVENT_TYPE_WORKFLOW_TASK_FAILED:
					a := e.GetWorkflowTaskFailedEventAttributes()
					f.Cause = enumName(enumspb.WorkflowTaskFailedCause_name, int32(a.GetCause()), "WORKFLOW_TASK_FAILED_CAUSE_")
					f.Message = a.GetFailure().GetMessage()
					f.Identity = a.GetIdentity()
					f.Since = e.GetEventTime().AsTime()
					return f, nil
				case enumspb.EVENT_TYPE_WORKFLOW_TASK_TIMED_OUT:
					f.Cause = "TIMED_OUT"
					f.Message = fmt.Sprintf("the workflow task timed out (%s): its worker did not complete it in time (it died in it, or hung)",
						strings.ToLower(enumName(enumspb.TimeoutType_name, int32(e.GetWorkflowTaskTimedOutEventAttributes().GetTimeoutType()), "TIMEOUT_TYPE_")))
					f.Since = e.GetEventTime().AsTime()
					return f, nil
				case enumspb.EVENT_TYPE_WORKFLOW_TASK_COMPLETED:
					return f, nil // no failure recorded since the last task that completed
				}
			}
			if token = resp.GetNextPageToken(); len(token) == 0 {
				break
			}
		}
		return f, nil
	}
}

// enumName is a proto enum value's name without prefix, as the server's
// API spells it (WORKFLOW_WORKER_UNHANDLED_FAILURE; the Go types' String
// says WorkflowWorkerUnhandledFailure), or its number when unknown.
func enumName(names map[int32]string, v int32, prefix string) string {
	n, ok := names[v]
	if !ok {
		return strconv.Itoa(int(v))
	}
	return strings.TrimPrefix(n, prefix)
}

// markTaskFailures marks, in sts, the nodes that did not answer and whose
// workflow task keeps failing (treestatus.MarkTaskFailures), by bounds'
// FallbackDeadline (diagnoseTimeout from now when it has none).
func markTaskFailures(ctx context.Context, c client.Client, namespace string, sts []workflows.Status, bounds treestatus.Options) {
	by := bounds.FallbackDeadline
	if by.IsZero() {
		by = time.Now().Add(diagnoseTimeout)
	}
	ctx, cancel := context.WithDeadline(ctx, by)
	defer cancel()
	diagnose := taskFailure(c, namespace)
	for i := range sts {
		if len(sts[i].Unanswered()) == 0 {
			continue
		}
		treestatus.MarkTaskFailures(ctx, &sts[i], diagnose, 0, 0)
	}
}

// warnTaskFailures names on w each node whose workflow task keeps failing,
// with what to do.
func warnTaskFailures(w io.Writer, sts []workflows.Status) {
	for _, st := range sts {
		for _, n := range st.TaskFailingNodes() {
			f := n.TaskFailing
			where := "the log of the worker that ran it"
			if f.Identity != "" {
				where = "the log of worker " + f.Identity
			}
			linef(w, "warning: %s does not answer: its workflow task keeps failing (%s); nothing of it moves until a worker can run it. The stack is in %s and in `temporal workflow show --workflow-id %s`",
				n.Path, f.Summary(), where, n.Path)
		}
	}
}
