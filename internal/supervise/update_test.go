package supervise

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/steward-sh/steward/internal/spec"
)

func policy(maxParallel int) spec.ResolvedUpdate {
	return spec.ResolvedUpdate{MaxParallel: maxParallel, HealthyDeadline: 5 * time.Minute, ProgressDeadline: 10 * time.Minute}
}

// newRolling is an update of the named workers, each running generation 1.
func newRolling(p spec.ResolvedUpdate, names ...string) (Update, []UpdateChild) {
	var targets []Target
	var kids []UpdateChild
	for _, n := range names {
		prev := spec.Node{Name: n, Kind: spec.KindStub}
		targets = append(targets, Target{Name: n, Digest: "new-" + n, Previous: &prev, PreviousDigest: "old-" + n})
		kids = append(kids, UpdateChild{Name: n, State: "running", Desired: "running", Since: t0.Add(-time.Hour), Generation: 1})
	}
	u, replaced := NewUpdate(targets, p, 2, 2, t0, nil)
	if replaced != nil {
		panic("nothing to replace")
	}
	return u, kids
}

func sent(cmds []UpdateCommand) []string {
	var out []string
	for _, c := range cmds {
		if c.Kind == SendNode {
			out = append(out, c.Child)
		}
	}
	return out
}

func ended(cmds []UpdateCommand) []string {
	var out []string
	for _, c := range cmds {
		if c.Kind == UpdateEnded {
			out = append(out, c.State)
		}
	}
	return out
}

// restarted is the child after it took generation 2 and ran again at at.
func restarted(c UpdateChild, at time.Time) UpdateChild {
	c.Generation, c.State, c.Since = 2, "running", at
	return c
}

func step(u Update, kids []UpdateChild, now time.Time, op UpdateOp) (Update, []UpdateCommand) {
	return NextUpdate(UpdateSnapshot{Op: op, Now: now, Update: u, Children: kids, Generation: 2})
}

// The rolling update, step by step: maxParallel at a time, in order, each
// updated once it runs the new spec, and complete when all are.
func TestUpdate_RollsMaxParallelAtATime(t *testing.T) {
	u, kids := newRolling(policy(2), "a", "b", "c", "d")
	u, cmds := step(u, kids, t0, UpdateTick)
	require.Equal(t, []string{"a", "b"}, sent(cmds))
	require.Equal(t, int64(2), cmds[0].Generation)
	require.Equal(t, "new-a", cmds[0].Digest)
	require.Nil(t, cmds[0].Node, "the current spec's node")
	require.True(t, u.Holds("c"), "c is owed its node")

	// a's old instance still runs at generation 2: not counted.
	kids[0].Generation = 2
	u, cmds = step(u, kids, t0.Add(time.Second), UpdateTick)
	require.Empty(t, cmds)
	// a restarted: updated, and c goes.
	kids[0] = restarted(kids[0], t0.Add(2*time.Second))
	u, cmds = step(u, kids, t0.Add(3*time.Second), UpdateTick)
	require.Equal(t, []string{"c"}, sent(cmds))
	updated, total := u.Counts()
	require.Equal(t, [2]int{1, 4}, [2]int{updated, total})

	for i := range kids[:3] {
		kids[i] = restarted(kids[i], t0.Add(4*time.Second))
	}
	u, cmds = step(u, kids, t0.Add(5*time.Second), UpdateTick)
	require.Equal(t, []string{"d"}, sent(cmds), "d is sent after the others are updated")
	require.Equal(t, UpdateRolling, u.State)
	kids[3] = restarted(kids[3], t0.Add(6*time.Second))
	u, cmds = step(u, kids, t0.Add(7*time.Second), UpdateTick)
	require.Equal(t, []string{UpdateComplete}, ended(cmds))
	require.Equal(t, UpdateComplete, u.State)
	require.False(t, u.Active())
	require.False(t, u.Holds("d"))
	require.Nil(t, u.Targets[0].Previous, "an ended update keeps no nodes")
	u2, cmds := step(u, kids, t0.Add(8*time.Second), UpdateTick)
	require.Equal(t, u, u2, "an ended update does not move")
	require.Empty(t, cmds)
}

