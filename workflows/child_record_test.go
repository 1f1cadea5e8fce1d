package workflows

import (
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"

	"github.com/steward-sh/steward/activities"
	"github.com/steward-sh/steward/internal/spec"
	"github.com/steward-sh/steward/internal/supervise"
)

// A run carried over by supervisor version 2 in the middle of the
// operator's start of a chain (db <- web, both queued as held) goes on
// where it was: db's start goes at once, web's once db reports running;
// and its next continue-as-new writes version 3 with the lifecycle.
func TestVersions_Version2CarryGoesOnWhereItWas(t *testing.T) {
	env := newEnv(t)
	mockActions(env)
	env.OnActivity(activities.ClosedChildrenName, mock.Anything, mock.Anything).Return([]activities.ClosedChild{}, nil)
	var mu sync.Mutex
	var sent []string
	for _, p := range []string{"root/db", "root/web"} {
		env.OnSignalExternalWorkflow(mock.Anything, p, "", SignalDesired, mock.Anything).Return(func(_, id, _, _ string, arg any) error {
			mu.Lock()
			defer mu.Unlock()
			sent = append(sent, id+" "+arg.(string))
			return nil
		})
	}
	env.OnRequestCancelExternalWorkflow(mock.Anything, mock.Anything, mock.Anything).Return(nil)
	root := tree("root", stubNode("db", nil), dependsOn(stubNode("web", nil), "db"))
	legacy := `{"desired":"running","rejectedSignals":0,"children":[
	 {"name":"db","path":"root/db","run":"r-db","digest":"d","wantGeneration":1,"held":true,
	  "status":{"path":"root/db","kind":"stub","state":"stopped","desired":"stopped","generation":1}},
	 {"name":"web","path":"root/web","run":"r-web","digest":"d","wantGeneration":1,"held":true,
	  "status":{"path":"root/web","kind":"stub","state":"stopped","desired":"stopped","generation":1}}]}`
	var carry SupervisorCarry
	require.NoError(t, json.Unmarshal([]byte(legacy), &carry))
	var before, after []string
	at(env, 30*time.Second, func() {
		mu.Lock()
		before = append(before, sent...)
		mu.Unlock()
		env.SignalWorkflow(SignalChild, ChildReport{Seq: 1, Run: "r-db",
			Status: Status{Path: "root/db", Kind: spec.KindStub, State: "running", Desired: "running", Generation: 1}})
	})
	at(env, time.Minute, func() {
		mu.Lock()
		after = append(after, sent...)
		mu.Unlock()
		env.SignalWorkflow(SignalUpgrade, nil)
	})
	endAt(env, 10*time.Minute)
	env.ExecuteWorkflow(SupervisorWorkflow, SupervisorInput{Path: "root", Spec: pruneSpec(root), Generation: 1, Carry: &carry, Version: 2})

	require.Equal(t, []string{"root/db running"}, before, "db's queued start goes; web waits for db")
	require.Equal(t, []string{"root/db running", "root/web running"}, after, "web's goes once db runs")
	next, ok := continuedAs[SupervisorInput](t, env.GetWorkflowError())
	require.True(t, ok, "continued as new: %v", env.GetWorkflowError())
	require.Equal(t, SupervisorVersion, next.Version)
	for _, r := range next.Carry.Children {
		require.Equal(t, supervise.Live, r.Lifecycle, r.Name)
	}
}
