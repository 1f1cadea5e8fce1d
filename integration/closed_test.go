package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"

	"github.com/steward-sh/steward/activities"
)

// controlActivities are the control queue's activities over a client of the
// test server, called in the test's process, with a context of 30 s; both
// end with the test.
func controlActivities(t *testing.T) (*activities.Control, context.Context) {
	t.Helper()
	cl, err := client.Dial(client.Options{HostPort: address, Logger: quiet{}})
	require.NoError(t, err)
	t.Cleanup(cl.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return &activities.Control{Client: cl, Namespace: "default"}, ctx
}

// continuedRuns counts the runs of the workflow id that continued as new
// (visibility; it may lag a little).
func continuedRuns(t *testing.T, id string) int {
	t.Helper()
	l := temporalCLI(t, "workflow", "count", "--query", fmt.Sprintf("WorkflowId = '%s' AND ExecutionStatus = 'ContinuedAsNew'", id))
	require.Equal(t, 0, l.code, l.stderr)
	n := 0
	_, err := fmt.Sscanf(strings.TrimSpace(strings.TrimPrefix(l.stdout, "Total:")), "%d", &n)
	require.NoError(t, err, l.stdout)
	return n
}

// describe returns the current run ID and status of the workflow id, from
// `temporal workflow describe`.
func describe(t *testing.T, id string) (runID, status string) {
	t.Helper()
	d := temporalCLI(t, "workflow", "describe", "--workflow-id", id, "-o", "json")
	require.Equal(t, 0, d.code, d.stderr)
	var desc struct {
		WorkflowExecutionInfo struct {
			Execution struct {
				RunID string `json:"runId"`
			} `json:"execution"`
			Status string `json:"status"`
		} `json:"workflowExecutionInfo"`
	}
	require.NoError(t, json.Unmarshal([]byte(d.stdout), &desc))
	return desc.WorkflowExecutionInfo.Execution.RunID, desc.WorkflowExecutionInfo.Status
}

// runOf is describe as one string, to compare runs.
func runOf(t *testing.T, id string) string {
	t.Helper()
	run, status := describe(t, id)
	return run + " " + status
}

// Regression (issue 13, hole 1): a child workflow terminated by hand stayed
// "running" in its supervisor forever. Now it is started anew (a permanent
// child), or shown failed with the cause (a temporary one); the check a
// supervisor runs after continue-as-new finds such children on the real
// server.
func TestTerminatedChildIsStartedAnewOrShownClosed(t *testing.T) {
	needServer(t)
	r := starter(t, "apply", "-f", writeSpec(t, `
name: it-closed
children:
  - {name: a, kind: stub}
  - {name: b, kind: stub}
  - {name: c, kind: stub, restart: temporary}
`), "--wait")
	require.Equal(t, 0, r.code, r.stdout+r.stderr)
	before := runOf(t, "it-closed/b")
	for _, id := range []string{"it-closed/b", "it-closed/c"} {
		tr := temporalCLI(t, "workflow", "terminate", "--workflow-id", id, "--reason", "by hand (test)")
		require.Equal(t, 0, tr.code, tr.stderr)
	}
	eventually(t, 30*time.Second, func() (bool, string) {
		st, err := tryStatus(t, "it-closed")
		if err != nil {
			return false, err.Error()
		}
		b, _ := st.Find("it-closed/b")
		c, _ := st.Find("it-closed/c")
		now := runOf(t, "it-closed/b")
		return b.State == "running" && now != before && c.State == "failed",
			"b: " + b.State + " (" + now + "), c: " + c.State + " " + c.Reason
	})
	c, _ := status(t, "it-closed").Find("it-closed/c")
	require.Contains(t, c.Reason, "workflow closed: terminated")

	// The check a carried-over run makes, on this server.
	check, ctx := controlActivities(t)
	closed, err := check.ClosedChildren(ctx, activities.ClosedChildrenRequest{Parent: "it-closed",
		Paths: []string{"it-closed/a", "it-closed/b", "it-closed/c", "it-closed/never"}})
	require.NoError(t, err)
	require.Equal(t, []activities.ClosedChild{{Path: "it-closed/c", Status: "terminated"}, {Path: "it-closed/never", Status: "not found"}}, closed)
	deleteTree(t, "it-closed")
}

// A closed child supervisor's subtree spec reads back from its workflows on
// the real server: the closed workflow answers its own level (a query of a
// closed workflow replays it), its running child supervisor its own, and the
// workers' nodes come whole from their parents' levels. A supervisor that
// continued as new starts such a child anew with it (workflow test
// TestClosedChild_ASupervisorClosedAfterContinueAsNewIsStartedAnewWithItsReadBackSpec).
func TestClosedSupervisorsSpecReadsBackFromItsWorkflows(t *testing.T) {
	needServer(t)
	r := starter(t, "apply", "-f", writeSpec(t, `
name: it-readback
vars: {colour: blue}
children:
  - name: g
    restart: temporary
    strategy: one_for_all
    children:
      - {name: x, kind: stub, stub: {delay: 1ms}}
      - name: h
        children:
          - {name: y, kind: stub}
          - {name: z, kind: stub, desired: stopped}
`), "--wait")
	require.Equal(t, 0, r.code, r.stdout+r.stderr)
	tr := temporalCLI(t, "workflow", "terminate", "--workflow-id", "it-readback/g", "--reason", "by hand (test)")
	require.Equal(t, 0, tr.code, tr.stderr)
	eventually(t, 30*time.Second, func() (bool, string) {
		_, st := describe(t, "it-readback/g")
		return st == "WORKFLOW_EXECUTION_STATUS_TERMINATED", st
	})

	c, ctx := controlActivities(t)
	g, err := c.SubtreeSpec(ctx, activities.SubtreeSpecRequest{Path: "it-readback/g"})
	require.NoError(t, err)
	require.Equal(t, "g", g.Name)
	require.Equal(t, "one_for_all", g.Strategy)
	require.Equal(t, "blue", g.Vars["colour"], "as it was handed down")
	require.Len(t, g.Children, 2)
	require.Equal(t, "x", g.Children[0].Name)
	require.Equal(t, "stub", g.Children[0].Kind)
	h := g.Children[1]
	require.Equal(t, "h", h.Name)
	require.Len(t, h.Children, 2, "the running child supervisor's level")
	require.Equal(t, []string{"y", "z"}, []string{h.Children[0].Name, h.Children[1].Name})
	require.Equal(t, "stopped", h.Children[1].Desired)

	_, err = c.SubtreeSpec(ctx, activities.SubtreeSpecRequest{Path: "it-readback/nothing"})
	require.Error(t, err, "a subtree with no workflow does not read back")
	deleteTree(t, "it-readback")
}

// Regression (issue 13, closed children): a child supervisor terminated by
// hand after its parent continued as new stayed closed until the operator
// applied the tree again (the parent's run held only the child's own
// fields). Now the parent's run finds it closed, reads its subtree's spec
// back from its workflows and starts it anew; its children, still running,
// are adopted, not restarted.
func TestSupervisorClosedAfterItsParentContinuedAsNewIsStartedAnew(t *testing.T) {
	needServer(t)
	r := starter(t, "apply", "-f", writeSpec(t, `
name: it-reborn
children:
  - name: g
    children:
      - {name: x, kind: stub}
      - name: h
        children:
          - {name: y, kind: stub}
`), "--history-limit", "30", "--wait")
	require.Equal(t, 0, r.code, r.stdout+r.stderr)
	// A child report that is not one is rejected and counted, and lengthens
	// the root's history: nudges until it continues as new (a run that holds
	// no future for g and looks at its children at its start).
	nudge := func() {
		s := temporalCLI(t, "workflow", "signal", "--workflow-id", "it-reborn", "--name", "child", "--input", `"nudge"`)
		require.Equal(t, 0, s.code, s.stderr)
	}
	continued := func() int { return continuedRuns(t, "it-reborn") }
	eventually(t, 60*time.Second, func() (bool, string) {
		nudge()
		return continued() > 0, "the root has not continued as new"
	})
	g0, x0, y0 := runOf(t, "it-reborn/g"), runOf(t, "it-reborn/g/x"), runOf(t, "it-reborn/g/h/y")
	tr := temporalCLI(t, "workflow", "terminate", "--workflow-id", "it-reborn/g", "--reason", "by hand (test)")
	require.Equal(t, 0, tr.code, tr.stderr)
	// The next run's look at its children finds g closed.
	n := continued()
	eventually(t, 90*time.Second, func() (bool, string) {
		if continued() == n {
			nudge()
		}
		st, err := tryStatus(t, "it-reborn")
		if err != nil {
			return false, err.Error()
		}
		g, _ := st.Find("it-reborn/g")
		now := runOf(t, "it-reborn/g")
		return g.State == "running" && strings.HasSuffix(now, "RUNNING") && now != g0, "g: " + g.State + " " + g.Reason + " (" + now + ")"
	})
	require.Equal(t, x0, runOf(t, "it-reborn/g/x"), "x was adopted, not started anew")
	require.Equal(t, y0, runOf(t, "it-reborn/g/h/y"), "y was adopted, not started anew")
	st := status(t, "it-reborn")
	y, _ := st.Find("it-reborn/g/h/y")
	require.Equal(t, "running", y.State)
	require.Zero(t, y.ManualRestarts+y.Restarts, "y was not restarted")
	deleteTree(t, "it-reborn")
}
