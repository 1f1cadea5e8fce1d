package workflows

import (
	"go.temporal.io/sdk/workflow"

	"github.com/steward-sh/steward/internal/spec"
	"github.com/steward-sh/steward/internal/versions"
)

// A worker takes its spec two ways: the `spec` signal (SignalSpec: what an
// operator, a `temporal workflow signal` or a command of its supervisor
// sends) and the `spec` Update (UpdateSpec: what a supervisor's hand-out
// sends, activities.HandOut).
//
// Why an Update: a signal is an event the server writes, and the workflow
// task it schedules is written again when it starts; an Update that finds
// the worker idle rides a speculative workflow task that the server writes
// only with its outcome. Under a rolling update those two writes per worker
// were the largest part of the server's extra work over a rollout restart
// (which reaches its targets by Update): docs/benchmarks.md.
//
// The validator refuses a spec that is not this worker's (checkSpec): the
// hand-out then sends it as a signal, which rejects and counts it as it
// always did. The handler hands the spec to the main loop over a channel
// and returns: it is applied there as a signalled one is (applySpec), and a
// run continues as new only once the channel is empty (drain).
//
// Order: a spec handed out by Update carries its supervisor's generation;
// one older than the generation the worker has is dropped (a hand-out that
// timed out went again as a signal, and a newer spec may have come since).
// No history written before this handler has a spec Update, so this rule
// changes the replay of none.
//
// Version: a run of worker code version 6 or later takes the Update (an
// older one refuses it as unknown, as the code that began it would), and
// its supervisor hands a worker its spec by Update only once the worker's
// report says it runs such code (ChildRecord.Status.CodeVersion). A worker
// process of an older build cannot replay a history with a spec Update,
// and it runs no task of a version-6 run (checkVersion): while a fleet's
// worker processes are replaced, its runs of version 5 go on by signal.

// UpdateSpec is the Update a worker takes its spec by (payload
// spec.Update), the name of the signal it replaces.
const UpdateSpec = SignalSpec

// specUpdateBuffer bounds the specs waiting for the main loop (a
// supervisor hands a child one spec at a time; more block the handler).
const specUpdateBuffer = 16

// setupSpecUpdate registers the spec Update handler (version 6 on).
func (w *workerRun) setupSpecUpdate(ctx workflow.Context) error {
	w.specs = workflow.NewBufferedChannel(ctx, specUpdateBuffer)
	if !versions.WorkerSpecUpdate.In(w.in.Version) {
		return nil
	}
	return workflow.SetUpdateHandlerWithOptions(ctx, UpdateSpec,
		func(ctx workflow.Context, u spec.Update) error {
			w.specs.Send(ctx, u)
			return nil
		},
		workflow.UpdateHandlerOptions{Validator: func(_ workflow.Context, u spec.Update) error {
			return w.checkSpec(u, true) // validators run live only: the limits hold
		}})
}

// onSpecUpdate applies a spec that came by Update, unless it is older than
// the worker's.
func (w *workerRun) onSpecUpdate(u spec.Update) {
	if u.Generation > 0 && u.Generation < w.in.Generation {
		w.log.Info("spec update older than this worker's: dropped", "path", w.in.Path, "generation", u.Generation, "has", w.in.Generation)
		return
	}
	if err := w.checkSpec(u, w.limits.holds(w.ctx)); err != nil { // checked when accepted; a replay skips validators
		w.reject(SignalSpec, err)
		return
	}
	w.applySpec(u)
}

// receiveSpecs applies every spec waiting on the channel; it reports
// whether there was one.
func (w *workerRun) receiveSpecs() bool {
	got := false
	var u spec.Update
	for w.specs.ReceiveAsync(&u) {
		got = true
		w.onSpecUpdate(u)
		u = spec.Update{}
	}
	return got
}
