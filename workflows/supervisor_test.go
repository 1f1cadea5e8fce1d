package workflows

import (
	"context"
	"fmt"
	"math"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/workflow"

	"github.com/steward-sh/steward/activities"
	"github.com/steward-sh/steward/internal/spec"
	"github.com/steward-sh/steward/internal/versions"
)

func tree(name string, children ...spec.Node) spec.Node {
	return spec.Node{Name: name, Children: children}
}

// calls records the paths an activity was called for, in order.
type calls struct {
	mu    sync.Mutex
	paths []string
}

func (c *calls) add(p string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.paths = append(c.paths, p)
}

func (c *calls) get() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.paths...)
}

func byPath(path string) any {
	return mock.MatchedBy(func(r activities.ActionRequest) bool { return r.Path == path })
}

func childNamed(t *testing.T, st Status, path string) Status {
	t.Helper()
	c, ok := st.Find(path)
	require.True(t, ok, "no %s in %+v", path, st)
	return c
}

// One slow action blocks only its own worker: the sibling starts and runs.
func TestSupervisor_ConcurrentWorkers_SlowActionBlocksOnlyItsOwnWorker(t *testing.T) {
	env := newEnv(t)
	env.OnActivity(activities.StartName, mock.Anything, byPath("root/slow")).After(4*time.Second).Return(activities.ActionResult{Attempt: 1, Instance: "s"}, nil)
	env.OnActivity(activities.StartName, mock.Anything, byPath("root/fast")).Return(activities.ActionResult{Attempt: 1, Instance: "f"}, nil)
	var during, after Status
	at(env, 2*time.Second, func() { during = query(t, env) })
	at(env, 10*time.Second, func() { after = query(t, env) })
	endAt(env, 20*time.Second)
	env.ExecuteWorkflow(SupervisorWorkflow, SupervisorInput{Path: "root", Spec: tree("root", stubNode("slow", nil), stubNode("fast", nil)), Generation: 1})

	require.Equal(t, "starting", childNamed(t, during, "root/slow").State)
	require.Equal(t, "running", childNamed(t, during, "root/fast").State, "the fast sibling is not held up")
	require.Equal(t, "running", childNamed(t, after, "root/slow").State)
	at, total := after.AtDesired()
	require.Equal(t, 2, at)
	require.Equal(t, 2, total)
	require.Equal(t, "2/2 workers at desired state", after.Reason)
}

// Re-applying a changed spec: new children start, removed ones stop and end,
// changed ones get their spec, and nothing else restarts.
func TestSupervisor_ReconcileAddsRemovesChangesAndLeavesTheRestAlone(t *testing.T) {
	env := newEnv(t)
	var starts, stops, restarts calls
	env.OnActivity(activities.StartName, mock.Anything, mock.Anything).Return(func(_ context.Context, r activities.ActionRequest) (activities.ActionResult, error) {
		starts.add(r.Path)
		return activities.ActionResult{Attempt: 1, Instance: r.Path}, nil
	})
	env.OnActivity(activities.StopName, mock.Anything, mock.Anything).Return(func(_ context.Context, r activities.ActionRequest) (activities.ActionResult, error) {
		stops.add(r.Path)
		return activities.ActionResult{Attempt: 1}, nil
	})
	env.OnActivity(activities.RestartName, mock.Anything, mock.Anything).Return(func(_ context.Context, r activities.ActionRequest) (activities.ActionResult, error) {
		restarts.add(r.Path)
		return activities.ActionResult{Attempt: 1, Instance: r.Path + "'"}, nil
	})
	var started calls // child workflows, in the order they started
	env.SetOnChildWorkflowStartedListener(func(info *workflow.Info, _ workflow.Context, _ converter.EncodedValues) {
		started.add(info.WorkflowExecution.ID)
	})
	v1 := tree("root", stubNode("a", nil), stubNode("b", nil), stubNode("c", nil))
	v2 := tree("root", stubNode("a", nil), stubNode("c", &spec.Stub{Delay: spec.Duration(time.Millisecond)}), stubNode("d", nil))
	var st Status
	var stopped []string
	at(env, time.Minute, func() { env.SignalWorkflow(SignalSpec, spec.Update{Spec: v2}) })
	at(env, 2*time.Minute, func() { st = query(t, env); stopped = stops.get() })
	endAt(env, 3*time.Minute)
	env.ExecuteWorkflow(SupervisorWorkflow, SupervisorInput{Path: "root", Spec: v1, Generation: 1})

	require.EqualValues(t, 2, st.Generation)
	require.Equal(t, []string{"root/a", "root/c", "root/d"}, []string{st.Children[0].Path, st.Children[1].Path, st.Children[2].Path})
	require.EqualValues(t, 1, st.Children[0].Generation, "unchanged child untouched")
	require.EqualValues(t, 2, st.Children[1].Generation, "changed child got generation 2")
	require.EqualValues(t, 2, st.Children[2].Generation, "a new child starts at the generation that created it")
	require.Equal(t, "running", st.Children[2].State)
	// Children of one level start in one workflow task, their start commands
	// in spec order; the test environment runs the starts concurrently.
	require.ElementsMatch(t, []string{"root/a", "root/b", "root/c", "root/d"}, started.get(), "every child workflow started once")
	// Their start actions run concurrently in the pool, in any order.
	require.ElementsMatch(t, []string{"root/a", "root/b", "root/c", "root/d"}, starts.get(), "nothing else started")
	require.Equal(t, []string{"root/c"}, restarts.get(), "only the changed child restarts")
	require.Equal(t, []string{"root/b"}, stopped, "the removed child, and only it, was stopped")
}

