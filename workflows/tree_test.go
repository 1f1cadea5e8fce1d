package workflows

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/testsuite"

	"github.com/steward-sh/steward/activities"
	"github.com/steward-sh/steward/internal/spec"
	"github.com/steward-sh/steward/internal/tick"
)

// Tests of the supervision tree: strategies, restart types, intensity,
// escalation, cooldown and the durable, cancellable group restart. Actions
// are mocked and record what ran, in order; a crash is an exit signal sent
// to the child's workflow, as a driver would send it. Every instance of a
// path is named by the path, so an exit always hits the current instance.

// actionLog records actions ("start root/a"), in the order they ran.
type actionLog struct{ calls }

func (l *actionLog) of(verb string) []string {
	var out []string
	for _, e := range l.get() {
		if v, p, _ := strings.Cut(e, " "); v == verb {
			out = append(out, p)
		}
	}
	return out
}

func mockActions(env *testsuite.TestWorkflowEnvironment) *actionLog {
	l := &actionLog{}
	for _, a := range []struct{ name, verb string }{
		{activities.StartName, "start"}, {activities.StopName, "stop"}, {activities.RestartName, "restart"},
	} {
		verb := a.verb
		env.OnActivity(a.name, mock.Anything, mock.Anything).Return(func(_ context.Context, r activities.ActionRequest) (activities.ActionResult, error) {
			l.add(verb + " " + r.Path)
			return activities.ActionResult{Attempt: 1, Instance: r.Path}, nil
		})
	}
	return l
}

func crashChild(env *testsuite.TestWorkflowEnvironment, path string) {
	_ = env.SignalWorkflowByID(path, SignalExit, tick.Exit{Instance: path, Reason: "test crash"})
}

func exitChild(env *testsuite.TestWorkflowEnvironment, path string) {
	_ = env.SignalWorkflowByID(path, SignalExit, tick.Exit{Instance: path, Normal: true})
}

func withStrategy(n spec.Node, strategy string) spec.Node { n.Strategy = strategy; return n }

func restartType(n spec.Node, rt string) spec.Node { n.Restart = rt; return n }

func abc(strategy string) spec.Node {
	return withStrategy(tree("root", stubNode("a", nil), stubNode("b", nil), stubNode("c", nil)), strategy)
}

// since returns the entries of l recorded after the first n.
func since(l *actionLog, n int) []string { return l.get()[n:] }

// runTree runs root, calls crash at crashAt, and returns the actions run
// from just before the crash until 10 minutes after it, and the status then.
func runTree(t *testing.T, root spec.Node, crashAt time.Duration, crash func(*testsuite.TestWorkflowEnvironment)) (actions []string, st Status) {
	t.Helper()
	env := newEnv(t)
	l := mockActions(env)
	var before int
	at(env, crashAt-time.Second, func() { before = len(l.get()) })
	at(env, crashAt, func() { crash(env) })
	at(env, crashAt+10*time.Minute, func() { st = query(t, env); actions = since(l, before) })
	endAt(env, crashAt+11*time.Minute)
	env.ExecuteWorkflow(SupervisorWorkflow, SupervisorInput{Path: "root", Spec: root, Generation: 1})
	return actions, st
}

func requireAllRunning(t *testing.T, st Status) {
	t.Helper()
	for _, c := range st.Children {
		require.Equal(t, "running", c.State, "%s: %s", c.Path, c.Reason)
	}
	require.Equal(t, "running", st.State, st.Reason)
}

// one_for_one: only the child that crashed restarts.
func TestStrategy_OneForOne_RestartsOnlyTheCrashedChild(t *testing.T) {
	actions, st := runTree(t, abc(spec.OneForOne), time.Minute, func(env *testsuite.TestWorkflowEnvironment) { crashChild(env, "root/b") })
	require.Equal(t, []string{"start root/b"}, actions)
	requireAllRunning(t, st)
	require.Equal(t, 1, childNamed(t, st, "root/b").Restarts)
	require.Equal(t, 0, childNamed(t, st, "root/a").Restarts)
	require.Equal(t, 1, st.RecentRestarts, "the restart counts against the intensity")
}

