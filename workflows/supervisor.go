package workflows

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/steward-sh/steward/activities"
	"github.com/steward-sh/steward/internal/spec"
	"github.com/steward-sh/steward/internal/supervise"
	"github.com/steward-sh/steward/internal/tick"
	"github.com/steward-sh/steward/internal/treestatus"
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
// Children are child workflows with hierarchical IDs (path/name), all
// started at once in spec order, each under PARENT_CLOSE_POLICY_ABANDON: the
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

	recordBuild(ctx, supVersioned.in(s.in.Version), s.in.Carry != nil)
	s.upsertSearch()
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
			next.Carry = &carry
			next.Version = SupervisorVersion // the next run is this code's
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

// childDigest is digest of a child as handed down. A run of version 1
// leaves out signatures, as the code that wrote its history (which had
// none) did.
func (s *supervisorRun) childDigest(c spec.Node) string {
	n := s.inherit(c)
	if !supDigestSignature.in(s.in.Version) {
		n = withoutSignatures(n)
	}
	return spec.Digest(n)
}

// withoutSignatures is n with every worker's signature left out.
func withoutSignatures(n spec.Node) spec.Node {
	n.Signature = ""
	if len(n.Children) > 0 {
		kids := make([]spec.Node, len(n.Children))
		for i, c := range n.Children {
			kids[i] = withoutSignatures(c)
		}
		n.Children = kids
	}
	return n
}

func (s *supervisorRun) childPath(name string) string { return s.in.Path + "/" + name }

// inherit is a child's node with what it inherits of this supervisor (vars,
// notify).
func (s *supervisorRun) inherit(c spec.Node) spec.Node { return spec.Inherit(s.in.Spec, c) }

// childNode is the node handed to a child: with its inherited vars, and
// stopped when this supervisor is (a stopped supervisor stops its subtree).
func (s *supervisorRun) childNode(c spec.Node) spec.Node {
	c = s.inherit(c)
	if s.carry.Desired == spec.DesiredStopped {
		c.Desired = spec.DesiredStopped
	}
	return c
}

// pruneSpec is the node a supervisor keeps once its children have their
// parts: its own fields and its direct children's, without the children
// of child supervisors (each child keeps its own).
func pruneSpec(n spec.Node) spec.Node {
	out := n
	out.Children = make([]spec.Node, len(n.Children))
	for i, c := range n.Children {
		c.Children = nil
		out.Children[i] = c
	}
	return out
}

// fullChild is the child's whole node as this run knows it: a child
// supervisor's subtree is known only in the run that was handed it.
func (s *supervisorRun) fullChild(name string) (spec.Node, bool) {
	for _, c := range s.full.Children {
		if c.Name == name {
			return c, c.Kind != "" || c.IsSupervisor() // a worker's node is whole when pruned
		}
	}
	return spec.Node{}, false
}

// startChildren starts child workflows for nodes: every start is initiated
// at once, in spec order, then each is awaited (one workflow task for a
// whole level, not one per child). A child already running under its ID (an
// earlier run of this supervisor) is adopted and handed the current spec.
//
// From version 8 the starts go out in batches of at most startBatchBytes of
// children's input (at least one child a batch), each batch awaited before
// the next is sent, so no set of valid children needs a workflow task
// larger than Temporal takes (its gRPC message limit is 4 MiB); version 7
// sends them all in one task.
func (s *supervisorRun) startChildren(nodes []spec.Node) []ChildRecord {
	recs := make([]ChildRecord, len(nodes))
	futs := make([]workflow.ChildWorkflowFuture, len(nodes))
	for lo := 0; lo < len(nodes); {
		hi := s.startBatchEnd(nodes, lo)
		for i := lo; i < hi; i++ {
			recs[i], futs[i] = s.initiateChild(nodes[i])
		}
		for i := lo; i < hi; i++ {
			if futs[i] != nil {
				s.awaitStarted(&recs[i], futs[i], nodes[i])
			}
		}
		lo = hi
	}
	return recs
}

// startBatchBytes bounds the children's input one batch of starts carries
// (version 8): with the spec's limits (a worker 64 KiB, a tree 1.5 MiB) a
// batch stays well under Temporal's 4 MiB message limit.
const startBatchBytes = 1 << 20

