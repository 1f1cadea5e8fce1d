package treestatus

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/steward-sh/steward/internal/spec"
)

// ErrNotFound is what a Query returns (wrapped) when no workflow runs at the
// path. Below the root, Assemble keeps the parent's record of such a node:
// a child whose workflow is starting, or one that closed.
var ErrNotFound = errors.New("no workflow at this path")

// ErrNoAnswer is what a Query returns (wrapped) when the workflow did not
// answer: the query timed out, or the server could not reach a worker. A
// context deadline counts as one too. Such a node's row is stale, never a
// failure of the assembly; any other error (a payload the caller cannot
// decode, say) fails it.
var ErrNoAnswer = errors.New("the workflow did not answer")

// noAnswer reports whether err means the node did not answer.
func noAnswer(err error) bool {
	return errors.Is(err, ErrNoAnswer) || errors.Is(err, context.DeadlineExceeded)
}

// Query asks the workflow at path for its `status`.
type Query func(ctx context.Context, path string) (Status, error)

// DefaultParallel is how many queries Assemble runs at once by default.
const DefaultParallel = 32

// Options says how Assemble asks.
type Options struct {
	// Parallel bounds the queries in flight (0: DefaultParallel).
	Parallel int
	// Leaves: ask every worker too, for its row. A supervisor's record of a
	// worker has its state, desired state and generation as of the worker's
	// last report, but counters and the last action only as of the last
	// report that changed one of those (a manual restart alone is not
	// reported): with Leaves every row is the worker's own answer, or its
	// supervisor's record where the worker cannot answer within
	// LeafTimeout (its process just died, say).
	Leaves bool
	// LeafTimeout bounds one worker's query (0: DefaultLeafTimeout).
	LeafTimeout time.Duration
	// QueryTimeout bounds one supervisor's query below the root (0:
	// DefaultQueryTimeout); RootTimeout the root's (0: DefaultRootTimeout).
	QueryTimeout, RootTimeout time.Duration
	// Fallback, when set, says what is known of the subtree at a path
	// without asking its workflows (visibility: paths, kinds and states):
	// the rows below a supervisor that does not answer, and a root that
	// does not answer. Its rows are marked Stale by Assemble.
	Fallback Query
	// RootFallback, when set, says what is known of a path and of its
	// direct children without asking them (visibility: one small read, by
	// FallbackDeadline). A root that does not answer is then shown from
	// it, and its children are asked as if the root had answered: only the
	// root's own row, and those of children that do not answer either, are
	// stale; when it fails too, so does the assembly. Without it, the
	// root's whole subtree is Fallback's, read by ctx alone: at 10,000
	// workers a read of that size did not end within `starter status
	// --timeout`, and the command failed after 12 s.
	RootFallback Query
	// Deadline, when set, is the moment no query runs past: a query still
	// unanswered then (or still waiting for a slot) is a node that did not
	// answer, its row stale, whatever its own timeout. Fallback's reads end
	// at FallbackDeadline (when zero, FallbackGrace after Deadline). The
	// caller's whole answer is then bounded (`starter status --timeout`),
	// however slow the tree's workflows are.
	Deadline, FallbackDeadline time.Time
}

// FallbackGrace is how long past Options.Deadline a Fallback read may
// take when Options.FallbackDeadline is not set.
const FallbackGrace = time.Second

// DefaultLeafTimeout is how long a worker's query may take before its row
// is its supervisor's record.
const DefaultLeafTimeout = 3 * time.Second

// DefaultQueryTimeout is how long a supervisor's query may take before its
// row is its parent's record and the rows below it come from Fallback. A
// supervisor answers from its worker's cache in milliseconds; one that is
// not cached replays its history first (under a second for a full
// history): 5 s is a workflow task that did not start, a starved queue
// or a worker that is gone.
const DefaultQueryTimeout = 5 * time.Second

