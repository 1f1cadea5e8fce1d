package treestatus

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/steward-sh/steward/internal/spec"
)

// answers is what each supervisor of a small tree answers: its own record
// and its direct children's, as SupervisorWorkflow's status query does.
func answers() map[string]Status {
	return map[string]Status{
		"plant": {Path: "plant", Kind: spec.KindSupervisor, State: "running", Desired: "running", Generation: 2, Reason: WithChildCounts("", 1, 2),
			Children: []Status{
				{Path: "plant/line-1", Kind: spec.KindSupervisor, State: "running", Desired: "running", Generation: 2},
				{Path: "plant/office", Kind: "stub", State: "backoff", Desired: "running", Generation: 1, Applying: true},
			}},
		"plant/line-1": {Path: "plant/line-1", Kind: spec.KindSupervisor, Strategy: "one_for_all", State: "running", Desired: "running", Generation: 2,
			Reason: WithChildCounts("restarted: press crashed", 1, 2),
			Children: []Status{
				{Path: "plant/line-1/press", Kind: "stub", State: "running", Desired: "running", Generation: 2},
				{Path: "plant/line-1/saw", Kind: "stub", State: "failed", Desired: "running", Generation: 2},
			}},
	}
}

func query(m map[string]Status) Query {
	return func(_ context.Context, path string) (Status, error) {
		st, ok := m[path]
		if !ok {
			return Status{}, fmt.Errorf("query %s: %w", path, ErrNotFound)
		}
		return st, nil
	}
}

func TestAssembleNestsEachSupervisorsAnswerAndCountsWorkers(t *testing.T) {
	st, err := Assemble(context.Background(), "plant", query(answers()), Options{Parallel: 4})
	require.NoError(t, err)
	require.Equal(t, []string{"plant/line-1/press", "plant/line-1/saw", "plant/office"}, st.Leaves())
	line, ok := st.Find("plant/line-1")
	require.True(t, ok)
	require.Equal(t, "one_for_all", line.Strategy, "the child supervisor's own answer replaces its parent's record")
	require.Equal(t, "restarted: press crashed; 1/2 workers at desired state", line.Reason)
	require.Equal(t, "1/3 workers at desired state", st.Reason, "press only: saw failed, office is applying")
	office, _ := st.Find("plant/office")
	require.NotNil(t, office.Children, "leaves have an empty children list, as before")
	require.Empty(t, office.Children)
}

func TestAssembleKeepsTheParentsApplyingMarkOfAChildSupervisor(t *testing.T) {
	m := answers()
	root := m["plant"]
	root.Children[0].Applying = true // the root sent line-1 a spec it has not acknowledged
	m["plant"] = root
	st, err := Assemble(context.Background(), "plant", query(m), Options{Parallel: 2})
	require.NoError(t, err)
	at, total := st.AtDesired()
	require.Equal(t, 0, at, "no worker under an applying supervisor counts as done")
	require.Equal(t, 3, total)
}

func TestAssembleKeepsTheRecordOfAChildSupervisorWithNoWorkflow(t *testing.T) {
	m := answers()
	delete(m, "plant/line-1") // starting, or closed
	st, err := Assemble(context.Background(), "plant", query(m), Options{Parallel: 2})
	require.NoError(t, err)
	line, ok := st.Find("plant/line-1")
	require.True(t, ok)
	require.Equal(t, "running", line.State)
	require.Empty(t, line.Children)
}

