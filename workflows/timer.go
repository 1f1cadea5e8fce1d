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
// and forgets it.
func (d *deadline) fired(f workflow.Future) bool {
	if f == nil || f != d.fut {
		return false
	}
	d.fut, d.cancel, d.at = nil, nil, time.Time{}
	return true
}
