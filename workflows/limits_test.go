package workflows

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/workflow"

	"github.com/steward-sh/steward/internal/hostcore"
	"github.com/steward-sh/steward/internal/spec"
	"github.com/steward-sh/steward/internal/versions"
)

// Regression tests of the issue "No input wedges a tree": a spec over a
// limit or with a runaway template, sent by signal to a running workflow,
// is rejected and counted; the workflow goes on and answers.

// TestWorker_RunawayTemplateSpecIsRejectedAndTheWorkerGoesOn: the template
// `{{range 100000000}}{{end}}` failed every task of the worker with
// TMPRL1101 (a potential deadlock), and `stop` was ignored for good.
func TestWorker_RunawayTemplateSpecIsRejectedAndTheWorkerGoesOn(t *testing.T) {
	env := newEnv(t)
	bad := spec.Node{Name: "w", Kind: spec.KindProcess, Process: map[string]any{"command": "{{range 100000000}}{{end}}/usr/bin/sleep"}}
	var st Status
	at(env, time.Minute, func() { env.SignalWorkflow(SignalSpec, spec.Update{Spec: bad}) })
	at(env, 2*time.Minute, func() { env.SignalWorkflow(SignalDesired, spec.DesiredStopped) })
	at(env, 3*time.Minute, func() { st = query(t, env) })
	endAt(env, 4*time.Minute)
	env.ExecuteWorkflow(WorkerWorkflow, WorkerInput{Path: "t/w", Spec: stubNode("w", nil), Generation: 1})
	require.Equal(t, 1, st.RejectedSignals)
	require.Equal(t, "stopped", st.State, "the stop after the rejected spec was carried out")
	require.EqualValues(t, 1, st.Generation)
}

// TestWorker_ObserveInterval1nsIsRejected: 1ns was taken, about 13 history
// events a second.
func TestWorker_ObserveInterval1nsIsRejected(t *testing.T) {
	env := newEnv(t)
	n := stubNode("w", nil)
	n.Observe = &spec.Observe{Interval: spec.Dur(time.Nanosecond)}
	var st Status
	at(env, time.Minute, func() { env.SignalWorkflow(SignalSpec, spec.Update{Spec: n}) })
	at(env, 2*time.Minute, func() { st = query(t, env) })
	endAt(env, 3*time.Minute)
	env.ExecuteWorkflow(WorkerWorkflow, WorkerInput{Path: "t/w", Spec: stubNode("w", nil), Generation: 1})
	require.Equal(t, 1, st.RejectedSignals)
	require.Equal(t, "running", st.State)
}

// TestSupervisor_ChildNameOf1100CharactersIsRejected: a spec signal with
// such a child wedged the supervisor (BAD_START_CHILD_EXECUTION_ATTRIBUTES
// at every task), and re-applying the good spec then failed. Now it is
// rejected, and the good spec after it applies.
func TestSupervisor_ChildNameOf1100CharactersIsRejected(t *testing.T) {
	env := newEnv(t)
	var rejected, applied Status
	at(env, time.Minute, func() {
		env.SignalWorkflow(SignalSpec, spec.Update{Spec: tree("root", stubNode("a", nil), stubNode(strings.Repeat("x", 1100), nil))})
	})
	at(env, 2*time.Minute, func() { rejected = query(t, env) })
	at(env, 3*time.Minute, func() {
		env.SignalWorkflow(SignalSpec, spec.Update{Spec: tree("root", stubNode("a", nil), stubNode("b", nil))})
	})
	at(env, 4*time.Minute, func() { applied = query(t, env) })
	endAt(env, 5*time.Minute)
	env.ExecuteWorkflow(SupervisorWorkflow, SupervisorInput{Path: "root", Spec: tree("root", stubNode("a", nil)), Generation: 1})
	require.Equal(t, 1, rejected.RejectedSignals)
	require.Len(t, rejected.Children, 1)
	require.Len(t, applied.Children, 2)
	require.Equal(t, "running", applied.Children[1].State, "the good spec after the bad one applies")
}

