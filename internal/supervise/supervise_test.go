package supervise

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/steward-sh/steward/internal/spec"
	"github.com/steward-sh/steward/internal/tick"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func cfg(strategy string) Config {
	return Config{Path: "root", Strategy: strategy, MaxRestarts: 2, Period: time.Minute, Cooldown: 5 * time.Minute, Restart: spec.RestartPermanent}
}

func kid(name string) Child {
	return Child{Name: name, Restart: spec.RestartPermanent, Backoff: tick.BackoffPolicy{Initial: time.Second, Max: time.Minute, Multiplier: 2},
		State: "running", Desired: "running"}
}

func abc() []Child { return []Child{kid("a"), kid("b"), kid("c")} }

// settle feeds Changed events until the core sends nothing new (children
// that answer every request at once).
func settle(t *testing.T, m Memory, c Config, kids []Child, now time.Time) Memory {
	t.Helper()
	for range 10 {
		var cmds []Command
		m, cmds = Next(Snapshot{Kind: Changed, Now: now, Desired: "running", Memory: m, Config: c, Children: kids})
		if len(sends(cmds)) == 0 {
			return m
		}
	}
	t.Fatal("the plan does not settle")
	return m
}

func sends(cmds []Command) []string {
	var out []string
	for _, c := range cmds {
		switch c.Kind {
		case Send:
			out = append(out, c.Request+" "+c.Child)
		case StartAnew:
			out = append(out, "anew "+c.Child)
		case GaveUp:
			out = append(out, "gave up")
		case Skipped:
			out = append(out, "skipped "+c.Child)
		}
	}
	return out
}

// A termination, by strategy: who is stopped first and what the plan holds.
func TestTerminated_ByStrategy(t *testing.T) {
	sup := kid("b")
	sup.Supervisor = true
	closed := kid("b")
	closed.Lifecycle = Closed
	closed.State = "failed"
	temp := kid("b")
	temp.Restart = spec.RestartTemporary
	for _, tc := range []struct {
		name        string
		strategy    string
		b           Child
		stop, start []string
		first       []string
		restarts    int
	}{
		{"one_for_one worker restarts itself", spec.OneForOne, kid("b"), nil, nil, nil, 1},
		{"one_for_one child supervisor", spec.OneForOne, sup, []string{"b"}, []string{"b"}, []string{"stop b"}, 1},
		{"one_for_one closed worker", spec.OneForOne, closed, []string{"b"}, []string{"b"}, nil, 1},
		{"one_for_all", spec.OneForAll, kid("b"), []string{"c", "b", "a"}, []string{"a", "b", "c"}, []string{"stop c"}, 1},
		{"rest_for_one", spec.RestForOne, kid("b"), []string{"c", "b"}, []string{"b", "c"}, []string{"stop c"}, 1},
		{"temporary is never restarted", spec.OneForAll, temp, nil, nil, nil, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			kids := abc()
			kids[1] = tc.b
			m, cmds := Next(Snapshot{Kind: Terminated, Child: 1, N: 1, Now: t0, Desired: "running", Config: cfg(tc.strategy), Children: kids})
			require.Len(t, m.RestartTimes, tc.restarts)
			if tc.stop == nil {
				require.Nil(t, m.Plan)
				require.Empty(t, sends(cmds))
				return
			}
			require.NotNil(t, m.Plan)
			require.Equal(t, tc.stop, m.Plan.Stop)
			require.Equal(t, tc.start, m.Plan.Start)
			require.Equal(t, tc.first, sends(cmds))
		})
	}
}

