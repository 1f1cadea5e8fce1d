package workflows

// A supervisor's children: their specs as sent, starting them (in batches),
// their ends.

import (
	"errors"
	"slices"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/steward-sh/steward/internal/spec"
	"github.com/steward-sh/steward/internal/supervise"
	"github.com/steward-sh/steward/internal/versions"
)

// childDigest is digest of a child as handed down. A run of version 1
// leaves out signatures, as the code that wrote its history (which had
// none) did.
func (s *supervisorRun) childDigest(c spec.Node) string {
	n := s.inherit(c)
	if !versions.SupDigestSignature.In(s.in.Version) {
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

// startChildren starts child workflows for nodes, in spec order: the starts
// of a batch are initiated at once, then each is awaited (one workflow task
// a batch, not one per child). A child already running under its ID (an
// earlier run of this supervisor) is adopted and handed the current spec.
//
// From version 8 (supStartBatches) the starts go out in batches of at most startBatchBytes of
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
	if !versions.SupStartBatches.In(s.in.Version) {
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
	removed := slices.Contains(s.carry.Removing, path)
	var waiting []string
	if !removed {
		waiting = s.waitingFor(c.DependsOn)
	}
	if why := supervise.StartHold(removed, waiting); why != "" {
		rec.Lifecycle, rec.Node = supervise.Deferred, &c
		rec.Status.Reason = why
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
	if node.IsJob() {
		return rec, workflow.ExecuteChildWorkflow(cctx, JobWorkflow, JobInput{Path: path, Parent: parent, Spec: node, Generation: s.in.Generation, Version: JobVersion})
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
		Coordinated: supervise.Coordinated(s.strategy())})
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
	i := slices.IndexFunc(s.carry.Children, func(r ChildRecord) bool { return r.Path == path && !r.Gone() })
	if i < 0 {
		return
	}
	rec := &s.carry.Children[i]
	rec.Step(supervise.WorkflowClosed)
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