// startBatchEnd is where the batch of starts that begins at nodes[lo] ends:
// the whole rest before version 8.
func (s *supervisorRun) startBatchEnd(nodes []spec.Node, lo int) int {
	if !supStartBatches.in(s.in.Version) {
		return len(nodes)
	}
	return batchEnd(nodes, lo, startBatchBytes, func(n spec.Node) int { return spec.EncodedSize(s.childNode(n)) })
}

// batchEnd is the end of the batch that begins at lo: as many nodes as fit
// in budget by size, and at least one.
func batchEnd(nodes []spec.Node, lo, budget int, size func(spec.Node) int) int {
	total := 0
	for i := lo; i < len(nodes); i++ {
		total += size(nodes[i])
		if total > budget && i > lo {
			return i
		}
	}
	return len(nodes)
}

// removedRunReason is the reason of a child whose path's removed run is
// still stopping.
const removedRunReason = "waiting for the removed run to end"

// newRecord is the record of child c before its workflow starts (stopped,
// for reason), and the node handed to it.
func (s *supervisorRun) newRecord(c spec.Node, reason string) (ChildRecord, spec.Node) {
	node := s.childNode(c)
	path := s.childPath(c.Name)
	kind := node.Kind
	if node.IsSupervisor() {
		kind = spec.KindSupervisor
	}
	return ChildRecord{Name: c.Name, Path: path, Digest: s.childDigest(c), WantGeneration: s.in.Generation,
		Status: Status{Path: path, Kind: kind, State: "stopped", Desired: node.Resolved().Desired, Reason: reason}}, node
}

// initiateChild starts one child workflow without waiting for it.
func (s *supervisorRun) initiateChild(c spec.Node) (ChildRecord, workflow.ChildWorkflowFuture) {
	rec, node := s.newRecord(c, "starting workflow")
	path, kind := rec.Path, rec.Status.Kind
	if slices.Contains(s.carry.Removing, path) {
		// A removed run of this path is still stopping: start after it ends.
		rec.Lifecycle, rec.Node = supervise.Deferred, &c
		rec.Status.Reason = removedRunReason
		return rec, nil
	}
	if w := s.waitingFor(c.DependsOn); len(w) > 0 {
		rec.Lifecycle, rec.Node = supervise.Deferred, &c
		rec.Status.Reason = supervise.WaitingReason(w)
		return rec, nil
	}
	// A disconnected context: cancelling this supervisor must not cancel
	// the children all at once (the SDK would); shutdown stops them in
	// reverse order, one after the other.
	dctx, _ := workflow.NewDisconnectedContext(s.ctx)
	cctx := workflow.WithChildOptions(dctx, workflow.ChildWorkflowOptions{
		WorkflowID:            path,
		TaskQueue:             TaskQueue,
		ParentClosePolicy:     enumspb.PARENT_CLOSE_POLICY_ABANDON,
		WorkflowIDReusePolicy: enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE,
		// A cancelled child stops its service before it ends.
		WaitForCancellation: true,
		StaticSummary:       "steward " + kind + " " + path,
		TypedSearchAttributes: temporal.NewSearchAttributes(
			SearchPath.ValueSet(path), SearchKind.ValueSet(kind), SearchState.ValueSet("stopped")),
	})
	parent := workflow.GetInfo(s.ctx).WorkflowExecution.ID
	if s.window() > 0 {
		rec.StartedAt = workflow.Now(s.ctx) // it holds a slot until it reports
	}
	if node.IsSupervisor() {
		in := SupervisorInput{Path: path, Parent: parent, Spec: node, Generation: s.in.Generation, HistoryLimit: s.in.HistoryLimit, Version: SupervisorVersion,
			ReportSubtree: s.reportsSubtree(c.Name), ReportStarted: s.holdUntilStarted()}
		rec.UntilStarted = in.ReportStarted
		if s.updates() {
			in.Revision = s.carry.Revision
		}
		return rec, workflow.ExecuteChildWorkflow(cctx, SupervisorWorkflow, in)
	}
	return rec, workflow.ExecuteChildWorkflow(cctx, WorkerWorkflow, WorkerInput{Path: path, Parent: parent, Spec: node, Generation: s.in.Generation, HistoryLimit: s.in.HistoryLimit, Version: WorkerVersion,
		Coordinated: coordinated(s.strategy())})
}

