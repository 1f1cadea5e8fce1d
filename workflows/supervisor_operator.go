package workflows

// The operator's signals to a supervisor: desired state, restart, and what
// they do to its children.

import (
	"fmt"

	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/workflow"

	"github.com/steward-sh/steward/internal/spec"
	"github.com/steward-sh/steward/internal/supervise"
)

func (s *supervisorRun) onSuperviseSignal(raw converter.RawValue) {
	r, err := decodeSupervise(raw)
	if err != nil {
		s.reject(SignalSupervise, err)
		return
	}
	s.onSupervise(r)
}

func (s *supervisorRun) onDesired(raw converter.RawValue) {
	var d string
	if err := decodeRaw(raw, &d); err != nil || (d != spec.DesiredRunning && d != spec.DesiredStopped) {
		if err == nil {
			err = fmt.Errorf("got %q", d)
		}
		s.reject(SignalDesired, fmt.Errorf("payload must be \"running\" or \"stopped\": %w", err))
		return
	}
	s.carry.Desired = d
	s.decide(supervise.Snapshot{Kind: supervise.Reset})
	// Every child gets the desired state: starts in start order once its
	// dependencies run, stops in reverse once its dependants are down.
	act := supervise.ActStart
	if d == spec.DesiredStopped {
		act = supervise.ActStop
	}
	s.operate(act, "started by the operator")
}

func (s *supervisorRun) onRestart() {
	s.carry.Desired = spec.DesiredRunning
	s.decide(supervise.Snapshot{Kind: supervise.OperatorRestart})
	s.operate(supervise.ActRestart, "restarted by the operator")
}

// operate carries out what the operator's act does to the children
// (supervise.Operate).
func (s *supervisorRun) operate(act supervise.OperatorAct, why string) {
	ls := make([]supervise.Lifecycle, len(s.carry.Children))
	for i, rec := range s.carry.Children {
		ls[i] = rec.Lifecycle
	}
	o := supervise.Operate(act, ls, s.hasDependencies())
	for i, l := range o.Lifecycles {
		s.carry.Children[i].Lifecycle = l
	}
	for _, i := range o.RestartNow {
		s.out.add(workflow.SignalExternalWorkflow(s.ctx, s.carry.Children[i].Path, "", SignalRestart, nil))
	}
	if o.Release {
		s.release()
	}
	if o.StartClosed {
		s.restartClosedChildren(why)
	}
}

// restartClosedChildren starts anew, when this supervisor should run, the
// workflows of children that closed: an operator's start or restart of the
// supervisor covers them too.
func (s *supervisorRun) restartClosedChildren(why string) {
	if !supervise.StartsClosed(s.carry.Desired) {
		return
	}
	for i := range s.carry.Children {
		if s.carry.Children[i].Lifecycle == supervise.Closed && s.restartClosed(i) {
			s.log.Info("child workflow started anew", "path", s.carry.Children[i].Path, "why", why)
		}
	}
}