// DefaultRootTimeout is how long the root's query may take before the
// subtree is Fallback's: longer than a child's, as the root is what was
// asked for (a query of a workflow whose worker just died waits for the
// server's 5 s sticky timeout, then a replay on another worker).
const DefaultRootTimeout = 10 * time.Second

// Assemble builds the nested status of the subtree at root: it queries root,
// then every supervisor below it (and with o.Leaves every worker), at most
// o.Parallel queries at a time, and nests each answer in place of its
// parent's record (keeping the parent's Applying mark). Every supervisor's
// reason then counts the workers of its subtree.
//
// One node that does not answer (ErrNoAnswer, or longer than
// o.QueryTimeout) never fails the assembly: a supervisor keeps its parent's
// record, marked Stale with why, and the rows below it are what o.Fallback
// knows (none without it); a worker whose query fails keeps its
// supervisor's record (marked Stale when o.Leaves asked for its own). The
// root has no parent: when it does not answer within o.RootTimeout, its
// subtree is o.Fallback's, or the assembly fails. Any other error of a
// supervisor's query fails the assembly, as does a root that does not exist
// (ErrNotFound) and ctx ending.
func Assemble(ctx context.Context, root string, q Query, o Options) (Status, error) {
	parallel := o.Parallel
	if parallel <= 0 {
		parallel = DefaultParallel
	}
	a := &assembler{q: q, sem: make(chan struct{}, parallel), leaves: o.Leaves, leafTimeout: o.LeafTimeout,
		queryTimeout: o.QueryTimeout, fallback: o.Fallback, deadline: o.Deadline, fallbackDeadline: o.FallbackDeadline}
	if a.fallbackDeadline.IsZero() && !a.deadline.IsZero() {
		a.fallbackDeadline = a.deadline.Add(FallbackGrace)
	}
	rootTimeout := o.RootTimeout
	if rootTimeout <= 0 {
		rootTimeout = DefaultRootTimeout
	}
	if a.leafTimeout <= 0 {
		a.leafTimeout = DefaultLeafTimeout
	}
	if a.queryTimeout <= 0 {
		a.queryTimeout = DefaultQueryTimeout
	}
	st, err := a.query(ctx, root, rootTimeout)
	if err != nil && noAnswer(err) && ctx.Err() == nil && o.RootFallback != nil {
		// One small read, by the fallback's deadline: the caller's answer
		// stays within its bound.
		top, ferr := a.read(ctx, o.RootFallback, root)
		if ferr != nil {
			return Status{}, errors.Join(err, ferr) // a whole read would not end sooner
		}
		for i := range top.Children {
			top.Children[i].Stale = BelowStale
			top.Children[i].Children = nil // its own answer, or Fallback's, says what is below
		}
		top.Stale = noAnswerReason(err) + ": its row from visibility"
		st, err = top, nil
	}
	if err != nil {
		if !noAnswer(err) || ctx.Err() != nil || a.fallback == nil {
			return Status{}, err
		}
		// A root has no record of its own to show: its rows are read
		// from Fallback whatever FallbackDeadline says (bounded by ctx
		// alone), rather than no answer at all.
		fb, ferr := a.fallback(ctx, root)
		if ferr != nil {
			return Status{}, errors.Join(err, ferr)
		}
		markStale(&fb, "")
		fb.Stale = noAnswerReason(err) + ": rows from visibility"
		finish(&fb)
		return fb, nil
	}
	if st.Path != root {
		// A workflow started by hand under another's input (or a forged
		// answer): its own row is shown as it answered, and nothing it
		// names below it is asked (not this path's tree; a rollout of it
		// refuses its path).
		st.Children = []Status{}
		return st, nil
	}
	a.ownChildren(&st)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	a.cancel = cancel
	a.expand(ctx, &st, 1)
	a.wg.Wait()
	if a.err != nil {
		return Status{}, a.err
	}
	if ctx.Err() != nil {
		return Status{}, ctx.Err()
	}
	finish(&st)
	return st, nil
}