// A supervisor's subtree is assembled, nested, from its supervisors' answers.
func TestSupervisor_StatusCoversNestedSubtree(t *testing.T) {
	env := newEnv(t)
	root := tree("plant", tree("line-1", stubNode("press", nil), stubNode("saw", nil)), stubNode("office", nil))
	var st Status
	at(env, time.Minute, func() { st = query(t, env) })
	endAt(env, 2*time.Minute)
	env.ExecuteWorkflow(SupervisorWorkflow, SupervisorInput{Path: "plant", Spec: root, Generation: 1})

	require.Equal(t, "supervisor", st.Kind)
	line := childNamed(t, st, "plant/line-1")
	require.Equal(t, "supervisor", line.Kind)
	require.Len(t, line.Children, 2)
	require.Equal(t, "running", childNamed(t, st, "plant/line-1/press").State)
	require.Equal(t, "running", childNamed(t, st, "plant/office").State)
	at, total := st.AtDesired()
	require.Equal(t, 3, at)
	require.Equal(t, 3, total)
}

// Desired stopped on a supervisor stops its children in reverse order;
// running starts them again.
func TestSupervisor_DesiredPropagatesToChildren(t *testing.T) {
	env := newEnv(t)
	var stopped, running Status
	at(env, time.Minute, func() { env.SignalWorkflow(SignalDesired, "stopped") })
	at(env, 2*time.Minute, func() { stopped = query(t, env) })
	at(env, 3*time.Minute, func() { env.SignalWorkflow(SignalDesired, "running") })
	at(env, 4*time.Minute, func() { running = query(t, env) })
	endAt(env, 5*time.Minute)
	env.ExecuteWorkflow(SupervisorWorkflow, SupervisorInput{Path: "root", Spec: tree("root", stubNode("a", nil), stubNode("b", nil)), Generation: 1})
	require.Equal(t, "stopped", stopped.State)
	for _, c := range stopped.Children {
		require.Equal(t, "stopped", c.State, c.Path)
	}
	for _, c := range running.Children {
		require.Equal(t, "running", c.State, c.Path)
	}
}

