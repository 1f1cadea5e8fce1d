package main

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"

	"github.com/steward-sh/steward/internal/spec"
	"github.com/steward-sh/steward/internal/treestatus"
	"github.com/steward-sh/steward/workflows"
)

// visibilityTimeout bounds one listing of a tree (its pages together).
const visibilityTimeout = 10 * time.Second

// visibilityLimit bounds the rows one fallback reads (a subtree larger than
// this shows its first rows, by path).
const visibilityLimit = 20000

// visibilityFallback is treestatus.Options.Fallback for one assembly of the
// tree at root: the first call lists root's whole subtree once (one
// listing, however many supervisors do not answer: 40 listings at once
// exceeded the dev server's persistence rate), and every call answers
// from that listing.
func visibilityFallback(c client.Client, root string) treestatus.Query {
	var once sync.Once
	var whole treestatus.Status
	var err error
	return func(ctx context.Context, path string) (treestatus.Status, error) {
		once.Do(func() {
			lctx, cancel := context.WithTimeout(ctx, visibilityTimeout)
			defer cancel()
			whole, err = visibilitySubtree(lctx, c, root)
		})
		if err != nil {
			return treestatus.Status{}, err
		}
		if sub, ok := whole.Find(path); ok {
			return sub, nil
		}
		return treestatus.Status{Path: path, Kind: spec.KindSupervisor, Children: []treestatus.Status{}}, nil
	}
}

// visibilitySubtree is what the server's visibility store knows of the
// running subtree at path, without asking any workflow: each workflow's
// path, kind and state (the search attributes every steward workflow
// upserts on change), nested by path, children by path (visibility does not
// know spec order). It is treestatus.Assemble's fallback for a node that
// does not answer its query: a starved task queue, a worker that is gone.
func visibilitySubtree(ctx context.Context, c client.Client, path string) (treestatus.Status, error) {
	rows, err := visibilityRows(ctx, c, path, fmt.Sprintf("WorkflowId = '%s' OR WorkflowId STARTS_WITH '%s/'", path, path))
	if err != nil {
		return treestatus.Status{}, err
	}
	root := rowAt(rows, path)
	below := map[string][]string{} // parent path -> children's paths
	for _, p := range slices.Sorted(maps.Keys(rows)) {
		if p == path {
			continue
		}
		up := nearestAncestor(p, path, rows)
		below[up] = append(below[up], p)
	}
	var nest func(st *treestatus.Status)
	nest = func(st *treestatus.Status) {
		for _, p := range below[st.Path] {
			ch := rows[p]
			nest(&ch)
			st.Children = append(st.Children, ch)
		}
	}
	nest(&root)
	return root, nil
}

// visibilityChildren is treestatus.Assemble's RootFallback: what the
// server's visibility store knows of the workflow at path and of its
// direct children (their parent is path), in one small read where
// visibilitySubtree reads the whole tree. Children are by path.
func visibilityChildren(c client.Client) treestatus.Query {
	return func(ctx context.Context, path string) (treestatus.Status, error) {
		rows, err := visibilityRows(ctx, c, path, fmt.Sprintf("WorkflowId = '%s' OR ParentWorkflowId = '%s'", path, path))
		if err != nil {
			return treestatus.Status{}, err
		}
		top := rowAt(rows, path)
		delete(rows, path)
		for _, p := range slices.Sorted(maps.Keys(rows)) {
			top.Children = append(top.Children, rows[p])
		}
		return top, nil
	}
}

// rowAt is visibility's row of path, or an empty supervisor's when it has
// none (the root of what was asked about).
func rowAt(rows map[string]treestatus.Status, path string) treestatus.Status {
	if st, ok := rows[path]; ok {
		return st
	}
	return treestatus.Status{Path: path, Kind: spec.KindSupervisor, Children: []treestatus.Status{}}
}

// visibilityRows lists the running steward workflows that where says
// (at most visibilityLimit), each as a row of its path, kind and state.
// about names the read in an error.
func visibilityRows(ctx context.Context, c client.Client, about, where string) (map[string]treestatus.Status, error) {
	rows := map[string]treestatus.Status{}
	var token []byte
	for len(rows) < visibilityLimit {
		resp, err := c.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{
			NextPageToken: token, PageSize: 1000,
			Query: fmt.Sprintf("ExecutionStatus = 'Running' AND TaskQueue = '%s' AND (%s)", workflows.TaskQueue, where),
		})
		if err != nil {
			return nil, fmt.Errorf("visibility of %s: %w", about, err)
		}
		for _, e := range resp.GetExecutions() {
			id := e.GetExecution().GetWorkflowId()
			fields := e.GetSearchAttributes().GetIndexedFields()
			rows[id] = treestatus.Status{Path: id, Kind: keyword(fields, workflows.SearchKind.GetName()),
				State: keyword(fields, workflows.SearchState.GetName()), Children: []treestatus.Status{}}
		}
		if token = resp.GetNextPageToken(); len(token) == 0 {
			break
		}
	}
	return rows, nil
}

// nearestAncestor is the closest ancestor of p that visibility listed,
// or root.
func nearestAncestor(p, root string, rows map[string]treestatus.Status) string {
	for i := strings.LastIndex(p, "/"); i > len(root); i = strings.LastIndex(p[:i], "/") {
		if _, ok := rows[p[:i]]; ok {
			return p[:i]
		}
	}
	return root
}

// keyword decodes a Keyword search attribute ("" when absent).
func keyword(fields map[string]*commonpb.Payload, name string) string {
	var s string
	if p, ok := fields[name]; ok {
		_ = converter.GetDefaultDataConverter().FromPayload(p, &s)
	}
	return s
}
