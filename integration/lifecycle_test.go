package integration

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/steward-sh/steward/workflows"
)

// Apply a spec, see it running through `starter status -o json`, then stop
// and start a worker through the starter and through `temporal workflow
// signal`, restart it, and find it by search attribute.
func TestApplyStatusStopStartViaStarterAndTemporalCLI(t *testing.T) {
	needServer(t)
	spec := writeSpec(t, `
name: it-life
children:
  - name: a
    kind: stub
    stub: {delay: 50ms}
  - name: b
    kind: stub
`)
	r := starter(t, "apply", "-f", spec, "--wait", "--timeout", "2m")
	require.Equal(t, 0, r.code, "apply: %s %s", r.stdout, r.stderr)
	require.Contains(t, r.stdout, "it-life: started")
	require.Contains(t, r.stdout, "all 2 workers at their desired state")
	t.Cleanup(func() { deleteTree(t, "it-life") })

	root := status(t, "it-life")
	require.Equal(t, "supervisor", root.Kind)
	require.Len(t, root.Children, 2)
	for _, c := range root.Children {
		require.Equal(t, "running", c.State, c.Path)
		require.Equal(t, "start", c.LastAction.Name)
		require.Equal(t, "succeeded", c.LastAction.Status)
		require.EqualValues(t, 1, c.Generation)
	}

	// The starter.
	r = starter(t, "stop", "it-life/a")
	require.Equal(t, 0, r.code, r.stderr)
	st := waitState(t, "it-life/a", "stopped", time.Minute)
	require.Equal(t, "stopped", st.Desired)
	r = starter(t, "start", "it-life/a")
	require.Equal(t, 0, r.code, r.stderr)
	waitState(t, "it-life/a", "running", time.Minute)

	// The temporal CLI, with the same signals.
	r = temporalCLI(t, "workflow", "signal", "--workflow-id", "it-life/b", "--name", "desired", "--input", `"stopped"`)
	require.Equal(t, 0, r.code, r.stderr)
	waitState(t, "it-life/b", "stopped", time.Minute)
	r = temporalCLI(t, "workflow", "signal", "--workflow-id", "it-life/b", "--name", "desired", "--input", `"running"`)
	require.Equal(t, 0, r.code, r.stderr)
	waitState(t, "it-life/b", "running", time.Minute)

	// A bad payload from the CLI is rejected and counted; the worker goes on.
	r = temporalCLI(t, "workflow", "signal", "--workflow-id", "it-life/b", "--name", "desired", "--input", `"upside-down"`)
	require.Equal(t, 0, r.code, r.stderr)
	eventually(t, time.Minute, func() (bool, string) {
		st := status(t, "it-life/b")
		return st.RejectedSignals == 1 && st.State == "running", fmt.Sprintf("%+v", st)
	})

	// A manual restart is counted apart from automatic ones.
	r = starter(t, "restart", "it-life/b")
	require.Equal(t, 0, r.code, r.stderr)
	eventually(t, time.Minute, func() (bool, string) {
		st := status(t, "it-life/b")
		return st.ManualRestarts == 1 && st.State == "running" && st.LastAction.Name == "restart", fmt.Sprintf("%+v", st)
	})
	require.Equal(t, 0, status(t, "it-life/b").Restarts)

	// The query through the temporal CLI answers the same JSON.
	r = temporalCLI(t, "workflow", "query", "--workflow-id", "it-life", "--name", "status", "-o", "json")
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, `"path": "it-life/b"`)

	// Search attributes are upserted on change: the CLI finds workers by state.
	eventually(t, time.Minute, func() (bool, string) {
		r := temporalCLI(t, "workflow", "list", "--query", "StewardPath='it-life/a' AND StewardState='running'", "-o", "json")
		return r.code == 0 && strings.Contains(r.stdout, `"it-life/a"`), r.stdout + r.stderr
	})

	// The readable tree.
	r = starter(t, "status", "it-life")
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, "├─ it-life/a")
	require.Contains(t, r.stdout, "└─ it-life/b")
}

// An invalid spec exits 2 with one line per problem, naming its path, and
// starts nothing.
func TestInvalidSpecExits2NamingEachProblemAndStartsNothing(t *testing.T) {
	needServer(t)
	spec := writeSpec(t, `
name: it-bad
children:
  - name: ok
    kind: stub
  - name: slow
    kind: stub
    timeouts: {start: 0s}
  - name: ok
    kind: stub
`)
	r := starter(t, "apply", "-f", spec)
	require.Equal(t, 2, r.code, r.stdout+r.stderr)
	require.Contains(t, r.stderr, "children[1].timeouts.start: must be > 0")
	require.Contains(t, r.stderr, `children[2].name: duplicate name "ok"`)
	d := temporalCLI(t, "workflow", "describe", "--workflow-id", "it-bad")
	require.NotEqual(t, 0, d.code, "nothing was started: %s", d.stdout)

	r = starter(t, "status", "no-such-tree")
	require.Equal(t, 1, r.code)
	require.Contains(t, r.stderr, `no workflow at "no-such-tree"`)
	r = starter(t, "frobnicate")
	require.Equal(t, 2, r.code)
}