// minHealthyTime: a worker counts as updated once it has run for it; the
// update wakes then.
func TestUpdate_MinHealthyTime(t *testing.T) {
	p := policy(1)
	p.MinHealthyTime = 10 * time.Second
	u, kids := newRolling(p, "a", "b")
	u, _ = step(u, kids, t0, UpdateTick)
	kids[0] = restarted(kids[0], t0.Add(time.Second))
	u, cmds := step(u, kids, t0.Add(2*time.Second), UpdateTick)
	require.Empty(t, cmds)
	require.Equal(t, t0.Add(11*time.Second), UpdateWakeAt(&u))
	// It crashed and runs again: its healthy time starts over.
	kids[0].State = "backoff"
	u, _ = step(u, kids, t0.Add(5*time.Second), UpdateTick)
	kids[0].State, kids[0].Since = "running", t0.Add(6*time.Second)
	u, cmds = step(u, kids, t0.Add(11*time.Second), UpdateTick)
	require.Empty(t, cmds, "6s + 10s not reached")
	u, cmds = step(u, kids, t0.Add(16*time.Second), UpdateTick)
	require.Equal(t, []string{"b"}, sent(cmds))
}

// What fails an update, and what a failed update does without and with
// autoRevert.
func TestUpdate_Failures(t *testing.T) {
	for _, c := range []struct {
		name   string
		break_ func(kids []UpdateChild) []UpdateChild
		now    time.Duration
		reason string
	}{
		{"failed with the new spec", func(k []UpdateChild) []UpdateChild {
			k[0].Generation, k[0].State, k[0].Reason = 2, "failed", "start failed: exec: no such file; 3 attempts"
			return k
		}, time.Second, "a failed with the new spec: start failed: exec: no such file"},
		{"crashed with the new spec", func(k []UpdateChild) []UpdateChild {
			k[0].Generation, k[0].State, k[0].Terminations, k[0].Reason = 2, "backoff", 1, "crashed (exit 1)"
			return k
		}, time.Second, "a crashed with the new spec: crashed (exit 1)"},
		{"not healthy within healthyDeadline", func(k []UpdateChild) []UpdateChild {
			k[0].Generation, k[0].State, k[0].Reason = 2, "starting", "waiting for the ready probe"
			return k
		}, 5 * time.Minute, "a not updated within 5m0s (it is starting: waiting for the ready probe)"},
		// Regression: a refused restart leaves the old instance running,
		// with a new since; it was counted updated.
		{"refused by its host", func(k []UpdateChild) []UpdateChild {
			k[0].Generation, k[0].State, k[0].Since = 2, "running", t0.Add(time.Second)
			k[0].Refused = "restart refused, running as before: policy p: command /bin/sh is not allowed"
			return k
		}, time.Second, "a: restart refused, running as before: policy p: command /bin/sh is not allowed"},
	} {
		t.Run(c.name, func(t *testing.T) {
			u, kids := newRolling(policy(2), "a", "b", "c")
			u, _ = step(u, kids, t0, UpdateTick)
			kids = c.break_(kids)
			f, cmds := step(u, kids, t0.Add(c.now), UpdateTick)
			require.Equal(t, UpdateFailed, f.State)
			require.Equal(t, c.reason, f.Reason)
			require.Equal(t, "a", f.Failed)
			require.Empty(t, sent(cmds), "no further worker is touched")
			require.Equal(t, []string{UpdateFailed}, ended(cmds))
			require.False(t, f.Holds("c"), "a failed update owes nothing")

			// With autoRevert: the touched ones (a, b) get their previous
			// node back, c is left alone.
			u.Policy.AutoRevert = true
			r, cmds := step(u, kids, t0.Add(c.now), UpdateTick)
			require.Equal(t, UpdateReverting, r.State)
			require.Equal(t, []string{"a", "b"}, sent(cmds))
			require.Equal(t, "a", cmds[1].Child)
			require.Equal(t, "old-a", cmds[1].Digest)
			require.Equal(t, "a", cmds[1].Node.Name, "the previous node")
			require.Len(t, r.Targets, 2)
			for i := range kids[:2] {
				kids[i].Generation, kids[i].State, kids[i].Since = 3, "running", t0.Add(c.now+time.Second)
			}
			r, cmds = step(r, kids, t0.Add(c.now+2*time.Second), UpdateTick)
			require.Equal(t, UpdateReverted, r.State)
			require.Equal(t, []string{UpdateReverted}, ended(cmds))
			require.Contains(t, r.Reason, "reverted: "+c.reason)
		})
	}
}

