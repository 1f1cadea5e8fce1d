package hostcore

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/steward-sh/steward/internal/spec"
)

func TestMovable(t *testing.T) {
	require.True(t, Movable([]string{"a", "b"}, "a"))
	require.False(t, Movable([]string{"a"}, "a"))
	require.False(t, Movable(nil, "a"))
	require.True(t, Movable([]string{"b"}, "a"), "pinned elsewhere by its spec: its list has another host")
}

// Every host of a worker's list is subscribed (empty too); a worker
// counts on the host it runs on, movable or pinned.
func TestSubscriptions(t *testing.T) {
	got := Subscriptions("t/fleet", []Worker{
		{Path: "t/fleet/a-0", Hosts: []string{"a", "b"}, On: "a"},
		{Path: "t/fleet/a-1", Hosts: []string{"a", "b"}, On: "a"},
		{Path: "t/fleet/db", Hosts: []string{"c"}, On: "c"},
		{Path: "t/fleet/new", Hosts: []string{"d"}},
	})
	require.Equal(t, map[string]Subscription{
		"a": {Supervisor: "t/fleet", Movable: 2},
		"b": {Supervisor: "t/fleet"},
		"c": {Supervisor: "t/fleet", Pinned: []string{"t/fleet/db"}},
		"d": {Supervisor: "t/fleet"},
	}, got)
}

// What is sent: each host whose subscription changed, in host order, then
// the hosts no worker lists any more, gone; nothing for one unchanged.
func TestSubscriptionChanges(t *testing.T) {
	want := map[string]Subscription{
		"a": {Supervisor: "t/f", Movable: 2},
		"b": {Supervisor: "t/f"},
		"c": {Supervisor: "t/f", Pinned: []string{"t/f/db"}},
	}
	had := map[string]Subscription{
		"a": {Supervisor: "t/f", Movable: 1},
		"b": {Supervisor: "t/f"},
		"c": {Supervisor: "t/f", Pinned: []string{"t/f/old"}},
		"z": {Supervisor: "t/f", Movable: 1},
		"y": {Supervisor: "t/f"},
	}
	require.Equal(t, []SubscriptionChange{
		{Host: "a", Sub: want["a"]},
		{Host: "c", Sub: want["c"]},
		{Host: "y", Sub: Subscription{Supervisor: "t/f", Gone: true}},
		{Host: "z", Sub: Subscription{Supervisor: "t/f", Gone: true}},
	}, SubscriptionChanges("t/f", want, had))
	require.Empty(t, SubscriptionChanges("t/f", want, want), "nothing changed")
	require.Len(t, SubscriptionChanges("t/f", want, nil), 3, "first: all")
}

// What a supervisor takes of a host's state: up or unknown, from a host
// with a name's length, while it has room for a new one.
func TestCheckTold(t *testing.T) {
	require.NoError(t, CheckTold("a", Up, false, 0))
	require.NoError(t, CheckTold("a", Unknown, true, MaxHostStates))
	require.ErrorContains(t, CheckTold("a", "on fire", true, 0), "neither up nor unknown")
	require.ErrorContains(t, CheckTold(strings.Repeat("h", spec.MaxNameLength+1), Up, false, 0), "characters")
	require.NoError(t, CheckTold(strings.Repeat("h", spec.MaxNameLength+1), Up, true, 0), "known already")
	require.ErrorContains(t, CheckTold("new", Up, false, MaxHostStates), "at most 1024")
}
