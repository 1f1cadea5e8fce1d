package main

// The raw baselines: plain Temporal workflows and activities that do what
// steward does with nothing of steward's, and how they are driven.

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"
)

// Noop is the raw side's activity; it sleeps ms milliseconds (0: none).
func Noop(ctx context.Context, ms int) error {
	rawInFlight.Add(1)
	defer rawInFlight.Add(-1)
	defer rawDone.Add(1)
	if ms > 0 {
		select {
		case <-ctx.Done():
		case <-time.After(time.Duration(ms) * time.Millisecond):
		}
	}
	return nil
}

// RawInput is the input of the raw workflows.
type RawInput struct {
	N     int  // activities (RawLoop) or signals (RawOnSignal)
	Eager bool // request eager dispatch
	Ms    int  // how long each activity takes, in ms (0: a no-op)
}

// RawLoop runs N no-op activities one after the other.
func RawLoop(ctx workflow.Context, in RawInput) error {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: time.Minute, DisableEagerExecution: !in.Eager})
	for range in.N {
		if err := workflow.ExecuteActivity(ctx, "noop", in.Ms).Get(ctx, nil); err != nil {
			return err
		}
	}
	return nil
}

// RawOnSignal runs a no-op activity for each "go" signal, N times; its
// "done" query says how many ran.
func RawOnSignal(ctx workflow.Context, in RawInput) error {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: time.Minute, DisableEagerExecution: !in.Eager})
	done := 0
	if err := workflow.SetQueryHandler(ctx, "done", func() (int, error) { return done, nil }); err != nil {
		return err
	}
	ch := workflow.GetSignalChannel(ctx, "go")
	for range in.N {
		ch.Receive(ctx, nil)
		if err := workflow.ExecuteActivity(ctx, "noop", in.Ms).Get(ctx, nil); err != nil {
			return err
		}
		done++
	}
	return nil
}

// RawOnUpdate runs a no-op activity for each "go" Update, N times: the
// Update's handler runs the activity and returns once it is done, so the
// caller learns the action's end from the Update, as a rollout does from
// a steward worker. Two coroutines while an Update runs (the main one
// waiting, the handler), as in a steward worker: the raw floor of
// steward's protocol, beside RawOnSignal's floor of one action per
// signal.
func RawOnUpdate(ctx workflow.Context, in RawInput) error {
	opts := workflow.ActivityOptions{StartToCloseTimeout: time.Minute, DisableEagerExecution: !in.Eager}
	done := 0
	if err := workflow.SetUpdateHandler(ctx, "go", func(ctx workflow.Context) error {
		if err := workflow.ExecuteActivity(workflow.WithActivityOptions(ctx, opts), "noop", in.Ms).Get(ctx, nil); err != nil {
			return err
		}
		done++
		return nil
	}); err != nil {
		return err
	}
	return workflow.Await(ctx, func() bool { return done >= in.N && workflow.AllHandlersFinished(ctx) })
}

// RawOnSignalReply runs a no-op activity for each "go" signal, N times,
// and answers each by a "done" signal to the workflow that sent it (its
// payload: that workflow's ID): the cheapest protocol by which a
// rollout learns an action's end without Update or polls, beside
// RawOnSignal (no answer) and RawOnUpdate (the answer by Update).
func RawOnSignalReply(ctx workflow.Context, in RawInput) error {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: time.Minute, DisableEagerExecution: !in.Eager})
	ch := workflow.GetSignalChannel(ctx, "go")
	for range in.N {
		var from string
		ch.Receive(ctx, &from)
		if err := workflow.ExecuteActivity(ctx, "noop", in.Ms).Get(ctx, nil); err != nil {
			return err
		}
		if err := workflow.SignalExternalWorkflow(ctx, from, "", "done", workflow.GetInfo(ctx).WorkflowExecution.ID).Get(ctx, nil); err != nil {
			return err
		}
	}
	return nil
}

// RawReplyRollout asks its targets, chunk at a time, by an activity that
// signals each (as steward's chunk activity asks its targets, so that the
// signals sent write no event here), and waits for every target's "done"
// signal before the next chunk: a rollout over RawOnSignalReply entities.
func RawReplyRollout(ctx workflow.Context, targets []string, chunk int) error {
	me := workflow.GetInfo(ctx).WorkflowExecution.ID
	done := workflow.GetSignalChannel(ctx, "done")
	// One attempt: a retry would signal some targets twice.
	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: time.Minute,
		RetryPolicy: &temporal.RetryPolicy{MaximumAttempts: 1}})
	for from := 0; from < len(targets); from += chunk {
		part := targets[from:min(from+chunk, len(targets))]
		if err := workflow.ExecuteActivity(actx, "signalAll", part, me).Get(ctx, nil); err != nil {
			return err
		}
		for range part {
			done.Receive(ctx, nil) // no timer here (its events would weigh); the driver's deadline
		}
	}
	return nil
}

// rawSignaller holds the raw side's signalling activity.
type rawSignaller struct{ c client.Client }

// SignalAll sends each of ids the "go" signal with from, the asking
// workflow's ID.
func (r rawSignaller) SignalAll(ctx context.Context, ids []string, from string) error {
	for _, id := range ids {
		if err := r.c.SignalWorkflow(ctx, id, "", "go", from); err != nil {
			return err
		}
	}
	return nil
}

