package workflows

import (
	"errors"
	"fmt"

	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/workflow"

	"github.com/steward-sh/steward/internal/spec"
	"github.com/steward-sh/steward/internal/supervise"
	"github.com/steward-sh/steward/internal/tick"
	"github.com/steward-sh/steward/internal/versions"
)

// A worker's signals: each handler decodes its payload (a bad one is
// rejected and counted) and feeds the event to the tick.

func (w *workerRun) reject(signal string, err error) {
	w.carry.RejectedSignals++
	count(w.ctx, MetricRejectedSignals, map[string]string{"signal": signal})
	if signal == SignalSpec && templateProblem(err) {
		count(w.ctx, MetricTemplateErrors, nil)
	}
	w.log.Warn("rejected signal", "signal", signal, "path", w.in.Path, "error", err.Error(), "rejected", w.carry.RejectedSignals)
}

// event feeds an event to the tick when no action is in flight, and records
// it (tick.Absorb) when one is.
func (w *workerRun) event(s tick.Snapshot) {
	if w.flight != nil {
		w.carry.Memory = tick.Absorb(w.carry.Memory, s.Event, s.SpecNeedsRestart)
		return
	}
	w.tick(s)
}

func (w *workerRun) tickIfIdle(s tick.Snapshot) {
	if w.flight == nil {
		w.tick(s)
	}
}

func (w *workerRun) onDesired(raw converter.RawValue) {
	var d string
	if err := decodeRaw(raw, &d); err != nil {
		w.reject(SignalDesired, fmt.Errorf("payload must be \"running\" or \"stopped\": %w", err))
		return
	}
	if d != spec.DesiredRunning && d != spec.DesiredStopped {
		w.reject(SignalDesired, fmt.Errorf("payload must be \"running\" or \"stopped\", got %q", d))
		return
	}
	w.setDesired(tick.Desired(d))
}

func (w *workerRun) setDesired(d tick.Desired) {
	w.carry.Desired = d
	if f := w.flight; f != nil && !f.cancelled && tick.ShouldCancel(f.action, w.carry.Desired) {
		f.cancelled = true
		f.cancel()
	}
	w.event(tick.Snapshot{Event: tick.EventDesired})
}

func (w *workerRun) onRestart() {
	// A restart means the operator wants the service running (systemd's
	// restart starts a stopped unit too).
	w.carry.Desired = tick.WantRunning
	w.event(tick.Snapshot{Event: tick.EventRestart})
}

// onReload asks the running service to reload (version 3). A worker
// without a reload configured rejects it: nothing is sent to the host.
//
// While the workers are replaced, a worker of 5b9cb0e (which ignores the
// version in the input) may have run this run's task: it dropped the
// signal as unknown, woken by nothing. So the reload is honoured behind a
// marker ("steward-reload"), absent from such a history: replaying it,
// the signal is dropped again and honoured reports false (the caller goes
// back to waiting, as that code did).
func (w *workerRun) onReload() (honoured bool) {
	if workflow.GetVersion(w.ctx, "steward-reload", workflow.DefaultVersion, 1) != 1 {
		w.carry.RejectedSignals++
		return false
	}
	if !w.node.ReloadConfigured() {
		w.reject(SignalReload, fmt.Errorf("%s has no reload configured (process.reload or http.reload)", w.in.Path))
		return true
	}
	w.event(tick.Snapshot{Event: tick.EventReload})
	return true
}

func (w *workerRun) onSpec(raw converter.RawValue) {
	u, err := decodeUpdate(raw)
	if err == nil && versions.WorkerSignalSpecOrder.In(w.in.Version) && u.Resent && u.Generation > 0 && u.Generation < w.in.Generation {
		// A hand-out whose local activity failed (timed out under load,
		// its Updates delivered all the same) sends its specs again as
		// signals, which may come after the next hand-out's newer spec:
		// dropped, as an older Update is (onSpecUpdate). (An older spec
		// not resent is taken: a supervisor adopting its children sends
		// its own generation, which may be lower than theirs.)
		w.log.Info("spec signal older than this worker's: dropped", "path", w.in.Path, "generation", u.Generation, "has", w.in.Generation)
		return
	}
	if err == nil {
		err = w.checkSpec(u, w.limits.holds(w.ctx))
	}
	if err != nil {
		w.reject(SignalSpec, err)
		return
	}
	w.applySpec(u)
}

// checkSpec says why a spec is not for this worker (nil: it is); held: the
// limits hold (limits.go).
func (w *workerRun) checkSpec(u spec.Update, held bool) error {
	if u.Spec.Name != w.node.Name {
		return fmt.Errorf("spec.name %q does not match this worker (%q)", u.Spec.Name, w.node.Name)
	}
	if ps := spec.ValidateSentWorker(held, w.in.Path, u.Spec); len(ps) > 0 {
		return ps
	}
	if versions.WorkerGenerationBounded.In(w.in.Version) {
		return spec.CheckGeneration(w.in.Generation, u.Generation)
	}
	return nil
}

