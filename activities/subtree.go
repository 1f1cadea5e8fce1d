package activities

import (
	"context"
	"errors"
	"fmt"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/temporal"

	"github.com/steward-sh/steward/internal/spec"
)

// A supervisor keeps only its own level of the spec once its children have
// their parts (workflows.pruneSpec), so the whole spec of a subtree lives
// only in its workflows: each supervisor answers its own level by the `spec`
// query, each worker its node. SubtreeSpec reads it back from them, for a
// supervisor that must start anew a child supervisor whose workflow closed
// after an earlier run of the supervisor handed it its subtree; `starter
// apply --dry-run` reads the running tree the same way (FillSubtrees).

// QuerySpec is the query that answers a node's spec as its workflow holds it
// (workflows.QuerySpec).
const QuerySpec = "spec"

// SubtreeSpecName is the activity that reads a subtree's spec back.
const SubtreeSpecName = Prefix + "SubtreeSpec"

// SubtreeSpecRequest names the subtree's supervisor (its workflow may be
// closed: a closed workflow answers its last state).
type SubtreeSpecRequest struct {
	Path string `json:"path"`
}

// SpecQuery asks the workflow at path for its spec.
type SpecQuery func(ctx context.Context, path string) (spec.Node, error)

// FillSubtrees replaces each child supervisor of n (a child without a kind:
// its parent knows only its own fields) by the level its workflow answers,
// depth first. A child whose workflow is not found keeps what its parent
// knows of it when keepMissing is set, and is an error otherwise.
func FillSubtrees(ctx context.Context, query SpecQuery, path string, n *spec.Node, keepMissing bool) error {
	for i := range n.Children {
		ch := &n.Children[i]
		if ch.Kind != "" {
			continue
		}
		p := path + "/" + ch.Name
		sub, err := query(ctx, p)
		var nf *serviceerror.NotFound
		if errors.As(err, &nf) && keepMissing {
			continue
		}
		if err != nil {
			return err
		}
		*ch = sub
		if err := FillSubtrees(ctx, query, p, ch, keepMissing); err != nil {
			return err
		}
	}
	return nil
}

// SubtreeSpec reads the whole spec of the subtree at req.Path from its
// workflows: the supervisor's own level, then its child supervisors' levels,
// depth first (one query per supervisor; a worker's node is whole in its
// parent's level). A subtree that does not read back as a valid spec is a
// non-retryable error.
func (c *Control) SubtreeSpec(ctx context.Context, req SubtreeSpecRequest) (spec.Node, error) {
	query := func(ctx context.Context, path string) (spec.Node, error) {
		var n spec.Node
		v, err := c.Client.QueryWorkflow(ctx, path, "", QuerySpec)
		var nf *serviceerror.NotFound
		if errors.As(err, &nf) {
			// No workflow to ask (a child that never started): its part of
			// the spec is nowhere to be read, and asking again won't help.
			return n, temporal.NewNonRetryableApplicationError(fmt.Sprintf("%s: no workflow to read its spec from", path), "NotFound", err)
		}
		if err != nil {
			return n, fmt.Errorf("query the spec of %s: %w", path, err)
		}
		return n, v.Get(&n)
	}
	n, err := query(ctx, req.Path)
	if err != nil {
		return n, err
	}
	if err := FillSubtrees(ctx, query, req.Path, &n, false); err != nil {
		return n, err
	}
	if ps := spec.ValidateLegacy(n); len(ps) > 0 { // what runs, as it was taken
		return n, temporal.NewNonRetryableApplicationError(fmt.Sprintf("the spec read back from %s is not valid:\n%s", req.Path, ps.Error()), "InvalidSpec", nil)
	}
	return n, nil
}
