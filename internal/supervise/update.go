package supervise

import (
	"fmt"
	"time"

	"github.com/steward-sh/steward/internal/spec"
	"github.com/steward-sh/steward/internal/tick"
)

// Updates: a spec change that restarts workers, rolled out under the
// supervisor's update policy (spec.UpdatePolicy states the policy and its
// defaults).
//
// An apply hands a supervisor its new spec. What restarts nothing (a
// child supervisor's spec, a worker's timeouts, desired state or anything
// else its driver does not see, a worker that is not running) is sent at
// once (Reconcile). The workers whose change restarts them become the
// update's targets, in start order: NextUpdate sends each its new node,
// MaxParallel at a time, and counts it updated once it reports the new
// generation, running since after it was sent (its ready probe passed),
// for MinHealthyTime (or completed, or stopped as desired). A target that
// reports the new generation and failed or ended (a termination), or is not
// updated within HealthyDeadline, fails the update, as does an update with
// no target updated for ProgressDeadline: no further target is sent. With
// AutoRevert, the targets already sent get their previous node back, under
// the same policy (state reverting, then reverted; a revert that fails
// ends failed). With Canary N, the first N targets go, and the rest wait
// for Promote (or AutoPromote once the canaries are updated). Pause stops
// sending (what is in flight is still watched); Resume goes on, its
// progress deadline counted anew; Cancel ends the update where it is.
//
// An update is carried in the supervisor's state (across continue-as-new),
// and one of a newer apply replaces it (Replaced): the workers not yet
// updated are targets of the new one, with the node they still run as
// their previous.

// Update states.
const (
	UpdateRolling   = "rolling"
	UpdateCanary    = "awaitingPromotion"
	UpdateReverting = "reverting"
	UpdateComplete  = "complete"
	UpdateFailed    = "failed"
	UpdateReverted  = "reverted"
	UpdateCancelled = "cancelled"
	UpdateReplaced  = "replaced"
)

// TargetPhase is where one target is in the update.
type TargetPhase string

// Target phases.
const (
	TargetPending TargetPhase = "pending"
	TargetSent    TargetPhase = "sent"
	TargetUpdated TargetPhase = "updated"
	TargetFailed  TargetPhase = "failed"
)

// Target is one worker the update restarts.
type Target struct {
	Name  string      `json:"name"`
	Phase TargetPhase `json:"phase"`
	// Digest is the node it is updated to: the new one, or when reverting
	// the previous one.
	Digest string `json:"digest"`
	// Previous is the node it ran before the update touched it, as handed
	// down (its inherited vars in), and PreviousDigest its digest.
	Previous       *spec.Node `json:"previous,omitempty"`
	PreviousDigest string     `json:"previousDigest"`
	// SentAt, Generation and Terminations: when it was sent its node, with
	// which generation, and its terminations then.
	SentAt       time.Time `json:"sentAt,omitzero"`
	Generation   int64     `json:"generation,omitempty"`
	Terminations int       `json:"terminations,omitempty"`
	// HealthyAt: it runs the node, and counts as updated at this time.
	HealthyAt time.Time `json:"healthyAt,omitzero"`
}

// Update is a rolling update in progress, or the last one.
type Update struct {
	Revision int64 `json:"revision,omitempty"`
	// Generation is the supervisor's generation of the spec it rolls out.
	Generation int64               `json:"generation"`
	State      string              `json:"state"`
	Reason     string              `json:"reason,omitempty"`
	Policy     spec.ResolvedUpdate `json:"policy"`
	Targets    []Target            `json:"targets,omitempty"`
	// Progress is when a target was last updated (or the update began or
	// resumed).
	Progress time.Time `json:"progress,omitzero"`
	Promoted bool      `json:"promoted,omitempty"`
	Paused   bool      `json:"paused,omitempty"`
	// Failed names the worker whose failure failed the update.
	Failed string `json:"failed,omitempty"`
}

// Active: the update may still send or watch a target.
func (u *Update) Active() bool {
	return u != nil && (u.State == UpdateRolling || u.State == UpdateCanary || u.State == UpdateReverting)
}

