package activities

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/steward-sh/steward/internal/treestatus"
)

// MaxReportsPerSignal bounds the reports one signal carries (a record is a
// few hundred bytes: at most about 100 KB a signal).
const MaxReportsPerSignal = 200

// ReportGather is the worker's Reporter.Gather.
const ReportGather = 20 * time.Millisecond

// reportTimeout bounds one signal to a supervisor.
const reportTimeout = 10 * time.Second

// Reporter sends the reports of succeeded actions to their supervisors
// (Activities.Report), at most one signal on its way per supervisor: the
// reports that come while one is sent go together in the next, as
// ChildReport.More. A lone report goes at once; under load (a supervisor
// starting a hundred children) a supervisor gets one signal, and one
// workflow task, for many.
//
// Send is the signal (the worker wires client.SignalWorkflow with the
// supervisor's `child` signal). Report returns once its signal was sent or
// failed, so an action whose report did not arrive leaves it to its
// workflow.
type Reporter struct {
	Send func(ctx context.Context, parent string, r treestatus.ChildReport) error
	// Gather is how long a report that finds no signal on its way waits
	// for others to the same supervisor before its signal leaves (0: it
	// leaves at once). The actions a supervisor hands out together end
	// within milliseconds of each other: gathered, their reports cost it
	// one signal and one workflow task where each would cost one.
	Gather time.Duration

	mu     sync.Mutex
	queues map[string][]queuedReport // by parent; present while a sender runs
}

type queuedReport struct {
	r    treestatus.ChildReport
	done chan error
}

// Report queues r for parent and waits until it was sent (or ctx ends).
func (p *Reporter) Report(ctx context.Context, parent string, r treestatus.ChildReport) error {
	done := make(chan error, 1)
	p.mu.Lock()
	if p.queues == nil {
		p.queues = map[string][]queuedReport{}
	}
	q, sending := p.queues[parent]
	p.queues[parent] = append(q, queuedReport{r: r, done: done})
	p.mu.Unlock()
	if !sending {
		go p.send(parent)
	}
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		// Not sent yet: take it back, so that "not reported" is true. One
		// on its way already may still arrive (the workflow counts on
		// neither: it reports anew, with a newer number).
		p.mu.Lock()
		q := p.queues[parent]
		if i := slices.IndexFunc(q, func(e queuedReport) bool { return e.done == done }); i >= 0 {
			p.queues[parent] = slices.Delete(q, i, i+1)
		}
		p.mu.Unlock()
		return ctx.Err()
	}
}

// send sends parent's queued reports, a batch a signal, until none waits.
func (p *Reporter) send(parent string) {
	if p.Gather > 0 {
		time.Sleep(p.Gather)
	}
	for {
		p.mu.Lock()
		q := p.queues[parent]
		if len(q) == 0 { // every queued report was taken back
			delete(p.queues, parent)
			p.mu.Unlock()
			return
		}
		batch := q[:min(len(q), MaxReportsPerSignal)]
		p.queues[parent] = q[len(batch):]
		p.mu.Unlock()
		r := batch[0].r
		r.More = nil
		for _, b := range batch[1:] {
			b.r.More = nil
			r.More = append(r.More, b.r)
		}
		ctx, cancel := context.WithTimeout(context.Background(), reportTimeout)
		err := p.Send(ctx, parent, r)
		cancel()
		// The sender leaves before its callers hear back when nothing
		// waits, so that a caller that returned never finds a sender
		// still around for an idle supervisor.
		p.mu.Lock()
		last := len(p.queues[parent]) == 0
		if last {
			delete(p.queues, parent)
		}
		p.mu.Unlock()
		for _, b := range batch {
			b.done <- err
		}
		if last {
			return
		}
	}
}
