package workflows

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/steward-sh/steward/activities"
	"github.com/steward-sh/steward/internal/spec"
	"github.com/steward-sh/steward/internal/versions"
)

func dependsOn(n spec.Node, names ...string) spec.Node { n.DependsOn = names; return n }

func childState(st Status, name string) Status {
	for _, c := range st.Children {
		if c.Path == st.Path+"/"+name {
			return c
		}
	}
	return Status{}
}

// A child starts only once what it depends on runs; children without
// dependencies start together; a stop reaches a dependency only once its
// dependants are down, and a start reaches a dependant only once its
// dependency runs again.
func TestDependsOn_StartAfterStopBefore(t *testing.T) {
	env := newEnv(t)
	l := &actionLog{}
	record := func(verb string) func(context.Context, activities.ActionRequest) (activities.ActionResult, error) {
		return func(_ context.Context, r activities.ActionRequest) (activities.ActionResult, error) {
			l.add(verb + " " + r.Path)
			return activities.ActionResult{Attempt: 1, Instance: r.Path}, nil
		}
	}
	// db takes 30s to start.
	env.OnActivity(activities.StartName, mock.Anything, mock.MatchedBy(func(r activities.ActionRequest) bool { return r.Path == "root/db" })).
		Return(record("start")).After(30 * time.Second)
	env.OnActivity(activities.StartName, mock.Anything, mock.Anything).Return(record("start"))
	env.OnActivity(activities.StopName, mock.Anything, mock.Anything).Return(record("stop"))
	root := tree("root", dependsOn(stubNode("web", nil), "db"), stubNode("db", nil), stubNode("cache", nil))
	var waiting Status
	at(env, 10*time.Second, func() { waiting = query(t, env) })
	at(env, time.Minute, func() {
		st := query(t, env)
		for _, name := range []string{"db", "cache", "web"} {
			require.Equal(t, "running", childState(st, name).State, name)
		}
		env.SignalWorkflow(SignalDesired, spec.DesiredStopped)
	})
	at(env, 2*time.Minute, func() {
		st := query(t, env)
		for _, name := range []string{"db", "cache", "web"} {
			require.Equal(t, "stopped", childState(st, name).State, name)
		}
		env.SignalWorkflow(SignalDesired, spec.DesiredRunning)
	})
	var final Status
	var starts, stops []string
	at(env, 3*time.Minute, func() { final, starts, stops = query(t, env), l.of("start"), l.of("stop") })
	endAt(env, 4*time.Minute)
	env.ExecuteWorkflow(SupervisorWorkflow, SupervisorInput{Path: "root", Spec: root, Generation: 1})

	require.Equal(t, "waiting for db to be running", childState(waiting, "web").Reason)
	require.Equal(t, "running", childState(waiting, "cache").State, "cache does not wait")
	require.Len(t, starts, 6)
	require.ElementsMatch(t, []string{"root/db", "root/cache"}, starts[:2], "db and cache start together, first")
	require.Equal(t, "root/web", starts[2], "web after db runs")
	require.Equal(t, "root/web", starts[5], "and again after the operator's start")
	require.Len(t, stops, 3)
	require.Less(t, indexOf(stops, "root/web"), indexOf(stops, "root/db"), "web stops before db: %v", stops)
	for _, name := range []string{"db", "cache", "web"} {
		require.Equal(t, "running", childState(final, name).State, name)
	}
	require.Equal(t, []string{"db", "web", "cache"}, childNames(final), "children are kept in start order: each after its dependencies, otherwise in spec order")
}

// Group restarts (one_for_all) stop dependants first and start them last.
func TestDependsOn_GroupRestartHonoursIt(t *testing.T) {
	root := withStrategy(tree("root", dependsOn(stubNode("web", nil), "db"), stubNode("db", nil)), spec.OneForAll)
	actions, st := runTree(t, root, time.Minute, func(env *testsuite.TestWorkflowEnvironment) { crashChild(env, "root/db") })
	require.Equal(t, []string{"stop root/web", "start root/db", "start root/web"}, actions)
	require.Equal(t, "running", childState(st, "web").State)
}

func indexOf(xs []string, x string) int {
	for i, v := range xs {
		if v == x {
			return i
		}
	}
	return -1
}

func childNames(st Status) []string {
	var out []string
	for _, c := range st.Children {
		out = append(out, c.Path[len(st.Path)+1:])
	}
	return out
}