// Regression (attack review): a report forged with a termination count
// near 2^62 made the supervisor append that many restart times in one
// workflow task: the SDK's deadlock detector failed the task at every
// replay, and the worker process ran out of memory. Any count past
// MaxRestarts decides what MaxRestarts+1 does (give up), at once; a count
// within it is counted whole.
func TestIntensity_AHugeTerminationCountGivesUpAtOnce(t *testing.T) {
	for _, n := range []int{3, 1 << 20, math.MaxInt64 / 2} {
		m, cmds := Next(Snapshot{Kind: Terminated, Child: 0, N: n, Now: t0, Desired: "running", Config: cfg(spec.OneForOne), Children: abc()})
		require.Equal(t, []string{"gave up", "stop c"}, sends(cmds), "n=%d", n)
		require.Empty(t, m.RestartTimes, "give-up clears them")
		require.Contains(t, m.Plan.Reason, "more than 2 restarts in 1m0s")
	}
	m, cmds := Next(Snapshot{Kind: Terminated, Child: 0, N: 2, Now: t0, Desired: "running", Config: cfg(spec.OneForOne), Children: abc()})
	require.Empty(t, sends(cmds), "two within MaxRestarts: the worker restarts itself")
	require.Len(t, m.RestartTimes, 2)

	// A maxRestarts the limits did not hold (a first input): from
	// supervisor 13 a report counts at most MaxIntensityRestarts+1.
	huge := cfg(spec.OneForOne)
	huge.MaxRestarts, huge.TerminationsBounded = 1<<62, true
	m, _ = Next(Snapshot{Kind: Terminated, Child: 0, N: math.MaxInt64 / 2, Now: t0, Desired: "running", Config: huge, Children: abc()})
	require.Len(t, m.RestartTimes, spec.MaxIntensityRestarts+1)
	// maxRestarts at MaxInt: its +1 does not wrap (n is counted whole).
	most := cfg(spec.OneForOne)
	most.MaxRestarts = math.MaxInt
	m, _ = Next(Snapshot{Kind: Terminated, Child: 0, N: 5, Now: t0, Desired: "running", Config: most, Children: abc()})
	require.Len(t, m.RestartTimes, 5)
}

// More than MaxRestarts within Period: give up, stopping every child in
// reverse order; once all are down, failed with a cooldown (none for a
// temporary supervisor), and the cooldown's end restarts all.
func TestIntensity_GiveUpAndCooldown(t *testing.T) {
	m := Memory{RestartTimes: []time.Time{t0.Add(-30 * time.Second), t0.Add(-10 * time.Second)}}
	s := Snapshot{Kind: Terminated, Child: 0, N: 1, Now: t0, Desired: "running", Memory: m, Config: cfg(spec.OneForOne), Children: abc()}
	m, cmds := Next(s)
	require.Equal(t, []string{"gave up", "stop c"}, sends(cmds))
	require.Equal(t, OpGiveUp, m.Plan.Op)
	require.Contains(t, m.Plan.Reason, "more than 2 restarts in 1m0s")

	// Every child is down and acknowledged: failed.
	down := abc()
	for i := range down {
		down[i].State, down[i].SuperviseSeq = "stopped", 99
	}
	m.Plan.Next, m.Plan.Sent = len(m.Plan.Stop), 0
	m, _ = Next(Snapshot{Kind: Changed, Now: t0, Desired: "running", Memory: m, Config: cfg(spec.OneForOne), Children: down})
	require.True(t, m.Failed)
	require.Equal(t, 1, m.Terminations)
	require.Equal(t, t0.Add(5*time.Minute), m.CooldownUntil)
	require.Equal(t, "failed", State(m, "running"))
	require.Equal(t, t0.Add(5*time.Minute), WakeAt(m))

	// Early wake: nothing. At the cooldown's end: restart all.
	same, cmds := Next(Snapshot{Kind: Wake, Now: t0.Add(time.Minute), Desired: "running", Memory: m, Config: cfg(spec.OneForOne), Children: down})
	require.True(t, same.Failed)
	require.Empty(t, cmds)
	m, cmds = Next(Snapshot{Kind: Wake, Now: t0.Add(5 * time.Minute), Desired: "running", Memory: m, Config: cfg(spec.OneForOne), Children: down})
	require.False(t, m.Failed)
	require.Equal(t, 1, m.Restarts)
	require.Equal(t, []string{"c", "b", "a"}, m.Plan.Stop)
	require.Equal(t, []string{"a", "b", "c"}, m.Plan.Start)
	require.Equal(t, []string{"stop c"}, sends(cmds), "c is down already but acknowledges first")

	temp := cfg(spec.OneForOne)
	temp.Restart = spec.RestartTemporary
	g := Memory{Plan: &Plan{Op: OpGiveUp, Phase: PhaseStopping, Reason: "x"}}
	g, _ = Next(Snapshot{Kind: Changed, Now: t0, Desired: "running", Memory: g, Config: temp, Children: down})
	require.True(t, g.Failed)
	require.True(t, g.CooldownUntil.IsZero(), "a temporary supervisor stays down")
}

