package main

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/steward-sh/steward/internal/treestatus"
)

// A row whose parent visibility did not list (a supervisor between starts)
// hangs under its nearest listed ancestor, or the root.
func TestNearestAncestorSkipsUnlistedParents(t *testing.T) {
	rows := map[string]treestatus.Status{"t": {}, "t/a": {}, "t/a/b/c": {}}
	require.Equal(t, "t/a", nearestAncestor("t/a/b/c", "t", rows), "t/a/b is not listed")
	require.Equal(t, "t", nearestAncestor("t/a", "t", rows))
	require.Equal(t, "t", nearestAncestor("t/x/y", "t", rows))
}
