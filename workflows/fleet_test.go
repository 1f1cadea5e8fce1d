package workflows

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/steward-sh/steward/activities"
	"github.com/steward-sh/steward/internal/hostcore"
	"github.com/steward-sh/steward/internal/spec"
	"github.com/steward-sh/steward/internal/supervise"
	"github.com/steward-sh/steward/internal/versions"
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

// hostActions mocks start and stop as hosts run them: each start's
// instance is PATH@HOST; a stop on a host that is away fails (retryably),
// as a stop that waits on its queue would not be taken.
type hostActions struct {
	mu   sync.Mutex
	away map[string]bool
	log  []string
}

func (h *hostActions) setAway(host string, away bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.away[host] = away
}

func (h *hostActions) get() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.log...)
}

func mockHostActions(env *testsuite.TestWorkflowEnvironment) *hostActions {
	h := &hostActions{away: map[string]bool{}}
	env.OnActivity(activities.StartName, mock.Anything, mock.Anything).Return(func(_ context.Context, r activities.ActionRequest) (activities.ActionResult, error) {
		h.mu.Lock()
		defer h.mu.Unlock()
		h.log = append(h.log, "start "+r.Path+"@"+r.Spec.RunsOn())
		res := activities.ActionResult{Attempt: 1, Instance: r.Path + "@" + r.Spec.RunsOn()}
		if on := r.OnSuccess; on != nil {
			// As the activity does: it sends the success report itself.
			rep := on.Report
			rep.Status.Instance, rep.Status.Since = res.Instance, env.Now()
			res.Reported = env.SignalWorkflowByID(on.Parent, SignalChild, rep) == nil
		}
		return res, nil
	})
	env.OnActivity(activities.StopName, mock.Anything, mock.Anything).Return(func(_ context.Context, r activities.ActionRequest) (activities.ActionResult, error) {
		h.mu.Lock()
		defer h.mu.Unlock()
		if h.away[r.Spec.RunsOn()] {
			return activities.ActionResult{}, temporal.NewApplicationError("host away", activities.ErrActionFailed)
		}
		h.log = append(h.log, "stop "+r.Instance)
		return activities.ActionResult{Attempt: 1}, nil
	})
	// An observe of a host away is never taken (an unknown worker's
	// probe); one that is taken finds the instance the mock started.
	env.OnActivity(activities.ObserveName, mock.Anything, mock.Anything).Return(func(_ context.Context, r activities.ActionRequest) (activities.ActionResult, error) {
		h.mu.Lock()
		defer h.mu.Unlock()
		if h.away[r.Spec.RunsOn()] {
			return activities.ActionResult{}, temporal.NewTimeoutError(enumspb.TIMEOUT_TYPE_SCHEDULE_TO_START, nil)
		}
		return activities.ActionResult{Attempt: 1, Observed: "running"}, nil
	}).Maybe()
	return h
}

func child(st Status, path string) Status {
	for _, c := range st.Children {
		if c.Path == path {
			return c
		}
	}
	return Status{}
}

