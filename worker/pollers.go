package main

import "go.temporal.io/sdk/worker"

// The two ways --workflow-poller-scaling shares workflow pollers.
const (
	pollerAutoscaling = "autoscaling"
	pollerFixed       = "fixed"
)

// setWorkflowPollers sets how this process polls for workflow tasks.
//
// A worker polls two queues for workflow tasks: the shared one (the first
// task of every new workflow, tasks whose sticky queue timed out, queries of
// workflows not in any cache) and its own sticky one (the next tasks of the
// workflows it has cached). The SDK's fixed pollers (MaxConcurrentWorkflow
// TaskPollers) are "mixed": each picks its queue for each poll, and while
// the sticky queue reports a backlog every poll goes to the sticky queue
// (sdk-go internal_task_pollers.go, getNextPollRequest). Thousands of
// running workflows whose actions keep completing keep that backlog above
// zero, so the shared queue is never polled: new workflows never start and
// queries time out (issue 25: 4,000 workers, backlog 826, dispatch rate 0).
//
// Autoscaling pollers are two sets, one per queue, under one balancer that
// always lets a first poll of each queue through (the SDK's
// workflowAutoscalingBalancer.canPollKind): the shared queue is never left
// without a poll, whatever the sticky backlog. Each set starts at
// min(5, max) polls and moves between 1 and max as the server's poll
// responses suggest (servers that send scaling decisions) or stays put.
func setWorkflowPollers(opts *worker.Options, scaling string, max int) {
	if scaling == pollerFixed {
		opts.MaxConcurrentWorkflowTaskPollers = max
		return
	}
	opts.WorkflowTaskPollerBehavior = scalingPolls(5, max)
}

// setActionPollers sets how many polls for actions this process holds
// open on each of its activity queues (the shared pool's, its host's, the
// control queue's).
//
// The SDK's default is 2 fixed polls. A poll hands out one task and is then
// sent again; on a loaded server a round trip takes tens of milliseconds,
// so two polls start a few dozen actions a second however many slots are
// free: during a rolling update of 1,000 stub workers (10 groups of 100,
// maxParallel 5 each) on the dev server, the pool's slots in use stayed at
// 1 to 3 of 10 while each restart waited 660 ms (median) between scheduled
// and started; with 8 polls, 81 ms. Polls never exceed the free slots (the
// SDK reserves a slot before each poll).
//
// But a host cut off from the server (no reset) keeps its polls registered
// there until they expire, and each one swallows a task of the shared pool
// until then: with 8 fixed polls, integration/netns_test.go's rollout over
// the pool saw restarts run out of attempts. Autoscaling polls (the
// default) start at 2, rise to max while the queue has a backlog, and fall
// by one for each poll that waited or came back empty (the server's
// suggestions and its autoscaling capability; 1.29 sends both): a busy
// host holds up to max, an idle one 1 per queue within about a minute (the
// server's long poll). A/B on the bench's update of 1,000 (-only update):
// fixed 2, 25.5 s; autoscaling up to 8, 17.0 and 16.4 s.
func setActionPollers(opts *worker.Options, scaling string, max int) {
	if scaling == pollerFixed {
		opts.MaxConcurrentActivityTaskPollers = max
		return
	}
	opts.ActivityTaskPollerBehavior = scalingPolls(2, max)
}

// scalingPolls is the SDK's autoscaling poller behaviour from
// min(initial, max) polls, between 1 and max.
func scalingPolls(initial, max int) worker.PollerBehavior {
	return worker.NewPollerBehaviorAutoscaling(worker.PollerBehaviorAutoscalingOptions{
		InitialNumberOfPollers: min(initial, max),
		MinimumNumberOfPollers: 1,
		MaximumNumberOfPollers: max,
	})
}