// TestSupervisor_ChildrenInheriting1MBOfVarsAreRejected: eight stub
// children inheriting 1.2 MB of vars failed every task of their
// supervisor with GRPC_MESSAGE_TOO_LARGE.
func TestSupervisor_ChildrenInheriting1MBOfVarsAreRejected(t *testing.T) {
	env := newEnv(t)
	big := tree("root")
	big.Vars = map[string]string{}
	for i := range 12 {
		big.Vars[fmt.Sprintf("v%d", i)] = strings.Repeat("x", 100<<10)
	}
	for i := range 8 {
		big.Children = append(big.Children, stubNode(fmt.Sprintf("s%d", i), nil))
	}
	var st Status
	at(env, time.Minute, func() { env.SignalWorkflow(SignalSpec, spec.Update{Spec: big}) })
	at(env, 2*time.Minute, func() { st = query(t, env) })
	endAt(env, 3*time.Minute)
	env.ExecuteWorkflow(SupervisorWorkflow, SupervisorInput{Path: "root", Spec: tree("root", stubNode("a", nil)), Generation: 1})
	require.Equal(t, 1, st.RejectedSignals)
	require.Len(t, st.Children, 1)
}

// TestSupervisor_PathLimitCountsItsOwnPath: a supervisor deep in a tree
// holds a spec to the paths its children would have.
func TestSupervisor_PathLimitCountsItsOwnPath(t *testing.T) {
	env := newEnv(t)
	deep := strings.Repeat("p", 300) + "/" + strings.Repeat("q", 50)
	var st Status
	at(env, time.Minute, func() {
		env.SignalWorkflow(SignalSpec, spec.Update{Spec: tree(strings.Repeat("q", 50), stubNode("a", nil), stubNode(strings.Repeat("c", 60), nil))})
	})
	at(env, 2*time.Minute, func() { st = query(t, env) })
	endAt(env, 3*time.Minute)
	env.ExecuteWorkflow(SupervisorWorkflow, SupervisorInput{Path: deep, Spec: tree(strings.Repeat("q", 50), stubNode("a", nil)), Generation: 1})
	require.Equal(t, 1, st.RejectedSignals)
}

// TestLimitsMarkerAbsent_ASpecIsTakenAsOlderCodeTookIt: a history written
// by code older than the limits has no "steward-limits" marker; replaying
// it, the spec it took (here an observe interval under the minimum) is
// taken again, as it was. A spec over a limit never reaches such a run
// live: the marker is recorded at its first spec.
func TestLimitsMarkerAbsent_ASpecIsTakenAsOlderCodeTookIt(t *testing.T) {
	for _, absent := range []bool{false, true} {
		env := newEnv(t)
		if absent {
			env.OnGetVersion("steward-limits", workflow.DefaultVersion, 1).Return(workflow.DefaultVersion)
		}
		n := stubNode("w", nil)
		n.Observe = &spec.Observe{Interval: spec.Dur(500 * time.Millisecond)}
		var st, second Status
		at(env, time.Minute, func() { env.SignalWorkflow(SignalSpec, spec.Update{Spec: n}) })
		at(env, 2*time.Minute, func() { st = query(t, env) })
		at(env, 3*time.Minute, func() { env.SignalWorkflow(SignalSpec, spec.Update{Spec: n, Generation: 5}) })
		at(env, 4*time.Minute, func() { second = query(t, env) })
		endAt(env, 5*time.Minute)
		env.ExecuteWorkflow(WorkerWorkflow, WorkerInput{Path: "t/w", Spec: stubNode("w", nil), Generation: 1})
		if absent {
			require.Zero(t, st.RejectedSignals, "marker absent: taken as before")
			require.EqualValues(t, 2, st.Generation)
			require.Equal(t, 1, second.RejectedSignals, "the next spec asks steward-limits-2, recorded live: the limit holds from then on")
			require.EqualValues(t, 2, second.Generation)
		} else {
			require.Equal(t, 1, st.RejectedSignals, "marker recorded: the limit holds")
			require.EqualValues(t, 1, st.Generation)
			require.Equal(t, 2, second.RejectedSignals)
		}
	}
}

