package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	commonpb "go.temporal.io/api/common/v1"
	workflowpb "go.temporal.io/api/workflow/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"

	"github.com/stretchr/testify/require"

	"github.com/steward-sh/steward/internal/revision"
	"github.com/steward-sh/steward/internal/spec"
	"github.com/steward-sh/steward/internal/treestatus"
	"github.com/steward-sh/steward/workflows"
)

// What a namespace writer can make the starter read: query answers and
// visibility rows of workflows it started by hand. These tests stand a
// fake client in for the server (the integration tests drive a real one).

// answersClient answers queries and listings from functions; any other
// call panics (the embedded nil Client).
type answersClient struct {
	client.Client
	query func(ctx context.Context, id, queryType string) (any, error)
	list  func(query string) []*workflowpb.WorkflowExecutionInfo
}

type jsonValue struct{ v any }

func (j jsonValue) HasValue() bool { return j.v != nil }
func (j jsonValue) Get(ptr any) error {
	b, err := json.Marshal(j.v)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, ptr)
}

func (c answersClient) QueryWorkflow(ctx context.Context, id, _ string, queryType string, _ ...any) (converter.EncodedValue, error) {
	v, err := c.query(ctx, id, queryType)
	if err != nil {
		return nil, err
	}
	return jsonValue{v}, nil
}

func (c answersClient) ListWorkflow(_ context.Context, req *workflowservice.ListWorkflowExecutionsRequest) (*workflowservice.ListWorkflowExecutionsResponse, error) {
	return &workflowservice.ListWorkflowExecutionsResponse{Executions: c.list(req.GetQuery())}, nil
}

func running(id string, attrs map[string]string) *workflowpb.WorkflowExecutionInfo {
	fields := map[string]*commonpb.Payload{}
	for k, v := range attrs {
		p, _ := converter.GetDefaultDataConverter().ToPayload(v)
		fields[k] = p
	}
	return &workflowpb.WorkflowExecutionInfo{Execution: &commonpb.WorkflowExecution{WorkflowId: id},
		SearchAttributes: &commonpb.SearchAttributes{IndexedFields: fields}}
}

// Four workflows started by hand under names that sort first, whose
// queries never return, held all four of the console's slots for its whole
// look: every tree after them was never shown.
func TestConsole_RootsThatNeverAnswerHideNoOtherTree(t *testing.T) {
	c := answersClient{
		list: func(string) []*workflowpb.WorkflowExecutionInfo {
			return []*workflowpb.WorkflowExecutionInfo{running("a1", nil), running("a2", nil), running("a3", nil), running("a4", nil), running("prod", nil)}
		},
		query: func(ctx context.Context, id, _ string) (any, error) {
			if id == "prod" {
				return workflows.Status{Path: "prod", Kind: spec.KindSupervisor, State: "running", Desired: "running", Children: []workflows.Status{}}, nil
			}
			<-ctx.Done()
			return nil, ctx.Err()
		},
	}
	s := &consoleSource{c: c, namespace: "default"}
	for look := range 2 {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second) // a look's (internal/console)
		trees, _, err := s.Trees(ctx)
		cancel()
		require.NoError(t, err)
		var paths []string
		for _, tr := range trees {
			paths = append(paths, tr.Path)
		}
		require.Contains(t, paths, "prod", "look %d", look)
	}
	require.Equal(t, []string{"prod", "a1", "a2", "a3", "a4"}, rootsFirst(s.roots, s.unanswered), "the roots that did not answer are asked last")
}

