package workflows

import (
	"fmt"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/steward-sh/steward/activities"
	"github.com/steward-sh/steward/internal/rolloutcore"
	"github.com/steward-sh/steward/internal/versions"
)

// Rollouts: one operation (restart, stop or start) over every leaf worker of
// a subtree, a chunk at a time.
//
// RolloutWorkflow takes the targets in spec order (the starter lists them
// from the subtree's status) and handles them in chunks of Chunk: one
// activity per chunk (activities.RolloutChunk, on the control queue) asks
// every target of the chunk by the `rollout` Update, and the target's own
// worker workflow carries the operation out and answers when it has reached
// the wanted state (succeeded), when its action failed, it ended again or
// its host is unreachable (failed), or when its action budget passed
// (timeout). The next chunk starts when every target of the chunk has
// answered, so never more than Chunk targets are in flight. (A signal to
// each target and one back would cost three times the history events per
// target.)
//
// With FailFast, no chunk starts after a failure: the targets left are
// skipped. A `cancel` signal (starter rollout cancel, or Ctrl-C of a waiting
// starter) stops issuing chunks: the targets in flight finish, the rest are
// cancelled. The rollout's state is its workflow's: it survives a worker
// process restart and continues as new between chunks on long fleets. Its
// result, and its `status` query at any time, is a RolloutStatus.

// Rollout operations (internal/rolloutcore).
const (
	RolloutRestart = rolloutcore.OpRestart
	RolloutStop    = rolloutcore.OpStop
	RolloutStart   = rolloutcore.OpStart
	RolloutReload  = rolloutcore.OpReload
)

// Per-target statuses (internal/rolloutcore).
const (
	TargetPending   = rolloutcore.Pending
	TargetRunning   = rolloutcore.Running
	TargetSucceeded = rolloutcore.Succeeded
	TargetFailed    = rolloutcore.Failed
	TargetTimeout   = rolloutcore.Timeout
	TargetCancelled = rolloutcore.Cancelled
	TargetSkipped   = rolloutcore.Skipped
)

// The rollout's signal and the default chunk.
const (
	// SignalCancel (to a rollout): stop issuing chunks.
	SignalCancel = "cancel"

	DefaultRolloutChunk = 10
)

// RolloutID is the workflow ID of the rollout over path: one per path at a
// time (the server refuses a second one).
func RolloutID(path string) string { return "rollout:" + path }

// RolloutInput starts (or continues) a rollout.
type RolloutInput struct {
	Path     string   `json:"path"`
	Op       string   `json:"op"`
	Targets  []string `json:"targets"`
	Chunk    int      `json:"chunk"`
	FailFast bool     `json:"failFast"`
	// ChunkTimeout bounds the wait for one chunk (default 1h): the targets
	// of a chunk that has not answered by then count as timeout.
	ChunkTimeout time.Duration `json:"chunkTimeout,omitempty"`
	HistoryLimit int           `json:"historyLimit,omitempty"`
	Carry        *RolloutCarry `json:"carry,omitempty"`
	// Version is the code version of this run (upgrade.go; 0: begun by
	// code older than the versions).
	Version int `json:"version,omitempty"`
}

// RolloutCarry is what a rollout carries across continue-as-new (it
// continues only between chunks, when nothing is in flight): the core's
// state (internal/rolloutcore decides what each chunk makes of it).
type RolloutCarry = rolloutcore.State

// RolloutTarget is one target's progress.
type RolloutTarget = rolloutcore.Target

// RolloutStatus is the rollout's query answer and result.
type RolloutStatus = rolloutcore.Status

// RolloutWorkflow runs a rollout (see the package comment above).
func RolloutWorkflow(ctx workflow.Context, in RolloutInput) (RolloutStatus, error) {
	if in.Op != RolloutRestart && in.Op != RolloutStop && in.Op != RolloutStart && (in.Op != RolloutReload || !versions.RolloutReload.In(in.Version)) {
		return RolloutStatus{}, temporal.NewNonRetryableApplicationError(fmt.Sprintf("unknown rollout op %q (restart, stop or start)", in.Op), "InvalidRollout", nil)
	}
	checkVersion("RolloutWorkflow", in.Version, RolloutVersion)
	// Bounds no rollout of steward's starter meets, whatever its version
	// says (a rollout started by hand picks its own): refused at once.
	if err := rolloutcore.CheckInput(in.Targets, in.ChunkTimeout, in.Carry); err != nil {
		return RolloutStatus{}, temporal.NewNonRetryableApplicationError("invalid rollout: "+err.Error(), "InvalidRollout", nil)
	}
	if in.Chunk <= 0 {
		in.Chunk = DefaultRolloutChunk
	}
	if versions.RolloutChunkBounded.In(in.Version) {
		in.Chunk = min(in.Chunk, rolloutcore.MaxChunk)
	}
	if in.ChunkTimeout <= 0 {
		in.ChunkTimeout = time.Hour
	}
	r := &rolloutRun{ctx: ctx, in: in, id: workflow.GetInfo(ctx).WorkflowExecution.ID}
	if in.Carry != nil {
		r.carry = *in.Carry
	} else {
		r.carry = rolloutcore.New(in.Targets, workflow.Now(ctx))
	}
	if err := workflow.SetQueryHandler(ctx, QueryStatus, func() (RolloutStatus, error) { return r.status(), nil }); err != nil {
		return RolloutStatus{}, err
	}
	_ = workflow.UpsertTypedSearchAttributes(ctx, stateAttributes(versions.RolloutVersioned.In(in.Version), in.Path, "rollout", "running")...)
	return r.run()
}