// A crash is pushed to the worker workflow at once and the backoff restarts
// the service; a re-applied spec changes only what changed.
func TestCrashIsPushedAndRestartedAndReapplyReconciles(t *testing.T) {
	needServer(t)
	v1 := `
name: it-crash
children:
  - name: flaky
    kind: stub
    stub: {crashAfter: 1s}
    backoff: {initial: 200ms, max: 1s}
    observe: {interval: 1h}
  - name: steady
    kind: stub
`
	r := starter(t, "apply", "-f", writeSpec(t, v1), "--wait")
	require.Equal(t, 0, r.code, r.stdout+r.stderr)
	t.Cleanup(func() { deleteTree(t, "it-crash") })
	// The observe runs hourly: only the pushed exit can explain a restart.
	eventually(t, time.Minute, func() (bool, string) {
		st := status(t, "it-crash/flaky")
		return st.Restarts >= 2, fmt.Sprintf("%+v", st)
	})

	v2 := strings.Replace(v1, "stub: {crashAfter: 1s}", "stub: {delay: 10ms}", 1) + `
  - name: added
    kind: stub
`
	r = starter(t, "apply", "-f", writeSpec(t, v2), "--wait")
	require.Equal(t, 0, r.code, r.stdout+r.stderr)
	require.Contains(t, r.stdout, "spec sent to the running tree")
	root := status(t, "it-crash")
	require.EqualValues(t, 2, root.Generation)
	require.Len(t, root.Children, 3)
	steady, _ := root.Find("it-crash/steady")
	require.EqualValues(t, 1, steady.Generation, "the unchanged child is untouched")
	require.Equal(t, "start", steady.LastAction.Name, "and was not restarted")
	added, _ := root.Find("it-crash/added")
	require.Equal(t, "running", added.State)
}

// A stop while a start hangs cancels the start through its heartbeat: the
// worker is stopped in seconds, not after the one-hour start timeout.
func TestStopDuringHangingStartCancelsItThroughHeartbeat(t *testing.T) {
	needServer(t)
	r := starter(t, "apply", "-f", writeSpec(t, `
name: it-hang
children:
  - name: stuck
    kind: stub
    stub: {outcomes: {start: [timeout]}}
    timeouts: {start: 1h}
`))
	require.Equal(t, 0, r.code, r.stdout+r.stderr)
	t.Cleanup(func() { deleteTree(t, "it-hang") })
	eventually(t, time.Minute, func() (bool, string) {
		st := status(t, "it-hang/stuck")
		return st.State == "starting" && st.LastAction.Status == "running", fmt.Sprintf("%+v", st)
	})
	r = starter(t, "stop", "it-hang/stuck")
	require.Equal(t, 0, r.code, r.stderr)
	st := waitState(t, "it-hang/stuck", "stopped", 45*time.Second)
	require.Equal(t, "stop", st.LastAction.Name)
	require.Equal(t, "succeeded", st.LastAction.Status)
}

// Delete stops the children in reverse spec order and ends every workflow.
func TestDeleteStopsChildrenInReverseOrder(t *testing.T) {
	needServer(t)
	r := starter(t, "apply", "-f", writeSpec(t, `
name: it-del
children:
  - {name: a, kind: stub, stub: {delay: 100ms}}
  - {name: b, kind: stub, stub: {delay: 100ms}}
  - {name: c, kind: stub, stub: {delay: 100ms}}
`), "--wait")
	require.Equal(t, 0, r.code, r.stdout+r.stderr)
	r = starter(t, "delete", "it-del")
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, "it-del: deleted")
	// A closed workflow still answers queries (by replay).
	root := status(t, "it-del")
	require.Len(t, root.Children, 3)
	for _, c := range root.Children {
		require.Equal(t, "stopped", c.State, c.Path)
		require.Equal(t, "deleted", c.Reason, c.Path)
	}
	a, b, c := root.Children[0].Since, root.Children[1].Since, root.Children[2].Since
	require.False(t, c.After(b), "c stopped before b")
	require.False(t, b.After(a), "b stopped before a")
	for _, id := range []string{"it-del", "it-del/a", "it-del/b", "it-del/c"} {
		d := temporalCLI(t, "workflow", "describe", "--workflow-id", id, "-o", "json")
		require.Equal(t, 0, d.code, d.stderr)
		var desc struct {
			WorkflowExecutionInfo struct {
				Status string `json:"status"`
			} `json:"workflowExecutionInfo"`
		}
		require.NoError(t, json.Unmarshal([]byte(d.stdout), &desc))
		require.Equal(t, "WORKFLOW_EXECUTION_STATUS_CANCELED", desc.WorkflowExecutionInfo.Status, id)
	}
}

