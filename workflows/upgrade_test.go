package workflows

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/steward-sh/steward/activities"
	"github.com/steward-sh/steward/internal/revision"
	"github.com/steward-sh/steward/internal/spec"
	"github.com/steward-sh/steward/internal/tick"
)

// A worker begun by older code (version 0) asked to upgrade continues as
// new at once (nothing in flight) onto this code's version, carrying its
// state: its service is not started again.
func TestUpgrade_AWorkerContinuesAsNewOntoThisCodeKeepingItsService(t *testing.T) {
	env := newEnv(t)
	log := mockActions(env)
	at(env, time.Minute, func() { env.SignalWorkflow(SignalUpgrade, nil) })
	endAt(env, 10*time.Minute)
	env.ExecuteWorkflow(WorkerWorkflow, WorkerInput{Path: "p/w", Spec: stubNode("w", nil), Generation: 1})

	next, ok := continuedAs[WorkerInput](t, env.GetWorkflowError())
	require.True(t, ok, "continued as new: %v", env.GetWorkflowError())
	require.Equal(t, WorkerVersion, next.Version)
	require.NotNil(t, next.Carry)
	require.Equal(t, tick.Running, next.Carry.Memory.State)
	require.Equal(t, []string{"p/w"}, log.of("start"), "started once, before the upgrade only")
}

// A supervisor asked to upgrade continues as new onto this code's version
// with its children's records: the next run adopts them, starting nothing.
// (Its children run elsewhere: the run is one carried over, as every
// supervisor's is after its first continue-as-new.)
func TestUpgrade_ASupervisorContinuesAsNewWithItsChildren(t *testing.T) {
	env := newEnv(t)
	log := mockActions(env)
	env.OnActivity(activities.ClosedChildrenName, mock.Anything, mock.Anything).Return([]activities.ClosedChild{}, nil)
	carry := &SupervisorCarry{Desired: "running"}
	for _, n := range []string{"a", "b"} {
		carry.Children = append(carry.Children, ChildRecord{Name: n, Path: "root/" + n, Run: "r-" + n, Digest: "d", WantGeneration: 1,
			Status: Status{Path: "root/" + n, Kind: spec.KindStub, State: "running", Desired: "running", Generation: 1}})
	}
	at(env, time.Minute, func() { env.SignalWorkflow(SignalUpgrade, nil) })
	endAt(env, 10*time.Minute)
	env.ExecuteWorkflow(SupervisorWorkflow, SupervisorInput{Path: "root", Spec: pruneSpec(tree("root", stubNode("a", nil), stubNode("b", nil))), Generation: 1, Carry: carry})

	next, ok := continuedAs[SupervisorInput](t, env.GetWorkflowError())
	require.True(t, ok, "continued as new: %v", env.GetWorkflowError())
	require.Equal(t, SupervisorVersion, next.Version)
	require.Len(t, next.Carry.Children, 2)
	require.Equal(t, "running", next.Carry.Children[0].Status.State)
	require.Empty(t, log.of("start"), "nothing started")
}

// A version-0 run replaying a history in which its older code dropped an
// upgrade signal as unknown (no "steward-upgrade-1" marker) drops it again,
// counted as rejected, and goes on.
func TestUpgrade_AVersion0RunReplaysADroppedSignalAsDropped(t *testing.T) {
	env := newEnv(t)
	mockActions(env)
	env.OnGetVersion("steward-upgrade-1", workflow.DefaultVersion, 1).Return(workflow.DefaultVersion)
	var st Status
	at(env, time.Minute, func() { env.SignalWorkflow(SignalUpgrade, nil) })
	at(env, 2*time.Minute, func() { st = queryOwn(t, env) })
	endAt(env, 3*time.Minute)
	env.ExecuteWorkflow(WorkerWorkflow, WorkerInput{Path: "p/w", Spec: stubNode("w", nil), Generation: 1})

	_, continued := continuedAs[WorkerInput](t, env.GetWorkflowError())
	require.False(t, continued)
	require.Equal(t, 1, st.RejectedSignals)
	require.Equal(t, "running", st.State)
}

