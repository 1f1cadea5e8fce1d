package integration

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"

	"github.com/steward-sh/steward/activities"
)

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
	cl, err := client.Dial(client.Options{HostPort: address, Logger: quiet{}})
	require.NoError(t, err)
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	check := &activities.Control{Client: cl, Namespace: "default"}
	closed, err := check.ClosedChildren(ctx, activities.ClosedChildrenRequest{Parent: "it-closed",
		Paths: []string{"it-closed/a", "it-closed/b", "it-closed/c", "it-closed/never"}})
	require.NoError(t, err)
	require.Equal(t, []activities.ClosedChild{{Path: "it-closed/c", Status: "terminated"}, {Path: "it-closed/never", Status: "not found"}}, closed)
	deleteTree(t, "it-closed")
}
