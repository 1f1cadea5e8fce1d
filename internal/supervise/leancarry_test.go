package supervise

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/steward-sh/steward/internal/spec"
)

// A deferred worker's node that is the spec's child goes out of the carry
// and comes back whole; a supervisor's node (its subtree, which the
// pruned spec lacks), a node that differs from the spec's and a live
// child's record are kept as they are.
func TestLeanCarry_RoundTrip(t *testing.T) {
	w := spec.Node{Name: "w", Kind: spec.KindStub, DependsOn: []string{"gate"}}
	other := spec.Node{Name: "o", Kind: spec.KindStub}
	sup := spec.Node{Name: "s", Children: []spec.Node{{Name: "x", Kind: spec.KindStub}}}
	children := []spec.Node{{Name: "gate", Kind: spec.KindStub}, w, {Name: "o", Kind: spec.KindStub, Desired: spec.DesiredStopped}, {Name: "s"}}
	recs := []ChildRecord{
		{Name: "gate", Lifecycle: Live},
		{Name: "w", Lifecycle: Deferred, Node: &w},
		{Name: "o", Lifecycle: Deferred, Node: &other},
		{Name: "s", Lifecycle: Deferred, Node: &sup},
	}
	lean := LeanCarry(recs, children)
	require.Nil(t, lean[1].Node)
	require.True(t, lean[1].NodeInSpec)
	require.Equal(t, &other, lean[2].Node, "differs from the spec's: kept")
	require.Equal(t, &sup, lean[3].Node, "a supervisor's subtree: kept")
	require.NotNil(t, recs[1].Node, "the records themselves are not changed")

	RestoreNodes(lean, children)
	require.Equal(t, recs, lean)
}
