package workflows

import (
	"fmt"
	"slices"
	"time"

	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/steward-sh/steward/activities"
	"github.com/steward-sh/steward/internal/buildinfo"
	"github.com/steward-sh/steward/internal/hostcore"
	"github.com/steward-sh/steward/internal/placement"
	"github.com/steward-sh/steward/internal/spec"
	"github.com/steward-sh/steward/internal/supervise"
	"github.com/steward-sh/steward/internal/versions"
)

// Fleets, as a supervisor carries them out (docs/fleet.md): its children
// expanded (instances) and placed over their hosts (internal/placement),
// its subscriptions to the hosts its workers run on (host.go), and what it
// does when a host changes: a worker whose host has been unknown past its
// reschedule.after moves to another host of its list at once (it is down
// anyway), the workers on a draining host move under the update policy
// (never more than maxParallel down), and nothing moves back by itself.
// Supervisor code version 4 on; an older run has no fleet children (the
// fields are newer than its code) and subscribes to nothing.

// fleet reports whether this run keeps its hosts' subscriptions.
func (s *supervisorRun) fleet() bool { return versions.SupFleet.In(s.in.Version) }

// expand returns a supervisor spec's children as this supervisor runs them
// (spec.Expand: instances, inherited hosts), each worker with hosts placed:
// where it runs now if it may stay, else on the host of its list with the
// fewest. Where a child runs now is what this supervisor last handed it
// (s.full).
func (s *supervisorRun) expand(sup spec.Node) []spec.Node {
	kids := spec.Expand(sup)
	current := map[string]string{}
	for _, c := range s.full.Children {
		if c.PlacedOn != "" {
			current[c.Name] = c.PlacedOn
		}
	}
	for _, c := range kids {
		if c.PlacedOn != "" { // an expanded spec (continue-as-new) keeps its places
			current[c.Name] = c.PlacedOn
		}
	}
	placed := placement.Place(s.placementInput(kids, current))
	for i := range kids {
		if h := placed[kids[i].Name]; h != "" {
			kids[i].PlacedOn = h
		}
	}
	return kids
}

// placementInput is what placing kids decides from: where they run, the
// draining hosts, and the hosts each must leave.
func (s *supervisorRun) placementInput(kids []spec.Node, current map[string]string) placement.Input {
	in := placement.Input{Current: current, Leave: map[string]bool{}, LeaveFor: s.carry.Leave, Avoid: map[string]bool{}}
	for _, h := range sortedKeys(s.carry.HostStates) {
		if s.carry.HostStates[h].Draining {
			in.Leave[h] = true
		}
		if s.carry.HostStates[h].Live == HostUnknown {
			in.Avoid[h] = true
		}
	}
	for _, c := range kids {
		if !c.IsSupervisor() {
			in.Workers = append(in.Workers, placement.Worker{Name: c.Name, Hosts: c.Hosts})
		}
	}
	return in
}

// onHost takes a host's new state: a host back up may be placed on again
// (nothing moves back), a drain moves workers off it, a lost host's
// workers move once their reschedule.after has passed (armFleet).
func (s *supervisorRun) onHost(raw converter.RawValue) {
	var st HostState
	if err := decodeRaw(raw, &st); err != nil || st.Host == "" {
		s.carry.RejectedSignals++
		return
	}
	if _, subscribed := s.carry.Subscribed[st.Host]; !subscribed && versions.SupHostNotesSubscribed.In(s.in.Version) {
		s.reject(SignalHost, fmt.Errorf("a note of host %.100q, which this supervisor has not subscribed to (none of its workers runs there or may move there)", st.Host))
		return
	}
	_, known := s.carry.HostStates[st.Host]
	if err := hostcore.CheckTold(st.Host, st.Live, known, len(s.carry.HostStates)); err != nil {
		s.reject(SignalHost, err)
		return
	}
	if s.carry.HostStates == nil {
		s.carry.HostStates = map[string]HostState{}
	}
	before := s.carry.HostStates[st.Host]
	if st.Live == HostUnknown && versions.SupHostLostAsLearned.In(s.in.Version) {
		// Lost from when this supervisor learned it, whatever the note
		// says: its reschedule.after counts from there.
		if before.Live == HostUnknown {
			st.Since = before.Since
		} else {
			st.Since = workflow.Now(s.ctx)
		}
	}
	s.carry.HostStates[st.Host] = st
	if st.Live == HostUp {
		s.leaveNoMore(st.Host)
	}
	s.forceStop(st, before)
	s.replace()
}