// Issue 25: at 4,000 workers one group's query timed out for minutes (its
// workflow task never started: a starved queue) and every `starter status`
// failed whole. Now the group's row is its parent's record, marked stale,
// and the rows below it are what visibility knows.
func TestAssembleKeepsGoingWhenASupervisorDoesNotAnswer_Issue25(t *testing.T) {
	q := func(ctx context.Context, path string) (Status, error) {
		if path == "plant/line-1" {
			<-ctx.Done() // its workflow task never starts
			return Status{}, fmt.Errorf("query %s: %w", path, ctx.Err())
		}
		return query(answers())(ctx, path) // a fresh answer per query, as from a workflow
	}
	fallback := func(_ context.Context, path string) (Status, error) {
		require.Equal(t, "plant/line-1", path)
		return Status{Path: path, Kind: spec.KindSupervisor, State: "running", Children: []Status{
			{Path: "plant/line-1/press", Kind: "stub", State: "running"},
			{Path: "plant/line-1/saw", Kind: "stub", State: "starting"},
		}}, nil
	}
	st, err := Assemble(context.Background(), "plant", q, Options{QueryTimeout: 50 * time.Millisecond, Fallback: fallback})
	require.NoError(t, err)
	line, ok := st.Find("plant/line-1")
	require.True(t, ok)
	require.Contains(t, line.Stale, "did not answer in time")
	require.Empty(t, line.Strategy, "its parent's record, not its own answer")
	require.Len(t, line.Children, 2, "the rows below it come from the fallback")
	require.Equal(t, []string{"plant/line-1", "plant/line-1/press", "plant/line-1/saw"}, st.StaleNodes())
	require.Equal(t, []string{"plant/line-1"}, st.Unanswered(), "the rows below it were not asked")
	_, total := st.AtDesired()
	require.Equal(t, 3, total)

	// A fallback that fails: no rows below it, and its mark says why.
	st, err = Assemble(context.Background(), "plant", q, Options{QueryTimeout: 50 * time.Millisecond,
		Fallback: func(context.Context, string) (Status, error) { return Status{}, errors.New("visibility unavailable") }})
	require.NoError(t, err)
	line, _ = st.Find("plant/line-1")
	require.Contains(t, line.Stale, "visibility unavailable")

	// Without a fallback, the stale supervisor has no rows below it.
	st, err = Assemble(context.Background(), "plant", q, Options{QueryTimeout: 50 * time.Millisecond})
	require.NoError(t, err)
	line, _ = st.Find("plant/line-1")
	require.Empty(t, line.Children)
	require.Equal(t, []string{"plant/line-1"}, st.StaleNodes())
}

// A root that does not answer has no parent's record: its subtree is the
// fallback's, all of it stale; without a fallback the assembly fails, as it
// does for a root that does not exist and for a caller's context that ends.
func TestAssembleAtARootThatDoesNotAnswer(t *testing.T) {
	m := answers()
	boom := fmt.Errorf("unavailable: %w", ErrNoAnswer)
	q := func(ctx context.Context, path string) (Status, error) {
		if path == "plant" {
			return Status{}, boom
		}
		return query(m)(ctx, path)
	}
	_, err := Assemble(context.Background(), "plant", q, Options{Parallel: 2})
	require.ErrorIs(t, err, boom)
	fallback := func(_ context.Context, path string) (Status, error) {
		return Status{Path: path, Kind: spec.KindSupervisor, State: "running", Children: []Status{{Path: "plant/office", Kind: "stub", State: "running"}}}, nil
	}
	st, err := Assemble(context.Background(), "plant", q, Options{Fallback: fallback})
	require.NoError(t, err)
	require.Contains(t, st.Stale, "unavailable")
	require.Equal(t, []string{"plant", "plant/office"}, st.StaleNodes())

	undecodable := errors.New("payload encoding is not supported")
	_, err = Assemble(context.Background(), "plant", func(context.Context, string) (Status, error) { return Status{}, undecodable }, Options{Fallback: fallback})
	require.ErrorIs(t, err, undecodable, "an answer the caller cannot read is a failure, not a stale row")

	_, err = Assemble(context.Background(), "nowhere", query(m), Options{Parallel: 2, Fallback: fallback})
	require.ErrorIs(t, err, ErrNotFound)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = Assemble(ctx, "plant", query(m), Options{Fallback: fallback})
	require.ErrorIs(t, err, context.Canceled)
}