func TestFleet_AWorkerMovesOffAHostLostPastItsRescheduleAfter(t *testing.T) {
	env := newEnv(t)
	h := mockHostActions(env)
	root := webFleet(2, "a", "b")
	root.Reschedule = &spec.Reschedule{After: spec.Duration(time.Minute)}
	var before, after, back Status
	at(env, time.Minute, func() {
		h.setAway("a", true)
		env.SignalWorkflow(SignalHost, HostState{Host: "a", Live: HostUnknown, Since: env.Now()})
	})
	at(env, 110*time.Second, func() { before = query(t, env) })
	at(env, 130*time.Second, func() { after = query(t, env) })
	at(env, 150*time.Second, func() { // (the test environment tries an activity 10 times at most)
		h.setAway("a", false)
		env.SignalWorkflow(SignalHost, HostState{Host: "a", Live: HostUp, Since: env.Now()})
	})
	var subs []activities.HostSubscribeRequest
	at(env, 5*time.Minute, func() { back = query(t, env); subs = hostSubscriptions(env) })
	endAt(env, 6*time.Minute)
	env.ExecuteWorkflow(SupervisorWorkflow, SupervisorInput{Path: "root", Spec: root, Generation: 1, Version: SupervisorVersion})

	require.Equal(t, "a", child(before, "root/web-0").Host, "not before reschedule.after")
	web0 := child(after, "root/web-0")
	require.Equal(t, "b", web0.Host, "moved once its host was lost past after")
	require.Equal(t, "running", web0.State)
	require.Equal(t, []string{"a/root/web-0@a"}, web0.StaleCopies, "the copy on the lost host is stale")
	require.Equal(t, 0, web0.Restarts, "a move is no restart")
	running := 0
	for _, c := range after.Children {
		if c.State == "running" && c.Path != "root/db" {
			running++
		}
	}
	require.Equal(t, 2, running, "never more than N counted running")

	web0 = child(back, "root/web-0")
	require.Equal(t, "b", web0.Host, "nothing moves back by itself")
	require.Empty(t, web0.StaleCopies)
	require.Contains(t, h.get(), "stop root/web-0@a", "the stale copy was stopped once its host was back")
	require.Equal(t, "b", child(back, "root/web-1").Host)

	require.NotEmpty(t, subs)
	last := map[string]activities.HostSubscription{} // each host keeps the highest number
	for _, s := range subs {
		if s.Subscription.Seq > last[s.Host].Seq {
			last[s.Host] = s.Subscription
		}
	}
	require.Equal(t, 0, last["a"].Movable, "root has nothing left on a")
	require.Equal(t, 3, last["b"].Movable, "web-0, web-1 and db on b")

	// Deleted, the supervisor unsubscribes.
	all := hostSubscriptions(env)
	seqs := map[int64]bool{}
	var newest activities.HostSubscription
	for _, r := range all {
		require.False(t, seqs[r.Subscription.Seq], "subscriptions are numbered, each its own number")
		seqs[r.Subscription.Seq] = true
		if r.Subscription.Seq > newest.Seq {
			newest = r.Subscription
		}
	}
	require.True(t, newest.Gone && newest.Supervisor == "root", "%+v", newest)
}

func TestFleet_ADrainMovesWorkersUnderTheUpdatePolicy(t *testing.T) {
	env := newEnv(t)
	h := mockHostActions(env)
	web := stubNode("web", &spec.Stub{Delay: spec.Duration(time.Second)})
	web.Instances = 4
	root := tree("root", web)
	root.Hosts = []string{"a", "b", "c"}
	one := spec.Parallel{N: 1}
	root.Update = &spec.UpdatePolicy{MaxParallel: &one}
	var drained, undrained Status
	var startsBefore int
	at(env, time.Minute, func() {
		startsBefore = len(h.get())
		env.SignalWorkflow(SignalHost, HostState{Host: "a", Live: HostUp, Draining: true})
	})
	var moves []string
	var records Status
	at(env, 3*time.Minute, func() { drained = query(t, env); records = queryOwn(t, env); moves = h.get()[startsBefore:] })
	at(env, 4*time.Minute, func() { env.SignalWorkflow(SignalHost, HostState{Host: "a", Live: HostUp}) })
	at(env, 5*time.Minute, func() { undrained = query(t, env) })
	endAt(env, 6*time.Minute)
	env.ExecuteWorkflow(SupervisorWorkflow, SupervisorInput{Path: "root", Spec: root, Generation: 1, Version: SupervisorVersion})

	for _, c := range records.Children {
		require.NotEqual(t, "a", c.Host, "%s: its supervisor's record says where it runs now (regression: a move's success report, sent by its activity, named the old host)", c.Path)
	}
	for _, c := range drained.Children {
		require.NotEqual(t, "a", c.Host, c.Path)
		require.Equal(t, "running", c.State, c.Path)
		require.Empty(t, c.StaleCopies)
	}
	// One at a time (maxParallel 1): the second move's start comes after
	// the first's. Within a move its stop on a and its start elsewhere go
	// at once (move: overlap), in either order; the first move's stop may
	// still be on its way when the second begins (its worker counts as
	// updated once it runs on b).
	require.Len(t, moves, 4, "%v", moves)
	require.ElementsMatch(t, []string{"stop root/web-0@a", "start root/web-0@b", "stop root/web-3@a", "start root/web-3@c"}, moves)
	var starts []string
	for _, m := range moves {
		if strings.HasPrefix(m, "start ") {
			starts = append(starts, m)
		}
	}
	require.Equal(t, []string{"start root/web-0@b", "start root/web-3@c"}, starts, "%v", moves)
	require.Equal(t, childHosts(drained), childHosts(undrained), "an undrain moves nothing back")
}