// A run of a version newer than this build knows fails its workflow task
// (retried until a newer worker takes it); it never runs older code over
// a newer history.
func TestUpgrade_ARunOfANewerVersionIsRefused(t *testing.T) {
	env := newEnv(t)
	endAt(env, time.Minute)
	env.ExecuteWorkflow(WorkerWorkflow, WorkerInput{Path: "p/w", Spec: stubNode("w", nil), Generation: 1, Version: WorkerVersion + 1})
	require.ErrorContains(t, env.GetWorkflowError(), "knows up to")
}

// The old branches of the markers asked in version-0 runs only
// (upgrade.go): each behaves as the code that wrote such histories did when
// its marker is absent, and a run of version >= 1 takes the new branch
// without asking (the marker's absence does not matter).

func TestVersions_ReadBackClosedSupervisor(t *testing.T) {
	for _, c := range []struct {
		name     string
		version  int
		readBack bool
	}{{"version 0 without the marker: stays closed", 0, false}, {"version 1: read back", 1, true}} {
		t.Run(c.name, func(t *testing.T) {
			env := newEnv(t)
			log := mockActions(env)
			env.OnGetVersion("read-back-closed-supervisor", workflow.DefaultVersion, 1).Return(workflow.DefaultVersion)
			env.OnActivity(activities.ClosedChildrenName, mock.Anything, mock.Anything).Return(
				[]activities.ClosedChild{{Path: "root/g", Status: "terminated"}}, nil)
			group := tree("g", stubNode("x", nil))
			var readBacks atomic.Int32
			env.OnActivity(activities.SubtreeSpecName, mock.Anything, mock.Anything).Return(
				func(context.Context, activities.SubtreeSpecRequest) (spec.Node, error) {
					readBacks.Add(1)
					return group, nil
				})
			var st Status
			at(env, time.Minute, func() { st = queryOwn(t, env) })
			endAt(env, 2*time.Minute)
			env.ExecuteWorkflow(SupervisorWorkflow, SupervisorInput{Path: "root", Spec: pruneSpec(tree("root", group)), Generation: 1, Carry: carriedGroup(), Version: c.version})

			g := childNamed(t, st, "root/g")
			if c.readBack {
				require.EqualValues(t, 1, readBacks.Load())
				require.Equal(t, []string{"root/g/x"}, log.of("start"))
				return
			}
			require.Zero(t, readBacks.Load())
			require.Empty(t, log.of("start"))
			require.Equal(t, "failed", g.State, "%+v", g)
		})
	}
}

func TestVersions_ReportAfterFailedAction(t *testing.T) {
	for _, c := range []struct {
		name    string
		version int
		failed  int // reports of state failed
	}{{"version 0 without the marker: the unchanged state is not reported again", 0, 1}, {"version 1: reported again", 1, 2}} {
		t.Run(c.name, func(t *testing.T) {
			env := newEnv(t)
			env.OnGetVersion("report-after-failed-action", workflow.DefaultVersion, 1).Return(workflow.DefaultVersion)
			reps := recordReports(env, "p")
			env.OnActivity(activities.StartName, mock.Anything, mock.Anything).Return(
				activities.ActionResult{Attempt: 1}, temporal.NewNonRetryableApplicationError("lost after its report", activities.ErrPermanent, nil, int32(1)))
			at(env, time.Minute, func() { env.SignalWorkflow(SignalRestart, nil) })
			endAt(env, 2*time.Minute)
			node := stubNode("w", nil)
			node.Restart = spec.RestartTemporary
			env.ExecuteWorkflow(WorkerWorkflow, WorkerInput{Path: "p/w", Parent: "p", Spec: node, Generation: 1, Version: c.version})

			failed := 0
			for _, s := range reps.states() {
				if s == "failed" {
					failed++
				}
			}
			require.Equal(t, c.failed, failed, "%v", reps.states())
		})
	}
}