// Regression (issue 25, 10,000 workers): a root whose task waited in the
// queue did not answer, the read of its whole subtree from visibility did
// not end either, and `starter status` failed after 12 s. With a
// RootFallback the root's row and its children's come from one small
// read, by FallbackDeadline, and the children are asked as usual: only
// the rows that did not answer are stale.
func TestAssembleAtARootThatDoesNotAnswerAsksItsChildren(t *testing.T) {
	m := answers()
	q := func(ctx context.Context, path string) (Status, error) {
		switch path {
		case "plant":
			<-ctx.Done() // its task waits in the queue
			return Status{}, fmt.Errorf("query %s: %w", path, ctx.Err())
		case "plant/line-2":
			return Status{}, fmt.Errorf("unavailable: %w", ErrNoAnswer)
		}
		return query(m)(ctx, path)
	}
	var rootReadBy time.Time
	rootFallback := func(ctx context.Context, path string) (Status, error) {
		require.Equal(t, "plant", path)
		rootReadBy, _ = ctx.Deadline()
		return Status{Path: "plant", Kind: spec.KindSupervisor, State: "running", Children: []Status{
			{Path: "plant/line-1", Kind: spec.KindSupervisor, State: "running", Children: []Status{{Path: "plant/line-1/x"}}},
			{Path: "plant/line-2", Kind: spec.KindSupervisor, State: "running"},
			{Path: "plant/office", Kind: "stub", State: "running"},
		}}, nil
	}
	fallback := func(_ context.Context, path string) (Status, error) {
		require.Equal(t, "plant/line-2", path, "only the child that did not answer is read whole")
		return Status{Path: path, Kind: spec.KindSupervisor, Children: []Status{{Path: path + "/drill", Kind: "stub", State: "running"}}}, nil
	}
	fallbackBy := time.Now().Add(time.Minute)
	st, err := Assemble(context.Background(), "plant", q, Options{RootTimeout: 50 * time.Millisecond,
		RootFallback: rootFallback, Fallback: fallback, FallbackDeadline: fallbackBy})
	require.NoError(t, err)
	require.True(t, fallbackBy.Equal(rootReadBy), "the root's read ends at FallbackDeadline")
	require.Equal(t, "did not answer in time: its row from visibility", st.Stale)
	line1, _ := st.Find("plant/line-1")
	require.Empty(t, line1.Stale, "line-1 answered")
	require.Equal(t, "one_for_all", line1.Strategy, "its own answer")
	require.Equal(t, []string{"plant/line-1/press", "plant/line-1/saw"}, line1.Leaves(), "its own children, not visibility's")
	line2, _ := st.Find("plant/line-2")
	require.Equal(t, "did not answer (unavailable: the workflow did not answer): row from visibility", line2.Stale)
	office, _ := st.Find("plant/office")
	require.Equal(t, BelowStale, office.Stale, "a worker's row is visibility's, not asked")
	require.Equal(t, []string{"plant", "plant/line-2"}, st.Unanswered())
	require.Equal(t, []string{"plant", "plant/line-2", "plant/line-2/drill", "plant/office"}, st.StaleNodes())

	// A RootFallback that fails: the assembly fails, naming both, without
	// the whole read (it would not end sooner).
	_, err = Assemble(context.Background(), "plant", q, Options{RootTimeout: 50 * time.Millisecond,
		RootFallback: func(context.Context, string) (Status, error) { return Status{}, errors.New("visibility unavailable") },
		Fallback: func(context.Context, string) (Status, error) {
			t.Error("the whole subtree was read")
			return Status{}, nil
		}})
	require.ErrorContains(t, err, "visibility unavailable")
	require.ErrorIs(t, err, context.DeadlineExceeded)
}

// A supervisor's query that fails other than by not answering (its answer
// cannot be decoded: no key) fails the assembly: nothing else would read
// better.
func TestAssembleFailsOnAnErrorOtherThanNoAnswer(t *testing.T) {
	boom := errors.New("payload encoding is not supported")
	q := func(ctx context.Context, path string) (Status, error) {
		if path == "plant/line-1" {
			return Status{}, boom
		}
		return query(answers())(ctx, path)
	}
	_, err := Assemble(context.Background(), "plant", q, Options{Parallel: 2, Fallback: func(context.Context, string) (Status, error) { return Status{}, nil }})
	require.ErrorIs(t, err, boom)
}

