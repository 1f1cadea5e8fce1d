package workflows

import (
	"bytes"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/testsuite"

	"github.com/steward-sh/steward/internal/revision"
	"github.com/steward-sh/steward/internal/spec"
	"github.com/steward-sh/steward/internal/versions"
)

// revisionsEnv is a test environment for RevisionsWorkflow whose holders
// are mocked: it records the drops signalled.
type revisionsEnv struct {
	*testsuite.TestWorkflowEnvironment
	mu      sync.Mutex
	dropped []string
}

func newRevisionsEnv(t *testing.T) *revisionsEnv { return newRevisionsEnvLike(t, &revisionsEnv{}) }

// newRevisionsEnvLike gives rec a fresh environment, recording into its
// lists (for the next run of the same workflow).
func newRevisionsEnvLike(t *testing.T, rec *revisionsEnv) *revisionsEnv {
	var s testsuite.WorkflowTestSuite
	e := rec
	e.TestWorkflowEnvironment = s.NewTestWorkflowEnvironment()
	e.RegisterWorkflow(RevisionsWorkflow)
	e.RegisterWorkflow(RevisionSpecWorkflow)
	e.OnWorkflow(RevisionSpecWorkflow, mock.Anything, mock.Anything).Return(nil)
	e.OnSignalExternalWorkflow(mock.Anything, mock.Anything, "", SignalDrop, mock.Anything).Return(func(_, id, _, _ string, _ any) error {
		e.mu.Lock()
		defer e.mu.Unlock()
		e.dropped = append(e.dropped, id)
		return nil
	})
	return e
}

// runRevisions runs RevisionsWorkflow from in once per signal (the test
// environment runs a workflow as each signal comes, so a run takes one),
// and returns the input of the last run's continue-as-new.
func runRevisions(t *testing.T, e *revisionsEnv, in RevisionsInput, signals ...[2]any) RevisionsInput {
	for _, sig := range signals {
		env := newRevisionsEnvLike(t, e)
		env.RegisterDelayedCallback(func() { env.SignalWorkflow(sig[0].(string), sig[1]) }, time.Second)
		env.ExecuteWorkflow(RevisionsWorkflow, in)
		next, ok := continuedAs[RevisionsInput](t, env.GetWorkflowError())
		require.True(t, ok, "%v", env.GetWorkflowError())
		in = next
	}
	return in
}

// A record, then the root's word on it: the spec goes to a holder of its
// own (started before the run continues as new), the log keeps the
// revision (not the spec), and each run continues as new with the log.
func TestRevisions_ARecordTakenByTheRootBecomesARevision(t *testing.T) {
	e := newRevisionsEnv(t)
	gz, err := spec.Compress(spec.Node{Name: "shop", Children: []spec.Node{{Name: "web", Kind: spec.KindStub}}})
	require.NoError(t, err)
	next := runRevisions(t, e, RevisionsInput{Root: "shop"},
		[2]any{SignalRecord, RevisionRecord{Record: revision.Record{Request: "r1", Digest: "d1", Message: "first", User: "ops", Host: "laptop"}, Spec: gz}},
		[2]any{SignalTaken, revision.Taken{Request: "r1", Revision: 1, Changed: true}})
	require.Equal(t, "shop", next.Root)
	require.Empty(t, next.Log.Pending)
	require.Len(t, next.Log.Entries, 1)
	got := next.Log.Entries[0]
	require.EqualValues(t, 1, got.Revision)
	require.Equal(t, revision.Rolling, got.Outcome)
	require.Equal(t, "first", got.Message)
	require.Equal(t, RevisionSpecID("shop", "r1"), got.Holder)
	e.mu.Lock()
	defer e.mu.Unlock()
	require.Empty(t, e.dropped)
	// The holder's own answer is the integration test's (the spec a
	// revert reads back): the test environment runs a child only after
	// its parent's run has ended.
}

// An apply that changed nothing leaves no revision: its holder goes.
// An outcome judged by the starter is kept.
func TestRevisions_AnApplyThatChangedNothingDropsItsSpec(t *testing.T) {
	e := newRevisionsEnv(t)
	in := RevisionsInput{Root: "shop", Log: revision.Log{Entries: []revision.Entry{{Revision: 4, Digest: "d4", Outcome: revision.Rolling, Holder: RevisionSpecID("shop", "r4")}}}}
	next := runRevisions(t, e, in,
		[2]any{SignalOutcome, revision.OutcomeReport{Revision: 4, Outcome: revision.Complete}},
		[2]any{SignalRecord, RevisionRecord{Record: revision.Record{Request: "r5", Digest: "d4"}}},
		[2]any{SignalTaken, revision.Taken{Request: "r5", Revision: 4}})
	require.Len(t, next.Log.Entries, 1)
	require.Equal(t, revision.Complete, next.Log.Entries[0].Outcome)
	require.Empty(t, next.Log.Pending)
	e.mu.Lock()
	defer e.mu.Unlock()
	require.Equal(t, []string{RevisionSpecID("shop", "r5")}, e.dropped)
}

// Deleting the tree cancels its revisions: every spec they hold goes,
// then they end.
func TestRevisions_CancelledTheyDropEverySpec(t *testing.T) {
	e := newRevisionsEnv(t)
	in := RevisionsInput{Root: "shop", Log: revision.Log{
		Entries: []revision.Entry{{Revision: 1, Holder: "h1"}, {Revision: 2, Holder: "h2"}},
		Pending: []revision.Pending{{Record: revision.Record{Request: "r3"}, Holder: "h3"}},
	}}
	e.RegisterDelayedCallback(e.CancelWorkflow, time.Second)
	e.ExecuteWorkflow(RevisionsWorkflow, in)
	require.True(t, e.IsWorkflowCompleted())
	require.NoError(t, e.GetWorkflowError())
	sort.Strings(e.dropped)
	require.Equal(t, []string{"h1", "h2", "h3"}, e.dropped)
}