// awaitStarted waits until the child's workflow has started (or was found
// running: adopted) and watches it for its end.
func (s *supervisorRun) awaitStarted(rec *ChildRecord, fut workflow.ChildWorkflowFuture, c spec.Node) {
	dctx, _ := workflow.NewDisconnectedContext(s.ctx)
	var exec workflow.Execution
	err := fut.GetChildWorkflowExecution().Get(dctx, &exec)
	switch {
	case err == nil:
		rec.Run = exec.RunID
		s.futures[rec.Path] = fut
	case temporal.IsWorkflowExecutionAlreadyStartedError(err):
		rec.StartedAt = time.Time{} // running already: not starting
		rec.Status.Reason = "adopted"
		rec.SeenTerminations = unseenTerminations
		if s.handsOut() {
			s.signalSpec(*rec, s.specUpdate(s.childNode(c))) // in order with the hand-outs
		} else {
			s.out.add(workflow.SignalExternalWorkflow(dctx, rec.Path, "", SignalSpec, s.specUpdate(s.childNode(c))))
		}
	default:
		rec.StartedAt = time.Time{}
		rec.Status.State, rec.Status.Reason = "failed", "could not start workflow: "+err.Error()
		s.log.Error("could not start child", "path", rec.Path, "error", err.Error())
	}
}

// onChildClosed handles the end of a child's workflow as its future tells
// it. A child that reported its end (deleted or removed) is done; any other
// end is a termination, answered by the strategy.
func (s *supervisorRun) onChildClosed(path string, f workflow.Future) {
	delete(s.futures, path)
	err := f.Get(s.ctx, nil)
	if slices.Contains(s.carry.Removing, path) {
		s.released(path)
		return
	}
	s.markClosed(path, closeCause(err))
}

// markClosed records that the child's workflow at path closed without
// reporting its end, and answers it as a termination.
func (s *supervisorRun) markClosed(path, cause string) {
	i := slices.IndexFunc(s.carry.Children, func(r ChildRecord) bool { return r.Path == path && !r.gone() })
	if i < 0 {
		return
	}
	rec := &s.carry.Children[i]
	rec.step(supervise.WorkflowClosed)
	rec.Status.State, rec.Status.Reason, rec.Status.Since = "failed", "workflow closed: "+cause, workflow.Now(s.ctx)
	s.log.Warn("child workflow closed without reporting its end", "path", path, "cause", cause)
	s.onTerminated(i, 1)
}

// closeCause says how a child's workflow closed, from its future's error.
func closeCause(err error) string {
	var term *temporal.TerminatedError
	var to *temporal.TimeoutError
	switch {
	case err == nil:
		return "completed"
	case errors.As(err, &term):
		return "terminated"
	case errors.As(err, &to):
		return "timed out"
	case temporal.IsCanceledError(err):
		return "cancelled"
	}
	return "failed: " + rootMessage(err)
}

// released: the removed run at path has ended; a child re-added meanwhile
// starts now.
func (s *supervisorRun) released(path string) {
	i := slices.Index(s.carry.Removing, path)
	if i < 0 {
		return
	}
	s.carry.Removing = slices.Delete(s.carry.Removing, i, i+1)
	s.release() // a child re-added meanwhile starts now (if nothing else holds it)
}

// restartClosed starts anew the workflow of a child that closed: false when
// this run cannot now (a child supervisor's subtree is known only to the run
// that was handed it: this run reads it back first, closedcheck.go).
func (s *supervisorRun) restartClosed(i int) bool {
	rec := s.carry.Children[i]
	node, held := s.fullChild(rec.Name)
	c := supervise.ClosedChild{SpecHeld: held, Supervisor: node.Name != ""}
	if !held && c.Supervisor {
		c.CanReadBack = s.mayReadBack(rec.Path)
	}
	switch how, why := supervise.RestartClosed(c); how {
	case supervise.ReadBackFirst:
		s.startReadBack(rec.Path) // closedcheck.go
		s.carry.Children[i].Status.Reason = why
		return false
	case supervise.WaitForApply:
		s.carry.Children[i].Status.Reason = why
		return false
	}
	fresh := s.startChildren([]spec.Node{node})[0]
	fresh.WantGeneration = rec.WantGeneration
	s.carry.Children[i] = fresh
	return true
}