func TestSupervisor_RejectsBadSpecSignalAndGoesOn(t *testing.T) {
	env := newEnv(t)
	var st Status
	at(env, time.Minute, func() {
		env.SignalWorkflow(SignalSpec, spec.Update{Spec: tree("root", stubNode("a", nil), stubNode("a", nil))})
		env.SignalWorkflow(SignalSpec, spec.Update{Spec: tree("other", stubNode("a", nil))})
		env.SignalWorkflow(SignalDesired, "maybe")
	})
	at(env, 2*time.Minute, func() { st = query(t, env) })
	endAt(env, 3*time.Minute)
	env.ExecuteWorkflow(SupervisorWorkflow, SupervisorInput{Path: "root", Spec: tree("root", stubNode("a", nil)), Generation: 1})
	require.Equal(t, 3, st.RejectedSignals)
	require.EqualValues(t, 1, st.Generation)
	require.Len(t, st.Children, 1)
	require.Equal(t, "running", st.Children[0].State)
}

// Regression: a child removed and re-added before its removed run has ended
// was "adopted" by the dying run and stayed dead. It now waits for that run
// to end and then starts afresh.
func TestSupervisor_ChildRemovedAndReaddedStartsAfterTheOldRunEnds(t *testing.T) {
	env := newEnv(t)
	var starts calls
	env.OnActivity(activities.StartName, mock.Anything, mock.Anything).Return(func(_ context.Context, r activities.ActionRequest) (activities.ActionResult, error) {
		starts.add(r.Path)
		return activities.ActionResult{Attempt: 1, Instance: r.Path}, nil
	})
	v1 := tree("root", stubNode("a", nil), stubNode("b", nil))
	v2 := tree("root", stubNode("a", nil))
	var st Status
	at(env, time.Minute, func() {
		env.SignalWorkflowSkippingWorkflowTask(SignalSpec, spec.Update{Spec: v2})
		env.SignalWorkflow(SignalSpec, spec.Update{Spec: v1})
	})
	at(env, 2*time.Minute, func() { st = query(t, env) })
	endAt(env, 3*time.Minute)
	env.ExecuteWorkflow(SupervisorWorkflow, SupervisorInput{Path: "root", Spec: v1, Generation: 1})

	b := childNamed(t, st, "root/b")
	require.Equal(t, "running", b.State, "%+v", b)
	require.False(t, b.Applying)
	require.EqualValues(t, 3, b.Generation, "the new run got the latest spec")
	var bStarts int
	for _, p := range starts.get() {
		if p == "root/b" {
			bStarts++
		}
	}
	require.Equal(t, 2, bStarts, "the old run, then the new one")
}

// Regression: two reports a child sends in one workflow task are delivered
// in either order; the supervisor applied the older one last, and a root
// showed "11/12 workers" for a subtree whose workers had all started (an
// `apply --wait` of 24 workers never returned). Reports are numbered now,
// and a stale one is ignored.
func TestSupervisor_OutOfOrderReportsDoNotRegressAChildsStatus(t *testing.T) {
	env := newEnv(t)
	var st Status
	report := func(seq int64, state string) ChildReport { // newer than the child's own (numbered by time)
		return ChildReport{Seq: env.Now().UnixNano() + seq, Status: Status{Path: "root/a", Kind: "stub", State: state, Desired: "running", Children: []Status{}}}
	}
	at(env, time.Minute, func() {
		env.SignalWorkflow(SignalChild, report(1000, "running"))
		env.SignalWorkflow(SignalChild, report(999, "starting"))
	})
	at(env, 2*time.Minute, func() { st = query(t, env) })
	endAt(env, 3*time.Minute)
	env.ExecuteWorkflow(SupervisorWorkflow, SupervisorInput{Path: "root", Spec: tree("root", stubNode("a", nil)), Generation: 1})
	require.Equal(t, "running", childNamed(t, st, "root/a").State)
}

