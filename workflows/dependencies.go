package workflows

import (
	"slices"
	"strings"

	"go.temporal.io/sdk/workflow"

	"github.com/steward-sh/steward/internal/spec"
	"github.com/steward-sh/steward/internal/supervise"
)

// Dependencies between siblings (spec.Node.DependsOn; internal/spec's
// depends.go states the contract). A supervisor keeps its children in start
// order (spec.StartOrder), and:
//
//   - a child whose dependencies are not all running is not started: its
//     record waits (Deferred, with its node) until each has reported
//     running, then its workflow starts;
//   - the operator's start of the supervisor (desired running) reaches a
//     child only once its dependencies run (Held);
//   - the operator's stop (desired stopped) reaches a child only once every
//     sibling that depends on it is down (PendingStop);
//   - group restarts, give-ups and delete handle children one after the
//     other in start order (or its reverse), so they honour it as they are.
//
// Children without dependencies are not held back at all: they start
// together, and a tree without dependsOn sends exactly what it sent before.

// dependenciesOf names the siblings the child depends on.
func (s *supervisorRun) dependenciesOf(name string) []string {
	for _, c := range s.in.Spec.Children {
		if c.Name == name {
			return c.DependsOn
		}
	}
	return nil
}

// waitingFor lists the dependencies in deps that are not running yet (none
// while the supervisor is stopped: what starts then starts stopped).
func (s *supervisorRun) waitingFor(deps []string) []string {
	if len(deps) == 0 || s.carry.Desired != spec.DesiredRunning {
		return nil
	}
	var out []string
	for _, d := range deps {
		i := s.childIndex(d)
		if i < 0 || s.carry.Children[i].Deferred || s.carry.Children[i].Status.State != "running" {
			out = append(out, d)
		}
	}
	return out
}

func waitingReason(names []string) string {
	return "waiting for " + strings.Join(names, ", ") + " to be running"
}

// dependantsDown reports whether every sibling that depends on name is down
// or gone (it may stop now).
func (s *supervisorRun) dependantsDown(name string) bool {
	for _, c := range s.in.Spec.Children {
		if !slices.Contains(c.DependsOn, name) {
			continue
		}
		if i := s.childIndex(c.Name); i >= 0 {
			r := s.carry.Children[i]
			if !r.gone() && (r.PendingStop || !supervise.IsDown(r.Status.State)) {
				return false
			}
		}
	}
	return true
}

// release starts, and sends the operator's start and stop to, the
// children whose dependencies allow it now: starts in start order, stops
// in reverse.
func (s *supervisorRun) release() {
	if s.shuttingDown {
		return
	}
	for j := range s.carry.Children {
		rec := &s.carry.Children[j]
		switch {
		case rec.Deferred && rec.Node != nil:
			if slices.Contains(s.carry.Removing, rec.Path) {
				continue
			}
			if w := s.waitingFor(rec.Node.DependsOn); len(w) > 0 {
				rec.Status.Reason = waitingReason(w)
				continue
			}
			want := rec.WantGeneration
			s.carry.Children[j] = s.startChildren([]spec.Node{*rec.Node})[0]
			s.carry.Children[j].WantGeneration = max(want, s.carry.Children[j].WantGeneration)
		case rec.Held:
			if len(s.waitingFor(s.dependenciesOf(rec.Name))) == 0 {
				rec.Held = false
				if !rec.gone() {
					s.out.add(workflow.SignalExternalWorkflow(s.ctx, rec.Path, "", SignalDesired, spec.DesiredRunning))
				}
			}
		}
	}
	for j := len(s.carry.Children) - 1; j >= 0; j-- {
		rec := &s.carry.Children[j]
		if rec.PendingStop && s.dependantsDown(rec.Name) {
			rec.PendingStop = false
			if !rec.gone() {
				s.out.add(workflow.SignalExternalWorkflow(s.ctx, rec.Path, "", SignalDesired, spec.DesiredStopped))
			}
		}
	}
}