// overlapMocks mocks starts and stops of host a and b: a stop on a waits
// (2 s of real time at most) for a start on b; overlapped reports whether
// one came meanwhile (a move's start sent with its stop).
func overlapMocks(env *testsuite.TestWorkflowEnvironment) (overlapped func() bool) {
	env.SetTestTimeout(30 * time.Second) // the stop's real-time wait
	startCalled := make(chan struct{})
	var once sync.Once
	var mu sync.Mutex
	seen := false
	env.OnActivity(activities.StartName, mock.Anything, mock.Anything).Return(func(_ context.Context, r activities.ActionRequest) (activities.ActionResult, error) {
		if r.Spec.RunsOn() == "b" {
			once.Do(func() { close(startCalled) })
		}
		return activities.ActionResult{Attempt: 1, Instance: r.Path + "@" + r.Spec.RunsOn()}, nil
	})
	env.OnActivity(activities.StopName, mock.Anything, mock.Anything).Return(func(_ context.Context, r activities.ActionRequest) (activities.ActionResult, error) {
		if r.Spec.RunsOn() != "a" {
			return activities.ActionResult{Attempt: 1}, nil
		}
		select {
		case <-startCalled:
			mu.Lock()
			seen = true
			mu.Unlock()
		case <-time.After(2 * time.Second):
		}
		return activities.ActionResult{Attempt: 1}, nil
	})
	return func() bool {
		mu.Lock()
		defer mu.Unlock()
		return seen
	}
}

// drainOne drains host a of a single instance, with the given move, and
// reports whether the start on b was called while the stop on a ran (the
// stop waits up to 2 s, real time, for the start to be called).
func drainOne(t *testing.T, move string) (overlapped bool, final Status) {
	env := newEnv(t)
	overlap := overlapMocks(env)
	web := stubNode("web", nil)
	web.Instances = 1
	root := tree("root", web)
	root.Hosts, root.Move = []string{"a", "b"}, move
	at(env, time.Minute, func() { env.SignalWorkflow(SignalHost, HostState{Host: "a", Live: HostUp, Draining: true}) })
	at(env, 3*time.Minute, func() { final = query(t, env) })
	endAt(env, 4*time.Minute)
	env.ExecuteWorkflow(SupervisorWorkflow, SupervisorInput{Path: "root", Spec: root, Generation: 1, Version: SupervisorVersion})
	return overlap(), final
}

func TestFleet_AMoveOffAnUpHostStopsAndStartsAtOnceUnlessStopFirst(t *testing.T) {
	overlapped, final := drainOne(t, "")
	require.Equal(t, "b", child(final, "root/web-0").Host)
	require.Equal(t, "running", child(final, "root/web-0").State)
	require.True(t, overlapped, "move: overlap (the default): the start on b is sent with the stop on a")

	overlapped, final = drainOne(t, spec.MoveStopFirst)
	require.Equal(t, "b", child(final, "root/web-0").Host)
	require.Equal(t, "running", child(final, "root/web-0").State)
	require.False(t, overlapped, "move: stopFirst: the start on b waits for the stop on a")
}