// forceStop stops the workers that can run nowhere but a host drained with
// --force, and starts them again when it is undrained.
func (s *supervisorRun) forceStop(st, before HostState) {
	stop := st.Draining && st.Force
	if stop == (before.Draining && before.Force) {
		return
	}
	for _, c := range s.in.Spec.Children {
		if c.IsSupervisor() || c.Kind == "" || c.RunsOn() != st.Host || hostcore.Movable(c.Hosts, st.Host) {
			continue
		}
		path := s.childPath(c.Name)
		stopped := slices.Contains(s.carry.ForceStopped, path)
		switch {
		case stop && !stopped:
			s.carry.ForceStopped = append(s.carry.ForceStopped, path)
			s.out.add(workflow.SignalExternalWorkflow(s.ctx, path, "", SignalDesired, spec.DesiredStopped))
		case !stop && stopped:
			s.carry.ForceStopped = slices.DeleteFunc(s.carry.ForceStopped, func(p string) bool { return p == path })
			s.out.add(workflow.SignalExternalWorkflow(s.ctx, path, "", SignalDesired, spec.DesiredRunning))
		}
	}
}

// lostDue marks the workers whose host has been unknown past their
// reschedule.after as leaving it, and returns when the next one is due
// (zero: none waits): placement.LostDue.
func (s *supervisorRun) lostDue() time.Time {
	var ws []placement.Placed
	for _, c := range s.in.Spec.Children {
		if c.IsSupervisor() || c.Kind == "" || c.Reschedule == nil || c.PlacedOn == "" {
			continue
		}
		ws = append(ws, placement.Placed{Name: c.Name, Host: c.PlacedOn, After: c.Reschedule.After.D()})
	}
	unknownSince := func(h string) (time.Time, bool) {
		st, ok := s.carry.HostStates[h]
		return st.Since, ok && st.Live == HostUnknown
	}
	leave, next := placement.LostDue(ws, unknownSince, s.carry.Leave, workflow.Now(s.ctx))
	s.carry.Leave = leave
	return next
}

// replace places the workers again and moves those whose host changes:
// off a lost host at once (the copy there cannot be reached, and counts as
// down already), off a host that is up (a draining one) under the update
// policy. A move off an up host waits while an update runs: the update's
// end places again. A move off a lost host goes at once, update or not
// (supervisor code version 10 on; version 9 holds it too): a target of the
// update is sent its new node on its new host, and the update counts it
// once it runs there (supervise.Update.Moved); only a revert's target
// waits.
func (s *supervisorRun) replace() {
	if !s.fleet() || s.shuttingDown {
		return
	}
	s.fleetWake.set(s.ctx, s.lostDue())
	kids := s.in.Spec.Children
	current := map[string]string{}
	for _, c := range kids {
		if c.PlacedOn != "" {
			current[c.Name] = c.PlacedOn
		}
	}
	in := s.placementInput(kids, current)
	placed := placement.Place(in)
	moves := placement.Moves(in, placed)
	if len(moves) == 0 {
		s.subscribeHosts()
		return
	}
	duringUpdate := s.carry.Update.Active()
	if duringUpdate {
		if moves = s.lostMovesNow(moves, kids); len(moves) == 0 {
			return
		}
	}
	s.in.Generation++
	var targets []supervise.Target
	for _, name := range moves {
		j := slices.IndexFunc(kids, func(c spec.Node) bool { return c.Name == name })
		i := s.childIndex(name)
		if j < 0 || i < 0 {
			continue
		}
		from := kids[j].PlacedOn
		before := s.childNode(kids[j])
		kids[j].PlacedOn = placed[name]
		if f := slices.IndexFunc(s.full.Children, func(c spec.Node) bool { return c.Name == name }); f >= 0 {
			s.full.Children[f].PlacedOn = placed[name]
		}
		after := s.childNode(kids[j])
		rec := &s.carry.Children[i]
		st, known := s.carry.HostStates[from]
		lost := known && st.Live == HostUnknown
		s.log.Info("fleet: moving a worker", "path", rec.Path, "from", from, "to", placed[name], "lost", lost)
		if !lost && supervise.UpdateTarget(*rec, before, after) {
			targets = append(targets, supervise.Target{Name: name, Digest: s.childDigest(kids[j]), Previous: &before, PreviousDigest: rec.Digest})
			continue
		}
		rec.Digest, rec.WantGeneration = s.childDigest(kids[j]), s.in.Generation
		u := s.specUpdate(after)
		u.Generation = rec.WantGeneration
		if lost {
			u.Lost = from
		}
		s.signalSpec(*rec, u)
		if duringUpdate {
			s.carry.Update.Moved(name, rec.Digest, rec.WantGeneration, rec.Status.Terminations, workflow.Now(s.ctx))
		}
	}
	s.policies = nil
	if len(targets) > 0 {
		s.beginUpdate(targets)
	}
	s.subscribeHosts()
}