func (s *supervisorRun) reject(signal string, err error) {
	s.carry.RejectedSignals++
	count(s.ctx, MetricRejectedSignals, map[string]string{"signal": signal})
	if signal == SignalSpec && templateProblem(err) {
		count(s.ctx, MetricTemplateErrors, nil)
	}
	s.log.Warn("rejected signal", "signal", signal, "path", s.in.Path, "error", err.Error(), "rejected", s.carry.RejectedSignals)
}

// onSpec reconciles the children with a new spec: new children start,
// removed ones are cancelled (they stop and end), changed ones get their new
// spec; unchanged ones are not touched.
func (s *supervisorRun) onSpec(raw converter.RawValue) {
	u, err := decodeUpdate(raw)
	if err == nil && u.Spec.Name != s.in.Spec.Name {
		err = fmt.Errorf("spec.name %q does not match this supervisor (%q)", u.Spec.Name, s.in.Spec.Name)
	}
	if err == nil {
		if ps := validateSupervisorSpec(s.limits.holds(s.ctx), s.in.Path, u.Spec); len(ps) > 0 {
			err = ps
		} else if !u.Spec.IsSupervisor() {
			err = fmt.Errorf("a supervisor's spec needs children")
		}
	}
	if err != nil {
		s.reject(SignalSpec, err)
		return
	}
	u.Spec.Children = spec.StartOrder(s.expand(u.Spec))
	if u.ReportSubtree != nil {
		s.in.ReportSubtree = *u.ReportSubtree
	}
	if u.Generation > 0 {
		s.in.Generation = u.Generation
	} else {
		s.in.Generation++
	}
	recordPropagation(s.ctx, u)
	// What this supervisor hands down carries where the change began.
	s.origin, s.depth = u.Origin, u.Depth+1
	if s.origin.IsZero() {
		s.origin, s.depth = workflow.Now(s.ctx), 1
	}
	count(s.ctx, MetricReconciliations, map[string]string{"strategy": u.Spec.Resolved().Strategy})
	if d := u.Spec.Resolved().Desired; d != s.in.Spec.Resolved().Desired {
		s.carry.Desired = d
		s.resetSupervision()
	}
	strategyChanged := coordinated(u.Spec.Resolved().Strategy) != coordinated(s.strategy())
	before := s.in.Spec
	s.full = u.Spec
	s.in.Spec, s.policies = pruneSpec(u.Spec), nil

	// What the spec does to each child is the core's (supervise.Reconcile);
	// this carries it out: cancels (dependants first), spec signals, new
	// starts.
	old := s.carry.Children
	in := supervise.ReconcileInput{Children: make([]supervise.Current, len(old)), Spec: make([]supervise.Wanted, len(u.Spec.Children)),
		Generation: s.in.Generation, StrategyChanged: strategyChanged, Resend: supResendNewer.in(s.in.Version)}
	for i, rec := range old {
		in.Children[i] = supervise.Current{Name: rec.Name, Lifecycle: rec.Lifecycle, Digest: rec.Digest, WantGeneration: rec.WantGeneration, Reported: rec.Status.Generation}
	}
	for j, c := range u.Spec.Children {
		in.Spec[j] = supervise.Wanted{Name: c.Name, Digest: s.childDigest(c)}
	}
	plan := supervise.Reconcile(in)
	if s.updates() {
		s.tellRevisions(u.Request, s.countRevision(u, before, plan))
	}
	targets := s.updateTargets(&plan, old, s.lastHanded(before), u.Spec.Children)
	for _, i := range plan.Cancel {
		path := old[i].Path
		f := workflow.RequestCancelExternalWorkflow(s.ctx, path, "")
		s.out.add(f)
		s.cancels = append(s.cancels, pendingCancel{path: path, fut: f})
		s.carry.Removing = append(s.carry.Removing, path)
	}
	s.carry.Children = make([]ChildRecord, len(u.Spec.Children))
	var added []spec.Node
	var addedAt []int
	for j, p := range plan.Children {
		c := u.Spec.Children[j]
		if p.Action == supervise.AddChild {
			added, addedAt = append(added, c), append(addedAt, j)
			continue
		}
		rec := old[p.From]
		rec.Digest, rec.WantGeneration = p.Digest, p.WantGeneration
		switch p.Action {
		case supervise.KeepNode:
			rec.Node = &c
		case supervise.SendSpec:
			s.sendSpec(rec, s.childNode(c))
		}
		s.carry.Children[j] = rec
	}
	s.handOut() // before the new children's starts are awaited
	for k, rec := range s.startOrDefer(added) {
		s.carry.Children[addedAt[k]] = rec
	}
	if s.updates() {
		s.beginUpdate(targets)
	}
	// Now that the children have their new spec: a pending restart's
	// backoff ends, and children whose workflow closed start anew (this
	// run has their whole spec).
	s.decide(supervise.Snapshot{Kind: supervise.SpecChanged})
	s.restartClosedChildren("the spec was applied")
	s.upsertSearch()
	s.replace() // a host lost or draining meanwhile; the hosts' subscriptions
}

