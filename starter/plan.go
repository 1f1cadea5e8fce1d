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
	"github.com/steward-sh/steward/workflows"
)

// runningTree assembles the spec of the running tree named root from its
// workflows' `spec` queries: each supervisor answers its own level, and each
// child supervisor is asked for its own. nil: no tree runs under that name.
func runningTree(ctx context.Context, c client.Client, root string) (*spec.Node, error) {
	d, err := c.DescribeWorkflowExecution(ctx, root, "")
	var nf *serviceerror.NotFound
	if errors.As(err, &nf) {
		return nil, nil
	}
	if err != nil {
		return nil, failure("describe %s: %v", root, err)
	}
	if d.GetWorkflowExecutionInfo().GetStatus() != enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING {
		return nil, nil
	}
	n, err := querySpec(ctx, c, root)
	if err != nil {
		return nil, err
	}
	if err := fillChildren(ctx, c, root, &n); err != nil {
		return nil, err
	}
	return &n, nil
}

// fillChildren asks each child supervisor of n (a child without a kind)
// for its level, depth first. A child whose workflow does not run keeps
// what its parent knows of it.
func fillChildren(ctx context.Context, c client.Client, path string, n *spec.Node) error {
	return activities.FillSubtrees(ctx, func(ctx context.Context, p string) (spec.Node, error) { return querySpec(ctx, c, p) }, path, n, true)
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
			return n, failure("%s does not answer the spec query: its worker is older than this starter (upgrade bin/worker): %v", path, err)
		}
		return n, failure("query %s: %v", path, err)
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
		fmt.Fprintf(w, "+ %s\n", a)
	}
	for _, r := range p.Removed {
		fmt.Fprintf(w, "- %s\n", r)
	}
	for _, c := range p.Changed {
		for _, f := range c.Fields {
			fmt.Fprintf(w, "~ %s: %s\n", c.Path, f)
		}
	}
	fmt.Fprintf(w, "%d added, %d removed, %d changed, %d unchanged\n", len(p.Added), len(p.Removed), len(p.Changed), p.Unchanged)
	return nil
}
