package versions

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// Each type's newest version is the highest of its table, every feature
// is on from its version and off one below, and the names are unique.
func TestTablesHoldTogether(t *testing.T) {
	newest := map[string]int{typeSupervisor: Supervisor, typeWorker: Worker, typeRollout: Rollout, typeHost: Host, typeRevisions: Revisions, typeJob: Job}
	highest := map[string]int{}
	names := map[string]bool{}
	for _, f := range All {
		require.Contains(t, newest, f.Workflow, f.Name)
		require.False(t, names[f.Name], "%s twice", f.Name)
		names[f.Name] = true
		require.GreaterOrEqual(t, f.Since, 1, f.Name)
		require.True(t, f.In(f.Since), "%s on at %d", f.Name, f.Since)
		require.True(t, f.In(newest[f.Workflow]), "%s on at the newest version", f.Name)
		require.False(t, f.In(f.Since-1), "%s off at %d", f.Name, f.Since-1)
		highest[f.Workflow] = max(highest[f.Workflow], f.Since)
	}
	require.Equal(t, newest, highest, "each type's version is its table's highest")
}