// One workflow of another type started by hand under a root's name (it
// answers no status) made `starter status` print that error alone, no
// tree.
func TestStatus_ARootThatCannotBeReadHidesNoOtherTree(t *testing.T) {
	var listed string
	c := answersClient{
		list: func(q string) []*workflowpb.WorkflowExecutionInfo {
			listed = q
			return []*workflowpb.WorkflowExecutionInfo{running("aaa", nil), running("prod", nil), running("x' OR 'a'='a", nil)}
		},
		query: func(_ context.Context, id, _ string) (any, error) {
			if id == "prod" {
				return workflows.Status{Path: "prod", Kind: spec.KindSupervisor, State: "running", Desired: "running", Children: []workflows.Status{}}, nil
			}
			return nil, &unknownQuery{}
		},
	}
	sts, err := collectTrees(context.Background(), c, "default", nil, "false", treestatus.Options{})
	require.NoError(t, err)
	require.Len(t, sts, 2, "the ID that is no name is not a root")
	require.Equal(t, "aaa", sts[0].Path)
	require.Contains(t, sts[0].Stale, "could not be read")
	require.Equal(t, "prod", sts[1].Path)
	require.Empty(t, sts[1].Stale)
	require.Contains(t, listed, "WorkflowType IN ('SupervisorWorkflow', 'WorkerWorkflow')")

	_, err = collectTrees(context.Background(), c, "default", []string{"aaa"}, "false", treestatus.Options{})
	require.ErrorContains(t, err, "unknown queryType", "a root asked for by name still fails")
}

type unknownQuery struct{}

func (*unknownQuery) Error() string { return "unknown queryType status" }

// A record written by hand into prod's revisions, holding a spec of
// staging an operator once signed: `starter revert prod --sign-key`
// signed it again and rolled staging back.
func TestRevert_AKeptSpecOfAnotherTreeIsRefused(t *testing.T) {
	staging := spec.Node{Name: "staging", Kind: spec.KindStub}
	packed, err := spec.Compress(staging)
	require.NoError(t, err)
	c := answersClient{query: func(context.Context, string, string) (any, error) {
		return workflows.RevisionSpecInput{Root: "prod", Spec: packed}, nil
	}}
	e := revision.Entry{Revision: 3, Digest: spec.Digest(staging), Holder: "revision:prod:3"}
	_, err = keptSpec(context.Background(), c, "prod", e)
	require.ErrorContains(t, err, "is of the tree staging")
	n, err := keptSpec(context.Background(), c, "staging", e)
	require.NoError(t, err, "staging's own revision")
	require.Equal(t, "staging", n.Name)
}

// A rollout of prod whose status names billing/db restarted billing/db.
func TestRollout_ATargetNotUnderItsPathIsRefused(t *testing.T) {
	require.NoError(t, targetsUnder("prod", []string{"prod/web", "prod/a/b"}))
	require.NoError(t, targetsUnder("prod", []string{"prod"}), "a tree that is one worker")
	require.ErrorContains(t, targetsUnder("prod", []string{"prod/web", "billing/db"}), "billing/db that is not under it")
	require.Error(t, targetsUnder("prod", []string{"prodx/web"}))
}

// A workflow started by hand with StewardPath=prod/x and an old build kept
// `starter upgrade prod --wait` waiting for it until its timeout.
func TestUpgrade_AWorkflowThatOnlySaysItIsOfTheTreeIsNotCounted(t *testing.T) {
	build := map[string]string{workflows.SearchBuild.GetName(): "old"}
	c := answersClient{list: func(string) []*workflowpb.WorkflowExecutionInfo {
		return []*workflowpb.WorkflowExecutionInfo{running("prod", build), running("prod/web", build), running(workflows.RolloutID("prod/web"), build), running("evil", build), running("prodx", build)}
	}}
	rows, err := stewardWorkflows(context.Background(), c, "prod")
	require.NoError(t, err)
	var ids []string
	for _, r := range rows {
		ids = append(ids, r.id)
	}
	require.Equal(t, []string{"prod", "prod/web", "rollout:prod/web"}, ids)
}

// A reason or an error with escape sequences, printed in a warning, drove
// the operator's terminal (OSC 52 set its clipboard); a newline in it
// printed a line of its own.
func TestLinef_AWarningIsOnePrintableLine(t *testing.T) {
	var b strings.Builder
	linef(&b, "warning: %s did not answer: %v", "host\x1b]52;c;ZXZpbA==\x07", "boom\nprod  running  forged")
	require.Equal(t, "warning: host?]52;c;ZXZpbA==? did not answer: boom prod  running  forged\n", b.String())
}