// applySpec makes a checked spec the worker's.
func (w *workerRun) applySpec(u spec.Update) {
	recordPropagation(w.ctx, u)
	old := w.node
	w.in.Spec = u.Spec
	w.node = spec.Rendered(u.Spec)
	if u.Coordinated != nil {
		w.in.Coordinated = *u.Coordinated
	}
	switch {
	case u.Generation > 0:
		w.in.Generation = u.Generation
	case versions.WorkerGenerationBounded.In(w.in.Version) && w.in.Generation >= spec.MaxGeneration:
		// Its count stays at the bound (its supervisor sends no more
		// either): past it, the worker would refuse every spec after.
	default:
		w.in.Generation++
	}
	if w.node.Desired != old.Desired {
		w.carry.Desired = tick.Desired(w.node.Desired)
	}
	if w.observeTimer != nil && w.node.Observe.Interval.D() != old.Observe.Interval.D() {
		w.observeCancel() // re-armed with the new interval after this event
		w.observeTimer = nil
	}
	w.upsertSearch()
	restart := spec.DriverChanged(old, w.node)
	if versions.WorkerMoves.In(w.in.Version) && w.noteMove(old, u.Lost) {
		restart = true
	}
	if versions.WorkerRefused.In(w.in.Version) && w.carry.LastAction.Status == string(tick.Refused) {
		// The spec before was refused by the host, so what runs is not
		// what it says: the next one is applied by a restart, even where
		// it differs from the refused one only in its signature.
		restart = true
	}
	if f := w.flight; restart && versions.WorkerSpecCancelsAction.In(w.in.Version) && f != nil && !f.cancelled && (f.action == tick.Start || f.action == tick.Restart) {
		// Version 4: a spec that restarts the service supersedes a start
		// in flight (one that may wait minutes for a ready probe that the
		// new spec fixes, or a rolling update's revert): it is cancelled,
		// and the service starts with the new spec. Version 3 waits for it.
		f.cancelled = true
		f.cancel()
	}
	w.event(tick.Snapshot{Event: tick.EventSpec, SpecNeedsRestart: restart})
}

// onSupervise carries out the supervisor's stop or restart of a group.
func (w *workerRun) onSupervise(raw converter.RawValue) {
	r, err := decodeSupervise(raw)
	if err != nil {
		w.reject(SignalSupervise, err)
		return
	}
	w.carry.SuperviseSeq = supervise.Acknowledged(w.carry.SuperviseSeq, r.Seq,
		supervise.NotAfter(versions.WorkerReportSeqByTime.In(w.in.Version), workflow.Now(w.ctx)))
	if r.Op == supervise.RequestStop {
		if f := w.flight; f != nil && !f.cancelled && tick.ShouldCancel(f.action, tick.WantStopped) {
			f.cancelled = true
			f.cancel()
		}
		w.event(tick.Snapshot{Event: tick.EventSupervisorStop})
		return
	}
	w.event(tick.Snapshot{Event: tick.EventSupervisorRestart})
}

// maxExitBytes bounds an exit report's instance and reason.
const maxExitBytes = 4 << 10

func (w *workerRun) onExit(raw converter.RawValue) {
	var e tick.Exit
	if err := decodeRaw(raw, &e); err != nil || e.Instance == "" || len(e.Instance)+len(e.Reason) > maxExitBytes {
		if err == nil && e.Instance == "" {
			err = errors.New("no instance")
		} else if err == nil {
			// A host's exit report is short; a long one is not a host's,
			// and kept as the worker's reason it would grow its carried
			// state (pending exits) past what a continue-as-new carries.
			err = fmt.Errorf("an exit report of %d bytes (at most %d)", len(e.Instance)+len(e.Reason), maxExitBytes)
		}
		w.reject(SignalExit, err)
		return
	}
	if w.flight != nil {
		// Seen by the tick after the action; an exit of an instance that the
		// action replaced is then ignored by the instance check.
		w.carry.PendingExits = append(w.carry.PendingExits, e)
		if len(w.carry.PendingExits) > maxPendingExits {
			w.carry.PendingExits = w.carry.PendingExits[1:]
		}
		return
	}
	w.tick(w.exitSnapshot(e))
}

// exitSnapshot is the tick's snapshot of an exit. An exit of the current
// instance while the host is unknown is acted on (a worker of the host came
// back and reports the service ended meanwhile) in histories recorded since
// that change; older ones replay as they ran (the exit was ignored).
func (w *workerRun) exitSnapshot(e tick.Exit) tick.Snapshot {
	snap := tick.Snapshot{Event: tick.EventExited, Exit: &e}
	if m := w.carry.Memory; m.State == tick.Unknown && e.Instance != "" && e.Instance == m.Instance {
		snap.ExitWhileUnknown = versions.WorkerVersioned.In(w.in.Version) || workflow.GetVersion(w.ctx, "exit-while-unknown", workflow.DefaultVersion, 1) == 1
	}
	return snap
}

// onSlow: the action in flight has run for publishDelay (its activity says
// so): its transient state (starting, stopping) is published now.
func (w *workerRun) onSlow(raw converter.RawValue) {
	var seq int64
	if err := decodeRaw(raw, &seq); err != nil {
		w.reject(SignalSlow, err)
		return
	}
	if f := w.flight; f != nil && f.action != tick.Observe && seq == w.carry.Seq {
		w.publishNow()
	}
}