// Counts are the targets updated and in all.
func (u *Update) Counts() (updated, total int) {
	if u == nil {
		return 0, 0
	}
	for _, t := range u.Targets {
		if t.Phase == TargetUpdated {
			updated++
		}
	}
	return updated, len(u.Targets)
}

// Owed lists the children the update still owes their node (pending or
// sent, not yet updated): they count as applying until they are updated.
func (u *Update) Owed() map[string]bool {
	if !u.Active() {
		return nil
	}
	owed := make(map[string]bool, len(u.Targets))
	for _, t := range u.Targets {
		if t.Phase == TargetPending || t.Phase == TargetSent {
			owed[t.Name] = true
		}
	}
	return owed
}

// Holds reports whether the update still owes the named child its node.
func (u *Update) Holds(name string) bool { return u.Owed()[name] }

// MovesNow is, of the moves the supervisor found while the update runs
// (the workers' names; lost says whether one's host is lost), those that
// go at once: off a lost host (its worker is down already), and not a
// reverting update's target (a revert's node is rendered for its old
// host). wait: some wait for the update's end.
func (u *Update) MovesNow(moves []string, lost func(name string) bool) (now []string, wait bool) {
	for _, name := range moves {
		if lost(name) && (!u.Holds(name) || u.State != UpdateReverting) {
			now = append(now, name)
		}
	}
	return now, len(now) < len(moves)
}

// Moved records that the supervisor moved the named target off a lost
// host, sending it its node (digest) with generation at now: a target
// pending or in flight is in flight from now on, its healthy time and
// deadline counted anew, and counts as updated once it runs the node on
// its new host. A lost host's worker is down already: its move does not
// wait for maxParallel, a canary's promotion or its turn. Moved reports
// whether the update took the move; it does not (false) while reverting
// (the node a revert sends is its previous one, rendered for its old
// host: the move waits for the revert's end) or when it does not hold
// the target (updated already, or none of its: the move is the
// supervisor's own).
func (u *Update) Moved(name, digest string, generation int64, terminations int, now time.Time) bool {
	if !u.Active() || u.State == UpdateReverting {
		return false
	}
	for i := range u.Targets {
		t := &u.Targets[i]
		if t.Name != name || (t.Phase != TargetPending && t.Phase != TargetSent) {
			continue
		}
		t.Phase, t.SentAt, t.HealthyAt, t.Terminations = TargetSent, now, time.Time{}, terminations
		t.Generation, t.Digest = generation, digest
		return true
	}
	return false
}

// ShownState is the update's state as status shows it ("paused" while
// paused).
func (u *Update) ShownState() string {
	if u.Active() && u.Paused {
		return "paused"
	}
	return u.State
}

// UpdateChild is what NextUpdate knows of one child, as last reported.
type UpdateChild struct {
	Name         string
	Gone         bool
	State        string
	Desired      string
	Reason       string
	Completed    bool
	Since        time.Time
	Generation   int64
	Terminations int
	// Refused: its host refused its last action's spec, and what it said
	// ("restart refused, running as before: ..."): the service runs on as
	// it was.
	Refused string
}

// UpdateOp is what moves an update.
type UpdateOp int

// Update operations.
const (
	// UpdateTick: a report, a timer: whatever changed.
	UpdateTick UpdateOp = iota
	UpdatePromote
	UpdatePause
	UpdateResume
	UpdateCancel
)

// UpdateCommandKind is what an update asks of the workflow.
type UpdateCommandKind int

const (
	// SendNode: send Child its node (Node; nil: its node in the current
	// spec) with Generation, and record Digest as what it was sent.
	SendNode UpdateCommandKind = iota
	// UpdateEnded: the update ended (State: complete, failed, reverted,
	// cancelled), or failed and began to revert (State failed, Reverting):
	// metrics, notifications, logs.
	UpdateEnded
	// KeepPrevious: the targets in Keep stay on, or go back to, their
	// previous node (Target.Previous): from now on it is their node in the
	// supervisor's spec, what the next update counts as what they run and
	// what a closed one starts with (UpdateSnapshot.KeepPrevious).
	KeepPrevious
)