// staleReason is a Stale mark for a node whose query failed.
func staleReason(err error) string {
	return noAnswerReason(err) + ": row from its supervisor's record"
}

// staleReasonOf is staleReason for a row marked before it was asked: a row
// visibility gave (a child of a root that did not answer) stays
// visibility's.
func staleReasonOf(err error, before string) string {
	if before == BelowStale {
		return noAnswerReason(err) + ": row from visibility"
	}
	return staleReason(err)
}

func noAnswerReason(err error) string {
	if errors.Is(err, context.DeadlineExceeded) {
		return "did not answer in time"
	}
	return "did not answer (" + err.Error() + ")"
}

// BelowStale marks a row that visibility gave, below a node that did not
// answer: the row is stale, but the node itself was not asked.
const BelowStale = "below a node that did not answer: row from visibility"

// markStale marks every row of a Fallback subtree below its root.
func markStale(st *Status, mark string) {
	if mark != "" {
		st.Stale = mark
	}
	for i := range st.Children {
		markStale(&st.Children[i], BelowStale)
	}
}

type assembler struct {
	q            Query
	leaves       bool
	leafTimeout  time.Duration
	queryTimeout time.Duration
	fallback     Query
	deadline     time.Time
	// fallbackDeadline ends the fallback's reads (zero: no end).
	fallbackDeadline time.Time
	sem              chan struct{}
	wg               sync.WaitGroup
	mu               sync.Mutex
	err              error
	cancel           context.CancelFunc
	// rows counts the rows the answers gave (MaxRows bounds them).
	rows atomic.Int64
}

// MaxRows bounds the rows one assembly takes from its answers: a tree of
// 10,000 workers is well within it. A status answer is the workflow's own
// say, and anyone who may write to the namespace can start a workflow
// that answers what they like; without a bound one answer listing itself
// as its children thousands of times grew the tree without end.
const MaxRows = 200_000

// errFull: a node left unasked because the assembly holds MaxRows rows.
var errFull = fmt.Errorf("not asked: the tree is past %d rows", MaxRows)

// ownChildren keeps of st's children, as its answer gives them, those that
// are its own: one level below its path, each path once, at most
// spec.MaxExpandedChildren (what a supervisor holds), within MaxRows. A
// steward supervisor never names another; when the answer did, its row
// says how many rows were left out.
func (a *assembler) ownChildren(st *Status) {
	prefix := st.Path + "/"
	seen := make(map[string]bool, len(st.Children))
	kept := make([]Status, 0, min(len(st.Children), spec.MaxExpandedChildren))
	left := 0
	for _, c := range st.Children {
		name, under := strings.CutPrefix(c.Path, prefix)
		if !under || name == "" || strings.Contains(name, "/") || seen[c.Path] || len(kept) == spec.MaxExpandedChildren {
			left++
			continue
		}
		seen[c.Path] = true
		kept = append(kept, c)
	}
	if over := a.rows.Add(int64(len(kept))) - MaxRows; over > 0 {
		cut := int(min(over, int64(len(kept))))
		kept, left = kept[:len(kept)-cut], left+cut
	}
	st.Children = kept
	if left > 0 {
		st.Stale = fmt.Sprintf("its answer named %d rows that are not its children (or past what a tree holds): left out", left)
	}
}

// query runs one query when a slot is free, its time counted from then
// and never past the assembly's deadline. A query the deadline cut short,
// or that never got a slot before it, is context.DeadlineExceeded (no
// answer) while ctx itself goes on.
func (a *assembler) query(ctx context.Context, path string, timeout time.Duration) (Status, error) {
	bounded := ctx
	if !a.deadline.IsZero() {
		var cancel context.CancelFunc
		bounded, cancel = context.WithDeadline(ctx, a.deadline)
		defer cancel()
		if bounded.Err() != nil && ctx.Err() == nil {
			return Status{}, context.DeadlineExceeded // past it: not asked
		}
	}
	select {
	case a.sem <- struct{}{}:
	case <-bounded.Done():
		if ctx.Err() != nil {
			return Status{}, ctx.Err()
		}
		return Status{}, context.DeadlineExceeded
	}
	defer func() { <-a.sem }()
	if a.rows.Load() >= MaxRows {
		return Status{}, errFull // (the root's query is the first: never)
	}
	qctx, cancel := context.WithTimeout(bounded, timeout)
	defer cancel()
	return a.q(qctx, path)
}