// The operator's restart of a supervisor with dependencies stops the
// dependant first and starts it last (without dependencies, it signals
// every child at once, as before).
func TestDependsOn_OperatorRestartInOrder(t *testing.T) {
	env := newEnv(t)
	l := mockActions(env)
	root := tree("root", dependsOn(stubNode("web", nil), "db"), stubNode("db", nil))
	var before int
	at(env, time.Minute, func() {
		before = len(l.get())
		env.SignalWorkflow(SignalRestart, nil)
	})
	var actions []string
	var st Status
	at(env, 3*time.Minute, func() { actions, st = since(l, before), query(t, env) })
	endAt(env, 4*time.Minute)
	env.ExecuteWorkflow(SupervisorWorkflow, SupervisorInput{Path: "root", Spec: root, Generation: 1})
	require.Equal(t, []string{"stop root/web", "stop root/db", "start root/db", "start root/web"}, actions)
	require.Equal(t, "running", childState(st, "web").State)
	require.Equal(t, "running", childState(st, "db").State)
	require.Equal(t, 1, st.ManualRestarts)
}

// A child supervisor a sibling depends on counts as running only once its
// whole subtree runs.
func TestDependsOn_ChildSupervisorCountsWhenItsSubtreeRuns(t *testing.T) {
	env := newEnv(t)
	l := &actionLog{}
	record := func(_ context.Context, r activities.ActionRequest) (activities.ActionResult, error) {
		l.add("start " + r.Path)
		return activities.ActionResult{Attempt: 1, Instance: r.Path}, nil
	}
	env.OnActivity(activities.StartName, mock.Anything, mock.MatchedBy(func(r activities.ActionRequest) bool { return r.Path == "root/grp/db" })).
		Return(record).After(30 * time.Second)
	env.OnActivity(activities.StartName, mock.Anything, mock.Anything).Return(record)
	env.OnActivity(activities.StopName, mock.Anything, mock.Anything).Return(activities.ActionResult{Attempt: 1}, nil).Maybe()
	root := tree("root", dependsOn(stubNode("web", nil), "grp"), tree("grp", stubNode("db", nil)))
	var waiting, final Status
	at(env, 10*time.Second, func() { waiting = query(t, env) })
	at(env, 2*time.Minute, func() { final = query(t, env) })
	endAt(env, 3*time.Minute)
	env.ExecuteWorkflow(SupervisorWorkflow, SupervisorInput{Path: "root", Spec: root, Generation: 1})
	require.Equal(t, "waiting for grp to be running", childState(waiting, "web").Reason, "grp runs, its db does not yet")
	require.Equal(t, []string{"start root/grp/db", "start root/web"}, l.get())
	require.Equal(t, "running", childState(final, "web").State)
}

// Supervisor version 4: a child applying its spec (sent a generation it
// has not reported yet) is not up for its dependants; version 3 counts it
// up as soon as it runs.
func TestVersions_ApplyingChildIsNotUp(t *testing.T) {
	for _, version := range []int{3, 4} {
		t.Run(fmt.Sprintf("version %d", version), func(t *testing.T) {
			var s testsuite.WorkflowTestSuite
			env := s.NewTestWorkflowEnvironment()
			running := func(name string, want, reported int64) ChildRecord {
				return ChildRecord{Name: name, Path: "root/" + name, WantGeneration: want,
					Status: Status{Path: "root/" + name, Kind: spec.KindStub, State: "running", Desired: spec.DesiredRunning, Generation: reported}}
			}
			env.ExecuteWorkflow(func(ctx workflow.Context) ([]string, error) {
				db, web := stubNode("db", nil), dependsOn(stubNode("web", nil), "db")
				s := &supervisorRun{ctx: ctx, in: SupervisorInput{Path: "root", Version: version, Spec: tree("root", db, web)}}
				s.carry.Desired = spec.DesiredRunning
				s.carry.Children = []ChildRecord{running("db", 2, 1), running("web", 1, 1)}
				return s.waitingFor([]string{"db"}), nil
			})
			require.NoError(t, env.GetWorkflowError())
			var waiting []string
			require.NoError(t, env.GetWorkflowResult(&waiting))
			if versions.SupApplyingNotUp.In(version) {
				require.Equal(t, []string{"db"}, waiting, "db applies generation 2: web waits")
				return
			}
			require.Empty(t, waiting, "version 3: db runs, so it is up")
		})
	}
}
