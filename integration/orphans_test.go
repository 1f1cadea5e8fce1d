package integration

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A service deleted while its host's worker was away: the stop could not
// reach the host within unreachableAfter, and its workflow ended deleted
// all the same. The host's next worker adopted the process from its record
// and held it, supervised by nothing, for as long as it ran. It is now
// stopped once its workflow is seen closed at two looks (--orphan-sweep).
func TestFault_AServiceDeletedWhileItsHostWasAwayLeavesNoOrphan(t *testing.T) {
	needServer(t)
	const host = "it-orphan"
	w, err := startWorker("worker-"+host, "--host", host, "--orphan-sweep", "1s")
	require.NoError(t, err)
	stopped := false
	t.Cleanup(func() {
		if !stopped {
			w.stop()
		}
	})
	r := starter(t, "apply", "-f", writeSpec(t, fmt.Sprintf(`
name: it-orphan
children:
  - {name: p, kind: process, process: {command: sleep, args: ["300"], startSeconds: 200ms, host: %s, unreachableAfter: 2s}}
  - {name: q, kind: process, process: {command: sleep, args: ["300"], startSeconds: 200ms, host: %s, unreachableAfter: 2s}}
`, host, host)), "--wait")
	require.Equal(t, 0, r.code, r.stdout+r.stderr)
	deleted := false
	t.Cleanup(func() {
		if !deleted {
			deleteTree(t, "it-orphan")
		}
	})
	pid := pidOf(t, status(t, "it-orphan/p").Instance)
	kept := pidOf(t, status(t, "it-orphan/q").Instance)

	w.kill() // the host's worker away; its services run on
	stopped = true
	require.True(t, alive(pid))
	// Only p goes: its supervisor cancels it, and its stop cannot reach
	// the host.
	r = starter(t, "apply", "-f", writeSpec(t, fmt.Sprintf(`
name: it-orphan
children:
  - {name: q, kind: process, process: {command: sleep, args: ["300"], startSeconds: 200ms, host: %s, unreachableAfter: 2s}}
`, host)))
	require.Equal(t, 0, r.code, r.stdout+r.stderr)
	eventually(t, time.Minute, func() (bool, string) {
		_, st := describe(t, "it-orphan/p")
		return st != "WORKFLOW_EXECUTION_STATUS_RUNNING" && st != "Running", st
	})
	require.True(t, alive(pid), "the stop did not reach the host: the process runs, owned by no workflow")

	w, err = startWorker("worker-"+host+"-back", "--host", host, "--orphan-sweep", "1s")
	require.NoError(t, err)
	t.Cleanup(w.stop)
	eventually(t, time.Minute, func() (bool, string) { return !alive(pid), fmt.Sprintf("the orphan %d still runs", pid) })
	records, err := filepath.Glob(filepath.Join(workDir, "state", host, "*.json"))
	require.NoError(t, err)
	for _, f := range records {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		require.NotContains(t, string(b), `"it-orphan/p"`, "its record went with it")
	}
	require.True(t, alive(kept), "a service whose workflow runs is left alone")
	st := status(t, "it-orphan/q")
	require.Equal(t, "running", st.State)
	require.Equal(t, kept, pidOf(t, st.Instance), "adopted, not restarted")
	deleteTree(t, "it-orphan")
	deleted = true
}