// A signed fleet's worker sends its template with its actions: its host
// verifies the template's signature and that the spec is its rendering.
func TestFleet_ASignedInstanceSendsItsTemplate(t *testing.T) {
	env := newEnv(t)
	var got *spec.Node
	env.OnActivity(activities.StartName, mock.Anything, mock.Anything).Return(func(_ context.Context, r activities.ActionRequest) (activities.ActionResult, error) {
		got = r.Template
		return activities.ActionResult{Attempt: 1, Instance: "i1"}, nil
	})
	n := stubNode("web-2", nil)
	two := 2
	n.Instance, n.PlacedOn, n.Signature = &two, "b", "ed25519:k:s"
	endAt(env, time.Minute)
	env.ExecuteWorkflow(WorkerWorkflow, WorkerInput{Path: "p/web-2", Spec: n, Generation: 1, Version: WorkerVersion})
	require.NotNil(t, got, "the template rides with the start")
	require.Equal(t, n.Signature, got.Signature)
	require.Equal(t, 2, *got.Instance)
	require.Equal(t, "b", got.PlacedOn)
}

// Regression (review of move: overlap): a move whose stop and start went
// at once, cancelled by a newer spec while its stop still ran, must not
// lose the start that got through: the instance it started on the new
// host is the worker's or is stopped, never left running unwatched.
func TestFleet_ACancelledOverlappingMoveLeavesNoOrphan(t *testing.T) {
	env := newEnv(t)
	env.SetTestTimeout(30 * time.Second)
	var mu sync.Mutex
	started, stopped := map[string]bool{}, map[string]bool{}
	n := 0
	env.OnActivity(activities.StartName, mock.Anything, mock.Anything).Return(func(_ context.Context, r activities.ActionRequest) (activities.ActionResult, error) {
		mu.Lock()
		defer mu.Unlock()
		n++
		id := fmt.Sprintf("i%d@%s", n, r.Spec.RunsOn())
		started[id] = true
		return activities.ActionResult{Attempt: 1, Instance: id}, nil
	})
	env.OnActivity(activities.RestartName, mock.Anything, mock.Anything).Return(func(_ context.Context, r activities.ActionRequest) (activities.ActionResult, error) {
		mu.Lock()
		defer mu.Unlock()
		n++
		id := fmt.Sprintf("i%d@%s", n, r.Spec.RunsOn())
		stopped[r.Instance], started[id] = true, true // as a driver restarts: the old instance goes
		return activities.ActionResult{Attempt: 1, Instance: id}, nil
	})
	env.OnActivity(activities.StopName, mock.Anything, mock.Anything).Return(func(ctx context.Context, r activities.ActionRequest) (activities.ActionResult, error) {
		if r.Spec.RunsOn() == "a" && r.Instance == "i1@a" {
			mu.Lock()
			first := !stopped["blocked"]
			stopped["blocked"] = true
			mu.Unlock()
			if first { // the move's stop hangs until it is cancelled
				<-ctx.Done()
				return activities.ActionResult{}, ctx.Err()
			}
		}
		mu.Lock()
		defer mu.Unlock()
		stopped[r.Instance] = true
		return activities.ActionResult{Attempt: 1}, nil
	})
	node := func(host string, delay time.Duration) spec.Node {
		w := stubNode("web-0", &spec.Stub{Delay: spec.Duration(delay)})
		zero := 0
		w.Hosts, w.PlacedOn, w.Instance = []string{"a", "b"}, host, &zero
		return w
	}
	at(env, time.Minute, func() { env.SignalWorkflow(SignalSpec, spec.Update{Spec: node("b", 0), Generation: 2}) })
	// The move's start has gone through; its stop still hangs: a newer
	// spec (a restart) cancels the move.
	at(env, time.Minute+10*time.Second, func() {
		env.SignalWorkflow(SignalSpec, spec.Update{Spec: node("b", time.Millisecond), Generation: 3})
	})
	var st Status
	at(env, 3*time.Minute, func() { st = query(t, env) })
	endAt(env, 4*time.Minute)
	env.ExecuteWorkflow(WorkerWorkflow, WorkerInput{Path: "p/web-0", Spec: node("a", 0), Generation: 1, Version: WorkerVersion})

	mu.Lock()
	defer mu.Unlock()
	require.True(t, started["i2@b"], "the move's start went with its stop: %v", started)
	require.Equal(t, "running", st.State, "%+v", st)
	for id := range started {
		require.True(t, id == st.Instance || stopped[id], "%s was started and is neither the worker's instance (%s) nor stopped (stops: %v)", id, st.Instance, stopped)
	}
}

