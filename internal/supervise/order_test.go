package supervise

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/steward-sh/steward/internal/spec"
)

// db <- api <- web: the chain of the tests below.
func chain(db, api, web Sibling) []Sibling {
	db.Name, api.Name, web.Name = "db", "api", "web"
	api.DependsOn, web.DependsOn = []string{"db"}, []string{"api"}
	return []Sibling{db, api, web}
}

var (
	up      = Sibling{State: "running"}
	down    = Sibling{State: "stopped"}
	waiting = Sibling{Lifecycle: Deferred, CanStart: true, State: "stopped"}
)

func deferredOn(deps ...string) Sibling {
	w := waiting
	w.NodeDependsOn = deps
	return w
}

// Release, case by case: what the order lets go, in which order, and why a
// child still waits.
func TestRelease(t *testing.T) {
	pendingStop := func(s Sibling) Sibling { s.Lifecycle = PendingStop; return s }
	held := func(s Sibling) Sibling { s.Lifecycle = HeldStart; return s }
	restart := func(s Sibling) Sibling { s.Lifecycle = RestartStop; return s }
	for _, c := range []struct {
		name             string
		sibs             []Sibling
		running, blocked bool
		steps            []OrderStep
	}{
		{name: "nothing waits", sibs: chain(up, up, up), running: true},
		{name: "a deferred child starts once its dependency is up",
			sibs: chain(up, deferredOn("db"), deferredOn("api")), running: true,
			steps: []OrderStep{{Kind: StartChild, Index: 1}, {Kind: Wait, Index: 2, Reason: "waiting for api to be running"}}},
		{name: "a deferred child waits for a dependency that is not up",
			sibs: chain(down, deferredOn("db"), up), running: true,
			steps: []OrderStep{{Kind: Wait, Index: 1, Reason: "waiting for db to be running"}}},
		{name: "stopped supervisor: nothing is waited for, what starts starts stopped",
			sibs: chain(down, deferredOn("db"), up), running: false,
			steps: []OrderStep{{Kind: StartChild, Index: 1}}},
		{name: "blocked by a plan of the core: a child waiting for dependencies does not start",
			sibs: chain(up, deferredOn("db"), up), running: true, blocked: true},
		{name: "a child waiting only for a removed run starts even when blocked",
			sibs: chain(up, deferredOn(), up), running: true, blocked: true,
			steps: []OrderStep{{Kind: StartChild, Index: 1}}},
		{name: "a removed run of its path still ends: it waits silently",
			sibs: func() []Sibling { w := deferredOn(); w.Removing = true; return chain(up, w, up) }(), running: true},
		{name: "the operator's stop goes dependants first, each once its dependants are down",
			sibs: chain(pendingStop(up), pendingStop(up), pendingStop(up)), running: false,
			steps: []OrderStep{{Kind: StopChild, Index: 2}}},
		{name: "a stop whose dependants are down goes",
			sibs: chain(pendingStop(up), pendingStop(up), down), running: false,
			steps: []OrderStep{{Kind: StopChild, Index: 1}}},
		{name: "the operator's start goes once its dependencies are up",
			sibs: chain(up, held(down), held(down)), running: true,
			steps: []OrderStep{{Kind: RunChild, Index: 1}, {Kind: Wait, Index: 2, Reason: "waiting for api to be running"}}},
		{name: "the operator's start waits while blocked",
			sibs: chain(up, held(down), up), running: true, blocked: true},
		{name: "the operator's restart stops every child first, a dependency once its dependants are down",
			sibs: chain(restart(up), restart(up), restart(down)), running: true,
			steps: []OrderStep{{Kind: StopChild, Index: 2}, {Kind: StopChild, Index: 1}}},
		{name: "the operator's restart starts once every child of it is down",
			sibs: func() []Sibling {
				s := chain(restart(down), restart(down), restart(down))
				for i := range s {
					s[i].Lifecycle = RestartStart
				}
				return s
			}(), running: true,
			steps: []OrderStep{{Kind: RunChild, Index: 0}, {Kind: Wait, Index: 1, Reason: "waiting for db to be running"}, {Kind: Wait, Index: 2, Reason: "waiting for api to be running"}}},
		{name: "an ended child has nothing queued: no signal",
			sibs: func() []Sibling {
				g := held(down)
				g.Lifecycle = Step(g.Lifecycle, ReportedEnd)
				return chain(up, g, up)
			}(), running: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			steps, _ := Release(c.sibs, c.running, c.blocked, 0)
			require.Equal(t, c.steps, steps)
		})
	}
}

