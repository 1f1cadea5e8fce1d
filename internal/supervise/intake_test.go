package supervise

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// Which report a supervisor takes, and the terminations it counts.
func TestTake(t *testing.T) {
	held := Intake{Run: "r1", Seq: 5, SeenTerminations: 2}
	for _, c := range []struct {
		name       string
		l          Lifecycle
		in         Intake
		r          Report
		take       bool
		out        Intake
		terminated int
	}{
		{"a newer report of its run", Live, held, Report{Run: "r1", Seq: 6, Terminations: 2}, true, Intake{"r1", 6, 2}, 0},
		{"one more termination", Live, held, Report{Run: "r1", Seq: 6, Terminations: 4}, true, Intake{"r1", 6, 4}, 2},
		{"an older report", Live, held, Report{Run: "r1", Seq: 5, Terminations: 9}, false, held, 0},
		{"an older end report is taken", Live, held, Report{Run: "r1", Seq: 3, Ended: true, Terminations: 3}, true, Intake{"r1", 5, 2}, 0},
		{"another run of the path", Live, held, Report{Run: "r0", Seq: 9}, false, held, 0},
		{"a closed child", Closed, held, Report{Run: "r1", Seq: 9}, false, held, 0},
		{"a report without a number", Live, held, Report{Run: "r1", Terminations: 2}, true, Intake{"r1", 5, 2}, 0},
		{"an adopted child's first report: its run and count", Live, Intake{SeenTerminations: UnseenTerminations},
			Report{Run: "r7", Seq: 1, Terminations: 5}, true, Intake{"r7", 1, 5}, 0},
		{"a new run of the child: its count begins again", Live, held, Report{Run: "r1", Seq: 6, Terminations: 0}, true, Intake{"r1", 6, 0}, 0},
	} {
		take, out, n := Take(c.l, c.in, c.r)
		require.Equal(t, c.take, take, c.name)
		require.Equal(t, c.out, out, c.name)
		require.Equal(t, c.terminated, n, c.name)
	}
}