// readFallback reads Fallback's rows of the subtree at path, by the
// fallback's deadline when there is one.
func (a *assembler) readFallback(ctx context.Context, path string) (Status, error) {
	return a.read(ctx, a.fallback, path)
}

// read asks q about path by the fallback's deadline when there is one.
func (a *assembler) read(ctx context.Context, q Query, path string) (Status, error) {
	if !a.fallbackDeadline.IsZero() {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, a.fallbackDeadline)
		defer cancel()
	}
	return q(ctx, path)
}

// expand replaces, concurrently, every child supervisor record of st (and
// with leaves every worker record) with that child's own answer, a
// supervisor's expanded in turn; st is at level depth of the tree (the
// root's is 1), and no level below spec.MaxDepth is asked. Each goroutine
// writes only its own element of st.Children.
func (a *assembler) expand(ctx context.Context, st *Status, depth int) {
	if depth >= spec.MaxDepth {
		return // no tree is deeper: its records are what is shown
	}
	for i := range st.Children {
		c := &st.Children[i]
		if (!c.IsSupervisor() && !a.leaves) || c.WorkflowClosed {
			continue
		}
		a.wg.Add(1)
		go func() {
			defer a.wg.Done()
			timeout := a.queryTimeout
			if !c.IsSupervisor() {
				timeout = a.leafTimeout
			}
			got, err := a.query(ctx, c.Path, timeout)
			switch {
			case errors.Is(err, errFull):
				c.Stale = err.Error()
				return
			case errors.Is(err, ErrNotFound):
				return // keep the record: starting, or closed
			case err != nil && ctx.Err() != nil:
				return // the assembly ends: Assemble says so
			case err != nil && !c.IsSupervisor():
				c.Stale = staleReasonOf(err, c.Stale) // keep the record: the worker cannot answer now
				return
			case err != nil && noAnswer(err):
				c.Stale = staleReasonOf(err, c.Stale)
				a.fillFromFallback(ctx, c)
				return
			case err != nil:
				a.fail(err)
				return
			}
			if got.Path != c.Path {
				c.Stale = fmt.Sprintf("answered as %.100q: row from its supervisor's record", got.Path)
				return
			}
			got.Applying = got.Applying || c.Applying
			*c = got
			if !c.IsSupervisor() {
				c.Children = c.Children[:0] // a worker has none
				return
			}
			a.ownChildren(c)
			a.expand(ctx, c, depth+1)
		}()
	}
}

func (a *assembler) fail(err error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.err == nil {
		a.err = err
		a.cancel()
	}
}

// fillFromFallback puts below a supervisor that did not answer the rows
// Fallback knows of its subtree (none when it knows nothing).
func (a *assembler) fillFromFallback(ctx context.Context, c *Status) {
	if a.fallback == nil {
		return
	}
	fb, err := a.readFallback(ctx, c.Path)
	if err != nil {
		c.Stale += "; no rows below it: " + err.Error()
		return
	}
	c.Children = fb.Children
	for i := range c.Children {
		markStale(&c.Children[i], BelowStale)
	}
}

// finish gives every node a non-nil Children and every supervisor the
// worker counts of its subtree in its reason.
func finish(st *Status) {
	if st.Children == nil {
		st.Children = []Status{}
	}
	for i := range st.Children {
		finish(&st.Children[i])
	}
	if st.IsSupervisor() {
		at, total := st.AtDesired()
		st.Reason = withWorkerCounts(st.Reason, at, total)
	}
}
