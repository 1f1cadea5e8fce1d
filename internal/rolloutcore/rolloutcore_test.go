package rolloutcore

import (
	"strings"
	"testing"
	"time"

	"github.com/steward-sh/steward/internal/spec"
	"github.com/stretchr/testify/require"
)

var t0 = time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)

func statusesOf(s State) []string {
	var out []string
	for _, t := range s.Targets {
		out = append(out, t.Status)
	}
	return out
}

// A rollout of five in chunks of two: each chunk's answers taken (once,
// for its own targets only), the unanswered settled by how the chunk
// ended, and the status counted.
func TestChunksAnswersAndStatus(t *testing.T) {
	s := New([]string{"a", "b", "c", "d", "e"}, t0)
	require.True(t, s.More(false, false))
	from, to := s.TakeChunk(2, t0.Add(time.Second))
	require.Equal(t, [2]int{0, 2}, [2]int{from, to})
	require.Equal(t, []string{Running, Running, Pending, Pending, Pending}, statusesOf(s))

	require.True(t, s.Take(Answer{Seq: 0, Path: "a", Status: Succeeded}, from, to, t0.Add(2*time.Second)))
	require.False(t, s.Take(Answer{Seq: 0, Path: "a", Status: Failed}, from, to, t0), "one answer a target")
	require.False(t, s.Take(Answer{Seq: 2, Path: "c", Status: Succeeded}, from, to, t0), "not of this chunk")
	require.False(t, s.Take(Answer{Seq: 1, Path: "x", Status: Succeeded}, from, to, t0), "another path")
	require.False(t, s.Take(Answer{Seq: 1, Path: "b", Status: Running}, from, to, t0), "not an answer's status")
	require.False(t, s.Take(Answer{Seq: 99, Path: "b", Status: Failed}, 0, 100, t0), "beyond the targets")
	s.Unanswered(from, to, ChunkAnswered, time.Hour, "", t0.Add(3*time.Second))
	require.Equal(t, Target{Path: "b", Status: Failed, Error: "the chunk ended without an answer for this target",
		Started: t0.Add(time.Second), Finished: t0.Add(3 * time.Second)}, s.Targets[1])
	require.Equal(t, Target{Path: "a", Status: Succeeded, Started: t0.Add(time.Second), Finished: t0.Add(2 * time.Second)}, s.Targets[0])

	require.True(t, s.More(false, false))
	require.False(t, s.More(true, false), "fail-fast after a failure")
	require.False(t, s.More(false, true), "its workflow cancelled")

	from, to = s.TakeChunk(2, t0)
	s.Unanswered(from, to, ChunkTimedOut, time.Hour, "", t0)
	require.Equal(t, "no answer within 1h0m0s", s.Targets[2].Error)
	from, to = s.TakeChunk(2, t0)
	require.Equal(t, [2]int{4, 5}, [2]int{from, to}, "the last chunk is short")
	s.Unanswered(from, to, ChunkFailed, time.Hour, "boom", t0)
	require.Equal(t, "the chunk failed: boom", s.Targets[4].Error)
	require.False(t, s.More(false, false), "no target left")
	require.Equal(t, 4, s.Failures())

	st := s.Status(Status{ID: "rollout:t", Op: "restart"}, time.Time{}, false)
	require.Equal(t, "running", st.State)
	require.Equal(t, 5, st.Total)
	require.Equal(t, 1, st.Succeeded)
	require.Equal(t, 4, st.Failed)
	require.Equal(t, map[string]int{Pending: 0, Running: 0, Succeeded: 1, Failed: 2, Timeout: 2, Cancelled: 0, Skipped: 0}, st.Counts)
	require.Equal(t, "rollout:t", st.ID)
	require.Equal(t, "completed", s.Status(Status{}, t0, false).State)
	require.Equal(t, "cancelled", s.Status(Status{}, t0, true).State)
}

// The targets a rollout did not reach: skipped after a failure,
// cancelled when it was cancelled.
func TestFinish(t *testing.T) {
	for _, c := range []struct {
		name      string
		requested bool
		cancelled bool
		want      string
	}{
		{"fail-fast", false, false, Skipped},
		{"the cancel signal", true, false, Cancelled},
		{"its workflow cancelled", false, true, Cancelled},
	} {
		s := New([]string{"a", "b", "c"}, t0)
		s.TakeChunk(1, t0)
		s.CancelRequested = c.requested
		left, n := s.Finish(c.cancelled, t0.Add(time.Minute))
		require.Equal(t, c.want, left, c.name)
		require.Equal(t, 2, n, c.name)
		require.Equal(t, []string{Running, c.want, c.want}, statusesOf(s), c.name)
		require.Equal(t, t0.Add(time.Minute), s.Targets[2].Finished, c.name)
		require.Equal(t, 3, s.Next)
		require.Equal(t, c.want == Cancelled, s.Status(Status{}, t0, c.cancelled).State == "cancelled", c.name)
	}
	for _, st := range []string{Succeeded, Failed, Timeout, Cancelled, Skipped} {
		require.True(t, Final(st), st)
	}
	require.False(t, Final(Pending))
	require.False(t, Final(Running))
	s := New(nil, t0)
	from, to := s.TakeChunk(0, t0)
	require.Equal(t, [2]int{0, 0}, [2]int{from, to})
}

// A rollout started by hand beyond what steward's starter sends is
// refused: its carry once indexed its targets at -1 (its workflow's task
// failed for good), and its chunk timeout held a control slot for years.
func TestCheckInput(t *testing.T) {
	require.NoError(t, CheckInput([]string{"t/a", "t/b"}, 0, nil))
	require.NoError(t, CheckInput(nil, time.Hour, &State{Targets: []Target{{Path: "t/a", Status: Succeeded}}, Next: 1}))
	for name, tc := range map[string]struct {
		targets []string
		timeout time.Duration
		carry   *State
		err     string
	}{
		"too many":      {targets: make([]string, MaxTargets+1), err: "targets (at most 100000)"},
		"empty path":    {targets: []string{""}, err: "a target's path of 0 characters"},
		"long path":     {targets: []string{strings.Repeat("p", spec.MaxPathLength+1)}, err: "a target's path of"},
		"years":         {timeout: 10 * 365 * 24 * time.Hour, err: "a chunk timeout of"},
		"next below":    {carry: &State{Targets: []Target{{Path: "a", Status: Pending}}, Next: -1}, err: "a carried state at target -1 of 1"},
		"next past":     {carry: &State{Targets: []Target{{Path: "a", Status: Pending}}, Next: 2}, err: "at target 2 of 1"},
		"odd status":    {carry: &State{Targets: []Target{{Path: "a", Status: "exploded"}}}, err: `status "exploded"`},
		"carry too big": {carry: &State{Targets: make([]Target, MaxTargets+1)}, err: "at most 100000 targets"},
	} {
		require.ErrorContains(t, CheckInput(tc.targets, tc.timeout, tc.carry), tc.err, name)
	}
}
