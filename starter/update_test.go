package main

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/steward-sh/steward/internal/treestatus"
	"github.com/steward-sh/steward/workflows"
)

// apply --wait reads the updates of its apply from the assembled tree: an
// older generation's is not its own; a failed, reverted, cancelled or
// replaced one fails it, one still running keeps it waiting (it answers for its failed workers).
func TestUpdatesOfAnApply(t *testing.T) {
	tree := workflows.Status{Path: "r", Kind: "supervisor", Update: &treestatus.UpdateStatus{Generation: 2, State: "failed", Reason: "old"},
		Children: []workflows.Status{
			{Path: "r/g", Kind: "supervisor", Children: []workflows.Status{{Path: "r/g/w", Kind: "stub"}},
				Update: &treestatus.UpdateStatus{Generation: 3, State: "rolling", Updated: 1, Total: 4, InFlight: []string{"w"}}},
			{Path: "r/h", Kind: "supervisor", Children: []workflows.Status{{Path: "r/h/w", Kind: "stub"}},
				Update: &treestatus.UpdateStatus{Generation: 3, State: "reverting", Updated: 0, Total: 1, Reason: "w crashed with the new spec", Failed: "w"}},
		}}
	ups := updatesOf(tree, beganAfter(2))
	require.Len(t, ups, 2, "the root's update is of an earlier apply")
	failed, running := updateOutcome(ups)
	require.Empty(t, failed)
	require.True(t, running)
	require.Equal(t, "update of r/g: 1 of 4 updated (rolling; in flight: w); update of r/h: 0 of 1 updated (reverting; w crashed with the new spec)", updateSummary(ups))

	tree.Children[1].Update.State, tree.Children[1].Update.Reason = "reverted", "reverted: w crashed with the new spec"
	tree.Children[0].Update.State = "complete"
	failed, running = updateOutcome(updatesOf(tree, beganAfter(2)))
	require.False(t, running)
	require.Equal(t, "the update of r/h reverted: reverted: w crashed with the new spec (worker r/h/w)", failed)

	stale := tree
	stale.Children = append([]workflows.Status(nil), tree.Children...)
	stale.Children[1].Stale = "query timed out"
	require.Len(t, updatesOf(stale, beganAfter(2)), 1, "a stale row's update proves nothing")
}