func TestVersions_RolloutRestartSatisfiedByStart(t *testing.T) {
	for _, c := range []struct {
		name    string
		version int
		status  string
	}{{"version 0 without the marker: waits out its budget", 0, TargetTimeout}, {"version 1: satisfied by the start", 1, TargetSucceeded}} {
		t.Run(c.name, func(t *testing.T) {
			env := newEnv(t)
			env.OnGetVersion("rollout-restart-satisfied-by-start", workflow.DefaultVersion, 1).Return(workflow.DefaultVersion)
			env.OnActivity(activities.StartName, mock.Anything, mock.Anything).After(3*time.Second).Return(
				activities.ActionResult{Attempt: 1, Instance: "i1"}, nil)
			env.OnActivity(activities.RestartName, mock.Anything, mock.Anything).Return(
				activities.ActionResult{Attempt: 1, Instance: "i2"}, nil).Maybe()
			out := workerUpdate(t, env, time.Second, RolloutRestart)
			endAt(env, 10*time.Minute)
			env.ExecuteWorkflow(WorkerWorkflow, WorkerInput{Path: "fleet/w", Spec: stubNode("w", nil), Generation: 1, Version: c.version})
			require.Equal(t, c.status, out.Status, out.Error)
		})
	}
}

func TestVersions_ExitWhileUnknown(t *testing.T) {
	for _, c := range []struct {
		name    string
		version int
		acted   bool
	}{{"version 0 without the marker: the exit is ignored", 0, false}, {"version 1: the exit is acted on", 1, true}} {
		t.Run(c.name, func(t *testing.T) {
			env := newEnv(t)
			env.OnGetVersion("exit-while-unknown", workflow.DefaultVersion, 1).Return(workflow.DefaultVersion)
			env.OnActivity(activities.StartName, mock.Anything, mock.Anything).Return(activities.ActionResult{Attempt: 1, Instance: "i1"}, nil)
			// No worker of the host takes the restart: the host is unreachable.
			env.OnActivity(activities.RestartName, mock.Anything, mock.Anything).Return(
				activities.ActionResult{}, temporal.NewTimeoutError(enumspb.TIMEOUT_TYPE_SCHEDULE_TO_START, nil))
			var unknown, after Status
			at(env, time.Minute, func() { env.SignalWorkflow(SignalRestart, nil) })
			at(env, 2*time.Minute, func() {
				unknown = queryOwn(t, env)
				env.SignalWorkflow(SignalExit, tick.Exit{Instance: "i1", Reason: "crashed while its host was away"})
			})
			at(env, 3*time.Minute, func() { after = queryOwn(t, env) })
			endAt(env, 4*time.Minute)
			env.ExecuteWorkflow(WorkerWorkflow, WorkerInput{Path: "p/w", Spec: stubNode("w", nil), Generation: 1, Version: c.version})

			require.Equal(t, "unknown", unknown.State, "%+v", unknown)
			if c.acted {
				require.NotEqual(t, "unknown", after.State, "%+v", after)
				return
			}
			require.Equal(t, "unknown", after.State, "%+v", after)
		})
	}
}