// A refusal from before the update (the last action of a worker whose
// restart has not begun yet) fails nothing; the restart then counts.
func TestUpdate_ARefusalFromBeforeIsNoFailure(t *testing.T) {
	u, kids := newRolling(policy(1), "a")
	u, _ = step(u, kids, t0, UpdateTick)
	kids[0].Generation, kids[0].Refused = 2, "restart refused, running as before: policy p"
	u, cmds := step(u, kids, t0.Add(time.Second), UpdateTick)
	require.Equal(t, UpdateRolling, u.State)
	require.Empty(t, ended(cmds))
	kids[0] = restarted(kids[0], t0.Add(2*time.Second))
	kids[0].Refused = ""
	u, cmds = step(u, kids, t0.Add(3*time.Second), UpdateTick)
	require.Equal(t, UpdateComplete, u.State)
	require.Equal(t, []string{UpdateComplete}, ended(cmds))
}

// A revert whose worker does not come back fails the update for good.
func TestUpdate_RevertThatFails(t *testing.T) {
	p := policy(1)
	p.AutoRevert = true
	u, kids := newRolling(p, "a")
	u, _ = step(u, kids, t0, UpdateTick)
	kids[0].Generation, kids[0].State = 2, "failed"
	u, _ = step(u, kids, t0.Add(time.Second), UpdateTick)
	require.Equal(t, UpdateReverting, u.State)
	// The bad spec's last attempt ends after the revert was sent: not held
	// against the revert.
	kids[0].Generation, kids[0].State, kids[0].Terminations = 3, "backoff", 1
	u, cmds := step(u, kids, t0.Add(2*time.Second), UpdateTick)
	require.Equal(t, UpdateReverting, u.State)
	require.Empty(t, cmds)
	u, cmds = step(u, kids, t0.Add(time.Second+5*time.Minute), UpdateTick)
	require.Equal(t, UpdateFailed, u.State)
	require.Contains(t, u.Reason, "revert failed: a not updated within 5m0s")
	require.Equal(t, []string{UpdateFailed}, ended(cmds))
}

// No worker updated within progressDeadline fails the update.
func TestUpdate_ProgressDeadline(t *testing.T) {
	p := policy(1)
	p.ProgressDeadline, p.HealthyDeadline = time.Minute, time.Hour
	u, kids := newRolling(p, "a")
	u, _ = step(u, kids, t0, UpdateTick)
	require.Equal(t, t0.Add(time.Minute), UpdateWakeAt(&u))
	u, _ = step(u, kids, t0.Add(time.Minute), UpdateTick)
	require.Equal(t, UpdateFailed, u.State)
	require.Equal(t, "no worker updated for 1m0s", u.Reason)
	require.Empty(t, u.Failed)
}