// Version 3 of a supervisor knows no hosts (supFleet came in version 4):
// it subscribes to none, drops the `host` signal as unknown, and moves no
// worker off a host that is lost.
func TestVersions_Version3SupervisorIgnoresItsHosts(t *testing.T) {
	env := newEnv(t)
	h := mockHostActions(env)
	root := webFleet(2, "a", "b")
	root.Reschedule = &spec.Reschedule{After: spec.Duration(time.Minute)}
	var after Status
	at(env, time.Minute, func() {
		h.setAway("a", true)
		env.SignalWorkflow(SignalHost, HostState{Host: "a", Live: HostUnknown, Since: env.Now()})
	})
	at(env, 3*time.Minute, func() { after = query(t, env) })
	endAt(env, 4*time.Minute)
	env.ExecuteWorkflow(SupervisorWorkflow, SupervisorInput{Path: "root", Spec: root, Generation: 1, Version: versions.SupFleet.Since - 1})

	require.Equal(t, "a", child(after, "root/web-0").Host, "not moved")
	require.Empty(t, child(after, "root/web-0").StaleCopies)
	require.Empty(t, hostSubscriptions(env), "no subscription to any host")
}

// Version 4 of a worker knows no moves (versions.WorkerMoves came in 5): a
// spec that only places it on another host is taken as any spec (a stub's
// placement alone restarts nothing); version 5 carries the move out: the
// copy on the old host stopped, the service started on the new one (at
// once: a move overlaps by default, so the two come in either order).
func TestVersions_Version4WorkerKnowsNoMoves(t *testing.T) {
	for _, c := range []struct {
		version int
		want    []string // the actions before the tree's end
	}{
		{versions.WorkerMoves.Since - 1, []string{"start p/web-0"}},
		{versions.WorkerMoves.Since, []string{"start p/web-0", "stop p/web-0", "start p/web-0"}},
	} {
		env := newEnv(t)
		log := mockActions(env)
		n := stubNode("web-0", nil)
		n.PlacedOn = "a"
		moved := n
		moved.PlacedOn = "b"
		at(env, time.Minute, func() { env.SignalWorkflow(SignalSpec, spec.Update{Generation: 2, Spec: moved}) })
		var st Status
		var actions []string
		at(env, 2*time.Minute, func() { st = query(t, env); actions = log.get() })
		endAt(env, 3*time.Minute)
		env.ExecuteWorkflow(WorkerWorkflow, WorkerInput{Path: "p/web-0", Spec: n, Generation: 1, Version: c.version})
		require.Equal(t, "running", st.State, "version %d", c.version)
		require.Equal(t, "b", st.Host, "version %d", c.version)
		require.ElementsMatch(t, c.want, actions, "version %d", c.version)
	}
}