// Worker version 2: a host's refusal of a restart (activities.ErrRefused)
// leaves the instance that ran running and is announced as `refused`; a
// version-1 run replays it as the permanent failure it was.
func TestVersions_RefusedRestart(t *testing.T) {
	for _, c := range []struct {
		name    string
		version int
		state   string
		events  []string
	}{
		{"version 1: a permanent failure", 1, "failed", []string{spec.EventFailed, spec.EventRecovered}},
		{"version 2: the old instance runs on, announced", 2, "running", nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			env := newEnv(t)
			log := &notifyLog{}
			env.OnActivity(activities.NotifyName, mock.Anything, mock.Anything).Return(log.notify)
			env.OnActivity(activities.StartName, mock.Anything, mock.Anything).Return(activities.ActionResult{Attempt: 1, Instance: "i1"}, nil)
			const refusal = "policy /etc/steward/policy.yaml: command /bin/sh is not allowed"
			env.OnActivity(activities.RestartName, mock.Anything, mock.Anything).Return(activities.ActionResult{Attempt: 1},
				temporal.NewApplicationErrorWithOptions(refusal, activities.ErrRefused, temporal.ApplicationErrorOptions{NonRetryable: true, Details: []any{int32(1)}}))
			node := stubNode("w", nil)
			node.Notify = &spec.Notify{Webhook: spec.Literal("http://127.0.0.1:1/hook")}
			changed := stubNode("w", &spec.Stub{Delay: spec.Duration(time.Millisecond)})
			changed.Notify = node.Notify
			var before, after, signed Status
			at(env, time.Minute, func() {
				before = queryOwn(t, env)
				env.SignalWorkflow(SignalSpec, spec.Update{Spec: changed})
			})
			at(env, 2*time.Minute, func() {
				after = queryOwn(t, env)
				// The same driver, now signed: what runs is not what it
				// says, so it restarts (and is refused again here).
				changed.Signature = "ed25519:k:s"
				env.SignalWorkflow(SignalSpec, spec.Update{Spec: changed})
			})
			at(env, 3*time.Minute, func() { signed = queryOwn(t, env) })
			endAt(env, 4*time.Minute)
			env.ExecuteWorkflow(WorkerWorkflow, WorkerInput{Path: "p/w", Spec: node, Generation: 1, Version: c.version})

			require.Equal(t, "running", before.State)
			require.Equal(t, c.state, after.State, "%+v", after)
			require.Contains(t, after.Reason, refusal)
			if c.events != nil {
				require.Equal(t, c.events, log.events())
			}
			if c.version >= 2 {
				require.Equal(t, "i1", after.Instance, "the instance that ran before is the one that runs")
				require.Equal(t, ActionStatus{Name: "restart", Status: "refused", Attempts: 1, Error: refusal}, after.LastAction)
				require.Equal(t, "restart refused: "+refusal, log.delivered[0].Notification.Reason)
				require.EqualValues(t, 2, after.Generation, "the refused spec is the node's (the next one goes on from it)")
				require.EqualValues(t, 3, signed.Generation)
				require.Equal(t, "restart", signed.LastAction.Name)
				require.Equal(t, []string{spec.EventRefused, spec.EventRefused}, log.events(), "the signed spec was tried: a restart, refused")
			}
		})
	}
}

// Supervisor version 2: a child whose spec was changed around its
// supervisor (it reports a generation the supervisor never sent) gets the
// applied spec again at the next apply, changed or not; version 1 sends
// only changed children theirs.
func TestVersions_ApplyResendsToAChildChangedAroundItsSupervisor(t *testing.T) {
	for _, c := range []struct {
		name    string
		version int
		resent  []string
	}{{"version 1: only changed children", 1, nil}, {"version 2: the strayed child too", 2, []string{"root/a"}}} {
		t.Run(c.name, func(t *testing.T) {
			env := newEnv(t)
			mockActions(env)
			env.OnActivity(activities.ClosedChildrenName, mock.Anything, mock.Anything).Return([]activities.ClosedChild{}, nil)
			var mu sync.Mutex
			var resent []string
			var gens []int64
			for _, p := range []string{"root/a", "root/b"} {
				p := p
				env.OnSignalExternalWorkflow(mock.Anything, p, mock.Anything, SignalSpec, mock.Anything).Return(func(_, id, _, _ string, arg any) error {
					mu.Lock()
					defer mu.Unlock()
					resent = append(resent, id)
					gens = append(gens, arg.(spec.Update).Generation)
					return nil
				})
			}
			// The test's end deletes the tree: its children are cancelled.
			env.OnRequestCancelExternalWorkflow(mock.Anything, mock.Anything, mock.Anything).Return(nil)
			root := tree("root", stubNode("a", nil), stubNode("b", nil))
			s := supervisorRun{in: SupervisorInput{Spec: root}}
			carry := &SupervisorCarry{Desired: "running"}
			for _, n := range root.Children {
				gen := int64(1)
				if n.Name == "a" {
					gen = 2 // a raw spec signal took it to generation 2
				}
				carry.Children = append(carry.Children, ChildRecord{Name: n.Name, Path: "root/" + n.Name, Run: "r-" + n.Name, Digest: spec.Digest(s.inherit(n)), WantGeneration: 1,
					Status: Status{Path: "root/" + n.Name, Kind: spec.KindStub, State: "running", Desired: "running", Generation: gen}})
			}
			// b's only change is a signature: version 1 (which wrote its
			// histories without signatures) does not see it.
			signed := root
			signed.Children = append([]spec.Node(nil), root.Children...)
			signed.Children[1].Signature = "ed25519:k:s"
			if c.version >= 2 {
				signed = root
			}
			at(env, time.Minute, func() { env.SignalWorkflow(SignalSpec, spec.Update{Generation: 2, Spec: signed}) })
			endAt(env, 2*time.Minute)
			env.ExecuteWorkflow(SupervisorWorkflow, SupervisorInput{Path: "root", Spec: pruneSpec(root), Generation: 1, Carry: carry, Version: c.version})
			mu.Lock()
			defer mu.Unlock()
			require.Equal(t, c.resent, resent)
			if c.version >= 2 {
				// The child counted to 2 on its own: the spec goes as 3,
				// and the child is applying until it reports it.
				require.Equal(t, []int64{3}, gens)
				st := queryOwn(t, env)
				require.True(t, st.Children[0].Applying, "%+v", st.Children[0])
				require.False(t, st.Children[1].Applying)
			}
		})
	}
}

