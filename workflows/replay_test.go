package workflows

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/worker"
)

// TestReplayRecordedHistories replays histories recorded from a real server
// by scripts/record-histories.sh (scripts/testdata/record.yaml): the root
// through a give-up escalated from its one_for_all group and the group's
// restart, and its delete; the group through group restarts, a give-up and
// its cooldown; its crashing worker; a rest_for_one chain whose first child
// was terminated by hand and started anew; a worker through a manual
// restart, stop/start and a rollout; the rollout; a worker whose starts
// fail; a supervisor and a child supervisor through the operator's stop,
// start and restart (history-ops*, recorded by the code before dependsOn
// and notify, which must replay them unchanged); the group and a worker
// again (history-reported-*), recorded once starts were reported by their
// activities (a slow start's report overtaken by the workflow's own); a
// supervisor of version 6 that starts more children than its start window
// (history-window); a root of version 7 with more groups than its window,
// each group holding its slot until its subtree has started
// (history-groups). A
// change to workflow logic that is not behind workflow.GetVersion fails here; re-run it on every SDK upgrade, and record anew (the script)
// when a change is meant to break old histories (none may: docs/upgrading.md).
func TestReplayRecordedHistories(t *testing.T) {
	files, err := filepath.Glob("testdata/history-*.json")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			require.NoError(t, newReplayer().ReplayWorkflowHistoryFromJSONFile(nil, f))
		})
	}
}

// newReplayer is a replayer of every long-running workflow type.
func newReplayer() worker.WorkflowReplayer {
	r := worker.NewWorkflowReplayer()
	r.RegisterWorkflow(WorkerWorkflow)
	r.RegisterWorkflow(SupervisorWorkflow)
	r.RegisterWorkflow(RolloutWorkflow)
	return r
}