// Canaries go first; the rest wait for promote (or autoPromote).
func TestUpdate_CanaryAndPromote(t *testing.T) {
	p := policy(2)
	p.Canary = 1
	u, kids := newRolling(p, "a", "b", "c")
	u, cmds := step(u, kids, t0, UpdateTick)
	require.Equal(t, []string{"a"}, sent(cmds), "only the canary")
	kids[0] = restarted(kids[0], t0.Add(time.Second))
	u, cmds = step(u, kids, t0.Add(2*time.Second), UpdateTick)
	require.Empty(t, cmds)
	require.Equal(t, UpdateCanary, u.State)
	require.Equal(t, UpdateCanary, u.ShownState())
	require.True(t, UpdateWakeAt(&u).IsZero(), "no deadline while it waits for the operator")
	u, cmds = step(u, kids, t0.Add(time.Hour), UpdateTick)
	require.Equal(t, UpdateCanary, u.State, "it waits as long as it takes")
	require.Empty(t, cmds)
	u, cmds = step(u, kids, t0.Add(time.Hour), UpdatePromote)
	require.Equal(t, []string{"b", "c"}, sent(cmds))
	require.Equal(t, UpdateRolling, u.State)

	p.AutoPromote = true
	u, kids = newRolling(p, "a", "b", "c")
	u, _ = step(u, kids, t0, UpdateTick)
	kids[0] = restarted(kids[0], t0.Add(time.Second))
	_, cmds = step(u, kids, t0.Add(2*time.Second), UpdateTick)
	require.Equal(t, []string{"b", "c"}, sent(cmds), "promoted by itself")
}

// Pause stops sending (what is in flight is still watched), resume goes
// on, cancel ends it where it is.
func TestUpdate_PauseResumeCancel(t *testing.T) {
	u, kids := newRolling(policy(1), "a", "b", "c")
	u, _ = step(u, kids, t0, UpdateTick)
	u, _ = step(u, kids, t0.Add(time.Second), UpdatePause)
	require.Equal(t, "paused", u.ShownState())
	kids[0] = restarted(kids[0], t0.Add(2*time.Second))
	u, cmds := step(u, kids, t0.Add(3*time.Second), UpdateTick)
	require.Empty(t, sent(cmds), "paused")
	updated, _ := u.Counts()
	require.Equal(t, 1, updated, "what was in flight is watched")
	u, cmds = step(u, kids, t0.Add(time.Hour), UpdateTick)
	require.Equal(t, UpdateRolling, u.State, "no progress deadline while paused")
	u, cmds = step(u, kids, t0.Add(time.Hour), UpdateResume)
	require.Equal(t, []string{"b"}, sent(cmds))
	require.Equal(t, t0.Add(time.Hour), u.Progress, "its progress deadline counted anew")
	u, cmds = step(u, kids, t0.Add(time.Hour), UpdateCancel)
	require.Equal(t, UpdateCancelled, u.State)
	require.Equal(t, []string{UpdateCancelled}, ended(cmds))
	require.Empty(t, sent(cmds))
}

// A child that left (removed, closed) is nothing to update; a child that
// counted past the supervisor's generation is sent one past its own.
func TestUpdate_GoneAndStrayedChildren(t *testing.T) {
	u, kids := newRolling(policy(2), "a", "b")
	kids[1].Generation = 5
	u, cmds := step(u, kids, t0, UpdateTick)
	require.Equal(t, int64(6), cmds[1].Generation)
	kids[0].Gone = true
	kids[1] = restarted(kids[1], t0.Add(time.Second))
	kids[1].Generation = 6
	u, cmds = step(u, kids, t0.Add(2*time.Second), UpdateTick)
	require.Equal(t, UpdateComplete, u.State)
	require.Equal(t, []string{UpdateComplete}, ended(cmds))
}

// A new apply replaces the update in progress: a worker it still owed its
// node keeps the node it runs as its previous.
func TestUpdate_ReplacedByANewApply(t *testing.T) {
	u, kids := newRolling(policy(1), "a", "b")
	u, _ = step(u, kids, t0, UpdateTick) // a sent, b pending
	newer := []Target{{Name: "a", Digest: "newer-a", PreviousDigest: "new-a", Previous: &spec.Node{Name: "a", Kind: "stub", Vars: map[string]string{"v": "2"}}},
		{Name: "b", Digest: "newer-b", PreviousDigest: "new-b", Previous: &spec.Node{Name: "b", Kind: "stub", Vars: map[string]string{"v": "2"}}}}
	n, replaced := NewUpdate(newer, policy(1), 3, 3, t0.Add(time.Minute), &u)
	require.Equal(t, UpdateReplaced, replaced.State)
	require.Equal(t, "replaced by generation 3", replaced.Reason)
	require.Equal(t, UpdateRolling, n.State)
	require.Equal(t, "new-a", n.Targets[0].PreviousDigest, "a was sent: it runs what it was sent")
	require.Equal(t, "old-b", n.Targets[1].PreviousDigest, "b was not: it runs what it ran")
	require.Nil(t, n.Targets[1].Previous.Vars)
	require.Equal(t, TargetPending, n.Targets[0].Phase)
}