// Supervisor version 5: the spec signals one workflow task decides leave
// together from one local activity (activities.HandOut), which adds no
// task to the supervisor when they are delivered; version 4 sends each as
// a SignalExternalWorkflow command.
func TestVersions_SpecSignalsLeaveInOneHandOut(t *testing.T) {
	for _, version := range []int{4, 5} {
		t.Run(fmt.Sprintf("version %d", version), func(t *testing.T) {
			env := newEnv(t)
			mockActions(env)
			env.OnActivity(activities.ClosedChildrenName, mock.Anything, mock.Anything).Return([]activities.ClosedChild{}, nil)
			env.OnRequestCancelExternalWorkflow(mock.Anything, mock.Anything, mock.Anything).Return(nil)
			var mu sync.Mutex
			var signalled []string
			var handOuts [][]string
			for _, p := range []string{"root/a", "root/b", "root/c"} {
				env.OnSignalExternalWorkflow(mock.Anything, p, mock.Anything, SignalSpec, mock.Anything).Return(func(_, id, _, _ string, _ any) error {
					mu.Lock()
					defer mu.Unlock()
					signalled = append(signalled, id)
					return nil
				}).Maybe()
			}
			env.OnActivity(activities.HandOutName, mock.Anything, mock.Anything).Return(func(_ context.Context, r activities.HandOutRequest) ([]activities.Undelivered, error) {
				require.Equal(t, SignalSpec, r.Signal)
				var paths []string
				for _, d := range r.Deliveries {
					require.EqualValues(t, 2, d.Update.Generation)
					require.Equal(t, time.Minute, d.Update.Spec.Timeouts.Stop.D())
					paths = append(paths, d.Path)
				}
				mu.Lock()
				defer mu.Unlock()
				handOuts = append(handOuts, paths)
				return nil, nil
			}).Maybe()
			// A change that restarts nothing (a stop timeout) goes to every
			// child at once.
			root, carry, changed := threeRunning()
			at(env, time.Minute, func() { env.SignalWorkflow(SignalSpec, spec.Update{Generation: 2, Spec: changed}) })
			endAt(env, 2*time.Minute)
			env.ExecuteWorkflow(SupervisorWorkflow, SupervisorInput{Path: "root", Spec: pruneSpec(root), Generation: 1, Carry: carry, Version: version})
			mu.Lock()
			defer mu.Unlock()
			all := []string{"root/a", "root/b", "root/c"}
			if version >= 5 {
				require.Empty(t, signalled)
				require.Equal(t, [][]string{all}, handOuts, "one hand-out for the task's three signals")
				return
			}
			require.ElementsMatch(t, all, signalled, "one command each (the test environment runs them in any order)")
			require.Empty(t, handOuts)
		})
	}
}