// UpdateCommand is one thing for the workflow to do.
type UpdateCommand struct {
	Kind       UpdateCommandKind
	Child      string
	Node       *spec.Node
	Digest     string
	Generation int64
	State      string
	Reverting  bool
	Reason     string
	Keep       []Target
}

// UpdateSnapshot is what NextUpdate decides from.
type UpdateSnapshot struct {
	Op       UpdateOp
	Now      time.Time
	Update   Update
	Children []UpdateChild
	// Generation is the supervisor's current generation (a node is sent
	// with it, or past the child's own count).
	Generation int64
	// RevertPastSent: a revert sends a target its previous node with a
	// generation past the one the update sent it (supervisor code version
	// 4: a worker of version 5 reports a new generation only at its
	// action's end, so a late success of the bad spec, reported at the
	// generation the revert reused, counted the target reverted).
	RevertPastSent bool
	// KeepPrevious: a revert's targets, and the targets an update that
	// ends without them never sent, keep their previous node in the spec
	// (the KeepPrevious command; supervisor code version 14). Before, the
	// spec kept the new node, and after a revert the next update took it
	// for what they ran: its own revert put the bad node back on them.
	KeepPrevious bool
	// GenerationBounded: a generation sent past a child's count stops at
	// spec.MaxGeneration (supervisor code version 12; nextGeneration).
	GenerationBounded bool
}

// NextUpdate applies the operation, watches the targets in flight, sends
// what the policy lets go now, and returns the update and the commands.
// An update that is not active is returned as it is.
func NextUpdate(s UpdateSnapshot) (Update, []UpdateCommand) {
	u := s.Update
	if !u.Active() {
		return u, nil
	}
	u.Targets = append([]Target(nil), u.Targets...)
	d := &updater{s: s, u: &u, byName: make(map[string]int, len(s.Children))}
	for i, c := range s.Children {
		d.byName[c.Name] = i
	}
	switch s.Op {
	case UpdatePromote:
		if u.State == UpdateCanary || (u.State == UpdateRolling && u.Policy.Canary > 0) {
			u.Promoted = true
			if u.State == UpdateCanary {
				u.State, u.Progress = UpdateRolling, s.Now
			}
		}
	case UpdatePause:
		u.Paused = true
	case UpdateResume:
		if u.Paused {
			u.Paused, u.Progress = false, s.Now
		}
	case UpdateCancel:
		d.end(UpdateCancelled, "cancelled by the operator")
		return u, d.cmds
	}
	d.watch()
	if u.Active() {
		d.send()
	}
	return u, d.cmds
}

// UpdateWakeAt is when the update must be looked at without an event: a
// target's healthy time or deadline, the progress deadline (zero: never).
func UpdateWakeAt(u *Update) time.Time {
	if !u.Active() {
		return time.Time{}
	}
	var at time.Time
	earliest := func(t time.Time) {
		if !t.IsZero() && (at.IsZero() || t.Before(at)) {
			at = t
		}
	}
	for _, t := range u.Targets {
		if t.Phase != TargetSent {
			continue
		}
		earliest(t.HealthyAt)
		earliest(t.SentAt.Add(u.Policy.HealthyDeadline))
	}
	if !u.Paused && u.State != UpdateCanary {
		earliest(u.Progress.Add(u.Policy.ProgressDeadline))
	}
	return at
}

type updater struct {
	s      UpdateSnapshot
	u      *Update
	cmds   []UpdateCommand
	byName map[string]int // index in s.Children
}

func (d *updater) child(name string) (UpdateChild, bool) {
	if i, ok := d.byName[name]; ok {
		return d.s.Children[i], true
	}
	return UpdateChild{}, false
}

