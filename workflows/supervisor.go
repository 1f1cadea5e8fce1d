package workflows

import (
	"slices"
	"time"

	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/steward-sh/steward/activities"
	"github.com/steward-sh/steward/internal/spec"
	"github.com/steward-sh/steward/internal/supervise"
	"github.com/steward-sh/steward/internal/treestatus"
	"github.com/steward-sh/steward/internal/versions"
)

// SupervisorInput starts (or continues) a supervisor workflow.
type SupervisorInput struct {
	Path   string `json:"path"`
	Parent string `json:"parent,omitempty"`
	// Spec is the node as handed down: on a first run its whole subtree; a
	// run carried over continue-as-new gets its own level only (pruneSpec).
	Spec         spec.Node        `json:"spec"`
	Generation   int64            `json:"generation"`
	HistoryLimit int              `json:"historyLimit,omitempty"`
	Carry        *SupervisorCarry `json:"carry,omitempty"`
	// Version is the code version of this run (upgrade.go; 0: begun by
	// code older than the versions).
	Version int `json:"version,omitempty"`
	// ReportSubtree: its record says how its subtree is (Status.Subtree),
	// for its supervisor's dependency order (dependencies.go).
	ReportSubtree bool `json:"reportSubtree,omitempty"`
	// ReportStarted: its supervisor holds a slot of its start window for
	// it until its whole subtree has started, and its record says when
	// (Status.SubtreeStarted; version 7, startwindow.go).
	ReportStarted bool `json:"reportStarted,omitempty"`
	// Revision is the tree's revision of the spec a first run is handed
	// (0 for a root: its first spec is revision 1).
	Revision int64 `json:"revision,omitempty"`
	// Request is the ID of the apply that started a root (see
	// spec.Update.Request); never carried over continue-as-new.
	Request string `json:"request,omitempty"`
}

// SupervisorCarry is the state of a supervisor that survives continue-as-new.
// It grows with the direct children only.
type SupervisorCarry struct {
	Children        []ChildRecord `json:"children"`
	Desired         string        `json:"desired"`
	RejectedSignals int           `json:"rejectedSignals"`
	// Removing lists the paths of removed children whose workflows have not
	// ended yet; a child re-added meanwhile waits for it.
	Removing []string `json:"removing,omitempty"`
	// Since is when the supervisor entered its state.
	Since time.Time `json:"since,omitzero"`

	// Supervision: strategies, intensity, plans (internal/supervise).
	supervise.Memory
	// ReportSeq numbers the reports to the parent.
	ReportSeq int64 `json:"reportSeq,omitempty"`
	// Journal is the supervisor's last JournalLimit transitions of its own
	// state, oldest first (the `history` query), as a worker's.
	Journal []JournalEntry `json:"journal,omitempty"`
	// Revision is the tree's revision of the spec it runs; Update its
	// rolling update of workers, in progress or the last one (update.go;
	// version 3 on).
	Revision int64             `json:"revision,omitempty"`
	Update   *supervise.Update `json:"update,omitempty"`
	// Troubled and Notifications: as a worker's (notify.go).
	Troubled      bool                          `json:"troubled,omitempty"`
	NotifySeq     int64                         `json:"notifySeq,omitempty"`
	Notifications []activities.NotificationTask `json:"notifications,omitempty"`
	// Leave are, by child name, the hosts a child must leave: its host
	// was lost past its reschedule.after (fleet.go).
	Leave map[string][]string `json:"leave,omitempty"`
	// HostStates are the last states of the hosts this supervisor's
	// workers run on, Subscribed what it last told each host, and
	// ForceStopped the workers it stopped for a drain with --force.
	HostStates   map[string]HostState        `json:"hostStates,omitempty"`
	Subscribed   map[string]HostSubscription `json:"subscribed,omitempty"`
	ForceStopped []string                    `json:"forceStopped,omitempty"`
	// HostSeq numbers its subscriptions.
	HostSeq int64 `json:"hostSeq,omitempty"`
	// ReplaceAfterUpdate: a move waits for the update in progress.
	ReplaceAfterUpdate bool `json:"replaceAfterUpdate,omitempty"`
	// SubtreeStarted: its whole subtree has started once (version 7,
	// startwindow.go's noteSubtreeStarted).
	SubtreeStarted bool `json:"subtreeStarted,omitempty"`
}

