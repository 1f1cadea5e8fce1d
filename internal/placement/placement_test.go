package placement

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func workers(hosts []string, names ...string) []Worker {
	out := make([]Worker, len(names))
	for i, n := range names {
		out[i] = Worker{Name: n, Hosts: hosts}
	}
	return out
}

func TestPlace(t *testing.T) {
	abc := []string{"a", "b", "c"}
	for _, tc := range []struct {
		name string
		in   Input
		want map[string]string
	}{
		{
			name: "new workers spread over their hosts in list order",
			in:   Input{Workers: workers(abc, "w-0", "w-1", "w-2", "w-3", "w-4")},
			want: map[string]string{"w-0": "a", "w-1": "b", "w-2": "c", "w-3": "a", "w-4": "b"},
		},
		{
			name: "an apply that changes nothing moves nothing",
			in: Input{Workers: workers(abc, "w-0", "w-1", "w-2"),
				Current: map[string]string{"w-0": "c", "w-1": "c", "w-2": "a"}},
			want: map[string]string{"w-0": "c", "w-1": "c", "w-2": "a"},
		},
		{
			name: "a new instance goes to the host with the fewest",
			in: Input{Workers: workers(abc, "w-0", "w-1", "w-2", "w-3"),
				Current: map[string]string{"w-0": "a", "w-1": "a", "w-2": "b"}},
			want: map[string]string{"w-0": "a", "w-1": "a", "w-2": "b", "w-3": "c"},
		},
		{
			name: "a worker on a host no longer in its list moves",
			in: Input{Workers: workers([]string{"a", "b"}, "w-0", "w-1"),
				Current: map[string]string{"w-0": "a", "w-1": "c"}},
			want: map[string]string{"w-0": "a", "w-1": "b"},
		},
		{
			name: "a lost host's workers go to the others, fewest first",
			in: Input{Workers: workers(abc, "w-0", "w-1", "w-2", "w-3"),
				Current: map[string]string{"w-0": "a", "w-1": "b", "w-2": "c", "w-3": "a"},
				Leave:   map[string]bool{"a": true}},
			want: map[string]string{"w-0": "b", "w-1": "b", "w-2": "c", "w-3": "c"},
		},
		{
			name: "only the worker past its own after leaves",
			in: Input{Workers: workers(abc, "w-0", "w-1"),
				Current:  map[string]string{"w-0": "a", "w-1": "a"},
				LeaveFor: map[string][]string{"w-1": {"a"}}},
			want: map[string]string{"w-0": "a", "w-1": "b"},
		},
		{
			name: "nowhere to go: a worker stays, a new one takes its first host",
			in: Input{Workers: workers([]string{"a"}, "w-0", "w-1"),
				Current: map[string]string{"w-0": "a"},
				Leave:   map[string]bool{"a": true}},
			want: map[string]string{"w-0": "a", "w-1": "a"},
		},
		{
			name: "a host that comes back gets nothing back by itself",
			in: Input{Workers: workers(abc, "w-0", "w-1", "w-2"),
				Current: map[string]string{"w-0": "b", "w-1": "b", "w-2": "c"}},
			want: map[string]string{"w-0": "b", "w-1": "b", "w-2": "c"},
		},
		{
			name: "a worker leaving a lost host avoids another unknown one",
			in: Input{Workers: workers(abc, "w-0", "w-1"),
				Current:  map[string]string{"w-0": "a", "w-1": "c"},
				LeaveFor: map[string][]string{"w-0": {"a"}},
				Avoid:    map[string]bool{"a": true, "b": true}},
			want: map[string]string{"w-0": "c", "w-1": "c"},
		},
		{
			name: "every other host unknown: an unknown one rather than none",
			in: Input{Workers: workers([]string{"a", "b"}, "w-0"),
				Current:  map[string]string{"w-0": "a"},
				LeaveFor: map[string][]string{"w-0": {"a"}},
				Avoid:    map[string]bool{"a": true, "b": true}},
			want: map[string]string{"w-0": "b"},
		},
		{
			name: "workers without hosts are not placed",
			in:   Input{Workers: []Worker{{Name: "db"}, {Name: "web", Hosts: []string{"b"}}}},
			want: map[string]string{"web": "b"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Place(tc.in)
			require.Equal(t, tc.want, got)
			// Placing again from the result moves nothing.
			again := tc.in
			again.Current = got
			require.Empty(t, Moves(again, Place(again)))
		})
	}
}

func TestMoves(t *testing.T) {
	in := Input{Workers: workers([]string{"a", "b"}, "w-0", "w-1", "w-2"),
		Current: map[string]string{"w-0": "a", "w-1": "b"}, Leave: map[string]bool{"a": true}}
	require.Equal(t, []string{"w-0"}, Moves(in, Place(in)), "a new worker is placed, not moved")
}

func TestLost(t *testing.T) {
	t0 := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name  string
		since time.Time
		now   time.Time
		after time.Duration
		lost  bool
		wait  time.Duration
	}{
		{"no reschedule", t0, t0.Add(time.Hour), 0, false, 0},
		{"host not unknown", time.Time{}, t0, time.Minute, false, 0},
		{"not yet", t0, t0.Add(20 * time.Second), time.Minute, false, 40 * time.Second},
		{"just past", t0, t0.Add(time.Minute), time.Minute, true, 0},
		{"long past", t0, t0.Add(time.Hour), time.Minute, true, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lost, wait := Lost(tc.since, tc.now, tc.after)
			require.Equal(t, tc.lost, lost)
			require.Equal(t, tc.wait, wait)
		})
	}
}

// A worker leaves a host once it has been unknown past the worker's
// reschedule.after; until then the earliest of the waits is returned. A
// host up, a worker not placed, or a host already left: nothing.
func TestLostDue(t *testing.T) {
	now := time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)
	unknown := map[string]time.Time{"a": now.Add(-2 * time.Minute), "c": now.Add(-10 * time.Second)}
	since := func(h string) (time.Time, bool) { t, ok := unknown[h]; return t, ok }
	workers := []Placed{
		{Name: "w1", Host: "a", After: time.Minute},      // lost a minute ago: leaves
		{Name: "w2", Host: "a", After: 5 * time.Minute},  // due in 3 minutes
		{Name: "w3", Host: "b", After: time.Minute},      // b is up
		{Name: "w4", Host: "c", After: 30 * time.Second}, // due in 20 seconds: the earliest
		{Name: "w5", Host: "", After: time.Second},       // not placed
		{Name: "w6", Host: "a", After: 0},                // never leaves
		{Name: "w7", Host: "a", After: time.Second},      // left already
	}
	leave, next := LostDue(workers, since, map[string][]string{"w7": {"a"}}, now)
	require.Equal(t, map[string][]string{"w1": {"a"}, "w7": {"a"}}, leave)
	require.Equal(t, now.Add(20*time.Second), next)

	leave, next = LostDue(workers[2:3], since, nil, now)
	require.Nil(t, leave, "nothing to leave: no map made")
	require.True(t, next.IsZero())
	leave, _ = LostDue(workers[:1], since, nil, now)
	require.Equal(t, map[string][]string{"w1": {"a"}}, leave, "the first to leave makes the map")
}