// Regression (review of worker version 5, which reports a new generation
// only at its action's end): a revert sent b its previous node with the
// generation the update had sent it, so b's late success with the bad
// spec counted as its revert. With RevertPastSent the revert goes past it.
func TestUpdate_ARevertGoesPastTheGenerationItUndoes(t *testing.T) {
	for _, past := range []bool{false, true} {
		u, kids := newRolling(policy(2), "a", "b")
		u.Policy.AutoRevert = true
		u, cmds := NextUpdate(UpdateSnapshot{Now: t0, Update: u, Children: kids, Generation: 2, RevertPastSent: past})
		require.Equal(t, []string{"a", "b"}, sent(cmds))
		forward := cmds[1].Generation
		kids[0].Generation, kids[0].State, kids[0].Reason = 2, "failed", "start failed"
		r, cmds := NextUpdate(UpdateSnapshot{Now: t0.Add(time.Second), Update: u, Children: kids, Generation: 2, RevertPastSent: past})
		require.Equal(t, UpdateReverting, r.State)
		require.Equal(t, []string{"a", "b"}, sent(cmds))
		reverted := cmds[len(cmds)-1]
		require.Equal(t, "b", reverted.Child)
		if !past {
			require.Equal(t, forward, reverted.Generation, "version 3: the same generation")
			continue
		}
		require.Greater(t, reverted.Generation, forward)
		// b's bad restart succeeds late, reported at the forward
		// generation: no revert of it.
		kids[1].Generation, kids[1].State, kids[1].Since = forward, "running", t0.Add(2*time.Second)
		r, _ = NextUpdate(UpdateSnapshot{Now: t0.Add(3 * time.Second), Update: r, Children: kids, Generation: 2, RevertPastSent: past})
		require.Equal(t, UpdateReverting, r.State, "b is not back yet")
	}
}

// A target moved off a lost host (Moved) is in flight from the move: a
// pending one goes past maxParallel and its turn, one in flight has its
// healthy clock start over; either counts as updated once it runs the
// move's generation. A revert's target and one updated already are not
// the update's to move.
func TestUpdate_AMoveOffALostHostIsInFlightFromTheMove(t *testing.T) {
	u, kids := newRolling(policy(1), "a", "b", "c")
	u, cmds := step(u, kids, t0, UpdateTick)
	require.Equal(t, []string{"a"}, sent(cmds))

	at := t0.Add(time.Minute)
	require.True(t, u.Moved("c", "new-c@h2", 3, 0, at), "pending: the move is its send")
	require.True(t, u.Moved("a", "new-a@h2", 3, 0, at), "in flight: sent again")
	require.False(t, u.Moved("x", "d", 3, 0, at), "not a target")
	for _, tg := range u.Targets {
		switch tg.Name {
		case "a", "c":
			require.Equal(t, TargetSent, tg.Phase, tg.Name)
			require.Equal(t, at, tg.SentAt, tg.Name)
			require.EqualValues(t, 3, tg.Generation, tg.Name)
		case "b":
			require.Equal(t, TargetPending, tg.Phase)
		}
	}
	u, cmds = step(u, kids, at, UpdateTick)
	require.Empty(t, sent(cmds), "two in flight, over maxParallel 1: b waits")

	// a runs generation 2 only (the send before the move): not updated;
	// c runs the move's generation since after it: updated.
	kids[0] = restarted(kids[0], at.Add(time.Second))
	kids[2].Generation, kids[2].Since = 3, at.Add(2*time.Second)
	u, cmds = step(u, kids, at.Add(3*time.Second), UpdateTick)
	require.Empty(t, sent(cmds))
	updated, _ := u.Counts()
	require.Equal(t, 1, updated, "c, at the move's generation")
	require.False(t, u.Moved("c", "new-c@h3", 4, 0, at), "updated already: the move is the supervisor's own")

	u.State = UpdateReverting
	require.False(t, u.Moved("a", "new-a@h3", 4, 0, at), "a revert's target waits for the revert")
}

