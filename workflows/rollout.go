package workflows

import (
	"fmt"
	"time"

	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"
)

// Rollouts: one operation (restart, stop or start) over every leaf worker of
// a subtree, a chunk at a time.
//
// RolloutWorkflow takes the targets in spec order (the starter lists them
// from the subtree's status) and handles them in chunks of Chunk: it sends
// each target of a chunk a `rollout` signal, and the target's own worker
// workflow carries the operation out and reports back, by a `rolloutResult`
// signal, when it has reached the wanted state (succeeded), when its action
// failed or it ended again (failed), or when its action timeouts passed
// without either (timeout). The next chunk starts when every target of the
// chunk has reported, so never more than Chunk targets are in flight.
//
// With FailFast, no chunk starts after a failure: the targets left are
// skipped. A `cancel` signal (starter rollout cancel, or Ctrl-C of a waiting
// starter) stops issuing chunks: the targets in flight finish, the rest are
// cancelled. The rollout's state is its workflow's: it survives a worker
// process restart and continues as new between chunks on long fleets. Its
// result, and its `status` query at any time, is a RolloutStatus.

// Rollout operations.
const (
	RolloutRestart = "restart"
	RolloutStop    = "stop"
	RolloutStart   = "start"
)

// Per-target statuses.
const (
	TargetPending   = "pending"   // not reached yet
	TargetQueued    = "queued"    // the request is on its way to the target
	TargetRunning   = "running"   // the target has it and is acting
	TargetSucceeded = "succeeded" // it reached the wanted state
	TargetFailed    = "failed"    // its action failed, or it ended again
	TargetTimeout   = "timeout"   // it did not get there within its action timeouts
	TargetCancelled = "cancelled" // the rollout was cancelled before it
	TargetSkipped   = "skipped"   // fail-fast: a failure came before it
)

// Rollout signals and the default chunk.
const (
	// SignalRollout (to a worker): a RolloutRequest.
	SignalRollout = "rollout"
	// SignalRolloutResult (to a rollout): a RolloutResult.
	SignalRolloutResult = "rolloutResult"
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
	// ChunkTimeout bounds the wait for one chunk (default 1h): a target that
	// has not reported by then (its workflow is gone) counts as timeout.
	ChunkTimeout time.Duration `json:"chunkTimeout,omitempty"`
	HistoryLimit int           `json:"historyLimit,omitempty"`
	Carry        *RolloutCarry `json:"carry,omitempty"`
}

// RolloutCarry is what a rollout carries across continue-as-new (it
// continues only between chunks, when nothing is in flight).
type RolloutCarry struct {
	Targets         []RolloutTarget `json:"targets"`
	Next            int             `json:"next"`
	CancelRequested bool            `json:"cancelRequested,omitempty"`
	StartedAt       time.Time       `json:"startedAt"`
}

// RolloutTarget is one target's progress.
type RolloutTarget struct {
	Path     string    `json:"path"`
	Status   string    `json:"status"`
	Error    string    `json:"error,omitempty"`
	Started  time.Time `json:"started,omitzero"`
	Finished time.Time `json:"finished,omitzero"`
}

// RolloutRequest is the payload of the rollout signal to a worker.
type RolloutRequest struct {
	Rollout string `json:"rollout"` // the rollout's workflow ID, to report to
	Seq     int    `json:"seq"`     // the target's index in the rollout
	Op      string `json:"op"`
}

// RolloutResult is the payload of the rolloutResult signal.
type RolloutResult struct {
	Seq    int    `json:"seq"`
	Path   string `json:"path"`
	Status string `json:"status"` // succeeded, failed or timeout
	Error  string `json:"error,omitempty"`
}

// RolloutStatus is the rollout's query answer and result.
type RolloutStatus struct {
	ID       string `json:"id"`
	Path     string `json:"path"`
	Op       string `json:"op"`
	Chunk    int    `json:"chunk"`
	FailFast bool   `json:"failFast"`
	// State: running, completed or cancelled.
	State string `json:"state"`
	// Total, Succeeded, Failed (failed and timeout) and Skipped summarize;
	// Counts has every per-target status.
	Total     int             `json:"total"`
	Succeeded int             `json:"succeeded"`
	Failed    int             `json:"failed"`
	Skipped   int             `json:"skipped"`
	Counts    map[string]int  `json:"counts"`
	Targets   []RolloutTarget `json:"targets"`
	StartedAt time.Time       `json:"startedAt"`
	EndedAt   time.Time       `json:"endedAt,omitzero"`
}