// specUpdate is the spec signal for a child: its node, this generation, and
// whether this supervisor restarts it (a worker under a sibling strategy).
// sendSpec sends the child its node n (as handed down), numbered with the
// generation its record wants.
func (s *supervisorRun) sendSpec(rec ChildRecord, n spec.Node) {
	u := s.specUpdate(n)
	u.Generation = rec.WantGeneration
	s.signalSpec(rec, u)
}

func (s *supervisorRun) specUpdate(n spec.Node) spec.Update {
	co := coordinated(s.strategy())
	u := spec.Update{Generation: s.in.Generation, Spec: n, Coordinated: &co, Origin: s.origin, Depth: s.depth}
	if n.IsSupervisor() && s.reportsSubtree(n.Name) {
		report := true
		u.ReportSubtree = &report
	}
	if n.IsSupervisor() && s.updates() {
		u.Revision = s.carry.Revision
	}
	return u
}

func (s *supervisorRun) onSuperviseSignal(raw converter.RawValue) {
	r, err := decodeSupervise(raw)
	if err != nil {
		s.reject(SignalSupervise, err)
		return
	}
	s.onSupervise(r)
}

func (s *supervisorRun) onDesired(raw converter.RawValue) {
	var d string
	if err := decodeRaw(raw, &d); err != nil || (d != spec.DesiredRunning && d != spec.DesiredStopped) {
		if err == nil {
			err = fmt.Errorf("got %q", d)
		}
		s.reject(SignalDesired, fmt.Errorf("payload must be \"running\" or \"stopped\": %w", err))
		return
	}
	s.carry.Desired = d
	s.decide(supervise.Snapshot{Kind: supervise.Reset})
	// Every child gets the desired state: starts in start order once its
	// dependencies run, stops in reverse once its dependants are down.
	act := supervise.ActStart
	if d == spec.DesiredStopped {
		act = supervise.ActStop
	}
	s.operate(act, "started by the operator")
}

func (s *supervisorRun) onRestart() {
	s.carry.Desired = spec.DesiredRunning
	s.decide(supervise.Snapshot{Kind: supervise.OperatorRestart})
	s.operate(supervise.ActRestart, "restarted by the operator")
}

// operate carries out what the operator's act does to the children
// (supervise.Operate).
func (s *supervisorRun) operate(act supervise.OperatorAct, why string) {
	ls := make([]supervise.Lifecycle, len(s.carry.Children))
	for i, rec := range s.carry.Children {
		ls[i] = rec.Lifecycle
	}
	o := supervise.Operate(act, ls, s.hasDependencies())
	for i, l := range o.Lifecycles {
		s.carry.Children[i].Lifecycle = l
	}
	for _, i := range o.RestartNow {
		s.out.add(workflow.SignalExternalWorkflow(s.ctx, s.carry.Children[i].Path, "", SignalRestart, nil))
	}
	if o.Release {
		s.release()
	}
	if o.StartClosed {
		s.restartClosedChildren(why)
	}
}

// restartClosedChildren starts anew, when this supervisor should run, the
// workflows of children that closed: an operator's start or restart of the
// supervisor covers them too.
func (s *supervisorRun) restartClosedChildren(why string) {
	if !supervise.StartsClosed(s.carry.Desired) {
		return
	}
	for i := range s.carry.Children {
		if s.carry.Children[i].Lifecycle == supervise.Closed && s.restartClosed(i) {
			s.log.Info("child workflow started anew", "path", s.carry.Children[i].Path, "why", why)
		}
	}
}