// childStopWait bounds how long a deleted supervisor waits for each child to
// report that it has stopped before going on to the next.
const childStopWait = 5 * time.Minute

// SupervisorWorkflow supervises the children of one node of the tree.
//
// Children are child workflows with hierarchical IDs (path/name), started
// in spec order through the start window (startwindow.go) in batches
// (startChildren), each under PARENT_CLOSE_POLICY_ABANDON: the
// supervisor continues as new without killing them, and re-adopts them by
// ID. Stopping a child is an explicit act: a cancel request (on removal from
// the spec or on delete, in reverse spec order), after which the child
// stops its service and ends.
//
// Its state is narrow: one ChildRecord per direct child (the child's own
// last report, never its subtree), and its own level of the spec once each
// child has been handed its part (pruneSpec). Its `status` query answers its
// own record and its children's records; `starter status` assembles a
// whole tree from the supervisors' answers (internal/treestatus).
//
// A child workflow that closes without reporting its end (terminated by
// hand, timed out, reset) is seen through its child future and answered as
// a termination (strategy.go); a removed child whose workflow is already
// closed is gone at once.
//
// How it answers the end of a child (strategies, restart intensity, giving
// up and cooldown) is described in strategy.go.
func SupervisorWorkflow(ctx workflow.Context, in SupervisorInput) error {
	checkVersion("SupervisorWorkflow", in.Version, SupervisorVersion)
	s := &supervisorRun{ctx: ctx, log: workflow.GetLogger(ctx), in: in, futures: map[string]workflow.ChildWorkflowFuture{}}
	if in.Carry == nil {
		if ps := spec.ValidateLegacy(in.Spec); len(ps) > 0 || !in.Spec.IsSupervisor() { // limits.go: an input as before
			msg := "a supervisor needs children"
			if len(ps) > 0 {
				msg = ps.Error()
			}
			return temporal.NewNonRetryableApplicationError("invalid supervisor spec:\n"+msg, "InvalidSpec", nil)
		}
		if err := spec.CheckExpansion(in.Spec); err != nil { // (at any version: none ever ran past it)
			return temporal.NewNonRetryableApplicationError("invalid supervisor spec: "+err.Error(), "InvalidSpec", nil)
		}
		in.Spec.Children = spec.StartOrder(s.expand(in.Spec))
		s.in = in
		s.full = in.Spec
		s.carry.Desired = in.Spec.Resolved().Desired
		s.carry.Revision = max(in.Revision, 1)
		s.carry.Since = workflow.Now(ctx)
		s.carry.Journal = []JournalEntry{{Time: s.carry.Since, State: s.ownState(), Reason: "created"}}
	} else {
		if !in.Spec.IsSupervisor() {
			return temporal.NewNonRetryableApplicationError("invalid supervisor input: no children", "InvalidSpec", nil)
		}
		s.full = in.Spec
		s.carry = *in.Carry
		if versions.SupLeanCarry.In(in.Version) {
			supervise.RestoreNodes(s.carry.Children, in.Spec.Children) // left out by the run before (its LeanCarry)
		}
		if versions.SupReportSeqBounded.In(in.Version) {
			// A record a run of version 10 let a forged number pin: the
			// child's next report is taken again.
			notAfter := workflow.Now(ctx).Add(supervise.SeqSkew).UnixNano()
			for i := range s.carry.Children {
				if s.carry.Children[i].ReportSeq > notAfter {
					s.carry.Children[i].ReportSeq = 0
				}
			}
			if s.carry.Memory.SuperviseSeq > notAfter {
				s.carry.Memory.SuperviseSeq = 0 // and its acknowledgement of its parent's requests
			}
		}
	}
	s.lastState = s.ownState()
	if state, kind := searchAttributesSet(ctx, in.Path); kind == spec.KindSupervisor {
		s.searchState = state // upsertState skips what is set
	}
	if err := workflow.SetQueryHandler(ctx, QueryStatus, func() (Status, error) { return s.status(), nil }); err != nil {
		return err
	}
	if err := workflow.SetQueryHandler(ctx, QueryStatusDigest, func() (string, error) { return treestatus.Digest(s.status()), nil }); err != nil {
		return err
	}
	if err := workflow.SetQueryHandler(ctx, QuerySpec, func() (spec.Node, error) { return pruneSpec(s.in.Spec), nil }); err != nil {
		return err
	}
	if err := workflow.SetQueryHandler(ctx, QueryHistory, func() ([]JournalEntry, error) { return s.carry.Journal, nil }); err != nil {
		return err
	}
	return s.loop()
}

