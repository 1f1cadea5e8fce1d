package workflows

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/steward-sh/steward/activities"
	"github.com/steward-sh/steward/internal/metricstest"
	"github.com/steward-sh/steward/internal/spec"
)

// Rollout tests run a supervisor with n stub workers as the fleet and a
// RolloutWorkflow over it as a child of a small driver workflow (the test
// environment runs one top-level workflow; both are its children).

// fleet is a tree of n workers w00, w01, ... under "fleet".
func fleet(n int, tweak func(i int, w *spec.Node)) spec.Node {
	root := spec.Node{Name: "fleet"}
	for i := range n {
		w := stubNode(fmt.Sprintf("w%02d", i), nil)
		if tweak != nil {
			tweak(i, &w)
		}
		root.Children = append(root.Children, w)
	}
	return root
}

func fleetTargets(n int) []string {
	var out []string
	for i := range n {
		out = append(out, fmt.Sprintf("fleet/w%02d", i))
	}
	return out
}

// RolloutHarness starts the fleet, waits until it runs, then runs the
// rollout and returns its result. The rollout's HistoryLimit is the
// fleet's too.
func RolloutHarness(ctx workflow.Context, root spec.Node, in RolloutInput) (RolloutStatus, error) {
	fctx, stopFleet := workflow.WithCancel(ctx)
	sctx := workflow.WithChildOptions(fctx, workflow.ChildWorkflowOptions{WorkflowID: "fleet", WaitForCancellation: true})
	fleetDone := workflow.ExecuteChildWorkflow(sctx, SupervisorWorkflow, SupervisorInput{Path: "fleet", Spec: root, Generation: 1, HistoryLimit: in.HistoryLimit})
	if err := workflow.Sleep(ctx, time.Minute); err != nil {
		return RolloutStatus{}, err
	}
	rctx := workflow.WithChildOptions(ctx, workflow.ChildWorkflowOptions{WorkflowID: RolloutID(in.Path)})
	var st RolloutStatus
	err := workflow.ExecuteChildWorkflow(rctx, RolloutWorkflow, in).Get(ctx, &st)
	// Delete the fleet (its workers are not children of this workflow:
	// they would run on).
	stopFleet()
	_ = fleetDone.Get(ctx, nil)
	return st, err
}

// inFlight tracks how many restarts run at once, and their order.
type inFlight struct {
	mu       sync.Mutex
	now, max int
	order    []string
}

func (f *inFlight) enter(p string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.now++
	f.max = max(f.max, f.now)
	f.order = append(f.order, p)
}

func (f *inFlight) leave() { f.mu.Lock(); f.now--; f.mu.Unlock() }

type rolloutCase struct {
	n        int
	in       RolloutInput
	tweak    func(i int, w *spec.Node)
	restart  func(r activities.ActionRequest) error // nil: succeed
	duringFn func(env *testsuite.TestWorkflowEnvironment)
}

func runRollout(t *testing.T, c rolloutCase) (RolloutStatus, *inFlight) {
	t.Helper()
	st, flight, _ := runRolloutEnv(t, c)
	return st, flight
}

func runRolloutWithMetrics(t *testing.T, c rolloutCase) *metricstest.Recorder {
	t.Helper()
	_, _, rec := runRolloutEnv(t, c)
	return rec
}

func runRolloutEnv(t *testing.T, c rolloutCase) (RolloutStatus, *inFlight, *metricstest.Recorder) {
	t.Helper()
	env, rec := newEnvWithMetrics(t)
	env.RegisterWorkflow(RolloutHarness)
	env.RegisterWorkflow(RolloutWorkflow)
	flight := &inFlight{}
	env.OnActivity(activities.StartName, mock.Anything, mock.Anything).Return(func(_ context.Context, r activities.ActionRequest) (activities.ActionResult, error) {
		return activities.ActionResult{Attempt: 1, Instance: r.Path}, nil
	})
	env.OnActivity(activities.StopName, mock.Anything, mock.Anything).Return(activities.ActionResult{Attempt: 1}, nil)
	env.OnActivity(activities.RestartName, mock.Anything, mock.Anything).After(time.Second).Return(func(_ context.Context, r activities.ActionRequest) (activities.ActionResult, error) {
		flight.enter(r.Path)
		defer flight.leave()
		if c.restart != nil {
			if err := c.restart(r); err != nil {
				return activities.ActionResult{}, err
			}
		}
		return activities.ActionResult{Attempt: 1, Instance: r.Path}, nil
	})
	if c.duringFn != nil {
		c.duringFn(env)
	}
	c.in.Path = "fleet"
	if c.in.Op == "" {
		c.in.Op = RolloutRestart
	}
	c.in.Targets = fleetTargets(c.n)
	env.ExecuteWorkflow(RolloutHarness, fleet(c.n, c.tweak), c.in)
	require.NoError(t, env.GetWorkflowError())
	var st RolloutStatus
	require.NoError(t, env.GetWorkflowResult(&st))
	return st, flight, rec
}

