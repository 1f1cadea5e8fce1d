package treestatus

import (
	"context"
	"strings"
	"sync"
)

// Diagnose says whether the workflow at path has a workflow task that
// keeps failing (nil when it has not).
type Diagnose func(ctx context.Context, path string) (*TaskFailure, error)

// DefaultDiagnoseLimit is how many nodes MarkTaskFailures asks about at
// most by default: the first of those that did not answer, in tree order.
const DefaultDiagnoseLimit = 50

// DefaultDiagnoseParallel is how many diagnoses MarkTaskFailures runs at
// once by default.
const DefaultDiagnoseParallel = 8

// MarkTaskFailures asks diagnose about the nodes of an assembled subtree
// that did not answer (Unanswered: Stale set, not merely below one that did
// not), the first limit of them in tree order (0: DefaultDiagnoseLimit), at
// most parallel at a time (0: DefaultDiagnoseParallel), and sets
// TaskFailing of those whose workflow task keeps failing. A node that
// answered is never asked: reading a failure costs the server a describe
// and a page of history. A diagnosis that fails, or that ctx ends, leaves
// its node as it was. It returns how many nodes it marked.
func MarkTaskFailures(ctx context.Context, st *Status, diagnose Diagnose, limit, parallel int) int {
	if limit <= 0 {
		limit = DefaultDiagnoseLimit
	}
	if parallel <= 0 {
		parallel = DefaultDiagnoseParallel
	}
	nodes := unanswered(st, nil)
	if len(nodes) > limit {
		nodes = nodes[:limit]
	}
	sem := make(chan struct{}, parallel)
	var wg sync.WaitGroup
	var mu sync.Mutex
	marked := 0
	for _, n := range nodes {
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			break
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			f, err := diagnose(ctx, n.Path)
			if err != nil || f == nil {
				return
			}
			if len(f.Message) > MaxTaskFailureMessage {
				f.Message = strings.ToValidUTF8(f.Message[:MaxTaskFailureMessage], "") + " ..."
			}
			n.TaskFailing = f // each goroutine writes its own node
			mu.Lock()
			marked++
			mu.Unlock()
		}()
	}
	wg.Wait()
	return marked
}

// unanswered appends to out the nodes of st that did not answer, in tree
// order (as Unanswered lists their paths).
func unanswered(st *Status, out []*Status) []*Status {
	if st.Stale != "" && !strings.HasPrefix(st.Stale, "below a node") {
		out = append(out, st)
	}
	for i := range st.Children {
		out = unanswered(&st.Children[i], out)
	}
	return out
}

// TaskFailingNodes lists the nodes of an assembled subtree whose workflow task
// keeps failing (TaskFailing set), in tree order.
func (s Status) TaskFailingNodes() []Status {
	var out []Status
	if s.TaskFailing != nil {
		out = append(out, s)
	}
	for _, c := range s.Children {
		out = append(out, c.TaskFailingNodes()...)
	}
	return out
}
