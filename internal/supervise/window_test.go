package supervise

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// siblingsOf is n siblings: the first starting of them hold a slot, the
// next waiting are deferred (no dependencies), the rest run.
func siblingsOf(starting, deferred, n int) []Sibling {
	out := make([]Sibling, n)
	for i := range out {
		switch {
		case i < starting:
			out[i] = Sibling{State: "stopped", Starting: true}
		case i < starting+deferred:
			out[i] = waiting
		default:
			out[i] = up
		}
		out[i].Name = string(rune('a'+i%26)) + string(rune('a'+i/26))
	}
	return out
}

func kinds(steps []OrderStep) (started, waited int) {
	for _, s := range steps {
		switch s.Kind {
		case StartChild:
			started++
		case Wait:
			waited++
		}
	}
	return
}

// The start window, case by case: how many deferred children Release
// starts, by how many of their siblings are starting.
func TestReleaseStartWindow(t *testing.T) {
	for _, c := range []struct {
		name                     string
		starting, waiting, total int
		window                   int
		started                  int
	}{
		{name: "no window (before version 6): every child starts at once", waiting: 100, total: 100, started: 100},
		{name: "a first task starts a window's worth", waiting: 100, total: 100, window: 10, started: 10},
		{name: "fewer children than the window: all start", waiting: 3, total: 3, window: 10, started: 3},
		{name: "more than a quarter of the window starting: nothing starts yet", starting: 3, waiting: 50, total: 60, window: 10, started: 0},
		{name: "three quarters of the window free: it is filled again", starting: 2, waiting: 50, total: 60, window: 10, started: 8},
		{name: "all reported: a whole window starts", starting: 0, waiting: 50, total: 90, window: 10, started: 10},
	} {
		t.Run(c.name, func(t *testing.T) {
			sibs := siblingsOf(c.starting, c.waiting, c.total)
			steps, after := Release(sibs, true, false, c.window)
			started, waited := kinds(steps)
			require.Equal(t, c.started, started)
			require.Equal(t, c.waiting-c.started, waited, "every other deferred child says why it waits")
			for _, s := range steps {
				if s.Kind == Wait {
					require.Equal(t, WindowReason, s.Reason)
				}
			}
			holding := 0
			for _, s := range after {
				if s.Starting {
					holding++
				}
			}
			if c.window > 0 {
				require.Equal(t, c.starting+c.started, holding, "a child started holds its slot")
				require.LessOrEqual(t, holding, max(c.window, c.starting))
			}
		})
	}
}

// A child waiting for its dependencies waits for them first, and takes a
// slot only once they are up.
func TestReleaseStartWindowAfterDependencies(t *testing.T) {
	sibs := chain(Sibling{State: "stopped", Starting: true}, deferredOn("db"), deferredOn())
	steps, _ := Release(sibs, true, false, 4)
	require.Equal(t, []OrderStep{{Kind: Wait, Index: 1, Reason: "waiting for db to be running"}, {Kind: StartChild, Index: 2}}, steps)
}

// A slot is held from the child's start until its first report, and for
// SlotHold at most; the first slot to free by itself says when a
// supervisor whose children wait looks again.
func TestHoldsSlotAndSlotFreeAt(t *testing.T) {
	t0 := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	worker := func(at time.Time) Slot { return Slot{At: at, Hold: SlotHold} }
	require.True(t, HoldsSlot(Live, worker(t0), t0.Add(time.Second)))
	require.False(t, HoldsSlot(Live, worker(time.Time{}), t0), "reported, adopted, or started before version 6")
	require.False(t, HoldsSlot(Live, worker(t0), t0.Add(SlotHold)), "held for SlotHold at most")
	require.False(t, HoldsSlot(Closed, worker(t0), t0), "a closed child holds nothing")
	require.Equal(t, t0.Add(SlotHold), SlotFreeAt([]Slot{worker(time.Time{}), worker(t0.Add(time.Second)), worker(t0)}, t0.Add(2*time.Second)))
	require.True(t, SlotFreeAt([]Slot{worker(time.Time{}), worker(t0)}, t0.Add(SlotHold)).IsZero(), "nothing held")

	// Version 7: a child supervisor holds its slot until its subtree has
	// started, SubtreeHold at most; the first slot to free is the earliest
	// of either kind.
	group := Slot{At: t0, Hold: SubtreeHold}
	require.True(t, HoldsSlot(Live, group, t0.Add(SlotHold)), "a group holds past SlotHold")
	require.False(t, HoldsSlot(Live, group, t0.Add(SubtreeHold)), "for SubtreeHold at most")
	require.Equal(t, t0.Add(SubtreeHold), SlotFreeAt([]Slot{group, worker(t0)}, t0.Add(SlotHold)))
	require.Equal(t, t0.Add(time.Second).Add(SlotHold), SlotFreeAt([]Slot{group, worker(t0.Add(time.Second))}, t0.Add(2*time.Second)))
}