// lostDuringUpdate rolls out a change of four instances over hosts a and b
// (one at a time, each healthy for 20 s), loses host a just after the
// update began (its restarts are never taken: unreachable), and returns
// the supervisor's status 50 s after the loss (reschedule.after 10 s,
// healthyDeadline 3 minutes) and at the end.
func lostDuringUpdate(t *testing.T, version int) (mid, final Status) {
	env := newEnv(t)
	h := mockHostActions(env)
	env.OnActivity(activities.RestartName, mock.Anything, mock.Anything).Return(func(_ context.Context, r activities.ActionRequest) (activities.ActionResult, error) {
		h.mu.Lock()
		defer h.mu.Unlock()
		if h.away[r.Spec.RunsOn()] {
			return activities.ActionResult{}, temporal.NewTimeoutError(enumspb.TIMEOUT_TYPE_SCHEDULE_TO_START, nil)
		}
		h.log = append(h.log, "restart "+r.Path+"@"+r.Spec.RunsOn())
		return activities.ActionResult{Attempt: 1, Instance: r.Path + "@" + r.Spec.RunsOn() + "/2"}, nil
	})
	root := webFleet(4, "a", "b")
	root.Reschedule = &spec.Reschedule{After: spec.Duration(10 * time.Second)}
	root.Update = &spec.UpdatePolicy{MaxParallel: parallel(1), MinHealthyTime: spec.Dur(20 * time.Second), HealthyDeadline: spec.Dur(3 * time.Minute)}
	changed := root
	changed.Children = append([]spec.Node(nil), root.Children...)
	changed.Children[0].Stub = &spec.Stub{Delay: spec.Duration(time.Millisecond)}
	at(env, time.Minute, func() { env.SignalWorkflow(SignalSpec, spec.Update{Spec: changed}) })
	at(env, time.Minute+time.Second, func() {
		h.setAway("a", true)
		env.SignalWorkflow(SignalHost, HostState{Host: "a", Live: HostUnknown, Since: env.Now()})
	})
	at(env, time.Minute+51*time.Second, func() { mid = query(t, env) })
	at(env, 8*time.Minute, func() { final = query(t, env) })
	endAt(env, 9*time.Minute)
	env.ExecuteWorkflow(SupervisorWorkflow, SupervisorInput{Path: "root", Spec: root, Generation: 1, Version: version})
	return mid, final
}

// Regression (TestFault_HostFrozenDuringAnUpdate, found by the soak's
// fault tests): a host lost while an update rolls. Its workers move at
// once, the update's targets among them sent their new spec on their new
// host, and the update completes. At version 9 the moves waited for the
// update, whose target on the lost host failed it at healthyDeadline.
func TestFleet_AHostLostDuringAnUpdateMovesItsWorkersAtOnce(t *testing.T) {
	mid, final := lostDuringUpdate(t, SupervisorVersion)
	for _, c := range mid.Children {
		require.NotEqual(t, "a", c.Host, "%s moved off the lost host while the update rolls", c.Path)
	}
	require.NotNil(t, final.Update)
	require.Equal(t, supervise.UpdateComplete, final.Update.State, "%+v", final.Update)
	require.Equal(t, 4, final.Update.Updated)
	for _, c := range final.Children {
		require.Equal(t, "running", c.State, c.Path)
		require.NotEqual(t, "a", c.Host, c.Path)
		require.Zero(t, c.Restarts, "%s: a move is no restart", c.Path)
	}

	old, oldFinal := lostDuringUpdate(t, versions.SupMoveLostInUpdate.Since-1)
	onA := 0
	for _, c := range old.Children {
		if c.Host == "a" {
			onA++
		}
	}
	require.NotZero(t, onA, "version 9 holds the moves while the update rolls")
	require.Equal(t, supervise.UpdateFailed, oldFinal.Update.State, "and its target on the lost host fails the update: %+v", oldFinal.Update)
}

// subscriptionSeqs runs a fleet supervisor at version for two minutes and
// returns the numbers of its subscriptions, and when it began.
func subscriptionSeqs(t *testing.T, version int) (seqs []int64, began time.Time) {
	env := newEnv(t)
	mockHostActions(env)
	began = env.Now()
	at(env, time.Minute, func() { env.SignalWorkflow(SignalHost, HostState{Host: "a", Live: HostUp, Draining: true}) })
	endAt(env, 2*time.Minute)
	env.ExecuteWorkflow(SupervisorWorkflow, SupervisorInput{Path: "root", Spec: webFleet(2, "a", "b"), Generation: 1, Version: version})
	for _, r := range hostSubscriptions(env) {
		seqs = append(seqs, r.Subscription.Seq)
	}
	return seqs, began
}

