package workflows

import (
	"errors"
	"fmt"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/steward-sh/steward/activities"
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
		StartToCloseTimeout:    min(max(req.Read.Wait, 0), activities.MaxFollowWait) + 10*time.Second, // the read waits no longer
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

// ServicesRequest asks the worker of Host what it tells of its process
// services (ReadServicesRequest).
type ServicesRequest struct {
	Host string                         `json:"host"`
	Read activities.ReadServicesRequest `json:"read"`
}

// ServicesWorkflow reads what a host tells of its process services (their
// usage, their notify status), for `starter status` and `starter top`: one
// read per run, through the host's worker, as LogsWorkflow reads a log.
// What it reads never enters the histories of the workflows that
// supervise the services.
func ServicesWorkflow(ctx workflow.Context, req ServicesRequest) (activities.ServicesResult, error) {
	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		TaskQueue:              HostTaskQueue(req.Host),
		ScheduleToStartTimeout: ServicesHostWait,
		StartToCloseTimeout:    10 * time.Second,
		RetryPolicy:            &temporal.RetryPolicy{MaximumAttempts: 1},
		Summary:                "read the services of " + req.Host,
	})
	var res activities.ServicesResult
	err := workflow.ExecuteActivity(actx, activities.ReadServicesName, req.Read).Get(ctx, &res)
	var to *temporal.TimeoutError
	if errors.As(err, &to) && to.TimeoutType() == enumspb.TIMEOUT_TYPE_SCHEDULE_TO_START {
		return res, temporal.NewNonRetryableApplicationError(
			fmt.Sprintf("no worker of host %s took the read within %s: is `worker --host %s` running?", req.Host, ServicesHostWait, req.Host), "HostUnreachable", nil)
	}
	return res, err
}

// ServicesHostWait is how long a services read waits for a worker of its
// host: shorter than a log read's, since a status waits for it.
const ServicesHostWait = 3 * time.Second