func (s *supervisorRun) onChild(raw converter.RawValue) {
	var r ChildReport
	if err := decodeRaw(raw, &r); err != nil {
		s.reject(SignalChild, err)
		return
	}
	if len(r.More) >= activities.MaxReportsPerSignal {
		// A worker process sends at most that many in one signal.
		s.reject(SignalChild, fmt.Errorf("a batch of %d reports (at most %d)", len(r.More)+1, activities.MaxReportsPerSignal))
		return
	}
	more := r.More
	r.More = nil
	s.applyBounded(r)
	for _, m := range more { // a worker process's batch (activities.Reporter)
		m.More = nil
		s.applyBounded(m)
	}
}

// maxReportBytes bounds a child's report as its record keeps it (narrowed:
// its texts cut to maxRecordText). A child's own report is a few hundred
// bytes; a larger one was sent by someone else (the temporal CLI), and
// kept, it would grow this supervisor's carried state past what a
// continue-as-new may carry (Temporal's 2 MiB payload limit) and wedge it.
const maxReportBytes = 8 << 10

// applyBounded records a report, or rejects (and counts) one too large.
func (s *supervisorRun) applyBounded(r ChildReport) {
	if d := r.Status.Desired; d != "" && d != spec.DesiredRunning && d != spec.DesiredStopped {
		s.reject(SignalChild, fmt.Errorf("the report of %.100q says desired %.20q (running or stopped)", r.Status.Path, d))
		return
	}
	if n := spec.EncodedSize(narrowRecord(r.Status)); n > maxReportBytes {
		s.reject(SignalChild, fmt.Errorf("the report of %.100q is %d bytes (a child's is at most %d)", r.Status.Path, n, maxReportBytes))
		return
	}
	s.apply(r)
}

// apply records a child's report. A report of another run of the path (a
// removed one still stopping, a closed one) is not the child's; the end of
// a removed run releases a re-added child of the same path.
func (s *supervisorRun) apply(r ChildReport) {
	path := r.Status.Path
	if slices.Contains(s.carry.Removing, path) {
		// Its end report comes before its workflow closes: with a future,
		// the future says when the path is free for a re-added child.
		if _, watched := s.futures[path]; r.Ended && !watched {
			s.released(path)
		}
		return
	}
	for i := range s.carry.Children {
		rec := &s.carry.Children[i]
		if rec.Path != path || rec.Lifecycle == supervise.Deferred {
			continue
		}
		switch {
		case r.Run != "" && rec.Run != "" && r.Run != rec.Run:
			return // another run of this path
		case rec.Lifecycle == supervise.Closed:
			return
		case r.Seq > 0 && r.Seq <= rec.ReportSeq && !r.Ended:
			return // overtaken by a newer report
		}
		if rec.Run == "" {
			rec.Run = r.Run // adopted: its run is known from its first report
		}
		rec.ReportSeq = max(rec.ReportSeq, r.Seq)
		if startedBy(*rec, r.Status) {
			rec.StartedAt = time.Time{} // started: its slot of the window is free
		}
		rec.Status = narrowRecord(r.Status)
		if r.Ended {
			rec.step(supervise.ReportedEnd)
		}
		if rec.SeenTerminations == unseenTerminations {
			rec.SeenTerminations = r.Status.Terminations
		}
		if n := r.Status.Terminations - rec.SeenTerminations; n > 0 && !r.Ended {
			rec.SeenTerminations = r.Status.Terminations
			s.onTerminated(i, n)
		} else if n < 0 {
			rec.SeenTerminations = r.Status.Terminations // a new run of the child
		}
		return
	}
}

// ownState is the supervisor's state by its own record.
func (s *supervisorRun) ownState() string { return supervise.State(s.carry.Memory, s.carry.Desired) }

// own is the supervisor's own record: what it reports to its parent, and
// the head of its status answer. Its reason is its own (empty while it
// simply runs), never a count of what is below.
func (s *supervisorRun) own() Status {
	st := Status{
		Path: s.in.Path, Kind: spec.KindSupervisor, State: s.ownState(), Desired: s.carry.Desired,
		Generation: s.in.Generation, Since: s.carry.Since,
		RejectedSignals: s.carry.RejectedSignals, Restarts: s.carry.Restarts, ManualRestarts: s.carry.ManualRestarts,
		Terminations: s.carry.Terminations, SuperviseSeq: s.carry.SuperviseSeq, Strategy: s.strategy(),
		RecentRestarts: len(s.carry.RestartTimes),
	}
	st.Reason, st.BackoffUntil, st.AwaitingRestart = supervise.OwnReason(s.carry.Memory, s.carry.Desired, s.in.Parent != "")
	if s.in.ReportSubtree {
		st.Subtree = s.subtree()
	}
	st.SubtreeStarted = s.in.ReportStarted && s.carry.SubtreeStarted
	if s.updates() {
		st.Revision, st.Update = s.carry.Revision, s.updateStatus()
	}
	return st
}

