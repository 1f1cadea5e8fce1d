package workflows

import (
	"bytes"
	"fmt"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/steward-sh/steward/internal/buildinfo"
	"github.com/steward-sh/steward/internal/revision"
	"github.com/steward-sh/steward/internal/spec"
	"github.com/steward-sh/steward/internal/versions"
)

// A tree's revisions (internal/revision) live beside the tree, never in
// it: a RevisionsWorkflow per tree holds the log (small: twenty entries of
// a few hundred bytes), and a RevisionSpecWorkflow per revision holds the
// spec as applied, compressed. No supervisor carries a spec of the past,
// and a megabyte spec weighs on one holder's first event only.

// Signal and query names of the revisions (docs/updates.md).
const (
	// SignalRecord: an apply's RevisionRecord, before it hands the root
	// its spec.
	SignalRecord = "record"
	// SignalTaken: the root's revision.Taken on an apply's request.
	SignalTaken = "taken"
	// SignalOutcome: a judged revision.OutcomeReport.
	SignalOutcome = "outcome"
	// SignalDrop ends a RevisionSpecWorkflow (no payload).
	SignalDrop = "drop"
	// QueryRevisions answers the log (revision.Log).
	QueryRevisions = "revisions"
)

// RevisionsID is the workflow ID of the revisions of the tree root (a
// name has no ':', so no node's ID is ever one).
func RevisionsID(root string) string { return "revisions:" + root }

// RevisionSpecID is the workflow ID of the holder of the spec an apply
// with request ID request applied to the tree root.
func RevisionSpecID(root, request string) string { return "revision:" + root + ":" + request }

// RevisionRecord is what an apply tells a tree's revisions: its record,
// and the spec as applied (JSON, gzip-compressed: spec.Compress).
type RevisionRecord struct {
	revision.Record
	Spec []byte `json:"spec"`
}

// RevisionsInput starts (or continues) a tree's revisions.
type RevisionsInput struct {
	Root string       `json:"root"`
	Log  revision.Log `json:"log"`
	// Version is the version of the code that began the run (internal/versions;
	// 0: older than the versions).
	Version int `json:"version,omitempty"`
}

// RevisionSpecInput is a holder's spec: the tree, the apply's request, and
// the spec as applied (gzip-compressed JSON). Its query QuerySpec answers
// it as it is.
type RevisionSpecInput struct {
	Root    string `json:"root"`
	Request string `json:"request"`
	Spec    []byte `json:"spec"`
}

// RevisionsWorkflow holds the revisions of one tree (ID RevisionsID): the
// starter starts it with its first record (signal-with-start), the root
// tells it what each record became, and `starter revisions` asks it
// (QueryRevisions). It keeps each spec in a RevisionSpecWorkflow of its
// own, a child it abandons, and ends those the log no longer refers to.
// Cancelled (the tree is deleted), it ends every holder, then itself.
//
// It continues as new after every batch of signals, so a run's history is
// a handful of events, and a newer build takes over at the next signal.
// Caveat for whoever changes it: the first task of a run without signals
// must issue no command (a run waiting under an older build replays so).
func RevisionsWorkflow(ctx workflow.Context, in RevisionsInput) error {
	checkVersion("RevisionsWorkflow", in.Version, RevisionsVersion)
	log := in.Log
	if err := workflow.SetQueryHandler(ctx, QueryRevisions, func() (revision.Log, error) { return log, nil }); err != nil {
		return err
	}
	records := workflow.GetSignalChannel(ctx, SignalRecord)
	taken := workflow.GetSignalChannel(ctx, SignalTaken)
	outcomes := workflow.GetSignalChannel(ctx, SignalOutcome)
	// Holders start, and are dropped, on a disconnected context: a cancel
	// of this workflow must not reach a holder it just started.
	dctx, _ := workflow.NewDisconnectedContext(ctx)
	var pending []workflow.Future
	var drop []string
	take := func() bool {
		got := false
		for {
			var r RevisionRecord
			var t revision.Taken
			var o revision.OutcomeReport
			switch {
			case records.ReceiveAsync(&r):
				err := r.Check(len(r.Spec), spec.MaxTreeBytes)
				if err == nil && versions.RevisionsBounded.In(in.Version) {
					err = boundedRecord(r, workflow.GetInfo(ctx).GetCurrentHistorySize())
				}
				if err != nil {
					// Not an apply's: its request would name no workflow,
					// or the log would outgrow what a continue-as-new
					// carries. Dropped, and said.
					workflow.GetLogger(ctx).Warn("revisions: rejected record", "root", in.Root, "error", err.Error())
					count(ctx, MetricRejectedSignals, map[string]string{"signal": SignalRecord})
					break
				}
				holder := RevisionSpecID(in.Root, r.Request)
				pending = append(pending, startHolder(dctx, RevisionSpecInput{Root: in.Root, Request: r.Request, Spec: r.Spec}, holder))
				drop = append(drop, log.Add(r.Record, workflow.Now(ctx), holder)...)
			case taken.ReceiveAsync(&t):
				drop = append(drop, log.Take(t)...)
			case outcomes.ReceiveAsync(&o):
				log.Judged(o.Bounded())
			default:
				return got
			}
			got = true
		}
	}
	sel := workflow.NewSelector(ctx)
	wake := func(workflow.ReceiveChannel, bool) {}
	sel.AddReceive(ctx.Done(), wake) // first: a cancel wins over a signal in the same task
	sel.AddReceive(records, wake).AddReceive(taken, wake).AddReceive(outcomes, wake)
	sel.Select(ctx)
	// Take every signal, and what came while the holders started and
	// ended, before continuing as new: a signal left behind is lost.
	for ctx.Err() == nil && take() {
		for _, f := range pending {
			_ = f.Get(dctx, nil) // a holder of a record retried runs already
		}
		pending = nil
		dropHolders(dctx, drop)
		drop = nil
	}
	if ctx.Err() != nil { // cancelled: the tree is deleted
		take() // what came with the cancel: its holders go too
		for _, f := range pending {
			_ = f.Get(dctx, nil)
		}
		dropHolders(dctx, append(drop, log.Holders()...))
		return nil
	}
	return workflow.NewContinueAsNewError(ctx, RevisionsWorkflow, RevisionsInput{Root: in.Root, Log: log, Version: RevisionsVersion})
}

