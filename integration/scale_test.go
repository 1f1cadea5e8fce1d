package integration

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

// largestEvent is the size of the largest event of a workflow's history, as
// the event's JSON in `temporal workflow show -o json`, leaving out the
// events that carry the spec as the operator wrote it (the first run's
// start, `spec` signals, the start of a child with its part of the spec):
// what grows with the tree there is the operator's file, not steward's
// state.
func largestEvent(t *testing.T, id string) (size int, what string) {
	t.Helper()
	r := temporalCLI(t, "workflow", "show", "-w", id, "-o", "json")
	require.Equal(t, 0, r.code, r.stderr)
	var h struct {
		Events []json.RawMessage `json:"events"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &h))
	for i, raw := range h.Events {
		var e struct {
			EventType string `json:"eventType"`
			Signaled  *struct {
				SignalName string `json:"signalName"`
			} `json:"workflowExecutionSignaledEventAttributes"`
		}
		require.NoError(t, json.Unmarshal(raw, &e))
		switch {
		case i == 0 && e.EventType == "EVENT_TYPE_WORKFLOW_EXECUTION_STARTED",
			e.EventType == "EVENT_TYPE_START_CHILD_WORKFLOW_EXECUTION_INITIATED",
			e.Signaled != nil && e.Signaled.SignalName == "spec":
			continue
		}
		if len(raw) > size {
			size, what = len(raw), e.EventType
		}
	}
	return size, what
}

// eventTypes lists the types of a workflow's history events, in order.
func eventTypes(t *testing.T, id string) []string {
	t.Helper()
	r := temporalCLI(t, "workflow", "show", "-w", id, "-o", "json")
	require.Equal(t, 0, r.code, r.stderr)
	var h struct {
		Events []struct {
			EventType string `json:"eventType"`
		} `json:"events"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &h))
	var out []string
	for _, e := range h.Events {
		out = append(out, e.EventType)
	}
	return out
}

// The root of a tree keeps one small record per direct child and hears only
// its children's own changes: its largest history event is the same for
// 10 groups of 10 workers and 10 groups of 50, after every worker has
// started and been restarted by a rollout (issue 13: it grew with the
// whole tree, to 2.45 MB at 4,000 workers).
func TestScale_RootEventsDoNotGrowWithTheTree(t *testing.T) {
	needServer(t)
	sizes := map[int]int{}
	for _, per := range []int{10, 50} {
		name := fmt.Sprintf("it-scale-%d", 10*per)
		r := starter(t, "apply", "-f", writeSpec(t, fleetSpec(name, 10, per, "{}")), "--wait", "--timeout", "4m")
		require.Equal(t, 0, r.code, r.stdout+r.stderr)
		r = starter(t, "rollout", "restart", name, "--chunk", "100", "-o", "json")
		require.Equal(t, 0, r.code, r.stdout+r.stderr)
		st := status(t, name)
		at, total := st.AtDesired()
		require.Equal(t, 10*per, total)
		require.Equal(t, total, at, st.Reason)
		g, _ := st.Find(name + "/g3")
		require.Len(t, g.Children, per, "status assembles the whole tree")
		// Its start's report reached the group from the start activity (the
		// group's record says running: apply --wait returned), so the
		// worker's history has no signal of its own.
		require.NotContains(t, eventTypes(t, name+"/g3/w03"), "EVENT_TYPE_SIGNAL_EXTERNAL_WORKFLOW_EXECUTION_INITIATED")
		root, what := largestEvent(t, name)
		group, _ := largestEvent(t, name+"/g3")
		t.Logf("%d workers: largest event of the root %d bytes (%s), of a group %d bytes", 10*per, root, what, group)
		sizes[per] = root
		deleteTree(t, name)
	}
	require.Less(t, sizes[50], 2*sizes[10], "the root's largest event does not grow with the workers below it")
	r := starter(t, "status", "--exact", "sometimes")
	require.Equal(t, 2, r.code, "bad --exact is bad input")
	require.Contains(t, r.stderr, "--exact must be auto, true or false")
	require.Less(t, sizes[50], 16<<10)
}