// A group restart, step by step: each child is asked once, the plan waits
// for its acknowledgement and state, backs off, then starts in order.
func TestPlan_StepsThroughStopBackoffStart(t *testing.T) {
	kids := abc()
	m, cmds := Next(Snapshot{Kind: Terminated, Child: 0, N: 1, Now: t0, Desired: "running", Config: cfg(spec.OneForAll), Children: kids})
	require.Equal(t, []string{"stop c"}, sends(cmds))
	seq := cmds[len(cmds)-1].Seq

	// Nothing new: nothing sent again.
	m, cmds = Next(Snapshot{Kind: Changed, Now: t0, Desired: "running", Memory: m, Config: cfg(spec.OneForAll), Children: kids})
	require.Empty(t, sends(cmds))

	// c acknowledged and is down: b is next; then b and a.
	kids[2].State, kids[2].SuperviseSeq = "stopped", seq
	m, cmds = Next(Snapshot{Kind: Changed, Now: t0, Desired: "running", Memory: m, Config: cfg(spec.OneForAll), Children: kids})
	require.Equal(t, []string{"stop b"}, sends(cmds))
	for i := range kids {
		kids[i].State, kids[i].SuperviseSeq = "stopped", 100
	}
	m = settle(t, m, cfg(spec.OneForAll), kids, t0)
	require.Equal(t, PhaseBackoff, m.Plan.Phase)
	require.Equal(t, "backoff", State(m, "running"))
	require.Equal(t, m.Plan.Until, WakeAt(m))

	// A spec change cuts the backoff short; the starts go in spec order.
	m, cmds = Next(Snapshot{Kind: SpecChanged, Now: t0.Add(time.Millisecond), Desired: "running", Memory: m, Config: cfg(spec.OneForAll), Children: kids})
	require.Equal(t, PhaseStarting, m.Plan.Phase)
	require.Equal(t, []string{"restart a"}, sends(cmds))
	for i := range kids {
		kids[i].State, kids[i].SuperviseSeq = "running", 1000
	}
	m = settle(t, m, cfg(spec.OneForAll), kids, t0.Add(time.Second))
	require.Nil(t, m.Plan)
	require.Equal(t, "running", State(m, "running"))
	require.Contains(t, m.Reason, "restarted: one_for_all: a")
}

// A job is left out of a group restart: a sibling's crash neither stops
// nor restarts it, and the plan does not wait for it to be down (the bug:
// a job acknowledged the stop and stayed running, and the plan waited
// StepWait, five minutes, for it).
func TestPlan_AJobIsNotPartOfAGroupRestart(t *testing.T) {
	kids := abc()
	kids[2].Job = true // c
	m, cmds := Next(Snapshot{Kind: Terminated, Child: 1, N: 1, Now: t0, Desired: "running", Config: cfg(spec.OneForAll), Children: kids})
	require.Equal(t, []string{"stop b"}, sends(cmds), "c, the job, is not stopped")
	kids[1].State, kids[1].SuperviseSeq = "stopped", cmds[len(cmds)-1].Seq
	m, cmds = Next(Snapshot{Kind: Changed, Now: t0, Desired: "running", Memory: m, Config: cfg(spec.OneForAll), Children: kids})
	require.Equal(t, []string{"stop a"}, sends(cmds))
	kids[0].State, kids[0].SuperviseSeq = "stopped", cmds[len(cmds)-1].Seq
	m, _ = Next(Snapshot{Kind: Changed, Now: t0, Desired: "running", Memory: m, Config: cfg(spec.OneForAll), Children: kids})
	require.Equal(t, PhaseBackoff, m.Plan.Phase)
	_, cmds = Next(Snapshot{Kind: Wake, Now: m.Plan.Until, Desired: "running", Memory: m, Config: cfg(spec.OneForAll), Children: kids})
	require.Equal(t, []string{"restart a"}, sends(cmds))
	for _, c := range cmds {
		require.NotEqual(t, "c", c.Child, "the job is never asked: %+v", c)
	}
}

