package placement

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/steward-sh/steward/internal/spec"
)

func onHost(h string) spec.Node {
	return spec.Node{Name: "web", Kind: spec.KindProcess, Process: map[string]any{"command": "/bin/sleep", "host": h}}
}

// Which spec change is a move: one that places a running instance on
// another host than it runs on.
func TestWhereabouts_Note(t *testing.T) {
	for _, tc := range []struct {
		name     string
		w        Whereabouts
		instance string
		old      spec.Node
		to       string
		inFlight *StaleCopy
		lost     string
		restart  bool
		move     *StaleCopy
	}{
		{name: "nothing runs: no move", old: onHost("a"), to: "b"},
		{name: "same host: no move", instance: "i1", old: onHost("a"), to: "a"},
		{name: "another host: a move from where it runs", instance: "i1", old: onHost("a"), to: "b",
			restart: true, move: &StaleCopy{Host: "a", Instance: "i1", Node: onHost("a")}},
		{name: "its instance's host rules over the old spec's", w: Whereabouts{InstanceHost: "c"}, instance: "i1", old: onHost("a"), to: "b",
			restart: true, move: &StaleCopy{Host: "c", Instance: "i1", Node: onHost("a")}},
		{name: "off a lost host", instance: "i1", old: onHost("a"), to: "b", lost: "a",
			restart: true, move: &StaleCopy{Host: "a", Instance: "i1", Node: onHost("a"), Lost: true}},
		{name: "another host lost: not this move's", instance: "i1", old: onHost("a"), to: "b", lost: "c",
			restart: true, move: &StaleCopy{Host: "a", Instance: "i1", Node: onHost("a")}},
		{name: "a move in flight: its instance runs where that move began", instance: "i1", old: onHost("b"), to: "c",
			inFlight: &StaleCopy{Host: "a", Instance: "i0", Node: onHost("a")},
			restart:  true, move: &StaleCopy{Host: "a", Instance: "i0", Node: onHost("a")}},
		{name: "a move noted already is kept", w: Whereabouts{Move: &StaleCopy{Host: "a", Instance: "i1"}}, instance: "i1", old: onHost("b"), to: "c", lost: "a",
			restart: true, move: &StaleCopy{Host: "a", Instance: "i1", Lost: true}},
		{name: "back where it runs: the move is dropped", w: Whereabouts{InstanceHost: "b", Move: &StaleCopy{Host: "b", Instance: "i1"}}, instance: "i1", old: onHost("c"), to: "b"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := tc.w
			require.Equal(t, tc.restart, w.Note(tc.instance, tc.old, tc.to, tc.inFlight, tc.lost))
			require.Equal(t, tc.move, w.Move)
		})
	}
}

// After a start's success: where the instance runs, and what a move noted
// meanwhile now moves.
func TestWhereabouts_Started(t *testing.T) {
	w := Whereabouts{}
	w.Started("a", onHost("a"), "i1", "a")
	require.Equal(t, Whereabouts{InstanceHost: "a"}, w)

	w = Whereabouts{Move: &StaleCopy{Host: "a", Instance: "i0"}}
	w.Started("a", onHost("a"), "i1", "b")
	require.Equal(t, &StaleCopy{Host: "a", Instance: "i1", Node: onHost("a")}, w.Move, "the new instance moves")

	w = Whereabouts{Move: &StaleCopy{Host: "a", Instance: "i0"}}
	w.Started("b", onHost("b"), "i1", "b")
	require.Nil(t, w.Move, "it runs where the spec says")

	w = Whereabouts{Move: &StaleCopy{Host: "a", Instance: "i1"}}
	w.Started("a", onHost("a"), "i1", "b")
	require.Equal(t, &StaleCopy{Host: "a", Instance: "i1"}, w.Move, "the move names that instance already")
}

