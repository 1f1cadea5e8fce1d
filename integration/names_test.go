package integration

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// sleepsWithArg returns the pids of the live processes whose command line
// is `sleep ARG` (whatever the path of sleep).
func sleepsWithArg(arg string) []int {
	var pids []int
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	for _, dir := range dirs {
		b, err := os.ReadFile(filepath.Join(dir, "cmdline"))
		if err != nil {
			continue
		}
		argv := strings.Split(strings.TrimRight(string(b), "\x00"), "\x00")
		if len(argv) != 2 || filepath.Base(argv[0]) != "sleep" || argv[1] != arg {
			continue
		}
		pid, err := strconv.Atoi(filepath.Base(dir))
		if err == nil && alive(pid) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// tryMetrics is metricsOf for polling loops: a worker that just started
// may not serve its metrics yet.
func tryMetrics(w *workerProc) (string, error) {
	resp, err := http.Get(w.metrics)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return string(b), err
}

// The defect: tree a with child b_c (workflow a/b_c) and tree a_b with
// child c (workflow a_b/c) shared one log file and one process record on
// their host (a_b_c.log, a_b_c.json). After a worker restart on a host
// with a policy only one was adopted; the other was judged gone and
// started again beside its orphan, and delete left the orphan running.
// Now each has its own record: the restarted worker adopts both (the same
// processes, no restart), and deleting the trees leaves nothing running.
func TestTreesAB_CAndA_BCKeepOneProcessEachAcrossAWorkerRestart(t *testing.T) {
	needServer(t)
	sleep, err := exec.LookPath("sleep")
	require.NoError(t, err)
	sleep, err = filepath.Abs(sleep)
	require.NoError(t, err)
	policy := filepath.Join(t.TempDir(), "policy.yaml")
	require.NoError(t, os.WriteFile(policy, []byte("commands: ["+sleep+"]\n"), 0o644))
	const host = "it-names"
	flags := []string{"--host", host, "--policy", policy, "--usage-interval", "1s"}
	w, err := startWorker("it-names-1", flags...)
	require.NoError(t, err)
	t.Cleanup(func() { w.stop() }) // the worker there at the end, after the trees' cleanup
	t.Cleanup(func() { dumpOnFailure(t, "it-names-2", "steward-host-"+host, "a", "a/b_c", "a_b", "a_b/c") })

	// Arguments of this run alone: the processes are found by them.
	base := 100000 + time.Now().UnixNano()/1000%400000*2
	args := map[string]string{"a/b_c": strconv.FormatInt(base, 10), "a_b/c": strconv.FormatInt(base+1, 10)}
	deleted := map[string]bool{}
	for _, tree := range []struct{ name, child string }{{"a", "b_c"}, {"a_b", "c"}} {
		path := tree.name + "/" + tree.child
		r := starter(t, "apply", "-f", writeSpec(t, fmt.Sprintf(`
name: %s
children:
  - name: %s
    kind: process
    process: {command: sleep, args: ["%s"], host: %s, startSeconds: 200ms}
    observe: {interval: 2s}
    backoff: {initial: 100ms, max: 1s}
`, tree.name, tree.child, args[path], host)), "--wait", "--timeout", "2m")
		require.Equal(t, 0, r.code, "apply %s: %s %s", tree.name, r.stdout, r.stderr)
		name := tree.name
		t.Cleanup(func() {
			if !deleted[name] {
				deleteTree(t, name)
			}
		})
	}

	paths := []string{"a/b_c", "a_b/c"}
	instances := map[string]string{}
	for _, p := range paths {
		st := status(t, p)
		require.Equal(t, "running", st.State, "%s: %+v", p, st)
		instances[p] = st.Instance
		require.Equal(t, []int{pidOf(t, st.Instance)}, sleepsWithArg(args[p]), "%s: one process, its instance's", p)
	}

	// One record each, holding its own workflow.
	state := filepath.Join(workDir, "state", host)
	records := func() map[string]string {
		files, _ := filepath.Glob(filepath.Join(state, "*.json"))
		got := map[string]string{} // workflow -> instance
		for _, f := range files {
			var rec struct {
				WorkflowID string `json:"workflowId"`
				Instance   string `json:"instance"`
			}
			if b, err := os.ReadFile(f); err == nil && json.Unmarshal(b, &rec) == nil {
				got[rec.WorkflowID] = rec.Instance
			}
		}
		return got
	}
	eventually(t, 30*time.Second, func() (bool, string) {
		got := records()
		return len(got) == 2 && got["a/b_c"] == instances["a/b_c"] && got["a_b/c"] == instances["a_b/c"],
			fmt.Sprintf("records %v, instances %v", got, instances)
	})

	// The host's worker crashes; its services outlive it; the next worker
	// of the host (same --state-dir) adopts both.
	w.kill()
	for _, p := range paths {
		require.True(t, alive(pidOf(t, instances[p])), "%s outlives its worker", p)
	}
	w, err = startWorker("it-names-2", flags...)
	require.NoError(t, err)
	// Adopted: the new worker holds each (it samples what it holds, every
	// second), as the same instance, never restarted; one process each.
	eventually(t, 90*time.Second, func() (bool, string) {
		m, err := tryMetrics(w)
		if err != nil {
			return false, err.Error() // not serving yet
		}
		var why []string
		for _, p := range paths {
			if !strings.Contains(m, fmt.Sprintf(`steward_service_memory_bytes{host=%q,path=%q}`, host, p)) {
				why = append(why, p+": not held by the new worker yet")
			}
			st, err := tryStatus(t, p)
			if err != nil {
				why = append(why, err.Error())
				continue
			}
			if st.State != "running" || st.Instance != instances[p] || st.Restarts != 0 {
				why = append(why, fmt.Sprintf("%s: %s %s restarts %d (was %s)", p, st.State, st.Instance, st.Restarts, instances[p]))
			}
		}
		return len(why) == 0, strings.Join(why, "; ")
	})
	for _, p := range paths {
		require.Equal(t, []int{pidOf(t, instances[p])}, sleepsWithArg(args[p]), "%s: one process after the restart, the one adopted", p)
		st := status(t, p)
		require.Equal(t, instances[p], st.Instance, p)
		require.Equal(t, 0, st.Restarts, p)
	}
	require.Equal(t, instances, records(), "the records as they were")

	// Deleting the trees stops both: nothing left running, no record left.
	for _, tree := range []string{"a", "a_b"} {
		deleteTree(t, tree)
		deleted[tree] = true
	}
	eventually(t, 30*time.Second, func() (bool, string) {
		left := map[string][]int{}
		for _, p := range paths {
			if pids := sleepsWithArg(args[p]); len(pids) > 0 {
				left[p] = pids
			}
		}
		return len(left) == 0 && len(records()) == 0, fmt.Sprintf("running %v, records %v", left, records())
	})
}