// Worker version 3: the reload signal reloads the running service (the
// same instance, counted, the result its last action and reason); a node
// without a reload rejects it. Version 2 drops it as unknown, as its code
// did, and runs no reload.
func TestVersions_Reload(t *testing.T) {
	for _, c := range []struct {
		name     string
		version  int
		reload   bool
		reloads  int
		rejected int
		noMarker bool // a history a worker of 5b9cb0e wrote: no steward-reload marker
	}{
		{"version 2: dropped as unknown", 2, true, 0, 1, false},
		{"version 3: reloaded", 3, true, 1, 0, false},
		{"version 3 without a reload configured: rejected", 3, false, 0, 1, false},
		{"version 3 written by 5b9cb0e (no marker): dropped as it was", 3, true, 0, 1, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			env := newEnv(t)
			if c.noMarker {
				env.OnGetVersion("steward-reload", workflow.DefaultVersion, 1).Return(workflow.DefaultVersion)
			}
			env.OnActivity(activities.StartName, mock.Anything, mock.Anything).Return(activities.ActionResult{Attempt: 1, Instance: "i1"}, nil)
			env.OnActivity(activities.ObserveName, mock.Anything, mock.Anything).Return(activities.ActionResult{Attempt: 1, Observed: "running"}, nil).Maybe()
			reloads := 0
			env.OnActivity(activities.ReloadName, mock.Anything, mock.Anything).Return(
				func(_ context.Context, req activities.ActionRequest) (activities.ActionResult, error) {
					reloads++
					require.Equal(t, "i1", req.Instance, "the running instance is reloaded")
					return activities.ActionResult{Attempt: 1, Instance: req.Instance}, nil
				}).Maybe()
			proc := map[string]any{"command": "sleep", "args": []any{"600"}}
			if c.reload {
				proc["reload"] = map[string]any{"signal": "HUP"}
			}
			node := spec.Node{Name: "w", Kind: spec.KindProcess, Process: proc}
			var after Status
			at(env, time.Minute, func() { env.SignalWorkflow(SignalReload, nil) })
			at(env, 90*time.Second, func() { env.SignalWorkflow(SignalDesired, "running") }) // a wake-up
			at(env, 2*time.Minute, func() { after = queryOwn(t, env) })
			endAt(env, 3*time.Minute)
			env.ExecuteWorkflow(WorkerWorkflow, WorkerInput{Path: "p/w", Spec: node, Generation: 1, Version: c.version})

			require.Equal(t, c.reloads, reloads)
			require.Equal(t, c.reloads, after.Reloads)
			require.Equal(t, c.rejected, after.RejectedSignals)
			require.Equal(t, "running", after.State)
			require.Equal(t, "i1", after.Instance)
			require.Zero(t, after.ManualRestarts+after.Restarts, "a reload is no restart")
			if c.reloads > 0 {
				require.Equal(t, ActionStatus{Name: "reload", Status: "succeeded", Attempts: 1}, after.LastAction)
				require.Equal(t, "reloaded", after.Reason)
			}
		})
	}
}

// Worker version 4: a spec that restarts the service cancels the start in
// flight, and the service starts with the new spec at once; version 3
// lets the start (a minute: a slow ready probe, say) finish, then
// restarts.
func TestVersions_SpecSupersedesAStartInFlight(t *testing.T) {
	for _, c := range []struct {
		version int
		want    string // the action with the new spec, and when it began
	}{
		{3, "restart 1ms at 1m0s"},
		{4, "start 1ms at 1s"},
	} {
		t.Run(fmt.Sprintf("version %d", c.version), func(t *testing.T) {
			env := newEnv(t)
			t0 := env.Now()
			var mu sync.Mutex
			var got []string
			act := func(verb string) func(context.Context, activities.ActionRequest) (activities.ActionResult, error) {
				return func(_ context.Context, r activities.ActionRequest) (activities.ActionResult, error) {
					mu.Lock()
					got = append(got, fmt.Sprintf("%s %s at %s", verb, time.Duration(r.Spec.Stub.Delay), env.Now().Sub(t0).Round(time.Second)))
					mu.Unlock()
					return activities.ActionResult{Attempt: 1, Instance: r.Path}, nil
				}
			}
			slow := mock.MatchedBy(func(r activities.ActionRequest) bool { return r.Spec.Stub.Delay == 0 })
			env.OnActivity(activities.StartName, mock.Anything, slow).Return(act("start")).After(time.Minute)
			env.OnActivity(activities.StartName, mock.Anything, mock.Anything).Return(act("start"))
			env.OnActivity(activities.RestartName, mock.Anything, mock.Anything).Return(act("restart"))
			env.OnActivity(activities.StopName, mock.Anything, mock.Anything).Return(activities.ActionResult{Attempt: 1}, nil)
			var st Status
			at(env, time.Second, func() {
				env.SignalWorkflow(SignalSpec, spec.Update{Spec: stubNode("w", &spec.Stub{Delay: spec.Duration(time.Millisecond)})})
			})
			at(env, 3*time.Minute, func() { st = queryOwn(t, env) })
			endAt(env, 4*time.Minute)
			env.ExecuteWorkflow(WorkerWorkflow, WorkerInput{Path: "p/w", Spec: stubNode("w", nil), Generation: 1, Version: c.version})

			mu.Lock()
			defer mu.Unlock()
			// (The test environment ends the mocked first start when its
			// minute is over, cancelled or not: it says nothing here.)
			require.Contains(t, got, c.want)
			require.Len(t, got, 2, "%v", got)
			require.Equal(t, "running", st.State)
			require.EqualValues(t, 2, st.Generation)
		})
	}
}

