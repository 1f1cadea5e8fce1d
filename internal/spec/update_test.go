package spec

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The update block parses as a count or a percentage, resolves with its
// defaults, is inherited by supervisors (not workers) and round-trips
// through JSON.
func TestUpdatePolicy_ParseResolveInherit(t *testing.T) {
	n, err := Parse([]byte(`name: r
update: {maxParallel: 25%, minHealthyTime: 10s, autoRevert: true}
children:
  - name: g
    children:
      - {name: w1, kind: stub}
      - {name: w2, kind: stub}
  - name: h
    update: {maxParallel: 2, canary: 1, autoPromote: true}
    children:
      - {name: w3, kind: stub}
  - {name: w4, kind: stub}
`))
	require.NoError(t, err)
	require.Equal(t, Parallel{N: 25, Percent: true}, *n.Update.MaxParallel)
	r := n.Update.Resolve(9)
	require.Equal(t, ResolvedUpdate{MaxParallel: 3, MinHealthyTime: 10 * time.Second, HealthyDeadline: 5 * time.Minute, ProgressDeadline: 10 * time.Minute, AutoRevert: true}, r,
		"25% of 9 rounded up")
	require.Equal(t, 1, n.Update.Resolve(1).MaxParallel, "at least 1")
	require.Equal(t, ResolvedUpdate{MaxParallel: 1, HealthyDeadline: 5 * time.Minute, ProgressDeadline: 10 * time.Minute}, (*UpdatePolicy)(nil).Resolve(4),
		"no block: 25% of 4")
	require.True(t, n.Update.WritesMaxParallel())
	require.False(t, (&UpdatePolicy{Canary: 1}).WritesMaxParallel())

	g := Inherit(n, n.Children[0])
	require.Equal(t, n.Update, g.Update, "a child supervisor inherits it")
	require.Equal(t, 2, Inherit(n, n.Children[1]).Update.Resolve(10).MaxParallel, "its own replaces it")
	require.Nil(t, Inherit(n, n.Children[2]).Update, "a worker does not carry it")

	b, err := json.Marshal(n.Update)
	require.NoError(t, err)
	require.JSONEq(t, `{"maxParallel":"25%","minHealthyTime":"10s","autoRevert":true}`, string(b))
	var back UpdatePolicy
	require.NoError(t, json.Unmarshal(b, &back))
	require.Equal(t, *n.Update, back)
	b, _ = json.Marshal(n.Children[1].Update)
	require.Contains(t, string(b), `"maxParallel":2`)
}

// Bad update blocks are refused, each problem named by its path.
func TestUpdatePolicy_Problems(t *testing.T) {
	for _, c := range []struct{ yaml, want string }{
		{"update: {maxParallel: 0}", "update.maxParallel: must be > 0"},
		{"update: {maxParallel: 150%}", "update.maxParallel: a percentage must be at most 100%"},
		{"update: {healthyDeadline: 0s}", "update.healthyDeadline: must be > 0"},
		{"update: {progressDeadline: 0s}", "update.progressDeadline: must be > 0"},
		{"update: {minHealthyTime: 5m}", "update.minHealthyTime: must be less than healthyDeadline (5m0s), or no worker could ever count as updated"},
		{"update: {canary: -1}", "update.canary: must be >= 0"},
		{"update: {autoPromote: true}", "update.autoPromote: needs canary > 0 (there is nothing to promote)"},
	} {
		_, err := Parse([]byte("name: r\n" + c.yaml + "\nchildren: [{name: w, kind: stub}]\n"))
		require.Error(t, err, c.yaml)
		require.Equal(t, c.want, err.Error(), c.yaml)
	}
	_, err := Parse([]byte("name: r\nchildren: [{name: w, kind: stub, update: {maxParallel: 1}}]\n"))
	require.EqualError(t, err, "children[0].update: an update policy belongs on a supervisor (it governs the workers below it)")
	_, err = Parse([]byte("name: r\nupdate: {maxParallel: lots}\nchildren: [{name: w, kind: stub}]\n"))
	require.ErrorContains(t, err, `invalid maxParallel "lots" (want a count such as 2 or a percentage such as 25%)`)
}