// A child that cannot be asked (its workflow is gone) or does not answer
// within StepWait is skipped; a closed one is started anew in its turn.
func TestPlan_SkipsUnreachableAndStartsClosedAnew(t *testing.T) {
	kids := abc()
	m, cmds := Next(Snapshot{Kind: Terminated, Child: 0, N: 1, Now: t0, Desired: "running", Config: cfg(spec.OneForAll), Children: kids})
	seq := cmds[len(cmds)-1].Seq
	m, cmds = Next(Snapshot{Kind: Changed, Now: t0, Desired: "running", Memory: m, Config: cfg(spec.OneForAll), Children: kids, Undeliverable: seq})
	require.Equal(t, []string{"skipped c", "stop b"}, sends(cmds))
	m, cmds = Next(Snapshot{Kind: Wake, Now: t0.Add(StepWait), Desired: "running", Memory: m, Config: cfg(spec.OneForAll), Children: kids})
	require.Equal(t, []string{"skipped b", "stop a"}, sends(cmds))

	kids[0].Lifecycle, kids[0].State = Closed, "failed"
	for i := 1; i < 3; i++ {
		kids[i].State, kids[i].SuperviseSeq = "stopped", 100
	}
	m, _ = Next(Snapshot{Kind: Wake, Now: t0.Add(2 * StepWait), Desired: "running", Memory: m, Config: cfg(spec.OneForAll), Children: kids})
	_, cmds = Next(Snapshot{Kind: Wake, Now: m.Plan.Until, Desired: "running", Memory: m, Config: cfg(spec.OneForAll), Children: kids})
	require.Equal(t, []string{"anew a", "restart b"}, sends(cmds))
}

// A second termination during a group restart merges into it (nothing
// restarts twice); a termination of a child the plan will start anyway is
// part of it.
func TestPlan_SecondTerminationMerges(t *testing.T) {
	kids := abc()
	m, _ := Next(Snapshot{Kind: Terminated, Child: 2, N: 1, Now: t0, Desired: "running", Config: cfg(spec.RestForOne), Children: kids})
	require.Equal(t, []string{"c"}, m.Plan.Start)
	m, _ = Next(Snapshot{Kind: Terminated, Child: 1, N: 1, Now: t0, Desired: "running", Memory: m, Config: cfg(spec.RestForOne), Children: kids})
	require.Equal(t, []string{"b", "c"}, m.Plan.Start)
	require.Len(t, m.RestartTimes, 2)
	m, _ = Next(Snapshot{Kind: Terminated, Child: 2, N: 1, Now: t0, Desired: "running", Memory: m, Config: cfg(spec.RestForOne), Children: kids})
	require.Len(t, m.RestartTimes, 2, "c is in the plan already")
}

