package treestatus

import (
	"context"
	"errors"
	"sync"
	"time"
)

// ErrNotFound is what a Query returns (wrapped) when no workflow runs at the
// path. Below the root, Assemble keeps the parent's record of such a node:
// a child whose workflow is starting, or one that closed.
var ErrNotFound = errors.New("no workflow at this path")

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
}

// DefaultLeafTimeout is how long a worker's query may take before its row
// is its supervisor's record.
const DefaultLeafTimeout = 3 * time.Second

// Assemble builds the nested status of the subtree at root: it queries root,
// then every supervisor below it (and with o.Leaves every worker), at most
// o.Parallel queries at a time, and nests each answer in place of its
// parent's record (keeping the parent's Applying mark). Every supervisor's
// reason then counts the workers of its subtree. A query error other than
// ErrNotFound below the root fails the assembly; so does any error at the
// root. A worker's query that fails keeps the supervisor's record.
func Assemble(ctx context.Context, root string, q Query, o Options) (Status, error) {
	parallel := o.Parallel
	if parallel <= 0 {
		parallel = DefaultParallel
	}
	a := &assembler{q: q, sem: make(chan struct{}, parallel), leaves: o.Leaves, leafTimeout: o.LeafTimeout}
	if a.leafTimeout <= 0 {
		a.leafTimeout = DefaultLeafTimeout
	}
	st, err := a.query(ctx, root)
	if err != nil {
		return Status{}, err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	a.cancel = cancel
	a.expand(ctx, &st)
	a.wg.Wait()
	if a.err != nil {
		return Status{}, a.err
	}
	finish(&st)
	return st, nil
}

type assembler struct {
	q           Query
	leaves      bool
	leafTimeout time.Duration
	sem         chan struct{}
	wg          sync.WaitGroup
	mu          sync.Mutex
	err         error
	cancel      context.CancelFunc
}

func (a *assembler) query(ctx context.Context, path string) (Status, error) {
	select {
	case a.sem <- struct{}{}:
	case <-ctx.Done():
		return Status{}, ctx.Err()
	}
	defer func() { <-a.sem }()
	return a.q(ctx, path)
}

// expand replaces, concurrently, every child supervisor record of st (and
// with leaves every worker record) with that child's own answer, a
// supervisor's expanded in turn. Each goroutine writes only its own element
// of st.Children.
func (a *assembler) expand(ctx context.Context, st *Status) {
	for i := range st.Children {
		c := &st.Children[i]
		if (!c.IsSupervisor() && !a.leaves) || c.WorkflowClosed {
			continue
		}
		a.wg.Add(1)
		go func() {
			defer a.wg.Done()
			qctx := ctx
			if !c.IsSupervisor() {
				var cancel context.CancelFunc
				qctx, cancel = context.WithTimeout(ctx, a.leafTimeout)
				defer cancel()
			}
			got, err := a.query(qctx, c.Path)
			switch {
			case errors.Is(err, ErrNotFound):
				return // keep the record: starting, or closed
			case err != nil && !c.IsSupervisor():
				return // keep the record: the worker cannot answer now
			case err != nil:
				a.fail(err)
				return
			}
			got.Applying = got.Applying || c.Applying
			*c = got
			if c.IsSupervisor() {
				a.expand(ctx, c)
			}
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
