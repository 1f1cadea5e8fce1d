package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"

	"github.com/steward-sh/steward/internal/treestatus"
	"github.com/steward-sh/steward/workflows"
)

func sampleTree() workflows.Status {
	return workflows.Status{Path: "plant", Kind: "supervisor", State: "running", Desired: "running", Reason: "1/3 workers at desired state", Generation: 2,
		Children: []workflows.Status{
			{Path: "plant/line-1", Kind: "supervisor", Strategy: "one_for_all", State: "running", Desired: "running", Generation: 2, Restarts: 3, ManualRestarts: 1, Children: []workflows.Status{
				{Path: "plant/line-1/press", Kind: "stub", State: "running", Desired: "running", Reason: "started", Generation: 2,
					LastAction: workflows.ActionStatus{Name: "start", Status: "succeeded", Attempts: 3}},
				{Path: "plant/line-1/saw", Kind: "stub", State: "failed", Desired: "running", Reason: "start failed permanently", Restarts: 4, ManualRestarts: 1, Generation: 2,
					LastAction: workflows.ActionStatus{Name: "start", Status: "permanent", Attempts: 1, Error: "bad path"}, RejectedSignals: 2},
			}},
			{Path: "plant/office", Kind: "stub", State: "backoff", Desired: "running", Reason: "crashed; restarting in 2s", Generation: 1, Applying: true},
		}}
}

func TestPrintTreeDrawsTheHierarchyWithCounters(t *testing.T) {
	var out bytes.Buffer
	printTree(&out, []workflows.Status{sampleTree()})
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	require.Len(t, lines, 6, out.String())
	require.True(t, strings.HasPrefix(lines[0], "PATH"))
	require.True(t, strings.HasPrefix(lines[1], "plant "))
	require.True(t, strings.HasPrefix(lines[2], "├─ plant/line-1 "))
	require.True(t, strings.HasPrefix(lines[3], "│  ├─ plant/line-1/press "))
	require.True(t, strings.HasPrefix(lines[4], "│  └─ plant/line-1/saw "))
	require.True(t, strings.HasPrefix(lines[5], "└─ plant/office "))
	require.Contains(t, lines[3], "start succeeded (3 attempts)")
	require.Contains(t, lines[4], "start failed permanently: bad path [2 signals rejected]")
	require.Regexp(t, `failed\s+running\s+4\s+1\s+2`, lines[4])
	require.Regexp(t, `supervisor one_for_all\s+running\s+running\s+3\s+1\s+2`, lines[2], "a supervisor shows its strategy and its own restarts")
}

func TestFailedWorkersNamesEachWithItsErrorAndSkipsApplyingOnes(t *testing.T) {
	st := sampleTree()
	require.Equal(t, []string{"plant/line-1/saw (start failed permanently: bad path)"}, failedWorkers(st))
	st.Children[0].Children[1].Applying = true // a fix is on its way
	require.Empty(t, failedWorkers(st))
}

func TestPrintRolloutShowsWhatDidNotSucceedAndTheCounts(t *testing.T) {
	st := workflows.RolloutStatus{Path: "plant", Op: "restart", State: "completed", Total: 3, Succeeded: 1, Failed: 1, Skipped: 1,
		Counts: map[string]int{"succeeded": 1, "failed": 1, "skipped": 1},
		Targets: []workflows.RolloutTarget{
			{Path: "plant/a", Status: "succeeded"}, {Path: "plant/b", Status: "failed", Error: "boom"}, {Path: "plant/c", Status: "skipped"},
		}}
	var out bytes.Buffer
	require.NoError(t, printRollout(&out, st, "text"))
	require.NotContains(t, out.String(), "plant/a")
	require.Regexp(t, `plant/b\s+failed\s+boom`, out.String())
	require.Contains(t, out.String(), "restart plant: completed — total 3, succeeded 1, failed 1, skipped 1, cancelled 0")
	out.Reset()
	require.NoError(t, printRollout(&out, st, "json"))
	require.Contains(t, out.String(), `"skipped": 1`)
}

// apply --wait names what it waits for: the supervisors with the most
// workers not yet at their desired state, a stale one with no rows first.
func TestSlowestNamesTheSupervisorsFurthestFromDone(t *testing.T) {
	st := sampleTree()
	st.Children = append(st.Children, workflows.Status{Path: "plant/line-2", Kind: "supervisor", State: "running", Stale: "did not answer in time"})
	require.Equal(t, "plant/line-2 (no answer), plant/line-1 (1 of 2), plant (0 of 1)", slowest(st, 3))
	require.Equal(t, "plant/line-2 (no answer)", slowest(st, 1))
}