type supervisorRun struct {
	ctx   workflow.Context
	log   log.Logger
	in    SupervisorInput
	carry SupervisorCarry
	// othersWait: the children being started now leave siblings waiting
	// for the start window (startDeferred sets it for initiateChild).
	othersWait bool
	// full is the whole spec this run was handed (input or spec signal),
	// nil-childed on a run carried over: only it can start a child
	// supervisor anew. s.in.Spec is its pruned copy, what is carried.
	full spec.Node
	// policies caches each child's resolved restart type and backoff for
	// the current s.in.Spec (nil: not yet; reset wherever the spec changes).
	policies map[string]childPolicy
	// futures of the children this run started, by path: each resolves
	// when the child's workflow closes.
	futures map[string]workflow.ChildWorkflowFuture
	// cancels are the cancel requests sent to removed children: one that
	// fails finds the child's workflow already closed.
	cancels []pendingCancel
	// check is the timer of the next look at the children this run holds no
	// future for (closedcheck.go); checking is that look in progress.
	check    deadline
	checking workflow.Future
	// readBacks are the read-backs of closed child supervisors' specs in
	// progress (closedcheck.go).
	readBacks    []readBack
	lastReported []byte // the last report of its own record, as JSON
	lastState    string
	searchState  string
	// out holds what this run sent until it is delivered.
	out outbox
	// handout holds the spec signals not yet handed out (version 5 on:
	// handout.go).
	handout []activities.Delivery
	// lastHandOut is settled when the last hand-out is done: the next one
	// waits for it.
	lastHandOut workflow.Future
	// notes holds the notifications not yet delivered.
	notes notifier

	// The one timer of a plan's backoff or step, or of a cooldown.
	wake deadline
	// slotWake: when a slot of the start window frees by itself, while
	// children wait for one (window.go).
	slotWake deadline
	// fleetWake: when a worker's host will have been lost past its
	// reschedule.after (fleet.go).
	fleetWake deadline
	// The last supervise request of a plan step, to notice one that could
	// not be delivered.
	stepSignal workflow.Future
	stepSeq    int64
	// origin and depth of the spec change being handed down.
	origin time.Time
	depth  int
	// shuttingDown: the supervisor is deleted; it starts nothing more.
	shuttingDown bool
	// upgrade: the run was asked to continue as new onto this build's code.
	upgrade upgrade
	// limits: the answer to the input limits' markers (limits.go).
	limits limitsMarker
}

type pendingCancel struct {
	path string
	fut  workflow.Future
}