// MaxRevisionsRunBytes is the history a run of a tree's revisions takes
// records into (versions.RevisionsBounded): a record's spec is in its
// signal and its holder's input, and the server ends a run whose history
// passes 50 MiB (with the log it carries). A run continues as new after
// each batch, so only a flood of records reaches it.
const MaxRevisionsRunBytes = 24 << 20

// boundedRecord says why a record is refused (nil: taken), by a run whose
// history is historyBytes: its spec is not gzip (what spec.Compress
// writes), or the run holds MaxRevisionsRunBytes already.
func boundedRecord(r RevisionRecord, historyBytes int) error {
	if len(r.Spec) > 0 && !bytes.HasPrefix(r.Spec, []byte{0x1f, 0x8b}) {
		return fmt.Errorf("record %.100q: its spec is not gzip-compressed JSON", r.Request)
	}
	if historyBytes > MaxRevisionsRunBytes {
		return fmt.Errorf("record %.100q: this run's history holds %s already (records are taken up to %s a run)", r.Request, spec.FormatSize(int64(historyBytes)), spec.FormatSize(MaxRevisionsRunBytes))
	}
	return nil
}

// startHolder starts the holder of a record's spec; its future is ready
// once the holder runs (or could not start).
func startHolder(ctx workflow.Context, in RevisionSpecInput, id string) workflow.Future {
	cctx := workflow.WithChildOptions(ctx, workflow.ChildWorkflowOptions{
		WorkflowID:            id,
		TaskQueue:             TaskQueue,
		ParentClosePolicy:     enumspb.PARENT_CLOSE_POLICY_ABANDON,
		WorkflowIDReusePolicy: enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE,
		StaticSummary:         "steward: a spec applied to " + in.Root,
		TypedSearchAttributes: temporal.NewSearchAttributes(SearchPath.ValueSet(in.Root), SearchKind.ValueSet("revision"), SearchBuild.ValueSet(buildinfo.ID())),
	})
	return workflow.ExecuteChildWorkflow(cctx, RevisionSpecWorkflow, in).GetChildWorkflowExecution()
}

// dropHolders ends the holders, and waits until each has the signal (or
// is gone already).
func dropHolders(ctx workflow.Context, ids []string) {
	var fs []workflow.Future
	for _, id := range ids {
		fs = append(fs, workflow.SignalExternalWorkflow(ctx, id, "", SignalDrop, nil))
	}
	for _, f := range fs {
		_ = f.Get(ctx, nil)
	}
}

// RevisionSpecWorkflow holds the spec of one applied revision until its
// tree's revisions drop it (SignalDrop) or it is cancelled. It does
// nothing else: a history of its start and one task, whatever the build.
func RevisionSpecWorkflow(ctx workflow.Context, in RevisionSpecInput) error {
	if err := workflow.SetQueryHandler(ctx, QuerySpec, func() (RevisionSpecInput, error) { return in, nil }); err != nil {
		return err
	}
	sel := workflow.NewSelector(ctx)
	sel.AddReceive(workflow.GetSignalChannel(ctx, SignalDrop), func(c workflow.ReceiveChannel, _ bool) { c.Receive(ctx, nil) })
	sel.AddReceive(ctx.Done(), func(workflow.ReceiveChannel, bool) {})
	sel.Select(ctx)
	return nil
}
