package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"

	"github.com/steward-sh/steward/activities"
	"github.com/steward-sh/steward/internal/spec"
	"github.com/steward-sh/steward/internal/treestatus"
	"github.com/steward-sh/steward/workflows"
)

// runningTree assembles the spec of the running tree named root from its
// workflows' `spec` queries: each supervisor answers its own level, and each
// child supervisor is asked for its own. nil: no tree runs under that name.
// A supervisor that does not answer within treestatus.DefaultQueryTimeout
// is listed in stale, and keeps what its parent knows of it (its own
// fields, no children); the root that does not answer is stale as a whole.
func runningTree(ctx context.Context, c client.Client, root string) (*spec.Node, []spec.StalePath, error) {
	d, err := c.DescribeWorkflowExecution(ctx, root, "")
	var nf *serviceerror.NotFound
	if errors.As(err, &nf) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, failure("describe %s: %v", root, err)
	}
	if d.GetWorkflowExecutionInfo().GetStatus() != enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING {
		return nil, nil, nil
	}
	var stale []spec.StalePath
	query := func(ctx context.Context, p string) (spec.Node, error) {
		qctx, cancel := context.WithTimeout(ctx, treestatus.DefaultQueryTimeout)
		defer cancel()
		n, err := querySpec(qctx, c, p)
		if noAnswer(qctx, err) && ctx.Err() == nil {
			stale = append(stale, spec.StalePath{Path: p, Reason: "not compared: its workflow did not answer (" + err.Error() + ")"})
			return n, errStale
		}
		return n, err
	}
	n, err := query(ctx, root)
	if errors.Is(err, errStale) {
		return nil, stale, nil
	}
	if err != nil {
		return nil, nil, err
	}
	if err := activities.FillSubtrees(ctx, func(ctx context.Context, p string) (spec.Node, error) {
		sub, err := query(ctx, p)
		if errors.Is(err, errStale) {
			// Keep what the parent knows: FillSubtrees keeps a child whose
			// query is NotFound as it is.
			return sub, serviceerror.NewNotFound(err.Error())
		}
		return sub, err
	}, root, &n, true); err != nil {
		return nil, nil, err
	}
	return &n, stale, nil
}

// errStale marks a spec query that failed or timed out (runningTree).
var errStale = errors.New("did not answer in time")

// errOlderWorker marks a workflow whose worker does not know the spec query.
var errOlderWorker = errors.New("its worker is older than this starter")

// planOf is the plan of applying file over running, with the subtrees that
// could not be read (stale) left out of the comparison: each takes the
// file's version of itself, and is listed in the plan's Stale. A root that
// could not be read (running nil, stale set) is one stale entry.
func planOf(running *spec.Node, file spec.Node, stale []spec.StalePath) spec.Plan {
	if running == nil && len(stale) > 0 {
		return spec.Plan{Added: []string{}, Removed: []string{}, Changed: []spec.Change{}, Stale: stale}
	}
	if running != nil {
		for _, s := range stale {
			graft(running, file, strings.Split(s.Path, "/")[1:])
		}
	}
	p := spec.Diff(running, file)
	p.Stale = stale
	return p
}

// graft replaces the node at the path rel (names below the roots) in
// running with the file's node at the same path, when both have it.
func graft(running *spec.Node, file spec.Node, rel []string) {
	if len(rel) == 0 {
		*running = file
		return
	}
	for i := range running.Children {
		if running.Children[i].Name != rel[0] {
			continue
		}
		for _, f := range file.Children {
			if f.Name == rel[0] {
				graft(&running.Children[i], f, rel[1:])
			}
		}
	}
}

func querySpec(ctx context.Context, c client.Client, path string) (spec.Node, error) {
	var n spec.Node
	v, err := c.QueryWorkflow(ctx, path, "", workflows.QuerySpec)
	if err != nil {
		var nf *serviceerror.NotFound
		if errors.As(err, &nf) {
			return n, err
		}
		if strings.Contains(err.Error(), "unknown queryType") || strings.Contains(err.Error(), "QueryType") {
			return n, failure("%s does not answer the spec query: %w (upgrade bin/worker): %v", path, errOlderWorker, err)
		}
		return n, failure("query %s: %w", path, err)
	}
	if err := v.Get(&n); err != nil {
		return n, failure("query %s: %v", path, err)
	}
	return n, nil
}

// printPlan writes a plan as text (+ added, - removed, ~ changed field by
// field) or as JSON.
func printPlan(w io.Writer, p spec.Plan, output string) error {
	if output == "json" {
		b, err := json.MarshalIndent(p, "", "  ")
		if err != nil {
			return err
		}
		_, err = fmt.Fprintln(w, string(b))
		return err
	}
	for _, a := range p.Added {
		linef(w, "+ %s", a)
	}
	for _, r := range p.Removed {
		linef(w, "- %s", r)
	}
	for _, c := range p.Changed {
		for _, f := range c.Fields {
			linef(w, "~ %s: %s", c.Path, f)
		}
	}
	for _, s := range p.Stale {
		linef(w, "? %s: %s", s.Path, s.Reason)
	}
	fmt.Fprintf(w, "%d added, %d removed, %d changed, %d unchanged", len(p.Added), len(p.Removed), len(p.Changed), p.Unchanged)
	if len(p.Stale) > 0 {
		fmt.Fprintf(w, ", %d subtrees not compared (stale)", len(p.Stale))
	}
	fmt.Fprintln(w)
	return nil
}
