package treestatus

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestDigest_SameAnswerSameDigestAnyChangeAnother(t *testing.T) {
	st := Status{Path: "t", Kind: "supervisor", State: "running", Desired: "running", Since: time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC),
		Children: []Status{{Path: "t/a", State: "running", Restarts: 1}, {Path: "t/b", State: "stopped"}}}
	d := Digest(st)
	// Through JSON, as a query answer travels.
	b, err := json.Marshal(st)
	require.NoError(t, err)
	var back Status
	require.NoError(t, json.Unmarshal(b, &back))
	require.Equal(t, d, Digest(back))
	for name, change := range map[string]func(*Status){
		"own state":         func(s *Status) { s.State = "failed" },
		"a child's restart": func(s *Status) { s.Children[0].Restarts++ },
		"a child's reason":  func(s *Status) { s.Children[1].Reason = "stopped" },
		"a child more":      func(s *Status) { s.Children = append(s.Children, Status{Path: "t/c"}) },
		"applying":          func(s *Status) { s.Children[0].Applying = true },
		"since":             func(s *Status) { s.Since = s.Since.Add(time.Nanosecond) },
	} {
		c := st
		c.Children = append([]Status(nil), st.Children...)
		change(&c)
		require.NotEqual(t, d, Digest(c), name)
	}
}
