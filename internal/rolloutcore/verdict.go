package rolloutcore

import (
	"fmt"
	"time"

	"github.com/steward-sh/steward/internal/spec"
	"github.com/steward-sh/steward/internal/tick"
	"github.com/steward-sh/steward/internal/treestatus"
)

// Rollout operations.
const (
	OpRestart = "restart"
	OpStop    = "stop"
	OpStart   = "start"
	// OpReload (rollout version 2, worker version 3): each target's running
	// service reloads; a target without a reload configured fails.
	OpReload = "reload"
)

// Watch is the rollout operation a worker is carrying out.
type Watch struct {
	Call     int64     `json:"call"`
	Op       string    `json:"op"`
	Deadline time.Time `json:"deadline"`
	// The counters when the request arrived: a rise tells that the restart
	// happened (ManualRestarts) or that the service ended again
	// (Terminations).
	BaseManual       int `json:"baseManual"`
	BaseTerminations int `json:"baseTerminations"`
	// Asked is when the operation arrived: a restart asked while a start or
	// restart is in flight is satisfied by it (tick: no second restart, no
	// manual restart counted), so a service running since then, with no
	// restart still pending, has restarted.
	Asked time.Time `json:"asked,omitzero"`
	// BaseReloads: the reloads counted when a reload was asked (a rise:
	// it was carried out; version 3).
	BaseReloads int `json:"baseReloads,omitempty"`
}

// Budget is how long a rollout's operation may take on node n: the
// action's timeout on every attempt with the retry waits between them,
// plus a stop (a restart of a service that is stopping, a start after a
// stop).
func Budget(n spec.Node, op string) time.Duration {
	n = n.Resolved()
	budget := func(timeout time.Duration) time.Duration {
		attempts := time.Duration(max(n.Retry.MaxAttempts, 1))
		return timeout*attempts + n.Retry.MaxInterval.D()*(attempts-1)
	}
	stop := budget(n.Timeouts.Stop.D())
	switch op {
	case OpStop:
		return stop
	case OpReload:
		return budget(n.Timeouts.Start.D())
	case OpStart:
		return stop + budget(n.Timeouts.Start.D())
	}
	return stop + budget(max(n.Timeouts.Restart.D(), n.Timeouts.Start.D()))
}

// Verdict is a worker's answer to the watched operation w, from its
// memory m and its last action, once it is known ("": not yet): succeeded,
// failed (why: the reason, and the action's error), or timeout once the
// deadline has passed (late; budget and the wanted state say why).
// startedSince tells that the service has run since the restart was
// asked though no manual restart was counted (asked only then: in runs of
// an old version its answer is behind a marker).
func Verdict(w Watch, m tick.Memory, last treestatus.ActionStatus, late bool, budget time.Duration, startedSince func() bool) (status, why string) {
	ended := m.Terminations > w.BaseTerminations
	unreachable := m.State == tick.Unknown
	switch w.Op {
	case OpStop:
		switch {
		case m.State == tick.Stopped:
			status = Succeeded
		case m.State == tick.Failed || unreachable:
			status, why = Failed, m.Reason
		}
	case OpStart:
		switch {
		case m.State == tick.Running:
			status = Succeeded
		case ended || unreachable || m.State == tick.Failed || (m.State == tick.Stopped && m.Marks.Has(tick.Held)):
			status, why = Failed, m.Reason
		}
	case OpReload:
		// Carried out once counted and no longer running (the reload
		// action ran to its end); moot when the service is not running.
		done := m.Reloads > w.BaseReloads && last.Name == string(tick.Reload) && last.Status != "running"
		// A start or restart in flight when it was asked satisfies it
		// (tick: the new instance loads the configuration).
		started := !done && m.State == tick.Running && !m.Marks.Has(tick.ReloadAsked) && !m.RunningSince.Before(w.Asked)
		switch {
		case done && last.Status == string(tick.Succeeded), started:
			status = Succeeded
		case done, ended, unreachable, m.State != tick.Running && !m.Marks.Has(tick.ReloadAsked):
			status, why = Failed, m.Reason
		}
	case OpRestart:
		restarted := m.ManualRestarts > w.BaseManual || RestartedSince(w, m) && startedSince()
		switch {
		case restarted && m.State == tick.Running:
			status = Succeeded
		case ended || unreachable || (restarted && (m.State == tick.Failed || (m.State == tick.Stopped && m.Marks.Has(tick.Held)))):
			status, why = Failed, m.Reason
		}
	}
	if status == "" && late {
		want := "running"
		if w.Op == OpStop {
			want = "stopped"
		}
		status, why = Timeout, fmt.Sprintf("not %s within %s (state %s: %s)", want, budget, m.State, m.Reason)
	}
	if status == Failed && last.Error != "" {
		why += ": " + last.Error
	}
	return status, why
}

// RestartedSince tells from the memory alone that the service has run
// since the watched restart was asked, with no restart pending.
func RestartedSince(w Watch, m tick.Memory) bool {
	return !w.Asked.IsZero() && m.State == tick.Running && !m.Marks.Has(tick.RestartAsked) && !m.RunningSince.Before(w.Asked)
}