// The stale rows are counted and the first few named.
func TestStaleSummaryCountsAndNamesStaleRows(t *testing.T) {
	st := sampleTree()
	require.Empty(t, staleSummary([]workflows.Status{st}))
	for i := range st.Children[0].Children {
		st.Children[0].Children[i].Stale = "x"
	}
	st.Children[0].Stale = "x"
	got := staleSummary([]workflows.Status{st})
	require.Contains(t, got, "3 nodes did not answer (plant/line-1, plant/line-1/press, plant/line-1/saw)")
	var out bytes.Buffer
	printTree(&out, []workflows.Status{st})
	require.Contains(t, out.String(), "[stale: x]")
}

// A node whose workflow task keeps failing says so in its row, beside its
// stale mark, and on stderr with where the stack is.
func TestPrintTreeMarksANodeWhoseTaskKeepsFailing(t *testing.T) {
	st := sampleTree()
	st.Children[1].Stale = "did not answer (Unable to query workflow due to Workflow Task in failed state.): row from its supervisor's record"
	st.Children[1].TaskFailing = &treestatus.TaskFailure{Attempts: 4, Cause: "WORKFLOW_WORKER_UNHANDLED_FAILURE",
		Message: "WorkerWorkflow run of code version 99: run a newer worker\nmore", Identity: "4242@db1"}
	var out bytes.Buffer
	printTree(&out, []workflows.Status{st})
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	require.Len(t, lines, 6, out.String())
	require.Contains(t, lines[5], "[workflow task failing: attempt 4, WORKFLOW_WORKER_UNHANDLED_FAILURE: WorkerWorkflow run of code version 99: run a newer worker ...]")
	require.NotContains(t, lines[1]+lines[2]+lines[3]+lines[4], "workflow task failing")

	var errOut bytes.Buffer
	warnTaskFailures(&errOut, []workflows.Status{st})
	require.Equal(t, "warning: plant/office does not answer: its workflow task keeps failing (attempt 4, WORKFLOW_WORKER_UNHANDLED_FAILURE: "+
		"WorkerWorkflow run of code version 99: run a newer worker ...); nothing of it moves until a worker can run it. "+
		"The stack is in the log of worker 4242@db1 and in `temporal workflow show --workflow-id plant/office`\n", errOut.String())
	errOut.Reset()
	warnTaskFailures(&errOut, []workflows.Status{sampleTree()})
	require.Empty(t, errOut.String())
}

// Causes and timeout types are spelled as the server's API names them,
// without their prefix.
func TestEnumNameIsTheAPIsName(t *testing.T) {
	require.Equal(t, "WORKFLOW_WORKER_UNHANDLED_FAILURE", enumName(enumspb.WorkflowTaskFailedCause_name,
		int32(enumspb.WORKFLOW_TASK_FAILED_CAUSE_WORKFLOW_WORKER_UNHANDLED_FAILURE), "WORKFLOW_TASK_FAILED_CAUSE_"))
	require.Equal(t, "GRPC_MESSAGE_TOO_LARGE", enumName(enumspb.WorkflowTaskFailedCause_name,
		int32(enumspb.WORKFLOW_TASK_FAILED_CAUSE_GRPC_MESSAGE_TOO_LARGE), "WORKFLOW_TASK_FAILED_CAUSE_"))
	require.Equal(t, "START_TO_CLOSE", enumName(enumspb.TimeoutType_name, int32(enumspb.TIMEOUT_TYPE_START_TO_CLOSE), "TIMEOUT_TYPE_"))
	require.Equal(t, "4242", enumName(enumspb.TimeoutType_name, 4242, "TIMEOUT_TYPE_"))
}

// Regression (attack review): `apply --wait` printed a failed worker's
// reason raw to the operator's terminal (a forged report's escape
// sequences, or a newline beginning a line of its own); the tables were
// made printable before, this message was not.
func TestFailedWorkers_AForgedReasonCannotDriveTheTerminal(t *testing.T) {
	st := workflows.Status{Path: "t/w", State: "failed", Reason: "boom\x1b]52;c;ZXZpbA==\x07\nstarter: all good",
		LastAction: workflows.ActionStatus{Error: "e\x1b[2K"}}
	got := failedWorkers(st)
	require.Equal(t, []string{"t/w (boom?]52;c;ZXZpbA==? starter: all good: e?[2K)"}, got)
}
