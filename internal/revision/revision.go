// Package revision keeps the revisions of a tree: what was applied to it,
// when, by whom, and how its rollout ended. It is pure (no Temporal): the
// workflow that holds a tree's log (workflows.RevisionsWorkflow) carries
// out what Log decides, and the starter judges outcomes with Judge.
//
// How a revision comes to be (docs/updates.md, "Revisions"):
//
//  1. `starter apply` hands the log a Record (the spec's digest, message,
//     user, host) under a request ID of its own, and the spec itself to a
//     holder workflow of its own; the record waits as Pending.
//  2. The apply hands the root the spec with the same request ID. The root
//     counts revisions (the apply that creates the tree is 1, every apply
//     that changes it the next) and tells the log which one the request
//     became, or that it changed nothing (Taken).
//  3. The log turns the pending record into an Entry, rolling, or drops it
//     (and its holder) when the apply changed nothing.
//
// An Entry's outcome is rolling until someone who can see the tree judges
// it (apply --wait at its end, `starter revisions`, the next apply before it
// sends its spec): complete, failed, reverted or replaced. A final outcome
// never changes. An entry still rolling when the next revision is taken
// becomes replaced.
//
// Numbers come from the root alone, so the log and the tree's status never
// disagree; the log keeps the last Keep entries, and at most MaxPending
// records that no root has taken (an apply whose spec never reached it).
package revision

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// Keep is how many revisions a tree's log keeps.
const Keep = 20

// MaxPending is how many records a log keeps that no root has taken yet.
const MaxPending = 5

// Outcome is how a revision's rollout ended, or that it still rolls.
type Outcome string

const (
	Rolling  Outcome = "rolling"
	Complete Outcome = "complete"
	Failed   Outcome = "failed"
	Reverted Outcome = "reverted"
	Replaced Outcome = "replaced"
)

// Final reports whether o is an outcome that never changes.
func (o Outcome) Final() bool {
	switch o {
	case Complete, Failed, Reverted, Replaced:
		return true
	}
	return false
}

// Record is what an apply tells the log before it hands the root its spec.
type Record struct {
	// Request is the apply's own ID; the root names it in Taken.
	Request string `json:"request"`
	// Digest of the spec as applied (spec.Digest).
	Digest  string `json:"digest"`
	Message string `json:"message,omitempty"`
	// User and Host: the OS user and machine of the apply.
	User string `json:"user,omitempty"`
	Host string `json:"host,omitempty"`
}

// Pending is a record waiting for the root to take it.
type Pending struct {
	Record
	Time time.Time `json:"time"`
	// Holder is the ID of the workflow that holds its spec.
	Holder string `json:"holder"`
}

// Entry is one revision of a tree.
type Entry struct {
	Revision int64     `json:"revision"`
	Time     time.Time `json:"time"`
	Digest   string    `json:"digest"`
	Message  string    `json:"message,omitempty"`
	User     string    `json:"user,omitempty"`
	Host     string    `json:"host,omitempty"`
	Outcome  Outcome   `json:"outcome"`
	// Reason says why a revision failed, was reverted or replaced.
	Reason string `json:"reason,omitempty"`
	// Holder is the ID of the workflow that holds its spec.
	Holder string `json:"holder,omitempty"`
}

// Taken is the root's word on a request: the revision it became, or that
// the apply changed nothing (Changed false; Revision is the tree's
// revision as it stays).
type Taken struct {
	Request  string `json:"request"`
	Revision int64  `json:"revision"`
	Changed  bool   `json:"changed"`
}

// OutcomeReport is a judged outcome of a revision, for the log to keep.
type OutcomeReport struct {
	Revision int64   `json:"revision"`
	Outcome  Outcome `json:"outcome"`
	Reason   string  `json:"reason,omitempty"`
}

// Log is a tree's revisions, oldest first, and the records no root has
// taken yet. Its zero value is an empty log.
type Log struct {
	Entries []Entry   `json:"entries,omitempty"`
	Pending []Pending `json:"pending,omitempty"`
}

// Latest is the newest entry (nil when there is none).
func (l *Log) Latest() *Entry {
	if len(l.Entries) == 0 {
		return nil
	}
	return &l.Entries[len(l.Entries)-1]
}

// Find is the entry of revision n (nil when the log does not keep it).
func (l *Log) Find(n int64) *Entry {
	for i := range l.Entries {
		if l.Entries[i].Revision == n {
			return &l.Entries[i]
		}
	}
	return nil
}

