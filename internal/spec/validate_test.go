package spec

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A spec sent to a running node is held to the limits once their marker
// is recorded, and taken as older code took it otherwise.
func TestValidateSent(t *testing.T) {
	require.Equal(t, "a/b", ParentPath("a/b/c"))
	require.Equal(t, "", ParentPath("root"))
	deep := Node{Name: "x", Kind: KindStub}
	deepPath := strings.Repeat("p/", MaxDepth) + "x"
	require.NotEmpty(t, ValidateSent(true, deepPath, Node{Name: "x", Children: []Node{deep}}), "held: the depth counts from the root")
	require.Empty(t, ValidateSent(false, deepPath, Node{Name: "x", Children: []Node{deep}}), "legacy: it did not")
	require.Empty(t, ValidateSentWorker(true, "t/x", deep))
	require.Empty(t, ValidateSentWorker(false, "t/x", deep))
	require.NotEmpty(t, ValidateSentWorker(true, "t/x", Node{Name: "x", Kind: "nope"}))
}

// Which changes of a worker's node restart its service.
func TestRestarts(t *testing.T) {
	a := Node{Name: "w", Kind: KindProcess, Process: map[string]any{"command": "sleep", "args": []any{"60"}}}
	b := a
	b.Timeouts = &Timeouts{Start: Dur(time.Minute)}
	require.False(t, Restarts(a, b), "a timeout applies without a restart")
	b = a
	b.Process = map[string]any{"command": "sleep", "args": []any{"61"}}
	require.True(t, Restarts(a, b), "the driver block changed")
	require.True(t, DriverChanged(Rendered(a), Rendered(b)))
	b = a
	b.PlacedOn = "h2"
	require.Equal(t, a.RunsOn() != b.RunsOn(), Restarts(a, b), "a move to another host restarts")
}