func (s *supervisorRun) loop() error {
	ctx := s.ctx
	specCh := workflow.GetSignalChannel(ctx, SignalSpec)
	desiredCh := workflow.GetSignalChannel(ctx, SignalDesired)
	restartCh := workflow.GetSignalChannel(ctx, SignalRestart)
	childCh := workflow.GetSignalChannel(ctx, SignalChild)
	superviseCh := workflow.GetSignalChannel(ctx, SignalSupervise)
	upgradeCh := workflow.GetSignalChannel(ctx, SignalUpgrade)
	var updateCh workflow.ReceiveChannel // version 3 on: older runs drop it as unknown
	known := []string{SignalSpec, SignalDesired, SignalRestart, SignalChild, SignalSupervise, SignalUpgrade}
	if s.updates() {
		updateCh = workflow.GetSignalChannel(ctx, SignalUpdate)
		known = append(known, SignalUpdate)
	}
	var hostCh workflow.ReceiveChannel // version 4 on (fleet.go)
	if s.fleet() {
		hostCh = workflow.GetSignalChannel(ctx, SignalHost)
		known = append(known, SignalHost)
	}

	recordBuild(ctx, versions.SupVersioned.In(s.in.Version), s.in.Carry != nil)
	s.upsertSearch()
	if versions.SupNotifyBounded.In(s.in.Version) {
		s.notes.limit = MaxPendingNotifications
	}
	s.notes.resend(ctx, s.carry.Notifications)
	s.carry.Notifications = nil
	if s.in.Carry == nil {
		s.carry.Children = s.startOrDefer(s.full.Children)
		s.in.Spec, s.policies = pruneSpec(s.full), nil
		if s.window() > 0 {
			s.release() // the start window's first children
		}
		s.tellRevisions(s.in.Request, true)
		s.subscribeHosts()
	} else {
		s.check.set(ctx, workflow.Now(ctx)) // did a child close while no run watched it?
		s.fleetWake.set(ctx, s.lostDue())
	}
	s.advance()
	s.handOut()
	s.armWake()
	s.armSlots()
	s.publish()

	cancelled := false
	for {
		sel := workflow.NewSelector(ctx)
		sel.AddReceive(ctx.Done(), func(workflow.ReceiveChannel, bool) { cancelled = true })
		sel.AddReceive(specCh, func(c workflow.ReceiveChannel, _ bool) { s.onSpec(receiveRaw(ctx, c)) })
		sel.AddReceive(desiredCh, func(c workflow.ReceiveChannel, _ bool) { s.onDesired(receiveRaw(ctx, c)) })
		sel.AddReceive(restartCh, func(c workflow.ReceiveChannel, _ bool) { receiveRaw(ctx, c); s.onRestart() })
		sel.AddReceive(childCh, func(c workflow.ReceiveChannel, _ bool) { s.onChild(receiveRaw(ctx, c)) })
		sel.AddReceive(superviseCh, func(c workflow.ReceiveChannel, _ bool) { s.onSuperviseSignal(receiveRaw(ctx, c)) })
		if updateCh != nil {
			sel.AddReceive(updateCh, func(c workflow.ReceiveChannel, _ bool) { s.onUpdateSignal(receiveRaw(ctx, c)) })
		}
		if hostCh != nil {
			sel.AddReceive(hostCh, func(c workflow.ReceiveChannel, _ bool) { s.onHost(receiveRaw(ctx, c)) })
		}
		if t := s.slotWake.fut; t != nil {
			sel.AddFuture(t, func(f workflow.Future) { s.slotWake.fired(f) }) // release() looks again
		}
		if t := s.fleetWake.fut; t != nil {
			sel.AddFuture(t, func(f workflow.Future) {
				if s.fleetWake.fired(f) && f.Get(ctx, nil) == nil {
					s.replace()
				}
			})
		}
		idle := false // woken by an upgrade signal older code would not have seen
		sel.AddReceive(upgradeCh, func(c workflow.ReceiveChannel, _ bool) {
			refused, wokeOnly := s.upgrade.receive(ctx, c)
			s.carry.RejectedSignals += refused
			idle = wokeOnly
		})
		if t := s.wake.fut; t != nil {
			sel.AddFuture(t, func(f workflow.Future) {
				if !s.wake.fired(f) {
					return
				}
				if f.Get(ctx, nil) == nil {
					s.onWake()
				}
			})
		}
		s.watchChildren(sel)
		s.watchCheck(sel)
		s.watchReadBacks(sel)
		s.notes.watch(ctx, s.log, sel)
		if f := s.stepSignal; f != nil && !f.IsReady() {
			sel.AddFuture(f, func(workflow.Future) {}) // advance() sees a failed delivery
		}
		if f := s.lastHandOut; f != nil && !f.IsReady() {
			sel.AddFuture(f, func(workflow.Future) {}) // a continue-as-new that waited for it goes on
		}
		sel.Select(ctx)
		if cancelled {
			return s.shutdown(childCh)
		}
		if idle {
			continue
		}
		s.carry.RejectedSignals += dropUnknownSignals(ctx, s.log, known...)
		s.advance()
		s.release()
		s.stepUpdate(supervise.UpdateTick)
		s.afterUpdate()
		if !anyPending(specCh, desiredCh, restartCh, childCh, superviseCh, updateCh, hostCh) {
			// The signals still buffered are taken first (in this task):
			// what they decide goes in the same hand-out.
			s.handOut()
		}
		s.armWake()
		s.armSlots()
		s.armCheck()
		s.gauges()
		s.publish()
		if s.shouldContinueAsNew() && s.checking == nil && len(s.readBacks) == 0 {
			s.drain(specCh, desiredCh, restartCh, childCh, superviseCh, updateCh, hostCh)
			s.handOut()
			// What this run sent must arrive before it closes.
			if err := workflow.Await(ctx, func() bool { return s.out.delivered() && workflow.AllHandlersFinished(ctx) }); err != nil {
				return s.shutdown(childCh) // cancelled while waiting
			}
			s.drain(specCh, desiredCh, restartCh, childCh, superviseCh, updateCh, hostCh)
			s.advance()
			s.handOut()
			s.publish()
			if ctx.Err() != nil {
				return s.shutdown(childCh)
			}
			if !s.out.delivered() || len(s.readBacks) > 0 {
				continue // the drain sent more, or began a read-back: finish it first
			}
			refused, _ := s.upgrade.receive(ctx, upgradeCh)
			s.carry.RejectedSignals += refused
			next := s.in
			next.Request = ""
			carry := s.carry
			carry.Notifications = s.notes.undelivered()
			// The next run is this code's, which puts the nodes back.
			carry.Children = supervise.LeanCarry(carry.Children, next.Spec.Children)
			next.Carry = &carry
			next.Version = SupervisorVersion // the next run is this code's
			if !s.fitCarry(&next) && versions.SupCarryFits.In(s.in.Version) {
				// Past what the server takes even trimmed (an update's
				// previous nodes of a large level): the server would end
				// this run. It goes on, and tries again at its next event
				// (the update's end frees them).
				continue
			}
			return workflow.NewContinueAsNewError(ctx, SupervisorWorkflow, next)
		}
	}
}

