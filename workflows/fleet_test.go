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
)

// Tests of fleets: instances and their placement over hosts (fleet.go,
// internal/placement).

// fleetStarts records, by path, the spec each start was sent with.
type fleetStarts struct {
	mu    sync.Mutex
	specs map[string]spec.Node
}

func (f *fleetStarts) get(path string) spec.Node {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.specs[path]
}

func webFleet(n int, hosts ...string) spec.Node {
	web := stubNode("web", nil)
	web.Instances = n
	root := tree("root", web, stubNode("db", nil))
	root.Hosts = hosts
	return root
}

func childHosts(st Status) map[string]string {
	out := map[string]string{}
	for _, c := range st.Children {
		out[c.Path] = c.Host
	}
	return out
}

func TestFleet_InstancesAreSiblingsSpreadOverTheirHosts(t *testing.T) {
	env := newEnv(t)
	f := &fleetStarts{specs: map[string]spec.Node{}}
	env.OnActivity(activities.StartName, mock.Anything, mock.Anything).Return(func(_ context.Context, r activities.ActionRequest) (activities.ActionResult, error) {
		f.mu.Lock()
		f.specs[r.Path] = r.Spec
		f.mu.Unlock()
		return activities.ActionResult{Attempt: 1, Instance: r.Path}, nil
	})
	var first, same, fewer Status
	at(env, time.Minute, func() { first = query(t, env) })
	// The same spec again moves nothing; then one instance fewer.
	at(env, 2*time.Minute, func() { env.SignalWorkflow(SignalSpec, spec.Update{Spec: webFleet(3, "a", "b")}) })
	at(env, 3*time.Minute, func() { same = query(t, env) })
	at(env, 4*time.Minute, func() { env.SignalWorkflow(SignalSpec, spec.Update{Spec: webFleet(2, "a", "b")}) })
	at(env, 6*time.Minute, func() { fewer = query(t, env) })
	endAt(env, 7*time.Minute)
	env.ExecuteWorkflow(SupervisorWorkflow, SupervisorInput{Path: "root", Spec: webFleet(3, "a", "b")})

	want := map[string]string{"root/web-0": "a", "root/web-1": "b", "root/web-2": "a", "root/db": "b"}
	require.Equal(t, want, childHosts(first), "spread in spec order, the fewest first")
	for path, host := range want {
		require.Equal(t, "running", stateOf(first, path), path)
		s := f.get(path)
		require.Equal(t, host, s.PlacedOn, "%s was started on its host", path)
	}
	require.Equal(t, 2, *f.get("root/web-2").Instance)
	require.Equal(t, want, childHosts(same), "an apply that changes nothing moves nothing")
	delete(want, "root/web-2")
	require.Equal(t, want, childHosts(fewer), "the highest instance goes")
}

func stateOf(st Status, path string) string {
	for _, c := range st.Children {
		if c.Path == path {
			return c.State
		}
	}
	return ""
}
