// Package rolloutcore is the pure decision core of a rollout
// (workflows.RolloutWorkflow): which targets the next chunk takes, what
// each answer makes of a target, what an unanswered one becomes, when the
// rollout stops issuing chunks, and what it reports. It has no Temporal
// import; the workflow runs each chunk as an activity and carries out the
// rest.
//
// Every target goes pending, running (its chunk is in flight), then to one
// final status: succeeded, failed, timeout (no answer within the chunk's
// timeout), cancelled (the rollout was cancelled before it) or skipped
// (fail-fast: a failure came before it). A target takes one answer only,
// from its own chunk.
package rolloutcore

import (
	"fmt"
	"slices"
	"time"

	"github.com/steward-sh/steward/internal/spec"
)

// Target statuses.
const (
	Pending   = "pending"   // not reached yet
	Running   = "running"   // its chunk is in flight
	Succeeded = "succeeded" // it reached the wanted state
	Failed    = "failed"    // its action failed, or it ended again
	Timeout   = "timeout"   // it did not get there within its action timeouts
	Cancelled = "cancelled" // the rollout was cancelled before it
	Skipped   = "skipped"   // fail-fast: a failure came before it
)

// statuses in the order a status counts them.
var statuses = []string{Pending, Running, Succeeded, Failed, Timeout, Cancelled, Skipped}

// Target is one target's progress.
type Target struct {
	Path     string    `json:"path"`
	Status   string    `json:"status"`
	Error    string    `json:"error,omitempty"`
	Started  time.Time `json:"started,omitzero"`
	Finished time.Time `json:"finished,omitzero"`
}

// State is what a rollout carries across continue-as-new (it continues
// only between chunks, when nothing is in flight).
type State struct {
	Targets         []Target  `json:"targets"`
	Next            int       `json:"next"`
	CancelRequested bool      `json:"cancelRequested,omitempty"`
	StartedAt       time.Time `json:"startedAt"`
}

// Bounds of a rollout's input, far above what steward's starter sends (a
// tree's workers are bounded by its spec's size: docs/spec.md, "Limits";
// the starter sends no chunk timeout, the default is an hour). A rollout
// started by hand beyond them is refused: each target of a chunk is a
// goroutine of the activity that asks it, and a chunk holds a slot of the
// control queue for its timeout.
const (
	MaxTargets      = 100_000
	MaxChunkTimeout = 24 * time.Hour
	// MaxChunk bounds the targets of one chunk (rollout code version 3):
	// each is a goroutine and an Update call of the chunk's activity.
	MaxChunk = 1000
)

// CheckInput says why a rollout's input is refused (nil: taken): too many
// targets, a target's path empty or too long, a chunk timeout over
// MaxChunkTimeout, or a carried state that is not a rollout's (a position
// outside its targets, an unknown status).
func CheckInput(targets []string, chunkTimeout time.Duration, carry *State) error {
	if len(targets) > MaxTargets {
		return fmt.Errorf("%d targets (at most %d)", len(targets), MaxTargets)
	}
	for _, p := range targets {
		if p == "" || len(p) > spec.MaxPathLength {
			return fmt.Errorf("a target's path of %d characters (1 to %d)", len(p), spec.MaxPathLength)
		}
	}
	if chunkTimeout > MaxChunkTimeout {
		return fmt.Errorf("a chunk timeout of %s (at most %s)", chunkTimeout, MaxChunkTimeout)
	}
	if carry == nil {
		return nil
	}
	if len(carry.Targets) > MaxTargets || carry.Next < 0 || carry.Next > len(carry.Targets) {
		return fmt.Errorf("a carried state at target %d of %d (at most %d targets)", carry.Next, len(carry.Targets), MaxTargets)
	}
	for _, t := range carry.Targets {
		if !slices.Contains(statuses, t.Status) || len(t.Path) > spec.MaxPathLength {
			return fmt.Errorf("a carried target of status %.40q and a path of %d characters", t.Status, len(t.Path))
		}
	}
	return nil
}

// New is a rollout over paths, begun at now: every target pending.
func New(paths []string, now time.Time) State {
	s := State{StartedAt: now}
	for _, p := range paths {
		s.Targets = append(s.Targets, Target{Path: p, Status: Pending})
	}
	return s
}

// Final says whether a target's status is final.
func Final(status string) bool {
	switch status {
	case Succeeded, Failed, Timeout, Cancelled, Skipped:
		return true
	}
	return false
}

// Failures counts the targets that failed or timed out.
func (s *State) Failures() int {
	n := 0
	for _, t := range s.Targets {
		if t.Status == Failed || t.Status == Timeout {
			n++
		}
	}
	return n
}

// More says whether the rollout issues another chunk: targets are left,
// it was not cancelled (cancelled: its workflow was), and with failFast no
// target has failed.
func (s *State) More(failFast, cancelled bool) bool {
	return s.Next < len(s.Targets) && !s.CancelRequested && !cancelled && !(failFast && s.Failures() > 0)
}