// status is the answer of the status query: its own record and one record
// per direct child, and in its reason how many children are at their
// desired state (starter status assembles the tree from such answers).
func (s *supervisorRun) status() Status {
	st := s.own()
	st.Children = make([]Status, 0, len(s.carry.Children))
	at := 0
	owed := s.carry.Update.Owed() // nil unless an update runs
	for _, c := range s.carry.Children {
		cs := c.Status
		cs.Children = nil
		// A child that has not yet reported the spec it was sent is not at
		// its desired state, whatever it last said.
		cs.Applying = c.Lifecycle.Waits() || c.WantGeneration > cs.Generation || owed[c.Name]
		cs.WorkflowClosed = c.Lifecycle == supervise.Closed
		if cs.Settled() {
			at++
		}
		st.Children = append(st.Children, cs)
	}
	st.Reason = treestatus.WithChildCounts(st.Reason, at, len(st.Children))
	return st
}

// detailsOf is a supervisor's status as a Temporal markdown table, shown as
// "Current Details" in the Web UI (no history event): its own record and a
// row per direct child.
func detailsOf(st Status) string {
	// Built on every event with a row per child: no fmt in the rows.
	var b strings.Builder
	b.Grow(160 + 100*len(st.Children))
	// (fmt.Sprintf, not Fprintf: workflowcheck counts writing to an
	// io.Writer as I/O.)
	b.WriteString(fmt.Sprintf("**%s** — %s · generation %d\n\n", st.State, st.Reason, st.Generation))
	if u := st.Update; u != nil {
		b.WriteString(fmt.Sprintf("revision %d · update **%s**: %d of %d updated", st.Revision, u.State, u.Updated, u.Total))
		if len(u.InFlight) > 0 {
			b.WriteString(" · in flight: " + strings.Join(u.InFlight, ", "))
		}
		if u.Reason != "" {
			b.WriteString(" — " + strings.ReplaceAll(u.Reason, "|", "/"))
		}
		b.WriteString("\n\n")
	}
	b.WriteString("| child | kind | state | desired | restarts | reason |\n|---|---|---|---|---|---|\n")
	for _, c := range st.Children {
		for _, f := range []string{c.Path, c.Kind, c.State, c.Desired} {
			b.WriteString("| ")
			b.WriteString(f)
			b.WriteString(" ")
		}
		b.WriteString("| ")
		b.WriteString(strconv.Itoa(c.Restarts))
		b.WriteString(" (+")
		b.WriteString(strconv.Itoa(c.ManualRestarts))
		b.WriteString(" manual) | ")
		b.WriteString(strings.ReplaceAll(c.Reason, "|", "/"))
		b.WriteString(" |\n")
	}
	return b.String()
}

// publish makes the status known after an event: search attributes, the
// report of its own record to the parent, and the Web UI's current details.
func (s *supervisorRun) publish() {
	if state := s.ownState(); state != s.lastState {
		s.carry.Since = workflow.Now(s.ctx)
		reason := s.own().Reason
		s.carry.Journal = appendJournal(s.carry.Journal, JournalEntry{Time: s.carry.Since, From: s.lastState, State: state, Reason: reason})
		s.notes.transition(s.ctx, s.in.Spec.Notify, &s.carry.Troubled, &s.carry.NotifySeq, true, activities.Notification{
			Path: s.in.Path, State: state, Reason: reason, Time: s.carry.Since, Generation: s.in.Generation}, s.lastState)
		s.lastState = state
	}
	s.noteSubtreeStarted()
	st := s.status()
	s.upsertState(st.State)
	s.report(false)
	workflow.SetCurrentDetails(s.ctx, detailsOf(st))
}

