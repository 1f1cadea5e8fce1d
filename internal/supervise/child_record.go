package supervise

import (
	"encoding/json"
	"time"

	"github.com/steward-sh/steward/internal/spec"
	"github.com/steward-sh/steward/internal/tick"
	"github.com/steward-sh/steward/internal/treestatus"
)

// ChildRecord is what a supervisor knows of one child: a few hundred bytes,
// never the child's own children. It is part of the supervisor's carried
// state (SupervisorCarry), so its JSON is read by every later build: a
// field is added, never renamed, and the fields of older builds are read
// (UnmarshalJSON).
type ChildRecord struct {
	Name string `json:"name"`
	Path string `json:"path"`
	// Run is the first run ID of the child's workflow (stable across its
	// continue-as-new): reports of another run of the same path (a removed
	// one still stopping) are not this child's.
	Run string `json:"run,omitempty"`
	// Digest identifies the child's node as handed down (with inherited
	// vars, its whole subtree for a supervisor), to see changes.
	Digest string `json:"digest"`
	// Status is the child's last report (treestatus.Narrow).
	Status treestatus.Status `json:"status"`
	// Lifecycle is where the child is in its life (Lifecycle:
	// live, deferred, an operator's start, stop or restart queued on it,
	// ended, closed). Carried since supervisor version 3; a carry of an
	// older version holds the booleans it replaced (UnmarshalJSON).
	Lifecycle Lifecycle `json:"lifecycle,omitempty"`
	// WantGeneration is the generation last sent to the child; until it
	// reports it, the child counts as not yet at its desired state.
	WantGeneration int64 `json:"wantGeneration,omitempty"`
	// Node is a deferred child's whole node, kept to start it.
	Node *spec.Node `json:"node,omitempty"`
	// SeenTerminations is the child's Terminations already answered;
	// unseenTerminations for a child found running (adopted): its first
	// report sets it, its past ends are not new.
	SeenTerminations int `json:"seenTerminations,omitempty"`
	// ReportSeq is the newest report applied; older ones are stale.
	ReportSeq int64 `json:"reportSeq,omitempty"`
	// StartedAt is when this supervisor started the child's workflow, until
	// the child's first report: while set (for SlotHold at most)
	// the child holds a slot of the start window (supervisor version 6).
	StartedAt time.Time `json:"startedAt,omitzero"`
	// UntilStarted: a child supervisor started with ReportStarted, whose
	// slot is held until its record says SubtreeStarted (version 7).
	UntilStarted bool `json:"untilStarted,omitempty"`
}

// legacyChildFlags are the booleans a ChildRecord carried up to supervisor
// version 2, in place of Lifecycle and unseenTerminations.
type legacyChildFlags struct {
	Ended       bool `json:"ended,omitempty"`
	Closed      bool `json:"closed,omitempty"`
	Deferred    bool `json:"deferred,omitempty"`
	Held        bool `json:"held,omitempty"`
	PendingStop bool `json:"pendingStop,omitempty"`
	Restart     bool `json:"restart,omitempty"`
	Adopted     bool `json:"adopted,omitempty"`
}

// UnmarshalJSON reads a record of any build: one written before Lifecycle
// (supervisor version 2 or older) has its booleans read as the lifecycle
// they meant (FromFlags), so that a run carried over by an older
// build goes on exactly where it was.
func (r *ChildRecord) UnmarshalJSON(b []byte) error {
	type plain ChildRecord // without this method
	var both struct {
		plain
		legacyChildFlags
	}
	if err := json.Unmarshal(b, &both); err != nil {
		return err
	}
	*r = ChildRecord(both.plain)
	f := both.legacyChildFlags
	if r.Lifecycle == Live {
		r.Lifecycle = FromFlags(f.Ended, f.Closed, f.Deferred, f.Held, f.PendingStop, f.Restart)
	}
	if f.Adopted {
		r.SeenTerminations = UnseenTerminations
	}
	return nil
}

// IsSupervisor says whether the child is a supervisor (as it reported).
func (r ChildRecord) IsSupervisor() bool { return r.Status.Kind == spec.KindSupervisor }

// Gone: the child's workflow is not there to be asked anything.
func (r ChildRecord) Gone() bool { return r.Lifecycle.Gone() }

// Step moves the child's lifecycle by the event (Step).
func (r *ChildRecord) Step(e ChildEvent) { r.Lifecycle = Step(r.Lifecycle, e) }

// UpdateTarget says whether the child's change (from prev to next, both as
// handed down) is rolled out by a rolling update: a worker whose service
// runs, and whose change restarts it. What restarts nothing goes at once.
func UpdateTarget(rec ChildRecord, prev, next spec.Node) bool {
	if rec.IsSupervisor() || next.IsSupervisor() || next.IsJob() || prev.IsJob() || rec.Lifecycle.Gone() || prev.Kind == "" {
		return false
	}
	switch rec.Status.State {
	case string(tick.Running), string(tick.Starting):
	default:
		return false
	}
	if next.Resolved().Desired == spec.DesiredStopped {
		return false // stopping it is not an update
	}
	return spec.Restarts(prev, next)
}
