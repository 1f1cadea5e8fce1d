package telemetry

import (
	"context"
	"fmt"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	taskqueuepb "go.temporal.io/api/taskqueue/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
)

// QueueHealth is what the server says of one task queue of one type: its
// backlog (tasks waiting for a poll), how long the oldest has waited, and
// its pollers (the server lists those that polled in the last few minutes).
type QueueHealth struct {
	TaskQueue string
	Type      string // "workflow" or "activity"
	Backlog   int64
	// BacklogAge is how long the oldest task waiting has waited.
	BacklogAge time.Duration
	// AddRate and DispatchRate are tasks per second, as the server counts.
	AddRate, DispatchRate float64
	Pollers               int
	// LastPoll is the newest poll of any poller (zero: none listed).
	LastPoll time.Time
}

// DescribeQueue asks the server for a task queue's health.
func DescribeQueue(ctx context.Context, c client.Client, namespace, queue string, typ enumspb.TaskQueueType) (QueueHealth, error) {
	resp, err := c.WorkflowService().DescribeTaskQueue(ctx, &workflowservice.DescribeTaskQueueRequest{
		Namespace: namespace, TaskQueue: &taskqueuepb.TaskQueue{Name: queue, Kind: enumspb.TASK_QUEUE_KIND_NORMAL},
		TaskQueueType: typ, ReportStats: true,
	})
	if err != nil {
		return QueueHealth{}, fmt.Errorf("describe task queue %s: %w", queue, err)
	}
	h := QueueHealth{TaskQueue: queue, Type: queueType(typ), Pollers: len(resp.GetPollers())}
	st := resp.GetStats()
	h.Backlog = st.GetApproximateBacklogCount()
	h.BacklogAge = st.GetApproximateBacklogAge().AsDuration()
	h.AddRate, h.DispatchRate = float64(st.GetTasksAddRate()), float64(st.GetTasksDispatchRate())
	for _, p := range resp.GetPollers() {
		if t := p.GetLastAccessTime().AsTime(); t.After(h.LastPoll) {
			h.LastPoll = t
		}
	}
	return h, nil
}

func queueType(t enumspb.TaskQueueType) string {
	if t == enumspb.TASK_QUEUE_TYPE_WORKFLOW {
		return "workflow"
	}
	return "activity"
}

// StarvedAfter is the backlog age past which a queue counts as starved:
// a workflow task of a healthy worker waits milliseconds, a burst of new
// workflows seconds (deploy/prometheus/alerts.yml alerts past a minute).
const StarvedAfter = 30 * time.Second

// Warnings are what an operator should hear of a queue's health, one line
// each: no poller, or a backlog whose oldest task has waited past
// StarvedAfter (a starved queue, or too few workers for the load).
func (h QueueHealth) Warnings(now time.Time) []string {
	var out []string
	switch {
	case h.Pollers == 0:
		out = append(out, fmt.Sprintf("no worker polls the %s queue %q: nothing there moves until one does (start bin/worker)", h.Type, h.TaskQueue))
	case now.Sub(h.LastPoll) > 2*time.Minute: // a long poll of an idle worker lasts about a minute
		out = append(out, fmt.Sprintf("no worker has polled the %s queue %q for %s: its workers poll only their sticky queues (starved; docs/operations.md, \"Workflow pollers\") or are gone", h.Type, h.TaskQueue, now.Sub(h.LastPoll).Round(time.Second)))
	}
	if h.Backlog > 0 && h.BacklogAge > StarvedAfter {
		out = append(out, fmt.Sprintf("the %s queue %q has %d tasks waiting, the oldest for %s (dispatched %.1f/s, added %.1f/s): a starved queue or too few workers (docs/operations.md, \"Workflow pollers\")",
			h.Type, h.TaskQueue, h.Backlog, h.BacklogAge.Round(time.Second), h.DispatchRate, h.AddRate))
	}
	return out
}