// A wide tree: 40 supervisors of 25 workers. The assembly never runs more
// than its bound of queries at once, and finds every worker.
func TestAssembleBoundsItsConcurrency(t *testing.T) {
	m := map[string]Status{}
	root := Status{Path: "fleet", Kind: spec.KindSupervisor, State: "running", Desired: "running"}
	for g := range 40 {
		gp := fmt.Sprintf("fleet/g%d", g)
		root.Children = append(root.Children, Status{Path: gp, Kind: spec.KindSupervisor})
		grp := Status{Path: gp, Kind: spec.KindSupervisor, State: "running", Desired: "running"}
		for w := range 25 {
			grp.Children = append(grp.Children, Status{Path: fmt.Sprintf("%s/w%d", gp, w), Kind: "stub", State: "running", Desired: "running"})
		}
		m[gp] = grp
	}
	m["fleet"] = root
	var now, peak atomic.Int32
	var mu sync.Mutex
	q := func(ctx context.Context, path string) (Status, error) {
		n := now.Add(1)
		defer now.Add(-1)
		mu.Lock()
		peak.Store(max(peak.Load(), n))
		mu.Unlock()
		time.Sleep(time.Millisecond) // let queries overlap
		return query(m)(ctx, path)
	}
	st, err := Assemble(context.Background(), "fleet", q, Options{Parallel: 5})
	require.NoError(t, err)
	at, total := st.AtDesired()
	require.Equal(t, 1000, total)
	require.Equal(t, 1000, at)
	require.LessOrEqual(t, peak.Load(), int32(5))
	require.Greater(t, peak.Load(), int32(1), "queries ran in parallel")
}

func TestOwnReasonStripsOnlyTheChildCount(t *testing.T) {
	require.Equal(t, "", OwnReason(WithChildCounts("", 3, 3)))
	require.Equal(t, "gave up: x; trying again at T", OwnReason(WithChildCounts("gave up: x; trying again at T", 0, 3)))
	require.Equal(t, "crashed (exit 1)", OwnReason("crashed (exit 1)"))
}

// With Leaves, a worker's row is its own answer (its counters are current),
// keeping its supervisor's Applying mark.
func TestAssembleWithLeavesAsksEveryWorker(t *testing.T) {
	m := answers()
	m["plant/line-1/press"] = Status{Path: "plant/line-1/press", Kind: "stub", State: "running", Desired: "running", Generation: 2, ManualRestarts: 7}
	m["plant/office"] = Status{Path: "plant/office", Kind: "stub", State: "running", Desired: "running", Generation: 1}
	st, err := Assemble(context.Background(), "plant", query(m), Options{Leaves: true})
	require.NoError(t, err)
	press, _ := st.Find("plant/line-1/press")
	require.Equal(t, 7, press.ManualRestarts)
	office, _ := st.Find("plant/office")
	require.True(t, office.Applying, "its supervisor's mark is kept")
	saw, _ := st.Find("plant/line-1/saw")
	require.Equal(t, "failed", saw.State, "a worker with no answer keeps its record")
}

// A record of a closed child workflow is kept: the closed workflow would
// answer its last state, replayed.
func TestAssembleKeepsTheRecordOfAClosedWorkflow(t *testing.T) {
	m := answers()
	root := m["plant"]
	root.Children[1] = Status{Path: "plant/office", Kind: "stub", State: "failed", Desired: "running", Reason: "workflow closed: terminated", WorkflowClosed: true}
	m["plant"] = root
	m["plant/office"] = Status{Path: "plant/office", Kind: "stub", State: "running", Desired: "running"}
	st, err := Assemble(context.Background(), "plant", query(m), Options{Leaves: true})
	require.NoError(t, err)
	office, _ := st.Find("plant/office")
	require.Equal(t, "failed", office.State)
}

// A worker that cannot answer (its process just died: the query times out)
// keeps its supervisor's record; the assembly does not fail.
func TestAssembleKeepsTheRecordOfAWorkerThatCannotAnswer(t *testing.T) {
	m := answers()
	q := func(ctx context.Context, path string) (Status, error) {
		if path == "plant/line-1/press" {
			<-ctx.Done() // hangs until its timeout
			return Status{}, ctx.Err()
		}
		return query(m)(ctx, path)
	}
	st, err := Assemble(context.Background(), "plant", q, Options{Leaves: true, LeafTimeout: 50 * time.Millisecond})
	require.NoError(t, err)
	press, _ := st.Find("plant/line-1/press")
	require.Equal(t, "running", press.State, "its record")
	require.Contains(t, press.Stale, "did not answer in time", "marked stale: --exact asked for its own row")
}

