package activities

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"go.temporal.io/api/serviceerror"

	"github.com/steward-sh/steward/internal/spec"
)

// Hand-outs (supervisor code version 5 on): a supervisor sends its
// children their specs from a local activity, one per workflow task, in
// place of a SignalExternalWorkflow command each. The signal a workflow
// sends to another costs it an event when the server has delivered it, and
// the server follows that event with a workflow task of its own: a
// supervisor rolling an update out to its workers paid two tasks per
// worker, one after the other (the delivery and the worker's report), and
// its update ran at the pace of its own tasks. A local activity runs inside
// the task that decided the hand-out and leaves one marker in its history.
//
// The caveat: the signals leave before the task that sent them completes.
// A task that fails after its hand-out (its worker died) is retried and
// hands out again: the same node and generation a second time, which
// restarts nothing.

// HandOutName is the hand-out local activity.
const HandOutName = Prefix + "HandOut"

// HandOutRequest is one task's hand-out: the signal (a supervisor's
// `spec`) and each child's payload.
type HandOutRequest struct {
	Signal     string     `json:"signal"`
	Deliveries []Delivery `json:"deliveries"`
}

// Delivery is one child's spec.
type Delivery struct {
	Path   string      `json:"path"`
	Update spec.Update `json:"update"`
	// ByUpdate: the child takes its spec by the Update of the signal's
	// name (a worker run of code version 6 on: workflows.UpdateSpec).
	ByUpdate bool `json:"byUpdate,omitempty"`
}

// Undelivered is a child whose spec did not arrive, and why (its workflow
// is not running, or the server refused the signal every time).
type Undelivered struct {
	Path  string `json:"path"`
	Error string `json:"error"`
}

// handOutAttempts bounds the tries of one signal within a hand-out.
const handOutAttempts = 3

// HandOut sends every delivery its signal, all at once, and returns those
// that did not arrive. A workflow that is not running is not tried again (a
// signal external to it would have failed the same way); a refusal of
// another kind (the server busy) is tried again, handOutAttempts in all.
// Signal must be set (the worker wires client.SignalWorkflow).
func (a *Activities) HandOut(ctx context.Context, req HandOutRequest) ([]Undelivered, error) {
	if a.Signal == nil {
		return nil, errors.New("this worker sends no signals (Activities.Signal unset)")
	}
	var (
		mu  sync.Mutex
		out []Undelivered
		wg  sync.WaitGroup
	)
	for _, d := range req.Deliveries {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if a.byUpdate(ctx, req.Signal, d) {
				return
			}
			err := a.signalWithRetries(ctx, d.Path, req.Signal, d.Update)
			if err != nil {
				mu.Lock()
				out = append(out, Undelivered{Path: d.Path, Error: err.Error()})
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	// In the order handed out, whatever order the signals ended in.
	order := make(map[string]int, len(req.Deliveries))
	for i, d := range req.Deliveries {
		order[d.Path] = i
	}
	slices.SortFunc(out, func(x, y Undelivered) int { return order[x.Path] - order[y.Path] })
	return out, nil
}

// byUpdate hands a child its spec by the Update of the signal's name
// (workflows.UpdateSpec) when its delivery says it takes one, and reports
// whether it arrived. A worker takes an Update for less of the server's
// work than a signal (the workflows package says why); a supervisor child
// has no such Update. Whatever did not arrive goes as the signal: the
// worker refused the spec (its signal rejects and counts it), its task is
// failing, or it did not answer within updateWait. The Update's ID names
// the spec, so a hand-out tried again (its task failed after it) is the
// same Update, applied once.
func (a *Activities) byUpdate(ctx context.Context, name string, d Delivery) bool {
	if a.Update == nil || !d.ByUpdate || d.Update.Spec.Kind == spec.KindSupervisor {
		return false
	}
	uctx, cancel := context.WithTimeout(ctx, updateWait)
	defer cancel()
	err := a.Update(uctx, d.Path, specUpdateID(d), name, d.Update)
	return err == nil
}

// updateWait bounds a hand-out's wait for a worker to take its spec Update
// (one workflow task of the worker's) before it signals instead.
const updateWait = 3 * time.Second

// specUpdateID names a delivery's spec: its generation and a digest of
// the spec.
func specUpdateID(d Delivery) string {
	b, _ := json.Marshal(d.Update)
	sum := sha256.Sum256(b)
	return fmt.Sprintf("spec/%d/%x", d.Update.Generation, sum[:8])
}

func (a *Activities) signalWithRetries(ctx context.Context, path, signal string, arg any) error {
	var err error
	for attempt := 1; attempt <= handOutAttempts; attempt++ {
		if err = a.Signal(ctx, path, signal, arg); err == nil {
			return nil
		}
		if errors.As(err, new(*serviceerror.NotFound)) || ctx.Err() != nil || attempt == handOutAttempts {
			break
		}
		select {
		case <-ctx.Done():
		case <-time.After(time.Duration(attempt) * 100 * time.Millisecond):
		}
	}
	return fmt.Errorf("signal %s to %s: %w", signal, path, err)
}