type rolloutRun struct {
	ctx   workflow.Context
	in    RolloutInput
	id    string
	carry RolloutCarry
	ended time.Time
	// upgrade: the run was asked to continue as new onto this build's code.
	upgrade upgrade
}

func (r *rolloutRun) run() (RolloutStatus, error) {
	ctx := r.ctx
	cancelCh := workflow.GetSignalChannel(ctx, SignalCancel)
	upgradeCh := workflow.GetSignalChannel(ctx, SignalUpgrade)
	for r.carry.Next < len(r.carry.Targets) {
		r.drainCancel(cancelCh)
		r.upgrade.receive(ctx, upgradeCh) // between chunks: its safe points (nothing waits on it)
		if !r.carry.More(r.in.FailFast, ctx.Err() != nil) {
			break
		}
		if r.carry.Next > 0 && r.shouldContinueAsNew() {
			next := r.in
			carry := r.carry
			next.Carry = &carry
			next.Version = RolloutVersion // the next run is this code's
			return RolloutStatus{}, workflow.NewContinueAsNewError(ctx, RolloutWorkflow, next)
		}
		r.runChunk(cancelCh)
	}
	// What was not reached: skipped after a failure, or cancelled.
	now := workflow.Now(ctx)
	left, n := r.carry.Finish(ctx.Err() != nil, now)
	for range n {
		count(ctx, MetricRolloutTargets, map[string]string{"op": r.in.Op, "status": left})
	}
	r.ended = now
	st := r.status()
	dctx, _ := workflow.NewDisconnectedContext(ctx)
	_ = workflow.UpsertTypedSearchAttributes(dctx, SearchState.ValueSet(st.State))
	return st, nil
}

func (r *rolloutRun) drainCancel(cancelCh workflow.ReceiveChannel) {
	for cancelCh.ReceiveAsync(nil) {
		r.carry.CancelRequested = true
	}
}

// runChunk hands the next chunk to one activity and waits for its answer
// (or the chunk's timeout). A cancel meanwhile is recorded; the targets in
// flight finish.
func (r *rolloutRun) runChunk(cancelCh workflow.ReceiveChannel) {
	ctx, _ := workflow.NewDisconnectedContext(r.ctx) // in-flight targets finish even if cancelled
	from, to := r.carry.TakeChunk(r.in.Chunk, workflow.Now(ctx))
	req := activities.RolloutChunkRequest{UpdateID: r.id + "/" + workflow.GetInfo(ctx).OriginalRunID, Op: r.in.Op}
	for i := from; i < to; i++ {
		req.Targets = append(req.Targets, activities.ChunkTarget{Seq: i, Path: r.carry.Targets[i].Path})
	}
	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		TaskQueue: ControlQueue,
		// ChunkTimeout bounds the chunk, its retries included.
		ScheduleToCloseTimeout: r.in.ChunkTimeout,
		StartToCloseTimeout:    r.in.ChunkTimeout,
		HeartbeatTimeout:       30 * time.Second,
		// A retry finds the updates already sent by their IDs.
		RetryPolicy: &temporal.RetryPolicy{InitialInterval: time.Second, MaximumAttempts: 3},
		Summary:     fmt.Sprintf("%s %d targets under %s", r.in.Op, to-from, r.in.Path),
	})
	fut := workflow.ExecuteActivity(actx, activities.RolloutChunkName, req)
	var results []activities.ChunkResult
	var err error
	done := false
	for !done {
		sel := workflow.NewSelector(ctx)
		sel.AddFuture(fut, func(f workflow.Future) { err = f.Get(ctx, &results); done = true })
		sel.AddReceive(cancelCh, func(c workflow.ReceiveChannel, _ bool) {
			c.Receive(ctx, nil)
			r.carry.CancelRequested = true
		})
		if r.ctx.Err() == nil {
			sel.AddReceive(r.ctx.Done(), func(workflow.ReceiveChannel, bool) { r.carry.CancelRequested = true })
		}
		sel.Select(ctx)
	}
	for _, res := range results {
		a := rolloutcore.Answer{Seq: res.Seq, Path: res.Path, Status: res.Status, Error: res.Error}
		if r.carry.Take(a, from, to, workflow.Now(r.ctx)) {
			count(r.ctx, MetricRolloutTargets, map[string]string{"op": r.in.Op, "status": res.Status})
		}
	}
	end, why := rolloutcore.ChunkAnswered, ""
	switch {
	case temporal.IsTimeoutError(err):
		end = rolloutcore.ChunkTimedOut
	case err != nil:
		end, why = rolloutcore.ChunkFailed, rootMessage(err)
	}
	r.carry.Unanswered(from, to, end, r.in.ChunkTimeout, why, workflow.Now(ctx))
}

func (r *rolloutRun) shouldContinueAsNew() bool {
	return r.upgrade.asked || continueAsNewDue(r.ctx, r.in.HistoryLimit)
}

func (r *rolloutRun) status() RolloutStatus {
	return r.carry.Status(RolloutStatus{ID: r.id, Path: r.in.Path, Op: r.in.Op, Chunk: r.in.Chunk, FailFast: r.in.FailFast},
		r.ended, r.ctx.Err() != nil)
}
