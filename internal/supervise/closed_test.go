package supervise

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestRestartClosed(t *testing.T) {
	for _, c := range []struct {
		child ClosedChild
		want  ClosedStart
		why   string
	}{
		{ClosedChild{SpecHeld: true}, StartWithSpec, ""},
		{ClosedChild{SpecHeld: true, Supervisor: true, CanReadBack: true}, StartWithSpec, ""},
		{ClosedChild{Supervisor: true, CanReadBack: true}, ReadBackFirst, "reading its subtree's spec back"},
		{ClosedChild{Supervisor: true}, WaitForApply, "handed to an earlier run"},
		{ClosedChild{}, WaitForApply, "handed to an earlier run"},
	} {
		t.Run(c.want.String(), func(t *testing.T) {
			got, why := RestartClosed(c.child)
			require.Equal(t, c.want, got, "%+v", c.child)
			if c.why == "" {
				require.Empty(t, why)
			}
			require.Contains(t, why, c.why)
		})
	}
}

// Every lifecycle a child may have when its read-back ends: only a child
// still closed starts, and only while its supervisor may run.
func TestAfterReadBack(t *testing.T) {
	for _, l := range Lifecycles {
		t.Run(l.String(), func(t *testing.T) {
			start, why := AfterReadBack(ReadBack{Found: true, Lifecycle: l, Name: "db", Want: "db"})
			require.Equal(t, l == Closed, start)
			require.Empty(t, why, "a child started anew (or removed) meanwhile is left as it is")
		})
	}
	for _, c := range []struct {
		name  string
		r     ReadBack
		start bool
		why   string
	}{
		{"read back", ReadBack{Found: true, Lifecycle: Closed, Name: "db", Want: "db"}, true, ""},
		{"removed meanwhile", ReadBack{Lifecycle: Closed, Name: "db", Want: "db"}, false, ""},
		{"supervisor deleted", ReadBack{Found: true, Lifecycle: Closed, ShuttingDown: true, Name: "db", Want: "db"}, false, ""},
		{"supervisor down", ReadBack{Found: true, Lifecycle: Closed, StaysDown: true, Name: "db", Want: "db"}, false, "not started anew while its supervisor is down"},
		{"could not", ReadBack{Found: true, Lifecycle: Closed, Err: "not found", Want: "db"}, false, "could not be read back (not found): apply the tree again"},
		{"another name", ReadBack{Found: true, Lifecycle: Closed, Name: "web", Want: "db"}, false, `the spec read back is named "web"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			start, why := AfterReadBack(c.r)
			require.Equal(t, c.start, start)
			if c.why == "" {
				require.Empty(t, why)
			}
			require.Contains(t, why, c.why)
		})
	}
	require.True(t, StartsClosed("running"))
	require.False(t, StartsClosed("stopped"))
}