// watch moves the targets in flight: updated, failed, or still waiting.
func (d *updater) watch() {
	u, now := d.u, d.s.Now
	for i := range u.Targets {
		t := &u.Targets[i]
		if t.Phase != TargetSent {
			continue
		}
		c, ok := d.child(t.Name)
		if !ok || c.Gone {
			t.Phase = TargetUpdated // removed or closed: nothing of it to update
			u.Progress = now
			continue
		}
		atNew := c.Generation >= t.Generation
		switch {
		case atNew && (c.Completed || (c.Desired == spec.DesiredStopped && IsDown(c.State))):
			t.Phase, u.Progress = TargetUpdated, now
			continue
		case atNew && u.State != UpdateReverting && (c.State == string(tick.Failed) || c.Terminations > t.Terminations):
			// (A reverting target is judged by its deadline only: the end
			// of the bad spec's last attempt may reach it after the
			// previous spec did, counted at the revert's generation.)
			d.fail(t.Name, fmt.Sprintf("%s %s with the new spec: %s", t.Name, endedWord(c), firstClause(c.Reason)))
			return
		case atNew && c.State == string(tick.Running) && !c.Since.Before(t.SentAt) && c.Refused != "" && u.State != UpdateReverting:
			// Running again since it was sent, after its host refused
			// the new spec: the old instance runs on, which is no update.
			// (A refusal from before, still its last action while the
			// restart waits, has its running since before.)
			d.fail(t.Name, fmt.Sprintf("%s: %s", t.Name, c.Refused))
			return
		case atNew && c.State == string(tick.Running) && !c.Since.Before(t.SentAt):
			if t.HealthyAt.IsZero() || c.Since.Add(u.Policy.MinHealthyTime).After(t.HealthyAt) {
				t.HealthyAt = c.Since.Add(u.Policy.MinHealthyTime)
			}
			if !now.Before(t.HealthyAt) {
				t.Phase, u.Progress = TargetUpdated, now
				continue
			}
		default:
			t.HealthyAt = time.Time{} // not running (any more): its healthy time starts over
		}
		if !now.Before(t.SentAt.Add(u.Policy.HealthyDeadline)) {
			d.fail(t.Name, fmt.Sprintf("%s not updated within %s (it is %s: %s)", t.Name, u.Policy.HealthyDeadline, c.State, firstClause(c.Reason)))
			return
		}
	}
	if updated, total := u.Counts(); updated == total {
		if u.State == UpdateReverting {
			d.end(UpdateReverted, "reverted: "+u.Reason)
		} else {
			d.end(UpdateComplete, "")
		}
		return
	}
	if !u.Paused && u.State != UpdateCanary && !now.Before(u.Progress.Add(u.Policy.ProgressDeadline)) {
		d.fail("", fmt.Sprintf("no worker updated for %s", u.Policy.ProgressDeadline))
	}
}

func endedWord(c UpdateChild) string {
	if c.State == string(tick.Failed) {
		return "failed"
	}
	return "crashed"
}

// send sends the pending targets the policy lets go now.
func (d *updater) send() {
	u := d.u
	if u.Paused || u.State == UpdateCanary {
		return
	}
	inflight := 0
	for _, t := range u.Targets {
		if t.Phase == TargetSent {
			inflight++
		}
	}
	limit := len(u.Targets)
	if u.State == UpdateRolling && u.Policy.Canary > 0 && !u.Promoted {
		limit = u.Policy.Canary
	}
	for i := range u.Targets {
		t := &u.Targets[i]
		if i >= limit {
			break
		}
		if t.Phase != TargetPending || inflight >= u.Policy.MaxParallel {
			continue
		}
		c, _ := d.child(t.Name)
		sent := t.Generation // a revert's target: the generation the update sent it (RevertPastSent)
		t.Phase, t.SentAt, t.HealthyAt, t.Terminations = TargetSent, d.s.Now, time.Time{}, c.Terminations
		t.Generation = d.s.Generation
		if c.Generation >= t.Generation {
			t.Generation = nextGeneration(c.Generation, d.s.GenerationBounded) // past its own count: it counts as applying until it takes it
		}
		if sent >= t.Generation {
			t.Generation = nextGeneration(sent, d.s.GenerationBounded)
		}
		cmd := UpdateCommand{Kind: SendNode, Child: t.Name, Digest: t.Digest, Generation: t.Generation}
		if u.State == UpdateReverting {
			cmd.Node = t.Previous
		}
		d.cmds = append(d.cmds, cmd)
		inflight++
	}
	if limit < len(u.Targets) {
		// The canaries went; once all are updated, the rest wait to be
		// promoted (or go at once with autoPromote).
		for _, t := range u.Targets[:limit] {
			if t.Phase != TargetUpdated {
				return
			}
		}
		if u.Policy.AutoPromote {
			u.Promoted = true
			d.send()
			return
		}
		u.State = UpdateCanary
		u.Reason = fmt.Sprintf("%d canaries updated: waiting to be promoted (starter promote)", limit)
	}
}