// one_for_all: every sibling stops in reverse spec order, then all start
// again in spec order, each after the one before it is up.
func TestStrategy_OneForAll_StopsAllInReverseAndStartsAllInOrder(t *testing.T) {
	actions, st := runTree(t, abc(spec.OneForAll), time.Minute, func(env *testsuite.TestWorkflowEnvironment) { crashChild(env, "root/b") })
	require.Equal(t, []string{"stop root/c", "stop root/a", "start root/a", "start root/b", "start root/c"}, actions,
		"b is already down; c and a stop in reverse order; all start in order")
	requireAllRunning(t, st)
	for _, p := range []string{"root/a", "root/b", "root/c"} {
		c := childNamed(t, st, p)
		require.Equal(t, 1, c.Restarts, "%s: a group restart is an automatic restart of each", p)
		require.Equal(t, 0, c.ManualRestarts, p)
	}
	require.Contains(t, st.Reason, "3/3 workers at desired state")
}

// rest_for_one: the crashed child and those after it restart; those before
// it are not touched.
func TestStrategy_RestForOne_RestartsTheCrashedChildAndThoseAfterIt(t *testing.T) {
	actions, st := runTree(t, abc(spec.RestForOne), time.Minute, func(env *testsuite.TestWorkflowEnvironment) { crashChild(env, "root/b") })
	require.Equal(t, []string{"stop root/c", "start root/b", "start root/c"}, actions)
	requireAllRunning(t, st)
	require.Equal(t, 0, childNamed(t, st, "root/a").Restarts)
	require.Equal(t, 1, childNamed(t, st, "root/b").Restarts)
	require.Equal(t, 1, childNamed(t, st, "root/c").Restarts)
}

// Restart types under one_for_all: a temporary child's crash and a
// transient child's normal exit restart nothing (not even the child); a
// transient child's crash restarts the group; a permanent child's normal
// exit does too.
func TestRestartTypes_UnderOneForAll(t *testing.T) {
	for _, c := range []struct {
		name    string
		rt      string
		crash   bool
		group   bool
		bState  string
		settled bool
	}{
		{"temporary crash", spec.RestartTemporary, true, false, "failed", false},
		{"transient normal exit", spec.RestartTransient, false, false, "stopped", true},
		{"transient crash", spec.RestartTransient, true, true, "running", true},
		{"permanent normal exit", spec.RestartPermanent, false, true, "running", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			root := withStrategy(tree("root", stubNode("a", nil), restartType(stubNode("b", nil), c.rt), stubNode("c", nil)), spec.OneForAll)
			actions, st := runTree(t, root, time.Minute, func(env *testsuite.TestWorkflowEnvironment) {
				if c.crash {
					crashChild(env, "root/b")
				} else {
					exitChild(env, "root/b")
				}
			})
			b := childNamed(t, st, "root/b")
			require.Equal(t, c.bState, b.State, b.Reason)
			require.Equal(t, c.settled, b.State == b.Desired || b.Completed)
			if c.group {
				require.Equal(t, []string{"stop root/c", "stop root/a", "start root/a", "start root/b", "start root/c"}, actions)
			} else {
				require.Empty(t, actions, "nothing restarts")
				require.Equal(t, 0, st.RecentRestarts)
			}
			require.Equal(t, "running", childNamed(t, st, "root/a").State)
			require.Equal(t, "running", childNamed(t, st, "root/c").State)
		})
	}
}

// A temporary sibling is stopped by a group restart and not started again
// (OTP: temporary children are never restarted).
func TestRestartTypes_TemporarySiblingStaysDownAfterAGroupRestart(t *testing.T) {
	root := withStrategy(tree("root", restartType(stubNode("a", nil), spec.RestartTemporary), stubNode("b", nil)), spec.OneForAll)
	actions, st := runTree(t, root, time.Minute, func(env *testsuite.TestWorkflowEnvironment) { crashChild(env, "root/b") })
	require.Equal(t, []string{"stop root/a", "start root/b"}, actions)
	a := childNamed(t, st, "root/a")
	require.Equal(t, "stopped", a.State)
	require.Equal(t, "stopped by supervisor", a.Reason)
}

