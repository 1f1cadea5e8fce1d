package main

import (
	"context"
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"go.temporal.io/sdk/client"

	"github.com/steward-sh/steward/internal/treestatus"
	"github.com/steward-sh/steward/workflows"
)

// Rolling updates from the starter: `starter update promote|pause|resume|
// cancel PATH` (and `starter promote PATH`) hand a supervisor's update the
// operator's word; apply --wait follows the updates of its apply.

// updateOps are the operator's words on an update, and what each says.
var updateOps = map[string]string{
	"promote": "the canaries are good: update the rest",
	"pause":   "send no further worker its new spec (those in flight go on)",
	"resume":  "go on after a pause (the progress deadline counts anew)",
	"cancel":  "end the update where it is (no revert)",
}

func updateCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "update promote|pause|resume|cancel PATH",
		Short: "Promote, pause, resume or cancel the rolling update of the supervisor at PATH",
		Long: "A spec change that restarts workers rolls out under the supervisor's update policy (docs/updates.md). " +
			"These hand the update in progress at PATH the operator's word:\n" +
			"  promote  " + updateOps["promote"] + "\n  pause    " + updateOps["pause"] + "\n" +
			"  resume   " + updateOps["resume"] + "\n  cancel   " + updateOps["cancel"],
		Args: args(cobra.ExactArgs(2)),
		RunE: func(cmd *cobra.Command, a []string) error { return updateOp(cmd, g, a[0], a[1]) },
	}
	return cmd
}

func promoteCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "promote PATH",
		Short: "Promote the canaries of the rolling update at PATH: update the rest (starter update promote PATH)",
		Args:  args(cobra.ExactArgs(1)),
		RunE:  func(cmd *cobra.Command, a []string) error { return updateOp(cmd, g, "promote", a[0]) },
	}
}

// updateOp sends op to the update of the supervisor at path, once its
// status shows an update in progress there.
func updateOp(cmd *cobra.Command, g *globals, op, path string) error {
	if _, ok := updateOps[op]; !ok {
		return badInput("unknown update operation %q (promote, pause, resume or cancel)", op)
	}
	c, err := g.dial()
	if err != nil {
		return err
	}
	defer c.Close()
	ctx := cmd.Context()
	st, err := queryStatus(ctx, c, path)
	if err != nil {
		return err
	}
	if st.Kind != "supervisor" {
		return badInput("%s is a %s: updates are a supervisor's (give the path of the supervisor above it)", path, st.Kind)
	}
	u := st.Update
	if u == nil || !slices.Contains([]string{"rolling", "paused", "awaitingPromotion", "reverting"}, u.State) {
		state := "none yet"
		if u != nil {
			state = u.State
		}
		return failure("%s has no update in progress (last: %s)", path, state)
	}
	if err := signal(ctx, c, path, workflows.SignalUpdate, op); err != nil {
		return err
	}
	fmt.Fprintf(cmd.OutOrStdout(), "%s: %s sent to its update (%s, %d of %d updated)\n", path, op, u.State, u.Updated, u.Total)
	return nil
}

// treeUpdate is one supervisor's update in an assembled tree.
type treeUpdate struct {
	path string
	*treestatus.UpdateStatus
}

// updatesOf lists the updates in an assembled tree that keep says are
// wanted (of the generations an apply began, of a revision), in tree
// order.
func updatesOf(st workflows.Status, keep func(*treestatus.UpdateStatus) bool) []treeUpdate {
	var out []treeUpdate
	if u := st.Update; u != nil && keep(u) && st.Stale == "" {
		out = append(out, treeUpdate{st.Path, u})
	}
	for _, c := range st.Children {
		if c.IsSupervisor() {
			out = append(out, updatesOf(c, keep)...)
		}
	}
	return out
}

// beganAfter keeps the updates an apply began: of the generations after
// prevGen, the tree's before it.
func beganAfter(prevGen int64) func(*treestatus.UpdateStatus) bool {
	return func(u *treestatus.UpdateStatus) bool { return u.Generation > prevGen }
}

// ofRevision keeps the updates of revision rev.
func ofRevision(rev int64) func(*treestatus.UpdateStatus) bool {
	return func(u *treestatus.UpdateStatus) bool { return u.Revision == rev }
}

// updateOutcome is the failure an apply's updates ended in ("" while none
// did), and whether one still runs (it decides about its failed workers:
// it fails, and may revert them).
func updateOutcome(ups []treeUpdate) (failed string, running bool) {
	var fails []string
	for _, u := range ups {
		switch u.State {
		case "failed", "reverted", "cancelled", "replaced":
			msg := fmt.Sprintf("the update of %s %s: %s", u.path, u.State, u.Reason)
			if u.Failed != "" {
				msg += fmt.Sprintf(" (worker %s/%s)", u.path, u.Failed)
			}
			fails = append(fails, msg)
		case "rolling", "paused", "awaitingPromotion", "reverting":
			running = true
		}
	}
	return strings.Join(fails, "; "), running
}

// updateSummary says how the updates in progress stand, for apply --wait:
// "update of P: 3 of 10 updated (rolling; in flight: a, b)".
func updateSummary(ups []treeUpdate) string {
	var parts []string
	for _, u := range ups {
		switch u.State {
		case "complete", "failed", "reverted", "cancelled", "replaced":
			continue
		}
		p := fmt.Sprintf("update of %s: %d of %d updated (%s", u.path, u.Updated, u.Total, u.State)
		if len(u.InFlight) > 0 {
			p += "; in flight: " + strings.Join(u.InFlight, ", ")
		}
		if u.State == "awaitingPromotion" || u.State == "reverting" {
			p += "; " + u.Reason
		}
		parts = append(parts, p+")")
	}
	return strings.Join(parts, "; ")
}

// updateCap is the chunk a rollout under p is cut to: the maxParallel of
// the supervisor at p (or above the worker at p) when its spec writes one
// (0 when none does, or its spec cannot be asked).
func updateCap(ctx context.Context, c client.Client, p string) (int, string) {
	n, err := querySpec(ctx, c, p)
	if err == nil && !n.IsSupervisor() { // a worker: its supervisor's policy
		p = path.Dir(p)
		n, err = querySpec(ctx, c, p)
	}
	if err != nil || !n.IsSupervisor() || !n.Update.WritesMaxParallel() {
		return 0, ""
	}
	workers := 0
	for _, ch := range n.Children {
		if ch.Kind != "" {
			workers++
		}
	}
	return n.Update.Resolve(workers).MaxParallel, fmt.Sprintf("the update policy of %s writes maxParallel %s", p, n.Update.MaxParallel)
}
