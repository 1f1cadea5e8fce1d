package activities

import (
	"context"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/steward-sh/steward/internal/hostcore"
)

// Activity names of a host's liveness (Host), served on the host's own
// task queue only: whoever takes them is that host's worker.
const (
	HostHelloName = Prefix + "HostHello"
	HostLeaseName = Prefix + "HostLease"
)

// HostInfo is what a host's worker says of itself (internal/hostcore).
type HostInfo = hostcore.Info

// Host answers its host workflow (workflows.HostWorkflow): HostHello says
// the host is up and who runs it, HostLease holds the host's lease by
// heartbeating until it is cancelled or its worker goes away. A lease costs
// the server one heartbeat RPC every few seconds and no history event; its
// heartbeat timeout is how the host workflow learns that the host is lost.
type Host struct {
	Info HostInfo
	// Beat is how often the lease heartbeats (the SDK sends at most one per
	// 80% of the heartbeat timeout).
	Beat time.Duration
}

// HostHello returns the host's record.
func (h *Host) HostHello(ctx context.Context) (HostInfo, error) { return h.Info, nil }

// HostLease heartbeats until ctx ends (cancelled by the host workflow, or
// the worker stops).
func (h *Host) HostLease(ctx context.Context) error {
	beat := h.Beat
	if beat <= 0 {
		beat = time.Second
	}
	t := time.NewTicker(beat)
	defer t.Stop()
	// A worker that stops ends its lease at once: the SDK would wait its
	// WorkerStopTimeout for it (and the host is unknown from then anyway).
	stopping := activity.GetWorkerStopChannel(ctx)
	for {
		// The beat carries the host's clock: the host workflow dates the
		// loss from the last beat the server had, not from the task that
		// learnt of it (which may wait on a dead worker's sticky queue).
		activity.RecordHeartbeat(ctx, time.Now().UTC())
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-stopping:
			return temporal.NewApplicationError("the host's worker stops", "WorkerStopping")
		case <-t.C:
		}
	}
}

// HostWorkflowType is the workflow type of a host's workflow
// (workflows.HostWorkflow), named here so that activities can start it.
const HostWorkflowType = "HostWorkflow"

// HostSubscribeName: a supervisor's subscription to a host (Control).
const HostSubscribeName = Prefix + "HostSubscribe"

// HostSubscription is a supervisor's workers on a host
// (internal/hostcore).
type HostSubscription = hostcore.Subscription

// HostSubscribeRequest subscribes to Host's workflow, starting it if it
// does not run (a host whose worker never started: it is unknown).
type HostSubscribeRequest struct {
	Host         string           `json:"host"`
	WorkflowID   string           `json:"workflowId"`
	TaskQueue    string           `json:"taskQueue"`
	Subscription HostSubscription `json:"subscription"`
	// Build is the starting worker's build, for the new workflow's
	// StewardBuild search attribute; Version the version of its code
	// (workflows.HostVersion; 0 from an older supervisor).
	Build   string `json:"build"`
	Version int    `json:"version,omitempty"`
}

// HostSubscribe signals the host's workflow, starting it if needs be.
func (c *Control) HostSubscribe(ctx context.Context, req HostSubscribeRequest) error {
	_, err := c.Client.SignalWithStartWorkflow(ctx, req.WorkflowID, "subscribe", req.Subscription,
		HostStartOptions(req.WorkflowID, req.TaskQueue, req.Host, req.Build), HostWorkflowType, HostStart{Name: req.Host, Version: req.Version})
	return err
}

// HostStart is the input of a new host workflow (workflows.HostInput
// without a carry).
type HostStart struct {
	Name    string `json:"name"`
	Version int    `json:"version,omitempty"`
}

// HostStartOptions are the options a host's workflow starts with.
func HostStartOptions(id, queue, host, build string) client.StartWorkflowOptions {
	return client.StartWorkflowOptions{
		ID: id, TaskQueue: queue,
		WorkflowIDConflictPolicy: enumspb.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING,
		StaticSummary:            "steward: host " + host,
		TypedSearchAttributes: temporal.NewSearchAttributes(
			temporal.NewSearchAttributeKeyKeyword("StewardPath").ValueSet(host),
			temporal.NewSearchAttributeKeyKeyword("StewardKind").ValueSet("host"),
			temporal.NewSearchAttributeKeyKeyword("StewardBuild").ValueSet(build)),
	}
}