// fail fails the update on the named target (empty: no progress), and
// begins the revert when the policy asks for one.
func (d *updater) fail(name, reason string) {
	u := d.u
	for i := range u.Targets {
		if u.Targets[i].Name == name {
			u.Targets[i].Phase = TargetFailed
		}
	}
	u.Failed = name
	if u.State == UpdateReverting {
		d.end(UpdateFailed, "revert failed: "+reason)
		return
	}
	if !u.Policy.AutoRevert {
		d.end(UpdateFailed, reason)
		return
	}
	// The targets it touched get their previous node back; the others
	// never changed and leave the update. All of them keep their previous
	// node in the spec.
	d.keep(func(Target) bool { return true })
	var back []Target
	for _, t := range u.Targets {
		if t.Phase == TargetPending {
			continue
		}
		r := Target{Name: t.Name, Phase: TargetPending, Digest: t.PreviousDigest, Previous: t.Previous, PreviousDigest: t.PreviousDigest}
		if d.s.RevertPastSent {
			r.Generation = t.Generation // send() goes past it
		}
		back = append(back, r)
	}
	u.Targets, u.State, u.Reason, u.Progress, u.Paused = back, UpdateReverting, reason, d.s.Now, false
	d.cmds = append(d.cmds, UpdateCommand{Kind: UpdateEnded, State: UpdateFailed, Reverting: true, Reason: reason})
	d.send()
}

// end ends the update in state; its targets' previous nodes are dropped
// (an ended update is kept only to be shown).
func (d *updater) end(state, reason string) {
	u := d.u
	if u.State != UpdateReverting {
		// What it never sent runs its previous node (a revert kept its
		// targets' when it began).
		d.keep(func(t Target) bool { return t.Phase == TargetPending })
	}
	u.State, u.Reason, u.Paused = state, reason, false
	for i := range u.Targets {
		u.Targets[i].Previous = nil
	}
	d.cmds = append(d.cmds, UpdateCommand{Kind: UpdateEnded, State: state, Reason: reason})
}

// keep asks the workflow to keep, in its spec, the previous node of the
// targets which (KeepPrevious).
func (d *updater) keep(which func(Target) bool) {
	if !d.s.KeepPrevious {
		return
	}
	var keep []Target
	for _, t := range d.u.Targets {
		if t.Previous != nil && which(t) {
			keep = append(keep, t)
		}
	}
	if len(keep) > 0 {
		d.cmds = append(d.cmds, UpdateCommand{Kind: KeepPrevious, Keep: keep})
	}
}

// NewUpdate begins an update of targets (in start order) under policy,
// replacing the one in progress (old, nil if none): a target old still
// owed its node (pending) keeps the previous node old kept for it, since
// that is what it still runs. It returns the new update and old as
// replaced.
func NewUpdate(targets []Target, policy spec.ResolvedUpdate, revision, generation int64, now time.Time, old *Update) (Update, *Update) {
	u := Update{Revision: revision, Generation: generation, State: UpdateRolling, Policy: policy, Progress: now}
	for _, t := range targets {
		t.Phase = TargetPending
		if old.Active() && old.State != UpdateReverting {
			for _, o := range old.Targets {
				if o.Name == t.Name && o.Phase == TargetPending {
					t.Previous, t.PreviousDigest = o.Previous, o.PreviousDigest
				}
			}
		}
		u.Targets = append(u.Targets, t)
	}
	if old.Active() {
		r := *old
		r.State, r.Reason, r.Paused = UpdateReplaced, fmt.Sprintf("replaced by generation %d", generation), false
		r.Targets = nil
		return u, &r
	}
	return u, nil
}
