package workflows

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/worker"
)

// TestReplayRecordedHistories replays histories recorded from a real server:
// history-rec-*: a supervisor and two workers through start retries,
// crashes and backoff restarts, a manual restart, stop/start, a re-applied
// spec and a delete; history-tree-*: a three-level tree (one_for_one root,
// a one_for_all group with a crashing worker, a rest_for_one chain) through
// group restarts, a give-up escalated to the root, the root giving up, and
// its cooldown restart; history-rollout*: a rollout (stop, fail-fast) and
// a target worker through a restart rollout that failed on it;
// history-lean-*: the same kinds of workflow recorded after the lean
// reports (publish.go), with slow starts published late, group restarts and
// rollouts; history-lean-v2-*: the same after its version 2 (no upsert at a
// run's start of the search attributes already set). A change to workflow logic that is not behind
// workflow.GetVersion fails here; re-run it on every SDK upgrade.
//
// To record new ones: run a tree on a dev server, then
// `temporal workflow show -w PATH -o json > testdata/history-NAME.json`.
func TestReplayRecordedHistories(t *testing.T) {
	files, err := filepath.Glob("testdata/history-*.json")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			r := worker.NewWorkflowReplayer()
			r.RegisterWorkflow(WorkerWorkflow)
			r.RegisterWorkflow(SupervisorWorkflow)
			r.RegisterWorkflow(RolloutWorkflow)
			require.NoError(t, r.ReplayWorkflowHistoryFromJSONFile(nil, f))
		})
	}
}