// gauges updates the per-supervisor gauges (no history event).
func (s *supervisorRun) gauges() {
	tags := map[string]string{"path": s.in.Path}
	gauge(s.ctx, MetricChildCount, tags, float64(len(s.carry.Children)))
	open := 0
	for _, c := range s.carry.Children {
		if c.Status.State == string(tick.Unknown) {
			open++
		}
	}
	gauge(s.ctx, MetricCircuitOpen, tags, float64(open))
	if s.updates() {
		s.updateGauge()
	}
}

func (s *supervisorRun) upsertSearch() { s.upsertState(s.ownState()) }

func (s *supervisorRun) upsertState(state string) {
	if state == s.searchState {
		return
	}
	err := workflow.UpsertTypedSearchAttributes(s.ctx, stateAttributes(supVersioned.in(s.in.Version), s.in.Path, spec.KindSupervisor, state)...)
	if err == nil {
		s.searchState = state
	}
}

// report signals its own record to the parent when it changed (or the
// supervisor ends). Its children's changes are not its parent's business.
func (s *supervisorRun) report(ended bool) {
	if s.in.Parent == "" {
		return
	}
	st := narrowRecord(s.own())
	if u := st.Update; u != nil && supReportsUpdateState.in(s.in.Version) {
		// Its update's progress is its own answer's (starter status asks
		// it): reported, every worker updated was a signal and a task of
		// the parent's, the root's at the top, per worker.
		st.Update = &treestatus.UpdateStatus{Revision: u.Revision, Generation: u.Generation, State: u.State, Reason: u.Reason, Failed: u.Failed}
	}
	b, _ := json.Marshal(st)
	if !ended && s.lastReported != nil && string(b) == string(s.lastReported) {
		return
	}
	s.lastReported = b
	s.carry.ReportSeq++
	f := workflow.SignalExternalWorkflow(s.ctx, s.in.Parent, "", SignalChild,
		ChildReport{Seq: s.carry.ReportSeq, Run: workflow.GetInfo(s.ctx).FirstRunID, Status: st, Ended: ended})
	s.out.add(f)
	if ended {
		_ = f.Get(s.ctx, nil) // see workerRun.report
	}
}

func (s *supervisorRun) shouldContinueAsNew() bool {
	return s.upgrade.asked || continueAsNewDue(s.ctx, s.in.HistoryLimit)
}

// shutdown cancels the children in reverse spec order, each after the one
// before it has ended (reported so, or its workflow closed) or childStopWait
// passed, then ends.
func (s *supervisorRun) shutdown(childCh workflow.ReceiveChannel) error {
	dctx, _ := workflow.NewDisconnectedContext(s.ctx)
	s.ctx = dctx
	s.shuttingDown = true
	s.carry.Plan = nil
	s.wake.stop()
	for i := len(s.carry.Children) - 1; i >= 0; i-- {
		rec := &s.carry.Children[i]
		if rec.gone() {
			continue
		}
		// The request fails when the child is not running (never started,
		// or already closed): then there is nothing to wait for.
		if err := workflow.RequestCancelExternalWorkflow(dctx, rec.Path, "").Get(dctx, nil); err != nil {
			rec.step(supervise.ReportedEnd)
			continue
		}
		tctx, cancel := workflow.WithCancel(dctx)
		timer := workflow.NewTimer(tctx, childStopWait)
		timedOut := false
		for rec.Lifecycle != supervise.Ended && !timedOut {
			sel := workflow.NewSelector(dctx)
			sel.AddReceive(childCh, func(c workflow.ReceiveChannel, _ bool) {
				var r ChildReport
				if err := decodeRaw(receiveRaw(dctx, c), &r); err == nil {
					s.apply(r)
				}
			})
			sel.AddFuture(timer, func(workflow.Future) { timedOut = true })
			if f, ok := s.futures[rec.Path]; ok {
				// Its workflow closed: it has ended, reported or not.
				sel.AddFuture(f, func(workflow.Future) { delete(s.futures, rec.Path); rec.step(supervise.ReportedEnd) })
			}
			sel.Select(dctx)
		}
		cancel()
		if timedOut {
			s.log.Warn("child did not report its end in time", "path", rec.Path)
		}
	}
	s.unsubscribeHosts()
	s.carry.Desired = spec.DesiredStopped
	s.report(true)
	return temporal.NewCanceledError("deleted")
}