// Targets restart in spec order, a chunk at a time: never more than the
// chunk in flight; the summary counts every target.
func TestRollout_ChunksInOrderWithinTheBound(t *testing.T) {
	st, flight := runRollout(t, rolloutCase{n: 12, in: RolloutInput{Chunk: 5}})
	require.Equal(t, "completed", st.State)
	require.Equal(t, 12, st.Total)
	require.Equal(t, 12, st.Succeeded)
	require.Zero(t, st.Failed)
	require.LessOrEqual(t, flight.max, 5, "never more than the chunk in flight")
	// From the rollout's own record (workflow time): a chunk's targets are
	// all sent at once, and a chunk starts only after the one before it
	// has finished.
	for c := 0; c < 12; c += 5 {
		var prevEnd time.Time
		for _, tg := range st.Targets[:c] {
			if tg.Finished.After(prevEnd) {
				prevEnd = tg.Finished
			}
		}
		for _, tg := range st.Targets[c:min(c+5, 12)] {
			require.Equal(t, st.Targets[c].Started, tg.Started, "%s is sent with its chunk", tg.Path)
			require.False(t, tg.Started.Before(prevEnd), "%s started before the chunk before it ended", tg.Path)
		}
	}
	// Chunks in spec order: every target of chunk k before any of chunk k+1.
	require.ElementsMatch(t, fleetTargets(12)[:5], flight.order[:5])
	require.ElementsMatch(t, fleetTargets(12)[5:10], flight.order[5:10])
	require.ElementsMatch(t, fleetTargets(12)[10:], flight.order[10:])
	for _, tg := range st.Targets {
		require.Equal(t, TargetSucceeded, tg.Status, tg.Path)
		require.False(t, tg.Finished.Before(tg.Started), tg.Path)
	}
}

// With fail-fast, no chunk starts after a failure: the rest are skipped.
func TestRollout_FailFastSkipsTheRest(t *testing.T) {
	st, flight := runRollout(t, rolloutCase{n: 9, in: RolloutInput{Chunk: 3, FailFast: true},
		tweak: func(i int, w *spec.Node) {
			w.Retry.MaxAttempts = 1
			if i == 4 {
				w.Backoff = &spec.Backoff{Initial: spec.Dur(time.Hour)}
			}
		},
		restart: func(r activities.ActionRequest) error {
			if r.Path == "fleet/w04" {
				return fmt.Errorf("boom")
			}
			return nil
		}})
	require.Equal(t, 9, st.Total)
	require.Equal(t, 5, st.Succeeded, "chunks 1 and 2 ran, but for w04")
	require.Equal(t, 1, st.Failed)
	require.Equal(t, 3, st.Skipped)
	require.Equal(t, TargetFailed, st.Targets[4].Status)
	require.Contains(t, st.Targets[4].Error, "boom")
	for _, tg := range st.Targets[6:] {
		require.Equal(t, TargetSkipped, tg.Status, tg.Path)
	}
	require.Len(t, flight.order, 6, "no restart after the failing chunk")
}

// Without fail-fast every chunk runs and failures are counted.
func TestRollout_ContinueOnFailureCountsThem(t *testing.T) {
	st, _ := runRollout(t, rolloutCase{n: 6, in: RolloutInput{Chunk: 2},
		tweak: func(i int, w *spec.Node) {
			w.Retry.MaxAttempts = 1
			w.Backoff = &spec.Backoff{Initial: spec.Dur(time.Hour)}
		},
		restart: func(r activities.ActionRequest) error {
			if r.Path == "fleet/w01" || r.Path == "fleet/w04" {
				return fmt.Errorf("boom")
			}
			return nil
		}})
	require.Equal(t, 4, st.Succeeded)
	require.Equal(t, 2, st.Failed)
	require.Zero(t, st.Skipped)
	require.Equal(t, 2, st.Counts[TargetFailed])
}

// A cancel mid-rollout: the chunk in flight finishes, the rest are
// cancelled.
func TestRollout_CancelMidRollout(t *testing.T) {
	st, flight := runRollout(t, rolloutCase{n: 9, in: RolloutInput{Chunk: 3},
		duringFn: func(env *testsuite.TestWorkflowEnvironment) {
			// The rollout starts at 1m; its first chunk's restarts take 1s.
			at(env, time.Minute+500*time.Millisecond, func() {
				require.NoError(t, env.SignalWorkflowByID(RolloutID("fleet"), SignalCancel, nil))
			})
		}})
	require.Equal(t, "cancelled", st.State)
	require.Equal(t, 3, st.Succeeded, "the chunk in flight finished")
	require.Equal(t, 6, st.Counts[TargetCancelled])
	require.Len(t, flight.order, 3)
}

// A target that never reaches its state within its action timeouts is a
// timeout (a failure in the summary): here a start of a service waiting out
// a one-hour backoff.
func TestRollout_TargetThatNeverGetsThereTimesOut(t *testing.T) {
	st, _ := runRollout(t, rolloutCase{n: 2, in: RolloutInput{Chunk: 2, Op: RolloutStart},
		tweak: func(i int, w *spec.Node) {
			if i == 1 {
				w.Backoff = &spec.Backoff{Initial: spec.Dur(time.Hour)}
			}
		},
		duringFn: func(env *testsuite.TestWorkflowEnvironment) {
			at(env, 30*time.Second, func() { crashChild(env, "fleet/w01") })
		}})
	require.Equal(t, TargetSucceeded, st.Targets[0].Status, "already running: at once")
	require.Equal(t, TargetTimeout, st.Targets[1].Status, st.Targets[1].Error)
	require.Contains(t, st.Targets[1].Error, "not running within")
	require.Equal(t, 1, st.Failed)
	require.Equal(t, 1, st.Counts[TargetTimeout])
	waited := st.Targets[1].Finished.Sub(st.Targets[1].Started)
	require.InDelta(t, rolloutBudget(stubNode("x", nil), RolloutStart).Seconds(), waited.Seconds(), 1, "it waited its action timeouts, no more")
}