// Regression (TestFault_WorkerKilledDuringADrain run twice in one
// process): a tree deleted and applied again under its name numbered its
// host subscriptions from 1 again, below the numbers of its first life
// that its hosts kept, and they ignored it (a drain found the host drained
// with two of its services on it). From version 10 a subscription is
// numbered past the time it is sent: above any earlier life's, each its
// own.
func TestFleet_ATreeAppliedAgainIsHeardByItsHosts(t *testing.T) {
	seqs, began := subscriptionSeqs(t, SupervisorVersion)
	require.NotEmpty(t, seqs)
	seen := map[int64]bool{}
	for _, s := range seqs {
		require.GreaterOrEqual(t, s, began.UnixNano(), "numbered past the time")
		require.False(t, seen[s], "each its own number (they may run out of order)")
		seen[s] = true
	}
	old, _ := subscriptionSeqs(t, versions.SupHostSeqByTime.Since-1)
	require.EqualValues(t, 1, slices.Min(old), "version 9 numbers from 1")
}

// movedByAForgedLost runs a worker of version with move: stopFirst on
// host a, and sends it (as anyone may) a spec placing it on b that says a
// is lost while its own record has a up; it reports whether the start on
// b was sent while the stop on a was still in flight.
func movedByAForgedLost(t *testing.T, version int) (overlapped bool, final Status) {
	env := newEnv(t)
	overlap := overlapMocks(env)
	env.OnActivity(activities.ObserveName, mock.Anything, mock.Anything).Return(activities.ActionResult{Attempt: 1, Observed: "running"}, nil).Maybe()
	node := stubNode("web-0", nil)
	node.Move, node.PlacedOn = spec.MoveStopFirst, "a"
	moved := node
	moved.PlacedOn = "b"
	at(env, time.Minute, func() { env.SignalWorkflow(SignalSpec, spec.Update{Generation: 2, Spec: moved, Lost: "a"}) })
	at(env, 3*time.Minute, func() { final = query(t, env) })
	endAt(env, 4*time.Minute)
	env.ExecuteWorkflow(WorkerWorkflow, WorkerInput{Path: "root/web-0", Spec: node, Generation: 1, Version: version})
	return overlap(), final
}

// Regression (attack review): a worker took any sender's word that its
// host was lost, and a move off a lost host starts at once: a spec sent by
// hand with lost set made a move: stopFirst service run on its new host
// beside its old process. From worker 9 such a worker stops the old copy
// first unless it finds the host unknown itself.
func TestWorker_AForgedLostDoesNotBreakStopFirst(t *testing.T) {
	overlapped, final := movedByAForgedLost(t, WorkerVersion)
	require.False(t, overlapped, "the start on b waits for the stop on a")
	require.Equal(t, "b", final.Host)
	require.Equal(t, "running", final.State)

	overlapped, _ = movedByAForgedLost(t, versions.WorkerLostStopFirst.Since-1)
	require.True(t, overlapped, "version 8 started on b at once, its old copy left to a stale stop")
}

// Regression (attack review): a supervisor took any host's note, and kept
// the state of at most 1,024 hosts: notes of made-up hosts filled its
// table, and it refused every real host it had not heard from after that,
// for good. From supervisor 13 a note is taken only for a host it has
// subscribed to.
func TestFleet_ANoteOfAHostNotSubscribedToIsRefused(t *testing.T) {
	for _, version := range []int{versions.SupHostNotesSubscribed.Since - 1, SupervisorVersion} {
		env := newEnv(t)
		mockHostActions(env)
		var st Status
		at(env, time.Minute, func() {
			env.SignalWorkflow(SignalHost, HostState{Host: "made-up", Live: HostUnknown, Since: env.Now()})
			env.SignalWorkflow(SignalHost, HostState{Host: "a", Live: HostUp, Since: env.Now()})
		})
		at(env, 2*time.Minute, func() { st = query(t, env) })
		endAt(env, 3*time.Minute)
		env.ExecuteWorkflow(SupervisorWorkflow, SupervisorInput{Path: "root", Spec: webFleet(2, "a", "b"), Generation: 1, Version: version})
		if versions.SupHostNotesSubscribed.In(version) {
			require.Equal(t, 1, st.RejectedSignals, "version %d: the made-up host's note", version)
		} else {
			require.Zero(t, st.RejectedSignals, "version %d took it", version)
		}
	}
}

