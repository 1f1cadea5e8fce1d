package supervise

import (
	"bytes"
	"encoding/json"
	"slices"
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
	// NodeInSpec: Node was left out of a continue-as-new's carry, as the
	// carried spec's child of this name holds it whole (LeanCarry); the
	// next run puts it back (RestoreNodes). Supervisor version 13.
	NodeInSpec bool `json:"nodeInSpec,omitempty"`
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

// LeanCarry is recs as a continue-as-new carries them: a deferred
// worker's Node that is the spec's child of its name, byte for byte, is
// left out (NodeInSpec), since the carried spec holds it. Each deferred
// child kept its node twice: a level of a thousand workers waiting on
// one dependency carried its 1.4 MiB spec twice, past the 2 MiB a
// continue-as-new may carry, and the server ended the supervisor. A
// supervisor's Node (its subtree, which the pruned spec lacks) and a node
// that differs from the spec's are kept. recs is not changed.
func LeanCarry(recs []ChildRecord, children []spec.Node) []ChildRecord {
	out := slices.Clone(recs)
	for i := range out {
		r := &out[i]
		if r.Node == nil || r.Lifecycle != Deferred || r.Node.IsSupervisor() {
			continue
		}
		j := slices.IndexFunc(children, func(c spec.Node) bool { return c.Name == r.Name })
		if j < 0 {
			continue
		}
		kept, err1 := json.Marshal(r.Node)
		inSpec, err2 := json.Marshal(children[j])
		if err1 == nil && err2 == nil && bytes.Equal(kept, inSpec) {
			r.Node, r.NodeInSpec = nil, true
		}
	}
	return out
}

// RestoreNodes puts back in recs (in place) the nodes LeanCarry left out,
// from the carried spec's children. A record whose child is no longer in
// the spec (it cannot be: the spec and the records are carried together)
// keeps no node.
func RestoreNodes(recs []ChildRecord, children []spec.Node) {
	for i := range recs {
		r := &recs[i]
		if !r.NodeInSpec {
			continue
		}
		r.NodeInSpec = false
		if j := slices.IndexFunc(children, func(c spec.Node) bool { return c.Name == r.Name }); j >= 0 {
			n := children[j]
			r.Node = &n
		}
	}
}

// TrimForCarry cuts what each record's Status holds for display only (the
// child's reason and last error, its stale copies, usage, notify status,
// update, job and failure rows), for a continue-as-new whose input would
// pass what the server takes: each report is bounded, but a thousand
// children's reports padded by hand (up to 8 KiB each) beside a large
// spec were not. What the supervisor decides from (state, desired,
// generation, terminations, sequence numbers, flags) stays; the child's
// next report fills the rest again. recs is not changed.
func TrimForCarry(recs []ChildRecord) []ChildRecord {
	out := slices.Clone(recs)
	for i := range out {
		st := &out[i].Status
		st.Reason, st.LastAction.Error = "", ""
		st.StaleCopies, st.Usage, st.TaskFailing, st.Stale, st.NotifyStatus = nil, nil, nil, "", ""
		st.Update, st.Job = nil, nil
	}
	return out
}