// TestStartBatchesBoundedByPayloadSize: the starts of one task carry at
// most startBatchBytes of the children's input (version 8), and at least
// one child.
func TestStartBatchesBoundedByPayloadSize(t *testing.T) {
	nodes := make([]spec.Node, 7)
	size := func(n spec.Node) int { return map[string]int{"big": 900, "huge": 5000}[n.Name] + 100 }
	for i, name := range []string{"a", "big", "b", "huge", "c", "d", "big"} {
		nodes[i] = spec.Node{Name: name}
	}
	var ends []int
	for lo := 0; lo < len(nodes); lo = batchEnd(nodes, lo, 1000, size) {
		ends = append(ends, batchEnd(nodes, lo, 1000, size))
	}
	require.Equal(t, []int{1, 2, 3, 4, 6, 7}, ends, "a | big (exactly the budget) | b | huge (alone, over it) | c, d | big")
}

// TestSupervisor_StartsWideChildrenInBatches: twenty workers of 60 KiB each
// (1.2 MiB in all) start, in two batches from version 8 (in one before),
// and run.
func TestSupervisor_StartsWideChildrenInBatches(t *testing.T) {
	for _, version := range []int{7, SupervisorVersion} {
		env := newEnv(t)
		root := tree("root")
		root.Vars = map[string]string{"blob": strings.Repeat("x", 60<<10)}
		for i := range 20 {
			root.Children = append(root.Children, stubNode(fmt.Sprintf("w%02d", i), nil))
		}
		require.Empty(t, spec.Validate(root), "a valid tree")
		var st Status
		at(env, 5*time.Minute, func() { st = query(t, env) })
		endAt(env, 6*time.Minute)
		env.ExecuteWorkflow(SupervisorWorkflow, SupervisorInput{Path: "root", Spec: root, Generation: 1, Version: version})
		require.Len(t, st.Children, 20)
		for _, c := range st.Children {
			require.Equal(t, "running", c.State, "version %d: %s", version, c.Path)
		}
	}
}

// TestSupervisor_ForgedHugeReportIsRejected: a report sent with the
// temporal CLI in a child's name, with a megabyte of stale copies, was
// kept in the supervisor's carried state, which a continue-as-new then
// could not carry (over Temporal's 2 MiB payload limit). It is rejected and
// counted; the child's record is untouched.
func TestSupervisor_ForgedHugeReportIsRejected(t *testing.T) {
	env := newEnv(t)
	copies := make([]string, 20000)
	for i := range copies {
		copies[i] = strings.Repeat("h", 50)
	}
	var st Status
	at(env, time.Minute, func() {
		env.SignalWorkflow(SignalChild, ChildReport{Seq: 1 << 40, Status: Status{Path: "root/a", Kind: "stub", State: "failed", Desired: "running", StaleCopies: copies}})
	})
	at(env, 2*time.Minute, func() { st = query(t, env) })
	endAt(env, 3*time.Minute)
	env.ExecuteWorkflow(SupervisorWorkflow, SupervisorInput{Path: "root", Spec: tree("root", stubNode("a", nil)), Generation: 1})
	require.Equal(t, 1, st.RejectedSignals)
	require.Equal(t, "running", st.Children[0].State, "the forged report was not taken")
	require.Empty(t, st.Children[0].StaleCopies)
}

// TestWorker_ForgedHugeExitIsRejected: an exit report of a megabyte, sent
// while an action runs, was kept in the worker's pending exits and so in
// what its continue-as-new carries.
func TestWorker_ForgedHugeExitIsRejected(t *testing.T) {
	env := newEnv(t)
	var st Status
	at(env, time.Minute, func() {
		env.SignalWorkflow(SignalExit, map[string]any{"instance": "x", "reason": strings.Repeat("r", 1<<20)})
	})
	at(env, 2*time.Minute, func() { st = query(t, env) })
	endAt(env, 3*time.Minute)
	env.ExecuteWorkflow(WorkerWorkflow, WorkerInput{Path: "t/w", Spec: stubNode("w", nil), Generation: 1})
	require.Equal(t, 1, st.RejectedSignals)
	require.Equal(t, "running", st.State)
}

