package temporalclient

import (
	"context"
	"time"

	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	workflowpb "go.temporal.io/api/workflow/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"

	"github.com/steward-sh/steward/internal/treestatus"
)

// JobRunOf is a job's run as visibility lists it (e): its record from its
// memo under memoKey (a run of the jobs' first code), else, once it
// closed, from its close event (its result, or its failure's or
// cancellation's details: the runs of versions.JobRunsAwait keep no
// memo), else what visibility says (running, and since when). dc decodes
// payloads as the workers wrote them (decrypted when they encrypt).
func JobRunOf(ctx context.Context, c client.Client, dc converter.DataConverter, e *workflowpb.WorkflowExecutionInfo, memoKey string) treestatus.JobRun {
	var run treestatus.JobRun
	if p := e.GetMemo().GetFields()[memoKey]; p != nil {
		_ = dc.FromPayload(p, &run)
	} else if e.GetStatus() != enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING {
		run = closedRun(ctx, c, dc, e.GetExecution())
	}
	run.ID = e.GetExecution().GetWorkflowId()
	if run.StartedAt.IsZero() {
		run.StartedAt = e.GetStartTime().AsTime().UTC()
	}
	if run.EndedAt.IsZero() && e.GetCloseTime() != nil {
		run.EndedAt = e.GetCloseTime().AsTime().UTC()
	}
	if run.Outcome == "" || e.GetStatus() != enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING && run.Outcome == treestatus.RunRunning {
		run.Outcome = outcomeOf(e.GetStatus())
	}
	return run
}

// closedRun is a closed run's record as its close event holds it (zero
// when it holds none: a run terminated, or timed out by the server).
func closedRun(ctx context.Context, c client.Client, dc converter.DataConverter, ex *commonpb.WorkflowExecution) treestatus.JobRun {
	var run treestatus.JobRun
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	it := c.GetWorkflowHistory(ctx, ex.GetWorkflowId(), ex.GetRunId(), false, enumspb.HISTORY_EVENT_FILTER_TYPE_CLOSE_EVENT)
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			return run
		}
		var p *commonpb.Payloads
		switch a := ev.GetAttributes().(type) {
		case *historypb.HistoryEvent_WorkflowExecutionCompletedEventAttributes:
			p = a.WorkflowExecutionCompletedEventAttributes.GetResult()
		case *historypb.HistoryEvent_WorkflowExecutionFailedEventAttributes:
			p = a.WorkflowExecutionFailedEventAttributes.GetFailure().GetApplicationFailureInfo().GetDetails()
		case *historypb.HistoryEvent_WorkflowExecutionCanceledEventAttributes:
			p = a.WorkflowExecutionCanceledEventAttributes.GetDetails()
		}
		if p != nil {
			_ = dc.FromPayloads(p, &run)
		}
	}
	return run
}

// outcomeOf is the outcome a run's workflow status says.
func outcomeOf(s enumspb.WorkflowExecutionStatus) string {
	switch s {
	case enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING:
		return treestatus.RunRunning
	case enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED:
		return treestatus.RunSucceeded
	case enumspb.WORKFLOW_EXECUTION_STATUS_CANCELED:
		return treestatus.RunCanceled
	case enumspb.WORKFLOW_EXECUTION_STATUS_TIMED_OUT:
		return treestatus.RunTimedOut
	}
	return treestatus.RunFailed
}
