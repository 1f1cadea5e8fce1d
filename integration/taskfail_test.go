package integration

import (
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/steward-sh/steward/internal/telemetry"
	"github.com/steward-sh/steward/workflows"
)

// A workflow task that keeps failing, for real: a SupervisorWorkflow run
// of a code version this worker's build does not know panics in its first
// task (checkVersion), as a run begun by a newer build does on an older
// worker, and the server retries the task for ever. `starter status PATH`
// answers within its --timeout, marks the node with the failure (JSON
// taskFailing: attempts, cause, message, the worker's identity; a readable
// mark in text, and a warning naming where the stack is), the worker's
// log has the stack, and the worker counts the failures in the SDK's
// counter the alert StewardWorkflowTaskFailing reads.
func TestStatusMarksANodeWhoseWorkflowTaskKeepsFailing(t *testing.T) {
	needServer(t)
	const id = "it-taskfail"
	failedBefore := supervisorTasksFailed(scrape(t))
	r := temporalCLI(t, "workflow", "start", "--type", "SupervisorWorkflow", "--task-queue", workflows.TaskQueue,
		"--workflow-id", id, "--input", fmt.Sprintf(`{"path": %q, "version": 999}`, id))
	require.Equal(t, 0, r.code, r.stdout+r.stderr)
	t.Cleanup(func() {
		temporalCLI(t, "workflow", "terminate", "--workflow-id", id, "--reason", "end of test")
		// Gone from the running roots before the next test lists them.
		eventually(t, 30*time.Second, func() (bool, string) {
			r := temporalCLI(t, "workflow", "list", "--query", "WorkflowId = '"+id+"' AND ExecutionStatus = 'Running'", "-o", "json")
			return r.code == 0 && !strings.Contains(r.stdout, id), r.stdout + r.stderr
		})
	})

	// The first status may come while the task has failed only once (no
	// retry pending yet): ask until the node is marked.
	const timeout = 8 * time.Second
	var st workflows.Status
	eventually(t, 90*time.Second, func() (bool, string) {
		began := time.Now()
		r := starter(t, "status", id, "-o", "json", "--timeout", timeout.String())
		took := time.Since(began)
		// The command's own bound, plus room for starting a process on a
		// busy machine: before, the query waited for its whole timeout
		// and said only "did not answer".
		require.Less(t, took, timeout+10*time.Second, "status of a node whose task keeps failing took %s", took)
		if r.code != 0 {
			return false, fmt.Sprintf("exit %d: %s", r.code, r.stderr)
		}
		st = workflows.Status{}
		if err := json.Unmarshal([]byte(r.stdout), &st); err != nil {
			return false, err.Error() + ": " + r.stdout
		}
		if st.TaskFailing == nil || st.TaskFailing.Message == "" {
			return false, r.stdout + r.stderr
		}
		t.Logf("status -o json (%s):\n%s", took.Round(time.Millisecond), r.stdout)
		return true, ""
	})
	require.Equal(t, id, st.Path)
	require.NotEmpty(t, st.Stale, "its row is not its own answer")
	f := st.TaskFailing
	require.GreaterOrEqual(t, f.Attempts, 2, "the task is being retried")
	require.Equal(t, "WORKFLOW_WORKER_UNHANDLED_FAILURE", f.Cause)
	require.Contains(t, f.Message, "SupervisorWorkflow run of code version 999")
	require.Contains(t, f.Message, "run a newer worker")
	require.NotEmpty(t, f.Identity, "the worker that failed it")
	require.False(t, f.Since.IsZero())

	// Text: the row says so, and stderr says where the stack is.
	r = starter(t, "status", id, "--timeout", timeout.String())
	require.Equal(t, 0, r.code, r.stdout+r.stderr)
	t.Logf("status:\n%s%s", r.stdout, r.stderr)
	require.Regexp(t, `(?m)^`+id+` .*\[workflow task failing: attempt \d+, WORKFLOW_WORKER_UNHANDLED_FAILURE: SupervisorWorkflow run of code version 999`, r.stdout)
	require.Contains(t, r.stderr, "warning: "+id+" does not answer: its workflow task keeps failing")
	require.Contains(t, r.stderr, "temporal workflow show --workflow-id "+id)

	// The worker's log has the stack, with the workflow ID (the main
	// worker's: a test before may have replaced worker-1).
	logFile := mainWorker.log.Name()
	eventually(t, 30*time.Second, func() (bool, string) {
		b, err := os.ReadFile(logFile)
		if err != nil {
			return false, err.Error()
		}
		for _, line := range strings.Split(string(b), "\n") {
			if strings.Contains(line, "Workflow panic") && strings.Contains(line, id) && strings.Contains(line, "StackTrace") {
				return true, ""
			}
		}
		return false, "no \"Workflow panic\" line of " + id + " with its stack in " + logFile
	})

	// The metric: the SDK's counter, by workflow type, counts every
	// failed attempt.
	eventually(t, time.Minute, func() (bool, string) {
		n := supervisorTasksFailed(scrape(t))
		return n >= failedBefore+2, fmt.Sprintf("%s of SupervisorWorkflow: %v, %v before", telemetry.MetricWorkflowTaskFailed, n, failedBefore)
	})
}

var tasksFailed = regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(telemetry.MetricWorkflowTaskFailed) + `\{([^}]*)\} (\S+)$`)

// supervisorTasksFailed reads, from a worker's metrics, the SDK's count of
// failed SupervisorWorkflow tasks (failure_reason WorkflowError: a panic).
func supervisorTasksFailed(metrics string) float64 {
	total := 0.0
	for _, m := range tasksFailed.FindAllStringSubmatch(metrics, -1) {
		labels := m[1]
		if !strings.Contains(labels, `workflow_type="SupervisorWorkflow"`) || !strings.Contains(labels, `failure_reason="WorkflowError"`) ||
			!strings.Contains(labels, `namespace="default"`) || !strings.Contains(labels, `task_queue="steward"`) {
			continue
		}
		if v, err := strconv.ParseFloat(m[2], 64); err == nil {
			total += v
		}
	}
	return total
}