// A worker process that dies in the middle of an action loses nothing: the
// action's heartbeat stops, Temporal retries it on the next worker within
// seconds (not after its 10-minute timeout), and the service comes up.
func TestActionLostWithCrashedWorkerIsRetriedWithinSeconds(t *testing.T) {
	needServer(t)
	r := starter(t, "apply", "-f", writeSpec(t, `
name: it-crashworker
children:
  - name: slow
    kind: stub
    stub: {delay: 4s}
    timeouts: {start: 10m}
`))
	require.Equal(t, 0, r.code, r.stdout+r.stderr)
	t.Cleanup(func() { deleteTree(t, "it-crashworker") })
	// Wait until the worker process has picked the start up.
	eventually(t, time.Minute, func() (bool, string) {
		d := temporalCLI(t, "workflow", "describe", "--workflow-id", "it-crashworker/slow", "-o", "json")
		return d.code == 0 && strings.Contains(d.stdout, "PENDING_ACTIVITY_STATE_STARTED"), d.stdout + d.stderr
	})
	mainWorker.kill()
	killed := time.Now()
	w, err := startWorker("worker-2")
	require.NoError(t, err)
	mainWorker = w
	st := waitState(t, "it-crashworker/slow", "running", 2*time.Minute)
	took := time.Since(killed)
	t.Logf("service up %s after the worker was killed", took.Round(100*time.Millisecond))
	require.Equal(t, 2, st.LastAction.Attempts, "the lost attempt was retried once")
	require.Less(t, took, 5*time.Minute, "retried long before the 10m start timeout")
}

// Issue 25: `starter status` must answer in bounded time, however its
// workflows fare. With no worker process at all, no query can be answered:
// `status --timeout 3s` still answers (exit 0) within its time, the root
// marked stale with its row and its children's from visibility (one read
// of the root's direct children), a child supervisor that does not answer
// either with the rows below it from visibility; a new worker and the same
// command answer fresh again.
func TestStatusAnswersWithinItsTimeoutWhenNoWorkflowCanAnswer_Issue25(t *testing.T) {
	needServer(t)
	r := starter(t, "apply", "-f", writeSpec(t, `
name: it-statusbudget
children:
  - {name: a, kind: stub}
  - name: group
    children:
      - {name: b, kind: stub}
`), "--wait")
	require.Equal(t, 0, r.code, r.stdout+r.stderr)
	t.Cleanup(func() { deleteTree(t, "it-statusbudget") })

	r = starter(t, "status", "it-statusbudget", "--timeout", "0s")
	require.Equal(t, 2, r.code, r.stdout+r.stderr)
	require.Contains(t, r.stderr, "--timeout must be > 0")

	mainWorker.kill()
	began := time.Now()
	r = starter(t, "status", "it-statusbudget", "-o", "json", "--timeout", "3s")
	took := time.Since(began)
	w, err := startWorker("worker-statusbudget")
	require.NoError(t, err)
	mainWorker = w
	require.Equal(t, 0, r.code, r.stdout+r.stderr)
	var st workflows.Status
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &st), r.stdout)
	require.Contains(t, st.Stale, "did not answer in time: its row from visibility")
	group, ok := st.Find("it-statusbudget/group")
	require.True(t, ok, "the root's child from visibility: %+v", st)
	require.Contains(t, group.Stale, "did not answer in time: row from visibility")
	require.ElementsMatch(t, []string{"it-statusbudget/a", "it-statusbudget/group/b"}, st.Leaves())
	require.Contains(t, r.stderr, "did not answer")
	require.Empty(t, st.TaskFailingNodes(), "no worker is not a failing task: nothing is marked taskFailing")
	// Without the bound the root's query alone waits 10 s
	// (treestatus.DefaultRootTimeout); 3 s plus the fallback's second plus
	// a process's start stay well under 8.
	require.Less(t, took, 8*time.Second, "status took %s", took)

	eventually(t, time.Minute, func() (bool, string) {
		r := starter(t, "status", "it-statusbudget", "-o", "json", "--timeout", "3s")
		var st workflows.Status
		if r.code != 0 || json.Unmarshal([]byte(r.stdout), &st) != nil {
			return false, r.stdout + r.stderr
		}
		return len(st.StaleNodes()) == 0, fmt.Sprint("stale: ", st.StaleNodes())
	})
}