// Add keeps a record as pending, its spec held by holder (a record whose
// holder is an entry's already is taken: it is ignored). It returns the
// holders no longer needed: of a record of the same request (an apply
// retried), and of the oldest pending records past MaxPending.
func (l *Log) Add(r Record, now time.Time, holder string) (drop []string) {
	if slices.ContainsFunc(l.Entries, func(e Entry) bool { return e.Holder == holder }) {
		return nil // a record signalled twice, taken already
	}
	l.Pending = slices.DeleteFunc(l.Pending, func(p Pending) bool {
		if p.Request == r.Request && p.Holder != holder {
			drop = append(drop, p.Holder)
		}
		return p.Request == r.Request
	})
	l.Pending = append(l.Pending, Pending{Record: r, Time: now, Holder: holder})
	if n := len(l.Pending) - MaxPending; n > 0 {
		for _, p := range l.Pending[:n] {
			drop = append(drop, p.Holder)
		}
		l.Pending = slices.Delete(l.Pending, 0, n)
	}
	return drop
}

// Take carries out the root's word on a request: its pending record
// becomes the entry of revision t.Revision (rolling; the entry before it
// replaced if it still rolled), or goes when the apply changed nothing. A
// request the log does not hold (a record dropped as too old) makes an
// entry without a spec when it changed the tree. It returns the holders no longer needed: the dropped record's,
// and those of the entries past Keep.
func (l *Log) Take(t Taken) (drop []string) {
	i := slices.IndexFunc(l.Pending, func(p Pending) bool { return p.Request == t.Request })
	var p Pending
	if i >= 0 {
		p = l.Pending[i]
		l.Pending = slices.Delete(l.Pending, i, i+1)
	}
	if !t.Changed || t.Revision <= 0 {
		if i >= 0 {
			drop = append(drop, p.Holder)
		}
		return drop
	}
	// Entries numbered from t.Revision on are of a tree deleted since (the
	// log outlived it) or of a record taken twice: the root's count rules.
	l.Entries = slices.DeleteFunc(l.Entries, func(e Entry) bool {
		if e.Revision >= t.Revision {
			drop = append(drop, e.Holder)
			return true
		}
		return false
	})
	if last := l.Latest(); last != nil && last.Outcome == Rolling {
		last.Outcome, last.Reason = Replaced, fmt.Sprintf("revision %d came while it still rolled", t.Revision)
	}
	e := Entry{Revision: t.Revision, Time: p.Time, Digest: p.Digest, Message: p.Message, User: p.User, Host: p.Host, Outcome: Rolling, Holder: p.Holder}
	if i < 0 {
		e.Reason = "its record was not kept: no spec kept"
	}
	l.Entries = append(l.Entries, e)
	if n := len(l.Entries) - Keep; n > 0 {
		for _, e := range l.Entries[:n] {
			drop = append(drop, e.Holder)
		}
		l.Entries = slices.Delete(l.Entries, 0, n)
	}
	return slices.DeleteFunc(drop, func(h string) bool { return h == "" })
}

// Judged keeps a judged outcome: only of an entry still rolling, and only
// a final one (a final outcome never changes).
func (l *Log) Judged(o OutcomeReport) bool {
	e := l.Find(o.Revision)
	if e == nil || e.Outcome != Rolling || !o.Outcome.Final() {
		return false
	}
	e.Outcome, e.Reason = o.Outcome, o.Reason
	return true
}

// Holders lists every holder the log refers to (for a tree's deletion).
func (l *Log) Holders() []string {
	var out []string
	for _, p := range l.Pending {
		out = append(out, p.Holder)
	}
	for _, e := range l.Entries {
		if e.Holder != "" {
			out = append(out, e.Holder)
		}
	}
	return out
}

// Bounds of what a log takes (a record or report sent with the temporal
// CLI may be anything): a log is carried over every continue-as-new, and a
// holder's workflow ID is made of the request.
const (
	// MaxMessage is the longest message an apply keeps (`--message`).
	MaxMessage = 1000
	// MaxRequest is the longest request ID (the starter's are 16 hex).
	MaxRequest = 64
	// maxField bounds a record's digest, user and host.
	maxField = 256
	// MaxReason is the longest reason an outcome keeps; a longer one is cut.
	MaxReason = 2000
)

// Check says why a record is not one an apply sends (nil: it is); spec is
// the size of the spec it carries, held to maxSpec.
func (r Record) Check(spec, maxSpec int) error {
	switch {
	case r.Request == "" || len(r.Request) > MaxRequest || strings.ContainsAny(r.Request, ":/ \t\n"):
		return fmt.Errorf("request %.80q: 1 to %d characters, no ':', '/' or space", r.Request, MaxRequest)
	case len(r.Message) > MaxMessage:
		return fmt.Errorf("a message of %d characters (at most %d)", len(r.Message), MaxMessage)
	case len(r.Digest) > maxField || len(r.User) > maxField || len(r.Host) > maxField:
		return fmt.Errorf("a digest, user or host over %d characters", maxField)
	case spec > maxSpec:
		return fmt.Errorf("a spec of %d bytes (at most %d)", spec, maxSpec)
	}
	return nil
}

// Bounded is the report with its reason cut to MaxReason.
func (o OutcomeReport) Bounded() OutcomeReport {
	if len(o.Reason) > MaxReason {
		o.Reason = o.Reason[:MaxReason] + "…"
	}
	return o
}