// RolloutWorkflow runs a rollout (see the package comment above).
func RolloutWorkflow(ctx workflow.Context, in RolloutInput) (RolloutStatus, error) {
	if in.Op != RolloutRestart && in.Op != RolloutStop && in.Op != RolloutStart {
		return RolloutStatus{}, temporal.NewNonRetryableApplicationError(fmt.Sprintf("unknown rollout op %q (restart, stop or start)", in.Op), "InvalidRollout", nil)
	}
	if in.Chunk <= 0 {
		in.Chunk = DefaultRolloutChunk
	}
	if in.ChunkTimeout <= 0 {
		in.ChunkTimeout = time.Hour
	}
	r := &rolloutRun{ctx: ctx, in: in, id: workflow.GetInfo(ctx).WorkflowExecution.ID}
	if in.Carry != nil {
		r.carry = *in.Carry
	} else {
		r.carry.StartedAt = workflow.Now(ctx)
		for _, p := range in.Targets {
			r.carry.Targets = append(r.carry.Targets, RolloutTarget{Path: p, Status: TargetPending})
		}
	}
	if err := workflow.SetQueryHandler(ctx, QueryStatus, func() (RolloutStatus, error) { return r.status(), nil }); err != nil {
		return RolloutStatus{}, err
	}
	_ = workflow.UpsertTypedSearchAttributes(ctx, SearchPath.ValueSet(in.Path), SearchKind.ValueSet("rollout"), SearchState.ValueSet("running"))
	return r.run()
}

type rolloutRun struct {
	ctx   workflow.Context
	in    RolloutInput
	id    string
	carry RolloutCarry
	ended time.Time
}

