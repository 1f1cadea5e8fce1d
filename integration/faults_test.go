package integration

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The worker process is killed (-9) while 40 actions are in flight; a new
// one takes over and every service reaches its desired state, each start
// done once as far as status can tell: one retried attempt after the lost
// one, no restart counted.
func TestFault_WorkerKilledWithFortyActionsInFlight(t *testing.T) {
	needServer(t)
	mainWorker.kill()
	w, err := startWorker("worker-40", "--pool-size", "50")
	require.NoError(t, err)
	mainWorker = w

	var b strings.Builder
	b.WriteString("name: it-forty\nchildren:\n")
	for i := range 40 {
		// 20 s a start: long enough that every one is still in flight
		// when the pool is seen 80 % full, however slowly a loaded machine
		// fills it (with 6 s, the first start had ended once, and its
		// service had one attempt, not two).
		fmt.Fprintf(&b, "  - {name: w%02d, kind: stub, stub: {delay: 20s}, timeouts: {start: 10m}, observe: {interval: 1h}}\n", i)
	}
	r := starter(t, "apply", "-f", writeSpec(t, b.String()))
	require.Equal(t, 0, r.code, r.stdout+r.stderr)
	t.Cleanup(func() {
		// A 20s stop each, one after the other, would take 13 minutes: drop
		// the delay first (a spec change: 40 quick restarts), then delete.
		quick := strings.ReplaceAll(b.String(), "stub: {delay: 20s}", "stub: {}")
		r := starter(t, "apply", "-f", writeSpec(t, quick), "--wait")
		require.Equal(t, 0, r.code, r.stdout+r.stderr)
		deleteTree(t, "it-forty")
	})

	inFlight := regexp.MustCompile(`steward_worker_pool_utilization\{task_queue="steward"\} ([0-9.e+-]+)`)
	eventually(t, 2*time.Minute, func() (bool, string) {
		m := inFlight.FindStringSubmatch(scrape(t))
		if m == nil {
			return false, "no utilization yet"
		}
		u, _ := strconv.ParseFloat(m[1], 64)
		return u >= 0.8, fmt.Sprintf("utilization %v (40 of 50 is 0.8)", u)
	})
	mainWorker.kill()
	w, err = startWorker("worker-40b", "--pool-size", "50")
	require.NoError(t, err)
	mainWorker = w

	eventually(t, 3*time.Minute, func() (bool, string) {
		st := status(t, "it-forty")
		at, total := st.AtDesired()
		return at == 40 && total == 40, fmt.Sprintf("%d of %d running", at, total)
	})
	for _, c := range status(t, "it-forty").Children {
		require.Equal(t, "running", c.State, c.Path)
		require.Zero(t, c.Restarts, "%s: nothing restarted", c.Path)
		require.Zero(t, c.ManualRestarts, c.Path)
		require.Equal(t, "start", c.LastAction.Name, c.Path)
		require.Equal(t, "succeeded", c.LastAction.Status, c.Path)
		require.Equal(t, 2, c.LastAction.Attempts, "%s: the lost attempt, then one more", c.Path)
	}
}

// The dev server stops and starts again on the same database file: the
// trees go on (a crashing service keeps being restarted, a steady one stays
// up, status answers), with the same worker process, which reconnects.
func TestFault_ServerRestartsOnTheSameDatabase(t *testing.T) {
	needServer(t)
	srv := newFileServer(t, "server-restart.log")
	addr := srv.addr
	at := func(args ...string) result { return starter(t, append([]string{"--address", addr}, args...)...) }
	statusAt := func(path string) (int, string, string) {
		r := at("status", path, "-o", "json")
		var st struct {
			State    string `json:"state"`
			Restarts int    `json:"restarts"`
		}
		if r.code != 0 || jsonUnmarshal(r.stdout, &st) != nil {
			return -1, "", r.stderr
		}
		return st.Restarts, st.State, ""
	}

	w, err := startWorkerAt("worker-restart", addr)
	require.NoError(t, err)
	defer w.stop()
	r := at("apply", "-f", writeSpec(t, `
name: it-durable-server
children:
  - {name: steady, kind: stub, observe: {interval: 1h}}
  - {name: crasher, kind: stub, stub: {crashAfter: 2s}, backoff: {initial: 200ms, max: 500ms}, observe: {interval: 1h}}
`), "--wait")
	require.Equal(t, 0, r.code, r.stdout+r.stderr)
	var before int
	eventually(t, time.Minute, func() (bool, string) {
		n, _, msg := statusAt("it-durable-server/crasher")
		before = n
		return n >= 1, msg
	})

	srv.restart()
	eventually(t, 2*time.Minute, func() (bool, string) {
		n, state, msg := statusAt("it-durable-server/crasher")
		return n >= before+2, fmt.Sprintf("crasher %s, restarts %d (had %d before) %s", state, n, before, msg)
	})
	n, state, _ := statusAt("it-durable-server/steady")
	require.Equal(t, "running", state)
	require.Zero(t, n, "the steady service was not restarted")
	r = at("delete", "it-durable-server")
	require.Equal(t, 0, r.code, r.stderr)
}

func jsonUnmarshal(s string, v any) error { return json.Unmarshal([]byte(s), v) }
