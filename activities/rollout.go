package activities

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
)

// Rollout chunks: a rollout hands each chunk of its targets to one
// activity, which asks every target's worker workflow by Update to carry
// out the operation and waits for each answer (the worker answers when its
// service got there, or failed, or its budget passed). One activity per
// chunk and one Update per target cost far fewer history events than a
// signal to each target and a signal back.

// Names of the rollout update and activity.
const (
	// UpdateRollout is the Update a worker workflow answers with a
	// RolloutOutcome: payload RolloutOp.
	UpdateRollout    = "rollout"
	RolloutChunkName = Prefix + "RolloutChunk"
)

// RolloutOp is the payload of the rollout update: restart, stop or start.
type RolloutOp struct {
	Op string `json:"op"`
}

// RolloutOutcome is a worker's answer to the rollout update.
type RolloutOutcome struct {
	Status string `json:"status"` // succeeded, failed or timeout
	Error  string `json:"error,omitempty"`
}

// RolloutChunkRequest is one chunk of a rollout.
type RolloutChunkRequest struct {
	// UpdateID prefixes each target's update ID (with its seq), so that a
	// retried chunk finds the updates it already sent.
	UpdateID string        `json:"updateId"`
	Op       string        `json:"op"`
	Targets  []ChunkTarget `json:"targets"`
}

// ChunkTarget is one target of a chunk: its index in the rollout and path.
type ChunkTarget struct {
	Seq  int    `json:"seq"`
	Path string `json:"path"`
}

// ChunkResult is one target's outcome.
type ChunkResult struct {
	Seq  int    `json:"seq"`
	Path string `json:"path"`
	RolloutOutcome
}

// Outcomes of a target that did not answer.
const (
	outcomeFailed = "failed"
)

// RolloutChunk sends every target of the chunk the rollout update, all at
// once, and returns their outcomes in the chunk's order. It heartbeats the
// number of answers; a target whose workflow is not running fails.
func (c *Control) RolloutChunk(ctx context.Context, req RolloutChunkRequest) ([]ChunkResult, error) {
	out := make([]ChunkResult, len(req.Targets))
	var done atomic.Int32
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				activity.RecordHeartbeat(ctx, done.Load())
			}
		}
	}()
	var wg sync.WaitGroup
	for i, t := range req.Targets {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer done.Add(1)
			out[i] = ChunkResult{Seq: t.Seq, Path: t.Path, RolloutOutcome: c.ask(ctx, fmt.Sprintf("%s/%d", req.UpdateID, t.Seq), t.Path, req.Op)}
		}()
	}
	wg.Wait()
	if ctx.Err() != nil {
		return nil, ctx.Err() // cancelled or timed out: Temporal reports it
	}
	return out, nil
}

// ask sends one target the rollout update and waits for its answer. A
// workflow that closed (continued as new) while the update ran is asked
// again under the same update ID: its next run answers. A workflow whose
// task is being retried (its worker died with it, or the sticky queue of a
// worker cut off from the server timed out: the server refuses updates as
// "Workflow Task in failed state" until another worker completes it) is
// asked again until the chunk's time runs out.
func (c *Control) ask(ctx context.Context, updateID, path, op string) RolloutOutcome {
	notReady := 0
	for attempt := 0; ; attempt++ {
		h, err := c.Client.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{
			UpdateID: updateID, WorkflowID: path, UpdateName: UpdateRollout,
			Args: []any{RolloutOp{Op: op}}, WaitForStage: client.WorkflowUpdateStageCompleted,
		})
		var res RolloutOutcome
		if err == nil {
			err = h.Get(ctx, &res)
		}
		var nf *serviceerror.NotFound
		switch {
		case err == nil:
			return res
		case ctx.Err() != nil:
			return RolloutOutcome{Status: outcomeFailed, Error: ctx.Err().Error()}
		case errors.As(err, new(*serviceerror.WorkflowNotReady)):
			notReady++
			attempt-- // not one of the attempts after a continue-as-new
			select {
			case <-ctx.Done():
			case <-time.After(time.Duration(min(notReady, 10)) * time.Second):
			}
		case attempt < 3:
			// A run that closed under the update (continue-as-new) is
			// followed by the next: ask it.
			time.Sleep(time.Duration(attempt+1) * 200 * time.Millisecond)
		case errors.As(err, &nf):
			return RolloutOutcome{Status: outcomeFailed, Error: "no running worker workflow: " + err.Error()}
		default:
			return RolloutOutcome{Status: outcomeFailed, Error: err.Error()}
		}
	}
}