// watchChildren adds to sel the futures that tell of a child's workflow
// closing and of a cancel request that found no workflow, in spec order.
func (s *supervisorRun) watchChildren(sel workflow.Selector) {
	for _, rec := range s.carry.Children {
		if f, ok := s.futures[rec.Path]; ok && rec.Lifecycle != supervise.Deferred {
			path := rec.Path
			sel.AddFuture(f, func(f workflow.Future) { s.onChildClosed(path, f) })
		}
	}
	for _, path := range s.carry.Removing { // removed runs still stopping
		if f, ok := s.futures[path]; ok {
			sel.AddFuture(f, func(f workflow.Future) { s.onChildClosed(path, f) })
		}
	}
	for _, pc := range s.cancels {
		sel.AddFuture(pc.fut, func(f workflow.Future) {
			s.cancels = slices.DeleteFunc(s.cancels, func(c pendingCancel) bool { return c.fut == f })
			if f.Get(s.ctx, nil) != nil {
				s.released(pc.path) // no workflow to cancel: gone already
			}
		})
	}
}

func (s *supervisorRun) drain(specCh, desiredCh, restartCh, childCh, superviseCh, updateCh, hostCh workflow.ReceiveChannel) {
	for {
		var raw converter.RawValue
		switch {
		case hostCh != nil && hostCh.ReceiveAsync(&raw):
			s.onHost(raw)
		case updateCh != nil && updateCh.ReceiveAsync(&raw):
			s.onUpdateSignal(raw)
		case specCh.ReceiveAsync(&raw):
			s.onSpec(raw)
		case desiredCh.ReceiveAsync(&raw):
			s.onDesired(raw)
		case restartCh.ReceiveAsync(&raw):
			s.onRestart()
		case childCh.ReceiveAsync(&raw):
			s.onChild(raw)
		case superviseCh.ReceiveAsync(&raw):
			s.onSuperviseSignal(raw)
		default:
			return
		}
	}
}