// Regression (attack review): a host's note said since when it was
// unknown, and the supervisor took it: a note sent by hand saying since
// 2000 moved the host's workers at once, whatever their reschedule.after.
// From supervisor 13 a host is lost from when the supervisor learned it.
func TestFleet_AHostLostLongAgoByItsNoteWaitsRescheduleAfter(t *testing.T) {
	for _, version := range []int{versions.SupHostLostAsLearned.Since - 1, SupervisorVersion} {
		env := newEnv(t)
		h := mockHostActions(env)
		root := webFleet(2, "a", "b")
		root.Reschedule = &spec.Reschedule{After: spec.Duration(time.Minute)}
		var soon, later Status
		at(env, time.Minute, func() {
			h.setAway("a", true)
			env.SignalWorkflow(SignalHost, HostState{Host: "a", Live: HostUnknown, Since: time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)})
		})
		at(env, 80*time.Second, func() { soon = query(t, env) })
		at(env, 140*time.Second, func() { later = query(t, env) })
		endAt(env, 3*time.Minute)
		env.ExecuteWorkflow(SupervisorWorkflow, SupervisorInput{Path: "root", Spec: root, Generation: 1, Version: version})
		if versions.SupHostLostAsLearned.In(version) {
			require.Equal(t, "a", child(soon, "root/web-0").Host, "version %d: not before reschedule.after from the note", version)
		} else {
			require.Equal(t, "b", child(soon, "root/web-0").Host, "version %d moved at once", version)
		}
		require.Equal(t, "b", child(later, "root/web-0").Host, "version %d: moved once after passed", version)
	}
}

// Regression (review of what grows over months): a supervisor kept the
// state of every host it ever heard from, and past 1,024 (hosts named by
// instance ID, replaced now and then) refused every new host's note: their
// losses moved no worker. From supervisor 14 a host taken out of every
// hosts list of its spec is forgotten.
func TestFleet_AHostTakenOutOfTheSpecIsForgotten(t *testing.T) {
	for _, version := range []int{versions.SupForgetsUnsubscribedHosts.Since - 1, SupervisorVersion} {
		env := newEnv(t)
		mockHostActions(env)
		// A run carried over after months: the table full of hosts its
		// spec named once.
		carry := &SupervisorCarry{Desired: spec.DesiredRunning, HostStates: map[string]HostState{}, Subscribed: map[string]HostSubscription{}}
		for i := range hostcore.MaxHostStates {
			h := fmt.Sprintf("retired-%d", i)
			carry.HostStates[h] = HostState{Host: h, Live: HostUp}
			carry.Subscribed[h] = HostSubscription{Supervisor: "root", Seq: 1}
		}
		var st Status
		at(env, time.Minute, func() {
			env.SignalWorkflow(SignalSpec, spec.Update{Generation: 2, Spec: webFleet(2, "a", "b")})
		})
		at(env, 2*time.Minute, func() {
			env.SignalWorkflow(SignalHost, HostState{Host: "a", Live: HostUp, Since: env.Now()})
		})
		at(env, 3*time.Minute, func() { st = query(t, env) })
		endAt(env, 4*time.Minute)
		env.ExecuteWorkflow(SupervisorWorkflow, SupervisorInput{Path: "root", Spec: pruneSpec(webFleet(2, "a", "b")), Generation: 1, Carry: carry, Version: version})
		if versions.SupForgetsUnsubscribedHosts.In(version) {
			require.Zero(t, st.RejectedSignals, "version %d: the retired hosts forgotten, a's note is taken", version)
		} else {
			require.Equal(t, 1, st.RejectedSignals, "version %d: its table full for good, a's note refused", version)
		}
	}
}
