package treestatus

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/steward-sh/steward/internal/spec"
)

// staleTree is an assembled tree where plant/line-1 (a supervisor) and
// plant/office (a worker, asked under --exact) did not answer, and the
// rows below line-1 are visibility's.
func staleTree() Status {
	return Status{Path: "plant", Kind: spec.KindSupervisor, State: "running", Desired: "running", Children: []Status{
		{Path: "plant/line-1", Kind: spec.KindSupervisor, State: "running", Stale: "did not answer in time: row from its supervisor's record",
			Children: []Status{{Path: "plant/line-1/press", Kind: "stub", State: "running", Stale: BelowStale, Children: []Status{}}}},
		{Path: "plant/office", Kind: "stub", State: "running", Stale: "did not answer (Unable to query workflow due to Workflow Task in failed state.): row from its supervisor's record", Children: []Status{}},
		{Path: "plant/yard", Kind: "stub", State: "running", Children: []Status{}},
	}}
}

// Only the nodes that did not answer are diagnosed (a row below one, or a
// node that answered, costs the server nothing), and only those whose
// task keeps failing are marked; a diagnosis that fails leaves its node
// as it was.
func TestMarkTaskFailuresAsksOnlyTheNodesThatDidNotAnswer(t *testing.T) {
	st := staleTree()
	var mu sync.Mutex
	var asked []string
	since := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	diagnose := func(_ context.Context, path string) (*TaskFailure, error) {
		mu.Lock()
		asked = append(asked, path)
		mu.Unlock()
		switch path {
		case "plant/office":
			return &TaskFailure{Attempts: 4, Cause: "WORKFLOW_WORKER_UNHANDLED_FAILURE", Message: "panic: boom", Identity: "42@host", Since: since}, nil
		case "plant/line-1":
			return nil, errors.New("describe: unavailable")
		}
		return nil, nil
	}
	require.Equal(t, 1, MarkTaskFailures(context.Background(), &st, diagnose, 0, 0))
	require.ElementsMatch(t, []string{"plant/line-1", "plant/office"}, asked)
	office, _ := st.Find("plant/office")
	require.Equal(t, &TaskFailure{Attempts: 4, Cause: "WORKFLOW_WORKER_UNHANDLED_FAILURE", Message: "panic: boom", Identity: "42@host", Since: since}, office.TaskFailing)
	require.NotEmpty(t, office.Stale, "still stale: the row is its supervisor's record")
	line, _ := st.Find("plant/line-1")
	require.Nil(t, line.TaskFailing)
	require.Equal(t, []string{"plant/office"}, paths(st.TaskFailingNodes()))

	// A limit: the first nodes in tree order only; a context that ended:
	// none.
	st, asked = staleTree(), nil
	MarkTaskFailures(context.Background(), &st, diagnose, 1, 1)
	require.Equal(t, []string{"plant/line-1"}, asked)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	st, asked = staleTree(), nil
	require.Zero(t, MarkTaskFailures(ctx, &st, diagnose, 0, 0))
	require.Empty(t, asked)
}

// A long message is cut (a status stays small), keeping valid UTF-8.
func TestMarkTaskFailuresBoundsTheMessage(t *testing.T) {
	st := staleTree()
	long := strings.Repeat("é", MaxTaskFailureMessage)
	MarkTaskFailures(context.Background(), &st, func(_ context.Context, path string) (*TaskFailure, error) {
		return &TaskFailure{Attempts: 2, Message: long}, nil
	}, 0, 0)
	office, _ := st.Find("plant/office")
	require.LessOrEqual(t, len(office.TaskFailing.Message), MaxTaskFailureMessage+4)
	require.True(t, strings.HasSuffix(office.TaskFailing.Message, " ..."))
	require.True(t, json.Valid(mustJSON(t, office)))
	require.NotContains(t, string(mustJSON(t, office)), `\ufffd`)
}

// The JSON contract: a marked node adds taskFailing {attempts, cause,
// message, identity, since} beside its stale mark; a node that is not
// marked has no taskFailing key at all, and every other key is as before.
func TestTaskFailingInJSON(t *testing.T) {
	st := staleTree()
	before := mustJSON(t, st)
	require.NotContains(t, string(before), "taskFailing")
	office := &st.Children[1]
	office.TaskFailing = &TaskFailure{Attempts: 3, Cause: "WORKFLOW_WORKER_UNHANDLED_FAILURE",
		Message: "SupervisorWorkflow run of code version 999: run a newer worker", Identity: "42@db1",
		Since: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	var m map[string]any
	require.NoError(t, json.Unmarshal(mustJSON(t, *office), &m))
	require.Equal(t, map[string]any{"attempts": float64(3), "cause": "WORKFLOW_WORKER_UNHANDLED_FAILURE",
		"message": "SupervisorWorkflow run of code version 999: run a newer worker", "identity": "42@db1",
		"since": "2026-01-02T03:04:05Z"}, m["taskFailing"])
	for _, k := range []string{"path", "kind", "state", "desired", "reason", "restarts", "manualRestarts", "generation", "lastAction", "children", "stale"} {
		require.Contains(t, m, k, "the keys of before stay")
	}
	var back Status
	require.NoError(t, json.Unmarshal(mustJSON(t, st), &back))
	require.Equal(t, st, back, "it round-trips")

	// Only attempts are known (the history's last events do not hold the
	// failure): the other keys are left out.
	require.JSONEq(t, `{"attempts": 2}`, string(mustJSON(t, TaskFailure{Attempts: 2})))
}

// Summary is one line for a person: the first line of the message, cut.
func TestTaskFailureSummary(t *testing.T) {
	require.Equal(t, "attempt 2", TaskFailure{Attempts: 2}.Summary())
	require.Equal(t, "attempt 5, NON_DETERMINISTIC_ERROR: [TMPRL1100] nondeterministic workflow ...",
		TaskFailure{Attempts: 5, Cause: "NON_DETERMINISTIC_ERROR", Message: "[TMPRL1100] nondeterministic workflow\nhistory: ..."}.Summary())
	s := TaskFailure{Attempts: 3, Message: strings.Repeat("x", 500)}.Summary()
	require.Equal(t, "attempt 3: "+strings.Repeat("x", 200)+" ...", s)
}

func paths(sts []Status) []string {
	var out []string
	for _, s := range sts {
		out = append(out, s.Path)
	}
	return out
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return b
}