// A holder answers its spec until it is dropped.
func TestRevisionSpec_AnswersItsSpecUntilDropped(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	in := RevisionSpecInput{Root: "shop", Request: "r1", Spec: []byte{1, 2, 3}}
	env.RegisterDelayedCallback(func() {
		v, err := env.QueryWorkflow(QuerySpec)
		require.NoError(t, err)
		var got RevisionSpecInput
		require.NoError(t, v.Get(&got))
		require.Equal(t, in, got)
		env.SignalWorkflow(SignalDrop, nil)
	}, time.Hour)
	env.ExecuteWorkflow(RevisionSpecWorkflow, in)
	require.True(t, env.IsWorkflowCompleted())
	require.NoError(t, env.GetWorkflowError())
}

// Regression (review of the revisions): a record and the tree's deletion
// in the same task lost the cancel; the run continued as new, and the
// holders stayed. The cancel wins: every holder goes, the new one too.
func TestRevisions_ACancelWithASignalIsNotLost(t *testing.T) {
	e := newRevisionsEnv(t)
	in := RevisionsInput{Root: "shop", Log: revision.Log{Entries: []revision.Entry{{Revision: 1, Holder: "h1"}}}}
	e.RegisterDelayedCallback(func() {
		e.SignalWorkflow(SignalRecord, RevisionRecord{Record: revision.Record{Request: "r2", Digest: "d2"}})
		e.CancelWorkflow()
	}, time.Second)
	e.ExecuteWorkflow(RevisionsWorkflow, in)
	require.True(t, e.IsWorkflowCompleted())
	_, continued := continuedAs[RevisionsInput](t, e.GetWorkflowError())
	require.False(t, continued, "the cancel was lost: %v", e.GetWorkflowError())
	// The new holder is the environment's own child, which it signals
	// itself: the log shows the record was taken with the cancel, and
	// dropHolders drops every holder of the log.
	v, err := e.QueryWorkflow(QueryRevisions)
	require.NoError(t, err)
	var l revision.Log
	require.NoError(t, v.Get(&l))
	require.ElementsMatch(t, []string{"h1", RevisionSpecID("shop", "r2")}, l.Holders())
	e.mu.Lock()
	defer e.mu.Unlock()
	require.Contains(t, e.dropped, "h1")
}

// TestRevisions_ForgedRecordsAreRejected: a record sent with the temporal
// CLI whose request names no workflow (1,100 characters: its holder's ID
// is too long, and the start fails every task) or whose message is a
// megabyte (the log outgrows what a continue-as-new carries) is dropped;
// an outcome's long reason is cut. The log goes on.
func TestRevisions_ForgedRecordsAreRejected(t *testing.T) {
	e := newRevisionsEnv(t)
	in := RevisionsInput{Root: "shop", Log: revision.Log{Entries: []revision.Entry{{Revision: 4, Digest: "d4", Outcome: revision.Rolling, Holder: RevisionSpecID("shop", "r4")}}}}
	next := runRevisions(t, e, in,
		[2]any{SignalRecord, RevisionRecord{Record: revision.Record{Request: strings.Repeat("r", 1100), Digest: "d5"}}},
		[2]any{SignalRecord, RevisionRecord{Record: revision.Record{Request: "r6", Digest: "d6", Message: strings.Repeat("m", 1<<20)}}},
		[2]any{SignalOutcome, revision.OutcomeReport{Revision: 4, Outcome: revision.Failed, Reason: strings.Repeat("x", 1<<20)}})
	require.Empty(t, next.Log.Pending, "neither record was taken")
	require.Len(t, next.Log.Entries, 1)
	require.Equal(t, revision.Failed, next.Log.Entries[0].Outcome)
	require.Len(t, next.Log.Entries[0].Reason, revision.MaxReason+len("…"))
}

// A record whose spec is not gzip was taken and held (its bytes in the
// signal and in its holder's input): a flood of them grew a run past the
// server's history limit. From version 2 it is refused; version 1 took it.
func TestRevisions_ARecordWhoseSpecIsNotGzipIsRefused(t *testing.T) {
	junk := bytes.Repeat([]byte{0xAB}, 4096)
	for _, version := range []int{versions.RevisionsBounded.Since - 1, versions.RevisionsBounded.Since} {
		e := newRevisionsEnv(t)
		next := runRevisions(t, e, RevisionsInput{Root: "shop", Version: version},
			[2]any{SignalRecord, RevisionRecord{Record: revision.Record{Request: "r1", Digest: "d1"}, Spec: junk}})
		if versions.RevisionsBounded.In(version) {
			require.Empty(t, next.Log.Pending, "version %d: refused", version)
		} else {
			require.Len(t, next.Log.Pending, 1, "version %d: taken", version)
		}
		require.Equal(t, versions.Revisions, next.Version, "continued as the newest version")
	}
}

func TestBoundedRecord(t *testing.T) {
	gz, err := spec.Compress(spec.Node{Name: "shop"})
	require.NoError(t, err)
	require.NoError(t, boundedRecord(RevisionRecord{Spec: gz}, 1<<20))
	require.NoError(t, boundedRecord(RevisionRecord{}, 1<<20), "no spec kept")
	require.ErrorContains(t, boundedRecord(RevisionRecord{Spec: []byte("{}")}, 0), "not gzip")
	require.ErrorContains(t, boundedRecord(RevisionRecord{Spec: gz}, MaxRevisionsRunBytes+1), "history holds")
}