// Issue 25: `starter status` every 10 s during a 4,000-worker apply took
// 10.01 s once or twice in eleven calls: the root's query may take 10 s
// and each supervisor's 5 s more, one after the other. With a Deadline no
// query runs past it, whatever its own timeout: a slow root still answers,
// and the supervisors that had not answered by then keep their records,
// stale, with the fallback's rows below them.
func TestAssembleEndsItsQueriesAtTheDeadline_Issue25(t *testing.T) {
	slowRoot := make(chan struct{})
	q := func(ctx context.Context, path string) (Status, error) {
		switch path {
		case "plant":
			<-slowRoot // answers late, within its own timeout
		case "plant/line-1":
			<-ctx.Done() // never answers
			return Status{}, fmt.Errorf("query %s: %w", path, ctx.Err())
		}
		return query(answers())(ctx, path)
	}
	var fallbackCtxDeadline time.Time
	fallback := func(ctx context.Context, path string) (Status, error) {
		fallbackCtxDeadline, _ = ctx.Deadline()
		return Status{Path: path, Kind: spec.KindSupervisor, Children: []Status{{Path: path + "/press", Kind: "stub", State: "running"}}}, nil
	}
	deadline := time.Now().Add(300 * time.Millisecond)
	time.AfterFunc(100*time.Millisecond, func() { close(slowRoot) })
	st, err := Assemble(context.Background(), "plant", q, Options{
		RootTimeout: time.Minute, QueryTimeout: time.Minute, Fallback: fallback, Deadline: deadline})
	require.NoError(t, err)
	require.False(t, time.Now().Before(deadline), "line-1's query waited for the deadline")
	require.Less(t, time.Until(deadline), time.Duration(0))
	require.WithinDuration(t, deadline.Add(FallbackGrace), fallbackCtxDeadline, time.Millisecond,
		"the fallback's read is bounded too")
	require.Equal(t, []string{"plant/line-1/press", "plant/office"}, st.Leaves(), "the root's answer, the fallback's rows below line-1")
	line, _ := st.Find("plant/line-1")
	require.Contains(t, line.Stale, "did not answer in time")
	require.Equal(t, []string{"plant/line-1"}, st.Unanswered())

	// A deadline already past: the root is not asked, its rows are the
	// fallback's, all stale, read whatever FallbackDeadline says (a CI run
	// at 4,000 workers: the root's whole-tree read cut short failed the
	// command, where late rows beat none).
	st, err = Assemble(context.Background(), "plant", query(answers()), Options{
		Fallback: fallback, Deadline: time.Now().Add(-time.Second), FallbackDeadline: time.Now()})
	require.NoError(t, err)
	require.True(t, fallbackCtxDeadline.IsZero(), "the root's rows are read by the caller's context alone")
	require.Contains(t, st.Stale, "did not answer in time")
	require.Equal(t, []string{"plant/press"}, st.Leaves())

	// Below the root, the rows of a node that did not answer are read by
	// FallbackDeadline when it is set.
	fallbackBy := time.Now().Add(time.Minute)
	st, err = Assemble(context.Background(), "plant", q, Options{
		Fallback: fallback, Deadline: time.Now().Add(50 * time.Millisecond), FallbackDeadline: fallbackBy})
	require.NoError(t, err)
	require.True(t, fallbackBy.Equal(fallbackCtxDeadline), "the fallback's read ends at FallbackDeadline")
	require.Equal(t, []string{"plant/line-1"}, st.Unanswered())
}

// A deadline never cuts an assembly whose queries all answer: every row is
// fresh, none stale.
func TestAssembleWithADeadlineItMeets(t *testing.T) {
	st, err := Assemble(context.Background(), "plant", query(answers()), Options{Deadline: time.Now().Add(time.Minute)})
	require.NoError(t, err)
	require.Empty(t, st.StaleNodes())
	require.Equal(t, []string{"plant/line-1/press", "plant/line-1/saw", "plant/office"}, st.Leaves())
}