func TestWhereabouts_CancelledAndTake(t *testing.T) {
	mv := &StaleCopy{Host: "a", Instance: "i1", Node: onHost("a")}
	w := Whereabouts{}
	w.Cancelled(nil)
	require.Nil(t, w.Move)
	w.Cancelled(mv)
	require.Equal(t, mv, w.Move)
	require.NotSame(t, mv, w.Move, "a copy")
	w.Cancelled(&StaleCopy{Host: "z"})
	require.Equal(t, "a", w.Move.Host, "a move noted since is kept")

	node, moving := w.Take(false, onHost("b"))
	require.Equal(t, onHost("a"), node, "a stop or observe goes where the instance runs")
	require.Nil(t, moving)
	require.Equal(t, "a", w.Host("b"))
	node, moving = w.Take(true, onHost("b"))
	require.Equal(t, onHost("b"), node)
	require.Equal(t, mv, moving)
	require.Nil(t, w.Move, "taken by the start")
	require.Equal(t, "b", w.Host("b"))
	node, moving = w.Take(true, onHost("b"))
	require.Equal(t, onHost("b"), node)
	require.Nil(t, moving)
}

// A move goes at once off a lost or unknown host; one whose instance is
// gone, or runs where the spec says, is dropped.
func TestWhereabouts_Due(t *testing.T) {
	for _, tc := range []struct {
		name     string
		w        Whereabouts
		instance string
		unknown  bool
		left     StaleCopy
		now      bool
		kept     bool
	}{
		{name: "no move"},
		{name: "nothing runs", w: Whereabouts{Move: &StaleCopy{Host: "a", Instance: "i1", Lost: true}}},
		{name: "another instance runs on the spec's host", w: Whereabouts{InstanceHost: "b", Move: &StaleCopy{Host: "a", Instance: "i0", Lost: true}}, instance: "i1"},
		{name: "up host: the restart carries it out", w: Whereabouts{Move: &StaleCopy{Host: "a", Instance: "i1"}}, instance: "i1", kept: true},
		{name: "lost host: at once", w: Whereabouts{Move: &StaleCopy{Host: "a", Instance: "i1", Lost: true}}, instance: "i1",
			left: StaleCopy{Host: "a", Instance: "i1", Lost: true}, now: true},
		{name: "unknown host: at once, the instance that runs left", w: Whereabouts{InstanceHost: "a", Move: &StaleCopy{Host: "a", Instance: "i0"}}, instance: "i1", unknown: true,
			left: StaleCopy{Host: "a", Instance: "i1"}, now: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := tc.w
			left, now := w.Due(tc.instance, tc.unknown, "b")
			require.Equal(t, tc.now, now)
			require.Equal(t, tc.left, left)
			require.Equal(t, tc.kept, w.Move != nil)
		})
	}
}

func TestWhereabouts_StaleCopies(t *testing.T) {
	w := Whereabouts{}
	require.False(t, w.Leave(StaleCopy{Host: "a"}), "no instance")
	require.True(t, w.Leave(StaleCopy{Host: "a", Instance: "i1"}))
	require.False(t, w.Leave(StaleCopy{Host: "a", Instance: "i1"}), "once")
	require.True(t, w.Leave(StaleCopy{Host: "b", Instance: "i2"}))
	require.Equal(t, []string{"a/i1", "b/i2"}, w.Copies())
	_, ok := w.Stopped("i9")
	require.False(t, ok)
	c, ok := w.Stopped("i1")
	require.True(t, ok)
	require.Equal(t, "a", c.Host)
	require.Equal(t, []string{"b/i2"}, w.Copies())
}

// The carry's JSON is what it was before the record moved here: its
// fields inline, under their names.
func TestWhereabouts_JSONInline(t *testing.T) {
	type carry struct {
		Seq int `json:"seq"`
		Whereabouts
	}
	b, err := json.Marshal(carry{Seq: 1, Whereabouts: Whereabouts{InstanceHost: "a", Move: &StaleCopy{Host: "a", Instance: "i"}, Stale: []StaleCopy{{Host: "b", Instance: "j"}}}})
	require.NoError(t, err)
	var m map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(b, &m))
	require.Contains(t, m, "instanceHost")
	require.Contains(t, m, "move")
	require.Contains(t, m, "stale")
	var back carry
	require.NoError(t, json.Unmarshal([]byte(`{"seq":2,"instanceHost":"x","move":{"host":"x","instance":"k","node":{"name":"web"}},"stale":[{"host":"y","instance":"l","node":{"name":"web"},"lost":true}]}`), &back))
	require.Equal(t, "x", back.InstanceHost)
	require.Equal(t, "k", back.Move.Instance)
	require.True(t, back.Stale[0].Lost)
}