// lostMovesNow is, of moves found while an update runs, those that go at
// once (supervise.Update.MovesNow); the others wait for the update's end
// (ReplaceAfterUpdate).
func (s *supervisorRun) lostMovesNow(moves []string, kids []spec.Node) []string {
	if !versions.SupMoveLostInUpdate.In(s.in.Version) {
		s.carry.ReplaceAfterUpdate = true
		return nil
	}
	now, wait := s.carry.Update.MovesNow(moves, func(name string) bool {
		j := slices.IndexFunc(kids, func(c spec.Node) bool { return c.Name == name })
		return j >= 0 && s.carry.HostStates[kids[j].PlacedOn].Live == HostUnknown
	})
	if wait {
		s.carry.ReplaceAfterUpdate = true
	}
	return now
}

// afterUpdate places again what waited for the update to end.
func (s *supervisorRun) afterUpdate() {
	if s.carry.ReplaceAfterUpdate && !s.carry.Update.Active() {
		s.carry.ReplaceAfterUpdate = false
		s.replace()
	}
}

// subscribeHosts tells each host this supervisor's workers on it, where
// that changed since it last did (hostcore.Subscriptions: every host a
// worker runs on or may move to, an empty subscription too, so that the
// supervisor knows which hosts are up).
func (s *supervisorRun) subscribeHosts() {
	if !s.fleet() {
		return
	}
	var workers []hostcore.Worker
	for _, c := range s.in.Spec.Children {
		if !c.IsSupervisor() && c.Kind != "" {
			workers = append(workers, hostcore.Worker{Path: s.childPath(c.Name), Hosts: c.Hosts, On: c.RunsOn()})
		}
	}
	want := hostcore.Subscriptions(s.in.Path, workers)
	for _, ch := range hostcore.SubscriptionChanges(s.in.Path, want, s.carry.Subscribed) {
		if s.carry.Subscribed == nil {
			s.carry.Subscribed = map[string]HostSubscription{}
		}
		s.out.add(s.sendSubscription(ch.Host, ch.Sub))
		if ch.Sub.Gone {
			delete(s.carry.Subscribed, ch.Host)
			if versions.SupForgetsUnsubscribedHosts.In(s.in.Version) {
				s.forgetHost(ch.Host)
			}
		} else {
			s.carry.Subscribed[ch.Host] = ch.Sub
		}
	}
}

// forgetHost forgets a host no worker of the spec runs on or may move to:
// its state decides nothing, and kept it counted against the hosts a
// supervisor may know (hostcore.MaxHostStates) for good.
func (s *supervisorRun) forgetHost(host string) {
	delete(s.carry.HostStates, host)
	s.leaveNoMore(host)
}

// leaveNoMore drops host from the hosts each worker must leave.
func (s *supervisorRun) leaveNoMore(host string) {
	for _, name := range sortedKeys(s.carry.Leave) {
		s.carry.Leave[name] = slices.DeleteFunc(s.carry.Leave[name], func(h string) bool { return h == host })
		if len(s.carry.Leave[name]) == 0 {
			delete(s.carry.Leave, name)
		}
	}
}

func (s *supervisorRun) sendSubscription(host string, sub HostSubscription) workflow.Future {
	s.carry.HostSeq++
	if versions.SupHostSeqByTime.In(s.in.Version) {
		// Past the time: above any number an earlier life of this path
		// sent (a host keeps the highest), and still one more than the
		// last within this life.
		s.carry.HostSeq = max(s.carry.HostSeq, workflow.Now(s.ctx).UnixNano())
	}
	sub.Seq = s.carry.HostSeq
	ctx := workflow.WithActivityOptions(s.ctx, workflow.ActivityOptions{
		TaskQueue: ControlQueue,
		// One SignalWithStart: an attempt that takes 10 s was lost, most
		// likely to a poll of a worker process cut off from the server,
		// which the server still counts open (CI: a drain's subscription
		// waited 31 s for its retry after a host came back, and the host
		// read `draining` that long). Timeouts are not part of replay.
		StartToCloseTimeout: 10 * time.Second,
		RetryPolicy:         &temporal.RetryPolicy{InitialInterval: time.Second, MaximumInterval: 30 * time.Second},
		Summary:             "subscribe " + s.in.Path + " to host " + host,
	})
	return workflow.ExecuteActivity(ctx, activities.HostSubscribeName, activities.HostSubscribeRequest{
		Host: host, WorkflowID: HostID(host), TaskQueue: TaskQueue, Subscription: sub, Build: buildinfo.ID(), Version: HostVersion})
}

// unsubscribeHosts ends this supervisor's subscriptions (it is deleted),
// and waits until each host has it.
func (s *supervisorRun) unsubscribeHosts() {
	var fs []workflow.Future
	for _, h := range sortedKeys(s.carry.Subscribed) {
		fs = append(fs, s.sendSubscription(h, HostSubscription{Supervisor: s.in.Path, Gone: true}))
	}
	s.carry.Subscribed = nil
	for _, f := range fs {
		_ = f.Get(s.ctx, nil)
	}
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