// A leaf that keeps crashing makes its supervisor give up; the root
// restarts that supervisor (one_for_one); when it gives up again the root's
// own intensity is exceeded and the root gives up too, stopping everything;
// after the root's cooldown the whole tree runs again.
func TestIntensity_ExceededEscalatesTwoLevelsAndCooldownRetries(t *testing.T) {
	env := newEnv(t)
	l := mockActions(env)
	hour := spec.Dur(time.Hour)
	mid := tree("mid", stubNode("leaf", nil), stubNode("peer", nil))
	mid.Intensity = &spec.Intensity{MaxRestarts: 1, Period: hour}
	root := tree("root", mid, stubNode("other", nil))
	root.Intensity = &spec.Intensity{MaxRestarts: 1, Period: hour, Cooldown: spec.Dur(30 * time.Minute)}

	var afterMidGaveUp, afterRootGaveUp, afterCooldown Status
	var before5 int
	var giveUpActions []string
	at(env, 5*time.Minute-time.Second, func() { before5 = len(l.get()) })
	at(env, 9*time.Minute, func() { giveUpActions = since(l, before5) })
	at(env, 1*time.Minute, func() { crashChild(env, "root/mid/leaf") }) // mid: 1 restart
	at(env, 2*time.Minute, func() { crashChild(env, "root/mid/leaf") }) // mid: 2 > 1: gives up; root restarts it
	at(env, 2*time.Minute+500*time.Millisecond, func() { afterMidGaveUp = query(t, env) })
	at(env, 4*time.Minute, func() { crashChild(env, "root/mid/leaf") }) // mid (fresh): 1
	at(env, 5*time.Minute, func() { crashChild(env, "root/mid/leaf") }) // mid gives up; root: 2 > 1: gives up
	at(env, 10*time.Minute, func() { afterRootGaveUp = query(t, env) })
	at(env, 40*time.Minute, func() { afterCooldown = query(t, env) })
	endAt(env, 41*time.Minute)
	env.ExecuteWorkflow(SupervisorWorkflow, SupervisorInput{Path: "root", Spec: root, Generation: 1})

	m := childNamed(t, afterMidGaveUp, "root/mid")
	require.Equal(t, 1, m.Terminations, "mid gave up once: %+v", m)
	require.Equal(t, 1, afterMidGaveUp.RecentRestarts, "the root counted mid's failure")

	require.Equal(t, "failed", afterRootGaveUp.State, afterRootGaveUp.Reason)
	require.Contains(t, afterRootGaveUp.Reason, "gave up: more than 1 restarts in 1h0m0s")
	require.Contains(t, afterRootGaveUp.Reason, "trying again at")
	require.False(t, afterRootGaveUp.BackoffUntil.IsZero(), "the cooldown's end is shown")
	for _, p := range []string{"root/mid/leaf", "root/mid/peer", "root/other"} {
		require.Equal(t, "stopped", childNamed(t, afterRootGaveUp, p).State, p)
	}
	require.Equal(t, "stopped", childNamed(t, afterRootGaveUp, "root/mid").State)
	require.Equal(t, 2, childNamed(t, afterRootGaveUp, "root/mid").Terminations)

	requireAllRunning(t, afterCooldown)
	require.Equal(t, "running", childNamed(t, afterCooldown, "root/mid/leaf").State)
	require.Equal(t, 1, afterCooldown.Restarts, "the cooldown restart is an automatic restart of the root")
	// mid gives up first (stopping peer; leaf is down), then the root stops
	// in reverse order: other, then mid (already down).
	require.Equal(t, []string{"stop root/mid/peer", "stop root/other"}, giveUpActions)
}