func (r *rolloutRun) run() (RolloutStatus, error) {
	ctx := r.ctx
	resultCh := workflow.GetSignalChannel(ctx, SignalRolloutResult)
	cancelCh := workflow.GetSignalChannel(ctx, SignalCancel)
	for r.carry.Next < len(r.carry.Targets) {
		r.drainCancel(cancelCh)
		if r.carry.CancelRequested || ctx.Err() != nil || (r.in.FailFast && r.failures() > 0) {
			break
		}
		if r.carry.Next > 0 && r.shouldContinueAsNew() {
			next := r.in
			carry := r.carry
			next.Carry = &carry
			return RolloutStatus{}, workflow.NewContinueAsNewError(ctx, RolloutWorkflow, next)
		}
		r.runChunk(resultCh, cancelCh)
	}
	// What was not reached: skipped after a failure, or cancelled.
	left := TargetSkipped
	if r.carry.CancelRequested || ctx.Err() != nil {
		left = TargetCancelled
	}
	now := workflow.Now(ctx)
	for i := r.carry.Next; i < len(r.carry.Targets); i++ {
		r.carry.Targets[i].Status = left
		r.carry.Targets[i].Finished = now
		count(ctx, MetricRolloutTargets, map[string]string{"op": r.in.Op, "status": left})
	}
	r.carry.Next = len(r.carry.Targets)
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

// runChunk sends the next chunk its requests and waits until every target
// of it has reported (or the chunk timed out). A cancel meanwhile is
// recorded; the targets in flight finish.
func (r *rolloutRun) runChunk(resultCh, cancelCh workflow.ReceiveChannel) {
	ctx, _ := workflow.NewDisconnectedContext(r.ctx) // in-flight targets finish even if cancelled
	from := r.carry.Next
	to := min(from+r.in.Chunk, len(r.carry.Targets))
	r.carry.Next = to
	now := workflow.Now(ctx)
	for i := from; i < to; i++ {
		t := &r.carry.Targets[i]
		t.Status, t.Started = TargetQueued, now
		f := workflow.SignalExternalWorkflow(ctx, t.Path, "", SignalRollout, RolloutRequest{Rollout: r.id, Seq: i, Op: r.in.Op})
		i := i
		workflow.Go(ctx, func(gctx workflow.Context) {
			err := f.Get(gctx, nil)
			t := &r.carry.Targets[i]
			if t.Status != TargetQueued {
				return // it reported already
			}
			if err != nil {
				t.Status, t.Error, t.Finished = TargetFailed, "no running worker workflow: "+err.Error(), workflow.Now(gctx)
				return
			}
			t.Status = TargetRunning
		})
	}
	tctx, cancelTimer := workflow.WithCancel(ctx)
	timer := workflow.NewTimer(tctx, r.in.ChunkTimeout)
	timedOut := false
	for !r.chunkDone(from, to) && !timedOut {
		sel := workflow.NewSelector(ctx)
		sel.AddReceive(resultCh, func(c workflow.ReceiveChannel, _ bool) {
			var raw converter.RawValue
			c.Receive(ctx, &raw)
			var res RolloutResult
			if decodeRaw(raw, &res) == nil {
				r.record(res, from, to)
			}
		})
		sel.AddReceive(cancelCh, func(c workflow.ReceiveChannel, _ bool) {
			c.Receive(ctx, nil)
			r.carry.CancelRequested = true
		})
		sel.AddFuture(timer, func(workflow.Future) { timedOut = true })
		if r.ctx.Err() == nil {
			sel.AddReceive(r.ctx.Done(), func(workflow.ReceiveChannel, bool) { r.carry.CancelRequested = true })
		}
		sel.Select(ctx)
	}
	cancelTimer()
	now = workflow.Now(ctx)
	for i := from; i < to; i++ {
		if t := &r.carry.Targets[i]; !finished(t.Status) {
			t.Status, t.Error, t.Finished = TargetTimeout, fmt.Sprintf("no report within %s", r.in.ChunkTimeout), now
		}
	}
}

// record applies a target's report (only for a target of this chunk, once).
func (r *rolloutRun) record(res RolloutResult, from, to int) {
	if res.Seq < from || res.Seq >= to {
		return
	}
	t := &r.carry.Targets[res.Seq]
	if t.Path != res.Path || finished(t.Status) {
		return
	}
	switch res.Status {
	case TargetSucceeded, TargetFailed, TargetTimeout:
		t.Status, t.Error, t.Finished = res.Status, res.Error, workflow.Now(r.ctx)
		count(r.ctx, MetricRolloutTargets, map[string]string{"op": r.in.Op, "status": res.Status})
	}
}

func finished(status string) bool {
	switch status {
	case TargetSucceeded, TargetFailed, TargetTimeout, TargetCancelled, TargetSkipped:
		return true
	}
	return false
}

func (r *rolloutRun) chunkDone(from, to int) bool {
	for i := from; i < to; i++ {
		if !finished(r.carry.Targets[i].Status) {
			return false
		}
	}
	return true
}

func (r *rolloutRun) failures() int {
	n := 0
	for _, t := range r.carry.Targets {
		if t.Status == TargetFailed || t.Status == TargetTimeout {
			n++
		}
	}
	return n
}

func (r *rolloutRun) shouldContinueAsNew() bool {
	return continueAsNewDue(r.ctx, r.in.HistoryLimit)
}

func (r *rolloutRun) status() RolloutStatus {
	st := RolloutStatus{
		ID: r.id, Path: r.in.Path, Op: r.in.Op, Chunk: r.in.Chunk, FailFast: r.in.FailFast,
		State: "running", Total: len(r.carry.Targets), Targets: append([]RolloutTarget(nil), r.carry.Targets...),
		StartedAt: r.carry.StartedAt, EndedAt: r.ended,
		Counts: map[string]int{},
	}
	for _, s := range []string{TargetPending, TargetQueued, TargetRunning, TargetSucceeded, TargetFailed, TargetTimeout, TargetCancelled, TargetSkipped} {
		st.Counts[s] = 0
	}
	for _, t := range r.carry.Targets {
		st.Counts[t.Status]++
	}
	st.Succeeded = st.Counts[TargetSucceeded]
	st.Failed = st.Counts[TargetFailed] + st.Counts[TargetTimeout]
	st.Skipped = st.Counts[TargetSkipped]
	if !r.ended.IsZero() {
		st.State = "completed"
		if r.carry.CancelRequested || r.ctx.Err() != nil {
			st.State = "cancelled"
		}
	}
	return st
}
