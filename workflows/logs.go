package workflows

import (
	"errors"
	"fmt"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/steward-sh/steward/activities"
	"github.com/steward-sh/steward/internal/treestatus"
)

// LogsWorkflowIDPrefix starts the ID of every LogsWorkflow.
const LogsWorkflowIDPrefix = "steward-logs-"

// LogsRequest asks the worker of Host for a read of a process service's log.
type LogsRequest struct {
	Host string                    `json:"host"`
	Read activities.ReadLogRequest `json:"read"`
}

// LogHostWait is how long a log read waits for a worker of its host.
const LogHostWait = 10 * time.Second

// LogsWorkflow reads a process service's log through its host's worker, for
// `starter logs`: one read per run (a follow is a run per read). A
// service's output never enters the histories of the workflows that
// supervise it; it passes through this short run, which the starter
// deletes once it has the answer (and the codec encrypts, when one is
// configured).
func LogsWorkflow(ctx workflow.Context, req LogsRequest) (activities.ReadLogResult, error) {
	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		TaskQueue:              HostTaskQueue(req.Host),
		ScheduleToStartTimeout: LogHostWait,
		StartToCloseTimeout:    req.Read.Wait + 10*time.Second,
		RetryPolicy:            &temporal.RetryPolicy{MaximumAttempts: 1},
		Summary:                "read the log of " + req.Read.WorkflowID,
	})
	var res activities.ReadLogResult
	err := workflow.ExecuteActivity(actx, activities.ReadLogName, req.Read).Get(ctx, &res)
	var to *temporal.TimeoutError
	if errors.As(err, &to) && to.TimeoutType() == enumspb.TIMEOUT_TYPE_SCHEDULE_TO_START {
		return res, temporal.NewNonRetryableApplicationError(
			fmt.Sprintf("no worker of host %s took the read within %s: is `worker --host %s` running?", req.Host, LogHostWait, req.Host), "HostUnreachable", nil)
	}
	return res, err
}

// UsageRequest asks the worker of Host for the usage of its process
// services (ReadUsageRequest).
type UsageRequest struct {
	Host string                      `json:"host"`
	Read activities.ReadUsageRequest `json:"read"`
}

// UsageWorkflow reads what a host's process services use, for `starter
// status` and `starter top`: one read per run, through the host's worker,
// as LogsWorkflow reads a log. Samples never enter the histories of the
// workflows that supervise the services.
func UsageWorkflow(ctx workflow.Context, req UsageRequest) (map[string]treestatus.Usage, error) {
	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		TaskQueue:              HostTaskQueue(req.Host),
		ScheduleToStartTimeout: UsageHostWait,
		StartToCloseTimeout:    10 * time.Second,
		RetryPolicy:            &temporal.RetryPolicy{MaximumAttempts: 1},
		Summary:                "read the usage of the services of " + req.Host,
	})
	var res map[string]treestatus.Usage
	err := workflow.ExecuteActivity(actx, activities.ReadUsageName, req.Read).Get(ctx, &res)
	var to *temporal.TimeoutError
	if errors.As(err, &to) && to.TimeoutType() == enumspb.TIMEOUT_TYPE_SCHEDULE_TO_START {
		return res, temporal.NewNonRetryableApplicationError(
			fmt.Sprintf("no worker of host %s took the read within %s: is `worker --host %s` running?", req.Host, UsageHostWait, req.Host), "HostUnreachable", nil)
	}
	return res, err
}

// UsageHostWait is how long a usage read waits for a worker of its host:
// shorter than a log read's, since a status waits for it.
const UsageHostWait = 3 * time.Second
