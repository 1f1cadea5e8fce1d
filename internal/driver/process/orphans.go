package process

import (
	"context"
	"time"

	"go.uber.org/zap"
)

// OwnerRuns says whether the workflow with the given ID runs now (false:
// it closed, or there is none); an error says nothing either way.
type OwnerRuns func(ctx context.Context, workflowID string) (bool, error)

// OrphanSweepEvery is how often WatchOrphans looks for processes whose
// workflow closed.
const OrphanSweepEvery = 5 * time.Minute

// WatchOrphans looks, every `every` until Close, at each process this
// driver holds that still runs, and stops one whose workflow closed at two
// looks in a row (a process no workflow owns: an orphan).
//
// How one comes about: a service deleted while its host's worker was away
// past the stop's schedule-to-start timeout. Its workflow ends deleted all
// the same (it cannot wait for a host that may never return), and when the
// host's worker is back it adopted the process from its record, and held
// it, supervised by nothing, for as long as it ran. Two looks in a row, so
// that a workflow closed by hand and started again by its supervisor (which
// then adopts the process) is not stopped in between.
func (d *Driver) WatchOrphans(owner OwnerRuns, every time.Duration) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return
	}
	d.wg.Add(1)
	go func() {
		defer d.wg.Done()
		suspects := map[string]bool{}
		for {
			select {
			case <-d.quit:
				return
			case <-time.After(every):
			}
			ctx, cancel := context.WithTimeout(context.Background(), every)
			suspects = d.sweepOrphans(ctx, owner, suspects)
			cancel()
		}
	}()
}

// sweepOrphans is one look of WatchOrphans: it stops the running processes
// whose workflow does not run and was among suspects (the last look's),
// and returns those seen so now.
func (d *Driver) sweepOrphans(ctx context.Context, owner OwnerRuns, suspects map[string]bool) map[string]bool {
	d.mu.Lock()
	var live []*proc
	for _, p := range d.procs {
		select {
		case <-p.exited:
		default:
			live = append(live, p)
		}
	}
	d.mu.Unlock()
	now := map[string]bool{}
	for _, p := range live {
		runs, err := owner(ctx, p.wfID)
		if err != nil || runs {
			continue
		}
		if !suspects[p.id] {
			now[p.id] = true
			continue
		}
		d.log.Warn("process: stopping a process whose workflow is closed (an orphan: its service was deleted or its workflow ended while this host's worker was away)",
			zap.String("workflow", p.wfID), zap.String("instance", p.id))
		d.mu.Lock()
		p.stopping = true // its end is no workflow's: not pushed, its record removed
		d.mu.Unlock()
		sctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		if err := d.terminate(sctx, p); err != nil {
			d.log.Warn("process: could not stop an orphan", zap.String("instance", p.id), zap.Error(err))
		}
		cancel()
		d.forget(p)
	}
	return now
}