// driveReplyEntities runs rounds RawReplyRollouts over the entities, one
// after the other, chunk entities at a time.
func driveReplyEntities(ctx context.Context, c client.Client, ids []string, rounds, chunk int) error {
	for i := range rounds {
		run, err := rawStart(ctx, c, fmt.Sprintf("raw-reply-rollout-%d", i), RawReplyRollout, ids, chunk)
		if err == nil {
			// a minute a chunk, as the other drivers allow
			rctx, cancel := context.WithTimeout(ctx, time.Duration(len(ids)/chunk+1)*time.Minute)
			err = run.Get(rctx, nil)
			cancel()
		}
		if err != nil {
			return fmt.Errorf("raw reply rollout %d: %w", i, err)
		}
	}
	return nil
}

// driveUpdateEntities sends every RawOnUpdate entity rounds Updates, chunk
// entities at a time, each waited for until its action ended: the next
// chunk goes once every Update of the one before returned (a rollout's
// chunk).
func driveUpdateEntities(ctx context.Context, c client.Client, ids []string, rounds, chunk int) error {
	return inChunks(ids, rounds, chunk, func(from int, part []string) error {
		errs := make([]error, len(part))
		var wg sync.WaitGroup
		for i, id := range part {
			wg.Go(func() {
				h, err := c.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{WorkflowID: id, UpdateName: "go",
					WaitForStage: client.WorkflowUpdateStageCompleted})
				if err == nil {
					err = h.Get(ctx, nil)
				}
				errs[i] = err
			})
		}
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			return fmt.Errorf("raw update entities: chunk at %d: %w", from, err)
		}
		return nil
	})
}

// inChunks calls drive with ids chunk at a time, rounds times over, one
// chunk after the other (drive returns once its chunk is done: a
// rollout's barrier); from is the chunk's first index.
func inChunks(ids []string, rounds, chunk int, drive func(from int, part []string) error) error {
	for range rounds {
		for from := 0; from < len(ids); from += chunk {
			if err := drive(from, ids[from:min(from+chunk, len(ids))]); err != nil {
				return err
			}
		}
	}
	return nil
}

// startEntities starts n raw entities (RawOnSignal) that each take signals
// signals, and returns their IDs.
func startEntities(ctx context.Context, c client.Client, prefix string, n, signals int) ([]string, error) {
	return startEntitiesOf(ctx, c, RawOnSignal, prefix, n, signals)
}

// startEntitiesOf starts n raw entities of workflow wf that each take
// calls calls, and returns their IDs.
func startEntitiesOf(ctx context.Context, c client.Client, wf any, prefix string, n, calls int) ([]string, error) {
	var ids []string
	for i := range n {
		id := fmt.Sprintf("%s-%d", prefix, i)
		if _, err := rawStart(ctx, c, id, wf, RawInput{N: calls, Eager: rawEager}); err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	return ids, nil
}

// driveQueryEntities sends every RawOnSignal entity rounds signals, chunk
// entities at a time, and learns each action's end by polling the
// entity's "done" query every queryPoll (no event; each poll a task on the
// entity's worker, counted in the same histogram, and a round trip
// through the server): the next chunk goes once every target of the one
// before answered.
func driveQueryEntities(ctx context.Context, c client.Client, ids []string, rounds, chunk int) error {
	asked := map[string]int{}
	return inChunks(ids, rounds, chunk, func(from int, part []string) error {
		errs := make([]error, len(part))
		var wg sync.WaitGroup
		for i, id := range part {
			asked[id]++
			want := asked[id]
			wg.Go(func() {
				if errs[i] = c.SignalWorkflow(ctx, id, "", "go", nil); errs[i] != nil {
					return
				}
				for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(queryPoll) {
					v, err := c.QueryWorkflow(ctx, id, "", "done")
					var done int
					if err == nil {
						err = v.Get(&done)
					}
					if err != nil || done >= want {
						errs[i] = err
						return
					}
				}
				errs[i] = fmt.Errorf("%s: not done within a minute", id)
			})
		}
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			return fmt.Errorf("raw query entities: chunk at %d: %w", from, err)
		}
		return nil
	})
}

// queryPoll is how often driveQueryEntities asks a target.
const queryPoll = 10 * time.Millisecond

// driveEntities sends every entity rounds signals, chunk entities at a
// time: the next chunk goes once every action of the one before has ended
// (the barrier of a rollout's chunks).
func driveEntities(ctx context.Context, c client.Client, ids []string, rounds, chunk int) error {
	return inChunks(ids, rounds, chunk, func(from int, part []string) error {
		want := rawDone.Load() + int64(len(part))
		for _, id := range part {
			if err := c.SignalWorkflow(ctx, id, "", "go", nil); err != nil {
				return err
			}
		}
		deadline := time.Now().Add(time.Minute)
		for rawDone.Load() < want {
			if time.Now().After(deadline) {
				return fmt.Errorf("raw entities: chunk at %d not done within a minute", from)
			}
			time.Sleep(time.Millisecond)
		}
		return nil
	})
}

// rawLoops starts n RawLoop workflows of per no-op activities each and
// waits for all of them.
func rawLoops(ctx context.Context, c client.Client, prefix string, n, per int) error {
	return rawLoopsOf(ctx, c, prefix, n, RawInput{N: per, Eager: rawEager})
}

func rawLoopsOf(ctx context.Context, c client.Client, prefix string, n int, in RawInput) error {
	var runs []client.WorkflowRun
	for i := range n {
		r, err := rawStart(ctx, c, fmt.Sprintf("%s-%d", prefix, i), RawLoop, in)
		if err != nil {
			return err
		}
		runs = append(runs, r)
	}
	for _, r := range runs {
		if err := r.Get(ctx, nil); err != nil {
			return err
		}
	}
	return nil
}

func rawStart(ctx context.Context, c client.Client, id string, wf any, args ...any) (client.WorkflowRun, error) {
	return c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: id, TaskQueue: rawQueue}, wf, args...)
}

// ---- scenarios ----