// TestSupervisor_ForgedReportBatchOverTheCapIsRejected: a worker process
// batches at most activities.MaxReportsPerSignal reports in one signal; a
// batch of a hundred thousand made one task walk them all (a thousand here).
func TestSupervisor_ForgedReportBatchOverTheCapIsRejected(t *testing.T) {
	env := newEnv(t)
	more := make([]ChildReport, 1000)
	for i := range more {
		more[i] = ChildReport{Seq: int64(i + 2), Status: Status{Path: "root/a", State: "failed"}}
	}
	var st Status
	at(env, time.Minute, func() {
		env.SignalWorkflow(SignalChild, ChildReport{Seq: 1 << 40, Status: Status{Path: "root/a", State: "failed"}, More: more})
	})
	at(env, 2*time.Minute, func() { st = query(t, env) })
	endAt(env, 3*time.Minute)
	env.ExecuteWorkflow(SupervisorWorkflow, SupervisorInput{Path: "root", Spec: tree("root", stubNode("a", nil)), Generation: 1})
	require.Equal(t, 1, st.RejectedSignals)
	require.Equal(t, "running", st.Children[0].State)
}

// TestSupervisor_ForgedHostStatesAreBounded: a supervisor kept the state of
// every host named in a `host` signal; a thousand names sent with the
// temporal CLI grew its carry without bound.
func TestSupervisor_ForgedHostStatesAreBounded(t *testing.T) {
	env := newEnv(t)
	var st Status
	at(env, time.Minute, func() { env.SignalWorkflow(SignalHost, HostState{Host: strings.Repeat("h", 1100), Live: HostUp}) })
	for lo := 0; lo < hostcore.MaxHostStates+5; lo += 100 { // the test environment buffers so many signals at once
		at(env, time.Minute+time.Duration(lo)*time.Millisecond, func() {
			for i := lo; i < min(lo+100, hostcore.MaxHostStates+5); i++ {
				env.SignalWorkflow(SignalHost, HostState{Host: fmt.Sprintf("h%d", i), Live: HostUp})
			}
		})
	}
	at(env, 2*time.Minute, func() { st = query(t, env) })
	endAt(env, 3*time.Minute)
	// Version 12, which took any host's note up to the bound; from 13 a
	// note of a host not subscribed to is refused at once
	// (TestFleet_ANoteOfAHostNotSubscribedToIsRefused).
	env.ExecuteWorkflow(SupervisorWorkflow, SupervisorInput{Path: "root", Spec: tree("root", stubNode("a", nil)), Generation: 1, Version: versions.SupHostNotesSubscribed.Since - 1})
	require.Equal(t, 6, st.RejectedSignals, "the long name, and the five past the bound")
	require.Equal(t, "running", st.Children[0].State)
}