// A pending group restart (in its backoff) is cancelled by a stop: it never
// fires late.
func TestPendingRestart_CancelledByStop(t *testing.T) {
	env := newEnv(t)
	l := mockActions(env)
	slow := func(n spec.Node) spec.Node {
		n.Backoff = &spec.Backoff{Initial: spec.Dur(time.Minute)}
		return n
	}
	root := withStrategy(tree("root", slow(stubNode("a", nil)), slow(stubNode("b", nil))), spec.OneForAll)
	var during, after Status
	var starts int
	at(env, time.Minute, func() { crashChild(env, "root/b") })
	at(env, time.Minute+10*time.Second, func() { during = query(t, env) })
	at(env, time.Minute+20*time.Second, func() { env.SignalWorkflow(SignalDesired, "stopped") })
	at(env, 10*time.Minute, func() { after = query(t, env); starts = len(l.of("start")) })
	endAt(env, 11*time.Minute)
	env.ExecuteWorkflow(SupervisorWorkflow, SupervisorInput{Path: "root", Spec: root, Generation: 1})

	require.Equal(t, "backoff", during.State, during.Reason)
	require.False(t, during.BackoffUntil.IsZero())
	require.Equal(t, "stopped", after.State)
	require.Equal(t, 2, starts, "only the first starts: the pending restart never fired")
	for _, c := range after.Children {
		require.Equal(t, "stopped", c.State, c.Path)
	}
}

// A second failure while a group restart waits replaces it: the children
// start once, not twice.
func TestPendingRestart_SecondFailureMergesAndFiresOnce(t *testing.T) {
	env := newEnv(t)
	l := mockActions(env)
	slow := func(n spec.Node) spec.Node {
		n.Backoff = &spec.Backoff{Initial: spec.Dur(time.Minute)}
		return n
	}
	root := withStrategy(tree("root", slow(stubNode("a", nil)), slow(stubNode("b", nil)), slow(stubNode("c", nil))), spec.RestForOne)
	var before int
	var st Status
	var actions []string
	at(env, 59*time.Second, func() { before = len(l.get()) })
	at(env, time.Minute, func() { crashChild(env, "root/c") })                // plan: c
	at(env, time.Minute+10*time.Second, func() { crashChild(env, "root/b") }) // plan: b, c
	at(env, 10*time.Minute, func() { st = query(t, env); actions = since(l, before) })
	endAt(env, 11*time.Minute)
	env.ExecuteWorkflow(SupervisorWorkflow, SupervisorInput{Path: "root", Spec: root, Generation: 1})

	require.Equal(t, []string{"start root/b", "start root/c"}, actions, "b and c start once each, in order")
	requireAllRunning(t, st)
	require.Equal(t, 2, st.RecentRestarts, "both failures count")
}

