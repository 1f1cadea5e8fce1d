package workflows

import (
	"time"

	"go.temporal.io/sdk/workflow"
)

// deadline is one cancellable workflow timer for a moment of workflow time:
// a backoff's end, a rollout's deadline, a supervisor's next wake-up.
type deadline struct {
	fut    workflow.Future
	cancel workflow.CancelFunc
	at     time.Time
}

// set arms the timer for at, replacing one set for another moment; a zero
// at stops it. A moment already past fires at once (1ms).
func (d *deadline) set(ctx workflow.Context, at time.Time) {
	if d.fut != nil && d.at.Equal(at) {
		return
	}
	d.stop()
	if at.IsZero() {
		return
	}
	wait := at.Sub(workflow.Now(ctx))
	if wait <= 0 {
		wait = time.Millisecond
	}
	tctx, cancel := workflow.WithCancel(ctx)
	d.fut, d.cancel, d.at = workflow.NewTimer(tctx, wait), cancel, at
}

// stop cancels the timer, if any.
func (d *deadline) stop() {
	if d.fut != nil {
		d.cancel()
	}
	d.fut, d.cancel, d.at = nil, nil, time.Time{}
}

// fired reports whether f is this timer (a replaced one may still fire),
// and forgets it, releasing its context (releaseContext).
func (d *deadline) fired(f workflow.Future) bool {
	if f == nil || f != d.fut {
		return false
	}
	releaseContext(d.cancel)
	d.fut, d.cancel, d.at = nil, nil, time.Time{}
	return true
}

// releaseContext cancels the context of a timer or activity whose future
// is ready, which the SDK keeps among its parent's children until it is
// cancelled: a run would otherwise hold one more context (and what hangs
// on it, about twenty objects) for every timer that fired and every action
// that ended, until it continues as new; a worker kept in the worker's
// cache pays for them at every garbage collection. The future being ready,
// the SDK sends no cancel command (it cancels a timer or an activity only
// while not done), so histories replay as before.
func releaseContext(cancel workflow.CancelFunc) {
	if cancel != nil {
		cancel()
	}
}