// TakeChunk marks the next chunk of at most chunk targets running at now,
// and returns its bounds [from, to).
func (s *State) TakeChunk(chunk int, now time.Time) (from, to int) {
	from = s.Next
	to = min(from+max(chunk, 1), len(s.Targets))
	s.Next = to
	for i := from; i < to; i++ {
		s.Targets[i].Status, s.Targets[i].Started = Running, now
	}
	return from, to
}

// Answer is a target's answer from its chunk: Seq its index.
type Answer struct {
	Seq    int
	Path   string
	Status string
	Error  string
}

// Take applies an answer at now, only for a target of the chunk [from,
// to) that has none yet, with a final status of an answer (succeeded,
// failed, timeout); it returns whether it was taken.
func (s *State) Take(a Answer, from, to int, now time.Time) bool {
	if a.Seq < from || a.Seq >= to || a.Seq >= len(s.Targets) {
		return false
	}
	t := &s.Targets[a.Seq]
	if t.Path != a.Path || Final(t.Status) {
		return false
	}
	switch a.Status {
	case Succeeded, Failed, Timeout:
		t.Status, t.Error, t.Finished = a.Status, a.Error, now
		return true
	}
	return false
}

// ChunkEnd is how a chunk's activity ended.
type ChunkEnd int

const (
	// ChunkAnswered: it returned its answers.
	ChunkAnswered ChunkEnd = iota
	// ChunkTimedOut: no answer within the chunk's timeout.
	ChunkTimedOut
	// ChunkFailed: it failed.
	ChunkFailed
)

// Unanswered settles the targets of the chunk [from, to) that took no
// answer at now: timeout when the chunk timed out (after timeout), failed
// otherwise (why: the chunk's failure).
func (s *State) Unanswered(from, to int, end ChunkEnd, timeout time.Duration, why string, now time.Time) {
	for i := from; i < to && i < len(s.Targets); i++ {
		t := &s.Targets[i]
		switch {
		case Final(t.Status):
		case end == ChunkTimedOut:
			t.Status, t.Error, t.Finished = Timeout, fmt.Sprintf("no answer within %s", timeout), now
		case end == ChunkAnswered:
			// The chunk ended without a word of this target (a result of
			// another target or status): it failed, as any unanswered one.
			t.Status, t.Error, t.Finished = Failed, "the chunk ended without an answer for this target", now
		default:
			t.Status, t.Error, t.Finished = Failed, "the chunk failed: "+why, now
		}
	}
}

// Finish ends the rollout at now: the targets not reached are skipped
// (after a failure) or cancelled (cancelled: the rollout was). It returns
// that status and how many took it.
func (s *State) Finish(cancelled bool, now time.Time) (left string, n int) {
	left = Skipped
	if s.CancelRequested || cancelled {
		left = Cancelled
	}
	for i := s.Next; i < len(s.Targets); i++ {
		s.Targets[i].Status, s.Targets[i].Finished = left, now
		n++
	}
	s.Next = len(s.Targets)
	return left, n
}

// Status is a rollout's query answer and result.
type Status struct {
	ID       string `json:"id"`
	Path     string `json:"path"`
	Op       string `json:"op"`
	Chunk    int    `json:"chunk"`
	FailFast bool   `json:"failFast"`
	// State: running, completed or cancelled.
	State string `json:"state"`
	// Total, Succeeded, Failed (failed and timeout) and Skipped summarize;
	// Counts has every per-target status.
	Total     int            `json:"total"`
	Succeeded int            `json:"succeeded"`
	Failed    int            `json:"failed"`
	Skipped   int            `json:"skipped"`
	Counts    map[string]int `json:"counts"`
	Targets   []Target       `json:"targets"`
	StartedAt time.Time      `json:"startedAt"`
	EndedAt   time.Time      `json:"endedAt,omitzero"`
}

// Status is the rollout's status: st with its targets, counts and state
// filled in (ended: when it ended, zero while it runs; cancelled: its
// workflow was).
func (s *State) Status(st Status, ended time.Time, cancelled bool) Status {
	st.State, st.Total, st.StartedAt, st.EndedAt = "running", len(s.Targets), s.StartedAt, ended
	st.Targets = append([]Target(nil), s.Targets...)
	st.Counts = map[string]int{}
	for _, k := range statuses {
		st.Counts[k] = 0
	}
	for _, t := range s.Targets {
		st.Counts[t.Status]++
	}
	st.Succeeded = st.Counts[Succeeded]
	st.Failed = st.Counts[Failed] + st.Counts[Timeout]
	st.Skipped = st.Counts[Skipped]
	if !ended.IsZero() {
		st.State = "completed"
		if s.CancelRequested || cancelled {
			st.State = "cancelled"
		}
	}
	return st
}