// Version 4 of a root tells the tree's revisions which revision an
// apply's request became; version 3 ignores the request (its revisions
// keep the record pending until the root is upgraded).
func TestVersions_RootTellsRevisionsWhatAnApplyBecame(t *testing.T) {
	for _, c := range []struct {
		name    string
		version int
		told    []revision.Taken
	}{
		{"version 3: not told", 3, nil},
		{"version 4: told", 4, []revision.Taken{{Request: "r-change", Revision: 6, Changed: true}, {Request: "r-same", Revision: 6}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			env := newEnv(t)
			mockActions(env)
			env.OnActivity(activities.ClosedChildrenName, mock.Anything, mock.Anything).Return([]activities.ClosedChild{}, nil)
			var mu sync.Mutex
			var told []revision.Taken
			env.OnSignalExternalWorkflow(mock.Anything, RevisionsID("root"), "", SignalTaken, mock.Anything).Return(func(_, _, _, _ string, arg any) error {
				mu.Lock()
				defer mu.Unlock()
				told = append(told, arg.(revision.Taken))
				return nil
			})
			env.OnRequestCancelExternalWorkflow(mock.Anything, mock.Anything, "").Return(nil) // endAt deletes the tree
			whole := tree("root", stubNode("a", nil), stubNode("b", nil))
			carry := &SupervisorCarry{Desired: "running", Revision: 5}
			for _, n := range whole.Children {
				carry.Children = append(carry.Children, ChildRecord{Name: n.Name, Path: "root/" + n.Name, Run: "r-" + n.Name, Digest: spec.Digest(n), WantGeneration: 1,
					Status: Status{Path: "root/" + n.Name, Kind: spec.KindStub, State: "running", Desired: "running", Generation: 1}})
			}
			changed := whole
			changed.Intensity = &spec.Intensity{MaxRestarts: 9, Period: spec.Dur(time.Minute)}
			at(env, time.Minute, func() { env.SignalWorkflow(SignalSpec, spec.Update{Spec: changed, Request: "r-change"}) })
			at(env, 2*time.Minute, func() { env.SignalWorkflow(SignalSpec, spec.Update{Spec: changed, Request: "r-same"}) })
			endAt(env, 10*time.Minute)
			env.ExecuteWorkflow(SupervisorWorkflow, SupervisorInput{Path: "root", Spec: pruneSpec(whole), Generation: 1, Carry: carry, Version: c.version})
			mu.Lock()
			defer mu.Unlock()
			require.Equal(t, c.told, told)
		})
	}
}