// Regression (attack review; docs/security.md's known gap): a spec sent by
// hand with a generation near 2^63 was taken, and the next generation a
// supervisor sent (the one past its child's report) wrapped negative. From
// supervisor 12 and worker 8 a generation past spec.MaxGeneration is
// refused, in a spec and in a child's report; the versions before take it.
func TestGeneration_OneSentByHandNear2To63IsRefused(t *testing.T) {
	const huge = 1<<63 - 1
	supervisor := func(version int) Status {
		env := newEnv(t)
		var st Status
		at(env, time.Minute, func() {
			env.SignalWorkflow(SignalSpec, spec.Update{Generation: huge, Spec: tree("root", stubNode("a", nil))})
		})
		at(env, 2*time.Minute, func() { st = query(t, env) })
		endAt(env, 3*time.Minute)
		env.ExecuteWorkflow(SupervisorWorkflow, SupervisorInput{Path: "root", Spec: tree("root", stubNode("a", nil)), Generation: 1, Version: version})
		return st
	}
	st := supervisor(SupervisorVersion)
	require.Equal(t, 1, st.RejectedSignals, "%+v", st)
	require.EqualValues(t, 1, st.Generation)
	old := supervisor(versions.SupGenerationBounded.Since - 1)
	require.EqualValues(t, huge, old.Generation, "version 11 takes it")

	worker := func(version int) Status {
		env := newEnv(t)
		var st Status
		at(env, time.Minute, func() { env.SignalWorkflow(SignalSpec, spec.Update{Generation: huge, Spec: stubNode("w", nil)}) })
		at(env, 2*time.Minute, func() { st = query(t, env) })
		endAt(env, 3*time.Minute)
		env.ExecuteWorkflow(WorkerWorkflow, WorkerInput{Path: "t/w", Spec: stubNode("w", nil), Generation: 1, Version: version})
		return st
	}
	st = worker(WorkerVersion)
	require.Equal(t, 1, st.RejectedSignals, "%+v", st)
	require.EqualValues(t, 1, st.Generation)
	old = worker(versions.WorkerGenerationBounded.Since - 1)
	require.EqualValues(t, huge, old.Generation, "version 7 takes it")
}

// The same for a child's report: a supervisor of version 12 refuses one
// whose generation is past spec.MaxGeneration; its record keeps the real one.
func TestGeneration_AReportNear2To63IsRefused(t *testing.T) {
	env := newEnv(t)
	var st Status
	at(env, time.Minute, func() {
		env.SignalWorkflow(SignalChild, ChildReport{Seq: env.Now().UnixNano(), Status: Status{Path: "root/a", Kind: "stub", State: "running", Desired: "running", Generation: 1<<63 - 1}})
	})
	at(env, 2*time.Minute, func() { st = query(t, env) })
	endAt(env, 3*time.Minute)
	env.ExecuteWorkflow(SupervisorWorkflow, SupervisorInput{Path: "root", Spec: tree("root", stubNode("a", nil)), Generation: 1, Version: SupervisorVersion})
	require.Equal(t, 1, st.RejectedSignals, "%+v", st)
	require.EqualValues(t, 1, st.Children[0].Generation)
}

// Regression (attack review of the bound above): a worker sent a spec of
// generation exactly spec.MaxGeneration took it; its supervisor then sent
// the next apply at the one past the child's count, which the worker
// refused as out of range, for good. A spec more than 2^32 past a node's
// generation is refused (the bound is 2^21 signals away), and a child sent
// a generation far ahead within that takes its supervisor's next apply.
func TestGeneration_AChildSentAGenerationAheadTakesTheNextApply(t *testing.T) {
	env := newEnv(t)
	changed := stubNode("a", &spec.Stub{Delay: spec.Duration(time.Millisecond)})
	var st Status
	at(env, time.Minute, func() {
		require.NoError(t, env.SignalWorkflowByID("root/a", SignalSpec, spec.Update{Generation: spec.MaxGeneration, Spec: stubNode("a", nil)}))
		require.NoError(t, env.SignalWorkflowByID("root/a", SignalSpec, spec.Update{Generation: 1 + spec.MaxGenerationStep, Spec: stubNode("a", nil)}))
	})
	at(env, 2*time.Minute, func() { env.SignalWorkflow(SignalSpec, spec.Update{Spec: tree("root", changed)}) })
	at(env, 4*time.Minute, func() { st = query(t, env) })
	endAt(env, 5*time.Minute)
	env.ExecuteWorkflow(SupervisorWorkflow, SupervisorInput{Path: "root", Spec: tree("root", stubNode("a", nil)), Generation: 1, Version: SupervisorVersion})
	a := st.Children[0]
	require.EqualValues(t, 2+spec.MaxGenerationStep, a.Generation, "the one past the child's count: %+v", a)
	require.False(t, a.Applying, "the apply was taken: %+v; root %+v %+v", a, st.Update, st.Reason)
	require.Equal(t, 1, a.RejectedSignals, "the spec at the bound, 2^53 past the child's: %+v", a)
}