// Of the moves found while an update runs, those off a lost host go at
// once, but not a reverting update's targets: the others wait for its end.
func TestUpdate_MovesNowOffALostHostOnly(t *testing.T) {
	u, _ := newRolling(policy(1), "a", "b")
	lost := func(name string) bool { return name != "up" }
	now, wait := u.MovesNow([]string{"a", "up", "free"}, lost)
	require.Equal(t, []string{"a", "free"}, now)
	require.True(t, wait, "the move off the host that is up waits")
	now, wait = u.MovesNow([]string{"a"}, lost)
	require.Equal(t, []string{"a"}, now)
	require.False(t, wait)

	u.State = UpdateReverting
	now, wait = u.MovesNow([]string{"a", "free"}, lost)
	require.Equal(t, []string{"free"}, now, "a revert's target waits; one not its goes")
	require.True(t, wait)
}

func kept(cmds []UpdateCommand) []string {
	var out []string
	for _, c := range cmds {
		if c.Kind == KeepPrevious {
			for _, t := range c.Keep {
				out = append(out, t.Name+"="+t.Previous.Name)
			}
		}
	}
	return out
}

// Regression (the soak): after a revert the spec kept the new node, and
// the next update took it for what its targets ran. With KeepPrevious a
// revert keeps every target's previous node (those it never sent too), and
// an update that ends otherwise keeps it for those it never sent.
func TestUpdate_WhatTargetsRunIsKeptInTheSpec(t *testing.T) {
	keepStep := func(u Update, kids []UpdateChild, now time.Time, op UpdateOp, keep bool) (Update, []UpdateCommand) {
		return NextUpdate(UpdateSnapshot{Op: op, Now: now, Update: u, Children: kids, Generation: 2, KeepPrevious: keep})
	}
	for _, keep := range []bool{false, true} {
		p := policy(1)
		p.AutoRevert = true
		u, kids := newRolling(p, "a", "b", "c")
		u, _ = keepStep(u, kids, t0, UpdateTick, keep)
		kids[0].Generation, kids[0].State = 2, "failed"
		r, cmds := keepStep(u, kids, t0.Add(time.Second), UpdateTick, keep)
		require.Equal(t, UpdateReverting, r.State)
		if !keep {
			require.Empty(t, kept(cmds), "version 13 keeps the new node in the spec")
			continue
		}
		require.Equal(t, []string{"a=a", "b=b", "c=c"}, kept(cmds), "a reverts, b and c were never sent: all run their previous node")

		// Cancelled: what it never sent keeps its previous node; what it
		// sent runs the new one.
		u, kids = newRolling(policy(1), "a", "b")
		u, _ = keepStep(u, kids, t0, UpdateTick, keep)
		c, cmds := keepStep(u, kids, t0.Add(time.Second), UpdateCancel, keep)
		require.Equal(t, UpdateCancelled, c.State)
		require.Equal(t, []string{"b=b"}, kept(cmds))

		// A revert that fails keeps nothing more (its start kept them all).
		kids[0].Generation, kids[0].State = 2, "failed"
		u.Policy.AutoRevert = true
		r, _ = keepStep(u, kids, t0.Add(time.Second), UpdateTick, keep)
		require.Equal(t, UpdateReverting, r.State)
		f, cmds := keepStep(r, kids, t0.Add(time.Second+5*time.Minute), UpdateTick, keep)
		require.Equal(t, UpdateFailed, f.State)
		require.Empty(t, kept(cmds))
	}
}