// A restart for a new spec, whose success report its activity sends.
// Version 4 reported the new generation at once in a transient state
// (starting), numbered after the success report made before it: the
// success report was stale, and the worker reported the success again from
// its next task (three reports, three tasks of the supervisor's). Version 5
// leaves the generation to the action's end, and the success report,
// numbered above every report before it, is the only one.
func TestVersions_SuccessReportIsNotStale(t *testing.T) {
	for _, c := range []struct {
		name    string
		version int
		own     []string // the worker's own reports from the new spec on
		fresh   bool     // the success report's number is above all of them
	}{
		{"version 4: a transient report, the success stale, reported again", 4, []string{"starting", "running"}, false},
		{"version 5: the success report alone", 5, nil, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			env := newEnv(t)
			reps := recordReports(env, "p")
			var mu sync.Mutex
			var success int64
			env.OnActivity(activities.RestartName, mock.Anything, mock.Anything).Return(func(_ context.Context, r activities.ActionRequest) (activities.ActionResult, error) {
				mu.Lock()
				defer mu.Unlock()
				if r.OnSuccess == nil {
					return activities.ActionResult{Attempt: 1, Instance: "i2"}, nil
				}
				success = r.OnSuccess.Report.Seq
				return activities.ActionResult{Attempt: 1, Instance: "i2", Reported: true}, nil
			})
			mockActions(env) // after: the restart's mock above is the one matched
			var before int
			at(env, time.Minute, func() {
				reps.mu.Lock()
				before = len(reps.got)
				reps.mu.Unlock()
				env.SignalWorkflow(SignalSpec, spec.Update{Spec: stubNode("w", &spec.Stub{Delay: *spec.Dur(time.Millisecond)})})
			})
			endAt(env, 2*time.Minute)
			env.ExecuteWorkflow(WorkerWorkflow, WorkerInput{Path: "p/w", Parent: "p", Spec: stubNode("w", nil), Generation: 1, Version: c.version})

			reps.mu.Lock()
			defer reps.mu.Unlock()
			mu.Lock()
			defer mu.Unlock()
			require.NotZero(t, success, "the restart's activity had a success report to send")
			var own []string
			fresh := true
			for _, r := range reps.got {
				fresh = fresh && success > r.Seq
			}
			for _, r := range reps.got[before:] {
				if r.Ended {
					break // endAt deletes it
				}
				own = append(own, r.Status.State)
			}
			require.Equal(t, c.own, own)
			require.Equal(t, c.fresh, fresh)
		})
	}
}

// Regression: a spec that arrived while an observe ran was reported at
// once (its generation, running since before), which left the restart's
// success report nothing to change: it was skipped, and a rolling update
// never saw the worker running since it sent the spec (it waited for
// ever: TestPolicyRefusesARawSpecAndTheServiceRunsOn under load).
func TestVersions_ASpecDuringAnObserveIsReportedByItsRestart(t *testing.T) {
	env := newEnv(t)
	reps := recordReports(env, "p")
	env.OnActivity(activities.ObserveName, mock.Anything, mock.Anything).After(3*time.Second).Return(activities.ActionResult{Attempt: 1, Observed: "running"}, nil)
	var mu sync.Mutex
	var restartedAt time.Time
	env.OnActivity(activities.RestartName, mock.Anything, mock.Anything).Return(func(_ context.Context, r activities.ActionRequest) (activities.ActionResult, error) {
		mu.Lock()
		defer mu.Unlock()
		restartedAt = env.Now()
		return activities.ActionResult{Attempt: 1, Instance: "i2"}, nil // its report left to the workflow
	})
	mockActions(env)
	node := stubNode("w", nil)
	node.Observe = &spec.Observe{Interval: spec.Dur(10 * time.Second)}
	changed := node
	changed.Stub = &spec.Stub{Delay: *spec.Dur(time.Millisecond)}
	at(env, 11*time.Second, func() { env.SignalWorkflow(SignalSpec, spec.Update{Generation: 2, Spec: changed}) }) // the observe runs 10 s .. 13 s
	endAt(env, time.Minute)
	env.ExecuteWorkflow(WorkerWorkflow, WorkerInput{Path: "p/w", Parent: "p", Spec: node, Generation: 1, Version: WorkerVersion})

	mu.Lock()
	defer mu.Unlock()
	require.False(t, restartedAt.IsZero(), "the spec restarted the service")
	reps.mu.Lock()
	defer reps.mu.Unlock()
	var last ChildReport
	for _, r := range reps.got {
		if r.Status.Generation == 2 && r.Status.State == "running" {
			last = r.ChildReport
		}
	}
	require.Equal(t, int64(2), last.Status.Generation, "generation 2 reported running")
	require.Equal(t, "i2", last.Status.Instance, "by the restarted instance: %+v", reps.got)
}