// What Release leaves: a started child is not up until it reports; a stop
// or start sent is no longer queued. The input is not changed.
func TestReleaseLeavesTheSiblingsAsItsStepsDo(t *testing.T) {
	in := chain(up, deferredOn("db"), Sibling{State: "stopped", Lifecycle: HeldStart})
	_, after := Release(in, true, false, 0)
	require.Equal(t, Deferred, in[1].Lifecycle, "the input is left as it was")
	require.Equal(t, Live, after[1].Lifecycle)
	require.False(t, after[1].Up(), "started, not yet running")
	require.Equal(t, HeldStart, after[2].Lifecycle, "web waits for api")
}

// A child supervisor counts as up once its whole subtree runs, and as down
// once nothing below it runs.
func TestSiblingUpAndDown(t *testing.T) {
	sup := Sibling{Supervisor: true, State: "running", Subtree: "changing"}
	require.False(t, sup.Up())
	sup.Subtree = "running"
	require.True(t, sup.Up())
	sup = Sibling{Supervisor: true, State: "stopped", Subtree: "changing"}
	require.False(t, sup.Down())
	sup.Subtree = "stopped"
	require.True(t, sup.Down())
	require.True(t, Sibling{Completed: true}.Up(), "a job that completed counts as done")
	require.True(t, Sibling{Lifecycle: Closed, State: "running"}.Down(), "gone")
	require.False(t, Sibling{State: "stopped", Lifecycle: PendingStop}.Down(), "a stop still queued")
	require.False(t, Sibling{State: "stopped", Lifecycle: RestartStop}.Down(), "a restart's stop still queued")
	require.True(t, Sibling{State: "stopped", Lifecycle: RestartStart}.Down(), "stopped for the restart, its start queued")
}

// The two gates, and where they differ: a plan in progress blocks the
// dependency order but does not keep a closed child supervisor down.
func TestBlockedAndStaysDown(t *testing.T) {
	for _, c := range []struct {
		name             string
		m                Memory
		desired          string
		blocked, staysDn bool
	}{
		{"running", Memory{}, spec.DesiredRunning, false, false},
		{"a plan in progress", Memory{Plan: &Plan{Op: OpRestart}}, spec.DesiredRunning, true, false},
		{"gave up", Memory{Failed: true}, spec.DesiredRunning, true, true},
		{"held by its supervisor", Memory{Held: true}, spec.DesiredRunning, true, true},
		{"stopped by the operator", Memory{}, spec.DesiredStopped, false, true},
	} {
		require.Equal(t, c.blocked, Blocked(c.m), c.name)
		require.Equal(t, c.staysDn, StaysDown(c.m, c.desired), c.name)
	}
}

// A child that has not reported the spec its supervisor sent it is not up:
// a worker restarting for a new spec reports it at the restart's end.
func TestSibling_ApplyingIsNotUp(t *testing.T) {
	c := Sibling{Name: "db", State: "running", Lifecycle: Live}
	require.True(t, c.Up())
	c.Applying = true
	require.False(t, c.Up())
	require.False(t, c.Down(), "nor down")
}

// A child about to start waits for a removed run of its path first, then
// for its dependencies; the start window's children say which they wait
// for.
func TestStartHold(t *testing.T) {
	for _, c := range []struct {
		removed bool
		waiting []string
		want    string
	}{
		{false, nil, ""},
		{true, nil, RemovedRunReason},
		{true, []string{"db"}, RemovedRunReason},
		{false, []string{"db", "cache"}, "waiting for db, cache to be running"},
	} {
		require.Equal(t, c.want, StartHold(c.removed, c.waiting), "%+v", c)
	}
	require.Equal(t, WindowReason, WindowHold(false))
	require.Equal(t, RemovedRunReason, WindowHold(true))
}