// Vars are inherited and overridden down the tree and rendered into the
// driver config a worker's actions get; re-applying changed vars hands the
// workers that use them a new spec (their driver config changed: they
// restart) and leaves the rest alone; a spec with a missing variable is
// rejected and changes nothing.
func TestVars_InheritOverrideRenderAndMissingKey(t *testing.T) {
	env := newEnv(t)
	var reqs calls
	record := func(verb string) func(context.Context, activities.ActionRequest) (activities.ActionResult, error) {
		return func(_ context.Context, r activities.ActionRequest) (activities.ActionResult, error) {
			url := ""
			if r.Spec.HTTP != nil {
				url = r.Spec.HTTP["health"].(map[string]any)["url"].(string)
			}
			reqs.add(verb + " " + r.Path + " " + url)
			return activities.ActionResult{Attempt: 1, Instance: r.Path}, nil
		}
	}
	env.OnActivity(activities.StartName, mock.Anything, mock.Anything).Return(record("start"))
	env.OnActivity(activities.RestartName, mock.Anything, mock.Anything).Return(record("restart"))
	env.OnActivity(activities.StopName, mock.Anything, mock.Anything).Return(record("stop"))
	web := spec.Node{Name: "web", Kind: spec.KindHTTP, Observe: &spec.Observe{Interval: spec.Dur(time.Hour)},
		HTTP: map[string]any{"health": map[string]any{"url": "http://{{ .Vars.host }}:{{ .Vars.port }}/{{ .Name }}"}}}
	build := func(host string, port string) spec.Node {
		line := tree("line", web, stubNode("plain", nil))
		line.Vars = map[string]string{"port": "8080"}
		root := tree("plant", line)
		root.Vars = map[string]string{"host": host}
		if port != "" {
			root.Vars["port"] = port
		}
		return root
	}
	var first, second []string
	var st Status
	at(env, time.Minute, func() {
		first = reqs.get()
		env.SignalWorkflow(SignalSpec, spec.Update{Spec: build("h2", "80")})
	})
	at(env, 2*time.Minute, func() {
		second = reqs.get()[len(first):]
		bad := build("h3", "")
		bad.Children[0].Vars = nil // nobody defines port now
		env.SignalWorkflow(SignalSpec, spec.Update{Spec: bad})
	})
	at(env, 3*time.Minute, func() { st = query(t, env) })
	endAt(env, 4*time.Minute)
	env.ExecuteWorkflow(SupervisorWorkflow, SupervisorInput{Path: "plant", Spec: build("h1", "80"), Generation: 1})

	require.ElementsMatch(t, []string{"start plant/line/web http://h1:8080/web", "start plant/line/plain "}, first,
		"port comes from line (overriding plant's), host from plant")
	require.Equal(t, []string{"restart plant/line/web http://h2:8080/web"}, second, "only the worker whose rendered config changed restarts")
	require.Equal(t, 1, st.RejectedSignals, "a spec with a missing variable is rejected")
	require.EqualValues(t, 2, st.Generation)
	require.Equal(t, "running", childNamed(t, st, "plant/line/web").State)
}

// A child supervisor in a group restart is stopped as a whole (its own
// children in reverse order) and started as a whole (in order) before the
// next sibling starts.
func TestStrategy_OneForAll_RestartsAChildSupervisorAsAWhole(t *testing.T) {
	root := withStrategy(tree("root", tree("sub", stubNode("x", nil), stubNode("z", nil)), stubNode("y", nil)), spec.OneForAll)
	actions, st := runTree(t, root, time.Minute, func(env *testsuite.TestWorkflowEnvironment) { crashChild(env, "root/y") })
	require.Equal(t, []string{"stop root/sub/z", "stop root/sub/x", "start root/sub/x", "start root/sub/z", "start root/y"}, actions)
	requireAllRunning(t, st)
	require.Equal(t, 1, childNamed(t, st, "root/sub").Restarts)
}

// A temporary supervisor that gives up stays down: its parent does not
// restart it, counts nothing, and it arms no cooldown.
func TestRestartTypes_TemporarySupervisorThatGivesUpStaysDown(t *testing.T) {
	sub := restartType(tree("sub", stubNode("x", nil)), spec.RestartTemporary)
	sub.Intensity = &spec.Intensity{MaxRestarts: 1, Period: spec.Dur(time.Hour), Cooldown: spec.Dur(time.Minute)}
	root := tree("root", sub, stubNode("y", nil))
	env := newEnv(t)
	mockActions(env)
	var st Status
	at(env, time.Minute, func() { crashChild(env, "root/sub/x") })
	at(env, 2*time.Minute, func() { crashChild(env, "root/sub/x") })
	at(env, 20*time.Minute, func() { st = query(t, env) })
	endAt(env, 21*time.Minute)
	env.ExecuteWorkflow(SupervisorWorkflow, SupervisorInput{Path: "root", Spec: root, Generation: 1})

	s := childNamed(t, st, "root/sub")
	require.Equal(t, "failed", s.State, s.Reason)
	require.True(t, s.BackoffUntil.IsZero(), "no cooldown for a temporary supervisor")
	require.Equal(t, 0, st.RecentRestarts, "the parent counts nothing")
	require.Equal(t, "running", st.State)
	require.Equal(t, "running", childNamed(t, st, "root/y").State)
}