// The parent's stop holds the subtree; its restart, and the operator's
// restart, start over; Reset drops a plan; a stopped supervisor answers no
// termination.
func TestSupervisedResetAndDesired(t *testing.T) {
	kids := abc()
	m, cmds := Next(Snapshot{Kind: Supervised, Request: Request{Seq: 7, Op: RequestStop, Reason: "group"}, Now: t0, Desired: "running", Config: cfg(spec.OneForOne), Children: kids})
	require.Equal(t, int64(7), m.SuperviseSeq)
	require.Equal(t, OpHold, m.Plan.Op)
	require.Equal(t, []string{"stop c"}, sends(cmds))
	for i := range kids {
		kids[i].State, kids[i].SuperviseSeq = "stopped", 100
	}
	m = settle(t, m, cfg(spec.OneForOne), kids, t0)
	require.True(t, m.Held)
	require.Equal(t, "stopped", State(m, "running"))
	reason, _, _ := OwnReason(m, "running", true)
	require.Equal(t, "stopped by its supervisor: group", reason)

	m, _ = Next(Snapshot{Kind: Supervised, Request: Request{Seq: 8, Op: RequestRestart, Reason: "group"}, Now: t0, Desired: "running", Memory: m, Config: cfg(spec.OneForOne), Children: kids})
	require.False(t, m.Held)
	require.Equal(t, 1, m.Restarts)
	require.Equal(t, OpRestart, m.Plan.Op)

	m, _ = Next(Snapshot{Kind: OperatorRestart, Now: t0, Desired: "running", Memory: m, Config: cfg(spec.OneForOne), Children: kids})
	require.Nil(t, m.Plan)
	require.Equal(t, 1, m.ManualRestarts)

	m, cmds = Next(Snapshot{Kind: Terminated, Child: 0, N: 1, Now: t0, Desired: "stopped", Memory: m, Config: cfg(spec.OneForAll), Children: kids})
	require.Nil(t, m.Plan)
	require.Empty(t, cmds, "a stopped supervisor restarts nothing")
	require.Equal(t, "stopped", State(m, "stopped"))
}

// Bad input never panics: an index out of range, no children.
func TestBadInputIsIgnored(t *testing.T) {
	for _, i := range []int{-1, 3, 99} {
		m, cmds := Next(Snapshot{Kind: Terminated, Child: i, N: 1, Now: t0, Desired: "running", Config: cfg(spec.OneForAll), Children: abc()})
		require.Nil(t, m.Plan)
		require.Empty(t, cmds)
	}
	m, _ := Next(Snapshot{Kind: Wake, Now: t0, Desired: "running", Memory: Memory{Plan: &Plan{Op: OpRestart, Phase: PhaseStarting, Start: []string{"gone"}}}, Config: cfg(spec.OneForAll)})
	require.Nil(t, m.Plan, "a plan over children that are gone finishes")
}

// The defect: a supervise request sent by hand with a huge number pinned
// what its receiver acknowledges, and every later request counted as
// answered before it was carried out. With SeqByTime, requests are
// numbered by time and one numbered past Now plus SeqSkew is carried out
// but not acknowledged.
func TestAcknowledged_ARequestNumberedPastTheTimeIsNot(t *testing.T) {
	now := time.Date(2026, 11, 28, 7, 0, 0, 0, time.UTC)
	bound := NotAfter(true, now)
	require.Zero(t, NotAfter(false, now))
	require.EqualValues(t, 7, Acknowledged(5, 7, 0))
	require.EqualValues(t, 7, Acknowledged(7, 5, 0), "older: kept")
	require.EqualValues(t, math.MaxInt64, Acknowledged(5, math.MaxInt64, 0), "unbounded: pinned")
	require.EqualValues(t, 5, Acknowledged(5, math.MaxInt64, bound), "bounded: not acknowledged")
	require.EqualValues(t, now.UnixNano(), Acknowledged(5, now.UnixNano(), bound))

	m, cmds := Next(Snapshot{Kind: Supervised, Request: Request{Op: RequestStop, Seq: math.MaxInt64}, Now: now, SeqByTime: true,
		Desired: "running", Config: Config{Strategy: "one_for_all"}, Children: []Child{{Name: "a", State: "running", Desired: "running"}}})
	require.Zero(t, m.SuperviseSeq, "carried out, not acknowledged")
	require.NotNil(t, m.Plan, "the stop is carried out")
	for _, c := range cmds {
		if c.Kind == Send {
			require.GreaterOrEqual(t, c.Seq, now.UnixNano(), "its own requests numbered by time")
		}
	}
}
