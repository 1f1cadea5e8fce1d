package supervise

import (
	"math"
	"testing"
	"time"

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
		take, out, n := Take(c.l, c.in, c.r, Guard{})
		require.Equal(t, c.take, take, c.name)
		require.Equal(t, c.out, out, c.name)
		require.Equal(t, c.terminated, n, c.name)
	}
}

// The defect: a report sent by hand with the child's run and a huge number
// was taken, and every real report after it was older: the supervisor
// never heard of the child again. From SupReportSeqBounded children number
// their reports by time and a report numbered past the supervisor's time
// is refused (an end report too); the real ones go on being taken.
func TestTake_AReportNumberedPastTheSupervisorsTimeIsRefused(t *testing.T) {
	now := time.Date(2026, 11, 28, 7, 0, 0, 0, time.UTC)
	bound := now.Add(SeqSkew).UnixNano()
	held := Intake{Run: "r1", Seq: now.Add(-time.Minute).UnixNano(), SeenTerminations: 2}
	for _, ended := range []bool{false, true} {
		take, out, _ := Take(Live, held, Report{Run: "r1", Seq: math.MaxInt64, Ended: ended, Terminations: 2}, Guard{NotAfter: bound})
		require.False(t, take, "ended %t", ended)
		require.Equal(t, held, out)
	}
	take, out, _ := Take(Live, held, Report{Run: "r1", Seq: now.UnixNano(), Terminations: 2}, Guard{NotAfter: bound})
	require.True(t, take, "the child's next, numbered by its time")
	require.Equal(t, now.UnixNano(), out.Seq)
	take, _, _ = Take(Live, Intake{Run: "r1", Seq: 41}, Report{Run: "r1", Seq: 42}, Guard{NotAfter: bound})
	require.True(t, take, "a child of an older version numbers from 1: in bounds")
	take, _, _ = Take(Live, held, Report{Run: "r1", Seq: math.MaxInt64}, Guard{})
	require.True(t, take, "unbounded (version 10): taken")
}

// The defect: a report naming no run, ended, made a live child's record
// Ended for good (nothing makes an ended child live again). With the
// strict guard, a report names the child's run once it is known, and an
// end is taken only while the supervisor asked for it (its shutdown).
func TestTake_AForgedEndIsRefused(t *testing.T) {
	held := Intake{Run: "r1", Seq: 5, SeenTerminations: 2}
	strict := Guard{Strict: true}
	for name, c := range map[string]struct {
		r    Report
		g    Guard
		take bool
	}{
		"an end naming no run":             {Report{Seq: 6, Ended: true}, strict, false},
		"an end of its run, not asked":     {Report{Run: "r1", Seq: 6, Ended: true}, strict, false},
		"an end of its run, asked":         {Report{Run: "r1", Seq: 6, Ended: true}, Guard{Strict: true, EndAsked: true}, true},
		"a report naming no run":           {Report{Seq: 6}, strict, false},
		"its run's report":                 {Report{Run: "r1", Seq: 6}, strict, true},
		"an end naming no run, version 10": {Report{Seq: 6, Ended: true}, Guard{}, true},
	} {
		take, _, _ := Take(Live, held, c.r, c.g)
		require.Equal(t, c.take, take, name)
	}
	take, out, _ := Take(Live, Intake{SeenTerminations: UnseenTerminations}, Report{Run: "r7", Seq: 1}, strict)
	require.True(t, take, "an adopted child's first report names its run")
	require.Equal(t, "r7", out.Run)
}
