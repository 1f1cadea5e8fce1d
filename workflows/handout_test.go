package workflows

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"

	"github.com/steward-sh/steward/activities"
	"github.com/steward-sh/steward/internal/spec"
	"github.com/steward-sh/steward/internal/versions"
)

// A child has one delivery in a hand-out, the newest: an older spec is
// never handed out after a newer one.
func TestHandOut_AQueuedSpecIsReplacedByANewerOne(t *testing.T) {
	s := supervisorRun{in: SupervisorInput{Version: 5}}
	a, b := ChildRecord{Path: "root/a"}, ChildRecord{Path: "root/b"}
	s.signalSpec(a, spec.Update{Generation: 2})
	s.signalSpec(b, spec.Update{Generation: 2})
	s.signalSpec(a, spec.Update{Generation: 3, Lost: "h1"})
	require.Len(t, s.handout, 2)
	require.Equal(t, "root/a", s.handout[0].Path)
	require.EqualValues(t, 3, s.handout[0].Update.Generation)
	require.Equal(t, "h1", s.handout[0].Update.Lost)
	require.Equal(t, "root/b", s.handout[1].Path)
}

// A hand-out gives a worker its spec by Update only once the worker's
// report says its code takes it (version 6); a worker of version 5, one
// that never reported, and a supervisor child get the signal.
func TestHandOut_ByUpdateOnlyToWorkersThatTakeIt(t *testing.T) {
	s := supervisorRun{in: SupervisorInput{Version: 5}}
	rec := func(path, kind string, version int) ChildRecord {
		return ChildRecord{Path: path, Status: Status{Kind: kind, CodeVersion: version}}
	}
	s.signalSpec(rec("root/new", spec.KindStub, versions.WorkerSpecUpdate.Since), spec.Update{Generation: 2})
	s.signalSpec(rec("root/old", spec.KindStub, versions.WorkerSpecUpdate.Since-1), spec.Update{Generation: 2})
	s.signalSpec(rec("root/unheard", spec.KindStub, 0), spec.Update{Generation: 2})
	s.signalSpec(rec("root/group", spec.KindSupervisor, versions.WorkerSpecUpdate.Since), spec.Update{Generation: 2})
	by := map[string]bool{}
	for _, d := range s.handout {
		by[d.Path] = d.ByUpdate
	}
	require.Equal(t, map[string]bool{"root/new": true, "root/old": false, "root/unheard": false, "root/group": false}, by)
}

// What a hand-out could not deliver goes as a command (the server then
// delivers it, as version 4 sent every spec); what it delivered does not
// go twice.
func TestHandOut_WhatItCouldNotDeliverGoesAsACommand(t *testing.T) {
	env := newEnv(t)
	mockActions(env)
	env.OnActivity(activities.ClosedChildrenName, mock.Anything, mock.Anything).Return([]activities.ClosedChild{}, nil)
	env.OnRequestCancelExternalWorkflow(mock.Anything, mock.Anything, mock.Anything).Return(nil)
	var mu sync.Mutex
	var handed, commanded []string
	env.OnActivity(activities.HandOutName, mock.Anything, mock.Anything).Return(func(_ context.Context, r activities.HandOutRequest) ([]activities.Undelivered, error) {
		mu.Lock()
		defer mu.Unlock()
		for _, d := range r.Deliveries {
			handed = append(handed, d.Path)
		}
		return []activities.Undelivered{{Path: "root/b", Error: "server busy"}}, nil
	})
	for _, p := range []string{"root/a", "root/b", "root/c"} {
		env.OnSignalExternalWorkflow(mock.Anything, p, mock.Anything, SignalSpec, mock.Anything).Return(func(_, id, _, _ string, arg any) error {
			mu.Lock()
			defer mu.Unlock()
			require.EqualValues(t, 2, arg.(spec.Update).Generation)
			commanded = append(commanded, id)
			return nil
		}).Maybe()
	}
	root, carry, changed := threeRunning()
	at(env, time.Minute, func() { env.SignalWorkflow(SignalSpec, spec.Update{Generation: 2, Spec: changed}) })
	endAt(env, 2*time.Minute)
	env.ExecuteWorkflow(SupervisorWorkflow, SupervisorInput{Path: "root", Spec: pruneSpec(root), Generation: 1, Carry: carry, Version: 5})
	mu.Lock()
	defer mu.Unlock()
	require.Equal(t, []string{"root/a", "root/b", "root/c"}, handed)
	require.Equal(t, []string{"root/b"}, commanded)
}

// threeRunning is a tree of three running stub workers (root/a, b, c), the
// carry of a supervisor that started them (generation 1), and the same
// tree with a stop timeout of a minute on each: a change that restarts
// nothing, sent to every child at once.
func threeRunning() (root spec.Node, carry *SupervisorCarry, changed spec.Node) {
	root = tree("root", stubNode("a", nil), stubNode("b", nil), stubNode("c", nil))
	s := supervisorRun{in: SupervisorInput{Spec: root}}
	carry = &SupervisorCarry{Desired: "running"}
	for _, n := range root.Children {
		carry.Children = append(carry.Children, ChildRecord{Name: n.Name, Path: "root/" + n.Name, Run: "r-" + n.Name, Digest: spec.Digest(s.inherit(n)), WantGeneration: 1,
			Status: Status{Path: "root/" + n.Name, Kind: spec.KindStub, State: "running", Desired: "running", Generation: 1}})
	}
	changed = root
	changed.Children = append([]spec.Node(nil), root.Children...)
	minute := spec.Duration(time.Minute)
	for i := range changed.Children {
		changed.Children[i].Timeouts = &spec.Timeouts{Stop: &minute}
	}
	return root, carry, changed
}