// A worker process sends the reports of actions that end together in one
// signal (activities.Reporter): each is applied as if sent alone, a stale
// one in the batch ignored.
func TestSupervisor_AppliesEveryReportOfABatch(t *testing.T) {
	env := newEnv(t)
	var st Status
	report := func(path string, seq int64, state string) ChildReport { // newer than the children's own (numbered by time)
		return ChildReport{Seq: env.Now().UnixNano() + seq, Status: Status{Path: path, Kind: "stub", State: state, Desired: "running", Children: []Status{}}}
	}
	at(env, time.Minute, func() {
		env.SignalWorkflow(SignalChild, report("root/a", 1000, "running"))
		batch := report("root/b", 1000, "unknown")
		batch.More = []ChildReport{report("root/c", 1000, "backoff"), report("root/a", 999, "starting")}
		env.SignalWorkflow(SignalChild, batch)
	})
	at(env, 2*time.Minute, func() { st = queryOwn(t, env) }) // its records, not the workers' own answers
	endAt(env, 3*time.Minute)
	env.ExecuteWorkflow(SupervisorWorkflow, SupervisorInput{Path: "root", Spec: tree("root", stubNode("a", nil), stubNode("b", nil), stubNode("c", nil)), Generation: 1})
	require.Equal(t, "running", childNamed(t, st, "root/a").State, "the stale report in the batch is ignored")
	require.Equal(t, "unknown", childNamed(t, st, "root/b").State)
	require.Equal(t, "backoff", childNamed(t, st, "root/c").State)
}

// The defect: a report sent by hand (no run named, a huge number) was
// taken, and every real report of the child after it was older: the
// supervisor's record of it stayed as forged. From supervisor version 11
// (children numbering their reports by time) a report numbered past the
// supervisor's time is refused; version 10 took it and stayed pinned.
func TestSupervisor_AReportNumberedPastItsTimeIsRefused(t *testing.T) {
	for _, version := range []int{versions.SupReportSeqBounded.Since - 1, versions.SupReportSeqBounded.Since} {
		env := newEnv(t)
		mockActions(env) // instances named by path: crashChild's
		var st Status
		at(env, time.Minute, func() {
			env.SignalWorkflow(SignalChild, ChildReport{Seq: math.MaxInt64, Status: Status{Path: "root/a", Kind: "stub", State: "failed", Desired: "running", Children: []Status{}}})
		})
		at(env, 90*time.Second, func() { crashChild(env, "root/a") })
		at(env, 3*time.Minute, func() { st = queryOwn(t, env) })
		endAt(env, 4*time.Minute)
		env.ExecuteWorkflow(SupervisorWorkflow, SupervisorInput{Path: "root", Spec: tree("root", stubNode("a", nil)), Generation: 1, Version: version})
		a := childNamed(t, st, "root/a")
		if versions.SupReportSeqBounded.In(version) {
			require.Equal(t, "running", a.State, "version %d: the forged report refused, the real ones taken", version)
			require.Equal(t, 1, a.Terminations, "version %d: the crash after it heard", version)
		} else {
			require.Equal(t, "failed", a.State, "version %d: pinned by the forged report", version)
		}
	}
}

// Regression (attack review): a supervisor started by hand is held to the
// limits of the version before them (none), and a few kilobytes of spec
// with half a million instances made its first task build a node for
// each: gigabytes, retried on every worker that polls. It ends at once,
// and a spec signal that would expand so is refused, the run going on.
func TestSupervisor_ASpecThatExpandsPastTheLimitIsRefused(t *testing.T) {
	huge := func(name string) spec.Node { // 500 children of 1,000 instances: 500,000 nodes from 23 KB
		var kids []spec.Node
		for i := range 500 {
			n := stubNode(fmt.Sprintf("w%d", i), nil)
			n.Instances = spec.MaxInstances
			kids = append(kids, n)
		}
		return tree(name, kids...)
	}
	env := newEnv(t)
	env.ExecuteWorkflow(SupervisorWorkflow, SupervisorInput{Path: "root", Spec: huge("root"), Generation: 1, Version: SupervisorVersion})
	require.True(t, env.IsWorkflowCompleted())
	require.ErrorContains(t, env.GetWorkflowError(), "children expand to more than 2000")

	env = newEnv(t)
	var st Status
	at(env, time.Minute, func() { env.SignalWorkflow(SignalSpec, spec.Update{Spec: huge("root")}) })
	at(env, 2*time.Minute, func() { st = query(t, env) })
	endAt(env, 3*time.Minute)
	env.ExecuteWorkflow(SupervisorWorkflow, SupervisorInput{Path: "root", Spec: tree("root", stubNode("a", nil)), Generation: 1})
	require.Equal(t, 1, st.RejectedSignals)
	require.Len(t, st.Children, 1)
}
