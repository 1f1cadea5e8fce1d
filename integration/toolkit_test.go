package integration

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/steward-sh/steward/activities"
	"github.com/steward-sh/steward/workflows"
)

// hookReceiver is a webhook receiver that records what it is sent.
type hookReceiver struct {
	mu   sync.Mutex
	got  []activities.Notification
	keys []string
	auth []string
	srv  *http.Server
}

func (h *hookReceiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var n activities.Notification
	if err := json.NewDecoder(r.Body).Decode(&n); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	h.mu.Lock()
	h.got = append(h.got, n)
	h.keys = append(h.keys, r.Header.Get(activities.IdempotencyHeader))
	h.auth = append(h.auth, r.Header.Get("X-Token"))
	h.mu.Unlock()
}

func (h *hookReceiver) events() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []string
	for _, n := range h.got {
		out = append(out, n.Path+" "+n.Event)
	}
	return out
}

// A worker that fails notifies its (inherited) webhook even when the
// receiver starts only after the failure: the activity retries until it
// answers. Once running again, "recovered" follows.
func TestNotifyReachesAReceiverThatStartsLate(t *testing.T) {
	needServer(t)
	addr, err := freePort()
	require.NoError(t, err)
	token := filepath.Join(t.TempDir(), "token")
	require.NoError(t, os.WriteFile(token, []byte("s3cret\n"), 0o600))
	tree := func(outcome string) string {
		return fmt.Sprintf(`
name: it-notify
notify: {webhook: "http://%s/hook", on: [failed, recovered], headers: {X-Token: {file: %s}}}
children:
  - name: w
    kind: stub
    stub: {outcomes: {start: [%s]}}
    retry: {maxAttempts: 1}
`, addr, token, outcome)
	}
	r := starter(t, "apply", "-f", writeSpec(t, tree("permanent")))
	require.Equal(t, 0, r.code, r.stdout+r.stderr)
	t.Cleanup(func() { deleteTree(t, "it-notify") })
	waitState(t, "it-notify/w", "failed", time.Minute)

	// Only now does the receiver listen: the first POST found no one.
	h := &hookReceiver{}
	l, err := net.Listen("tcp", addr)
	require.NoError(t, err)
	h.srv = &http.Server{Handler: h}
	go func() { _ = h.srv.Serve(l) }()
	t.Cleanup(func() { _ = h.srv.Close() })
	eventually(t, 2*time.Minute, func() (bool, string) {
		return len(h.events()) >= 1, fmt.Sprintf("got %v", h.events())
	})
	h.mu.Lock()
	n := h.got[0]
	require.Equal(t, "it-notify/w failed", n.Path+" "+n.Event)
	require.Equal(t, "failed", n.State)
	require.Contains(t, n.Reason, "start failed")
	require.EqualValues(t, 1, n.Generation)
	require.False(t, n.Time.IsZero())
	require.NotEmpty(t, h.keys[0], "an idempotency key")
	require.Equal(t, "s3cret", h.auth[0], "the header secret, read from its file by the worker")
	h.mu.Unlock()

	r = starter(t, "apply", "-f", writeSpec(t, tree("success")))
	require.Equal(t, 0, r.code, r.stdout+r.stderr)
	waitState(t, "it-notify/w", "running", time.Minute)
	eventually(t, time.Minute, func() (bool, string) {
		ev := h.events()
		return len(ev) >= 2 && ev[len(ev)-1] == "it-notify/w recovered", fmt.Sprintf("got %v", ev)
	})
	for _, e := range h.events() {
		require.NotContains(t, e, "it-notify ", "the supervisor did not give up: nothing of its own")
	}
}

// A dependant starts only once its slow-starting dependency runs.
func TestDependsOnWaitsForASlowDependency(t *testing.T) {
	needServer(t)
	r := starter(t, "apply", "-f", writeSpec(t, `
name: it-deps
children:
  - name: web
    kind: process
    dependsOn: [db]
    process: {command: sleep, args: ["300"], startSeconds: 200ms}
  - name: db
    kind: process
    process: {command: sleep, args: ["300"], startSeconds: 3s}
  - name: cache
    kind: process
    process: {command: sleep, args: ["300"], startSeconds: 200ms}
`), "--wait")
	require.Equal(t, 0, r.code, r.stdout+r.stderr)
	t.Cleanup(func() { deleteTree(t, "it-deps") })
	started := func(path string) (starting, running time.Time) {
		r := starter(t, "history", path, "-o", "json")
		require.Equal(t, 0, r.code, r.stderr)
		var entries []workflows.JournalEntry
		require.NoError(t, json.Unmarshal([]byte(r.stdout), &entries), r.stdout)
		for _, e := range entries {
			if e.State == "starting" && starting.IsZero() {
				starting = e.Time
			}
			if e.State == "running" && running.IsZero() {
				running = e.Time
			}
		}
		require.False(t, running.IsZero(), "%s never ran: %+v", path, entries)
		return starting, running
	}
	dbStarting, dbRunning := started("it-deps/db")
	webStarting, webRunning := started("it-deps/web")
	cacheStarting, _ := started("it-deps/cache")
	t.Logf("db starting %s, running %s; web starting %s, running %s", dbStarting.Format(time.StampMilli), dbRunning.Format(time.StampMilli),
		webStarting.Format(time.StampMilli), webRunning.Format(time.StampMilli))
	require.False(t, webStarting.Before(dbRunning), "web starts after db runs")
	require.True(t, webRunning.After(dbRunning))
	require.True(t, cacheStarting.Before(dbRunning), "cache, with no dependency, does not wait for db")

	st := status(t, "it-deps")
	var names []string
	for _, c := range st.Children {
		names = append(names, c.Path)
	}
	require.Equal(t, []string{"it-deps/db", "it-deps/web", "it-deps/cache"}, names, "children in start order")
}

// starter logs --previous prints what the run before the current one
// wrote, and --since what was written since then, across the log's
// rotated files, a gzip-compressed one included (process.logs keeps the
// files small here, so they rotate within seconds).
func TestLogsSinceAndPreviousAcrossRotatedFiles(t *testing.T) {
	needServer(t)
	run := fmt.Sprintf("run-%d", time.Now().UnixNano())
	// Each run: its marker, 5 KiB at once (the log rotates at 4 KiB), then a
	// short tick every 200 ms.
	r := starter(t, "apply", "-f", writeSpec(t, `
name: it-logkeep
children:
  - name: app
    kind: process
    process:
      command: sh
      args: ["-c", "echo `+run+`-$$; i=0; while [ $i -lt 80 ]; do i=$((i+1)); echo burst $i ................................................; done; while true; do sleep 0.2; echo tick; done"]
      startSeconds: 200ms
      logs: {maxSize: 4Ki, keep: 3}
`), "--wait")
	require.Equal(t, 0, r.code, r.stdout+r.stderr)
	t.Cleanup(func() { deleteTree(t, "it-logkeep") })
	first := pidOf(t, status(t, "it-logkeep/app").Instance)
	r = starter(t, "logs", "it-logkeep/app", "--previous")
	require.Equal(t, 1, r.code, r.stdout+r.stderr)
	require.Contains(t, r.stderr, "no earlier run of the service is in its log")

	r = starter(t, "restart", "it-logkeep/app")
	require.Equal(t, 0, r.code, r.stdout+r.stderr)
	firstMarker := fmt.Sprintf("%s-%d", run, first)
	var second string
	eventually(t, 60*time.Second, func() (bool, string) {
		// The first run's marker is in a compressed file once the second
		// run's burst rotated the log again: the tail no longer has it.
		r = starter(t, "logs", "it-logkeep/app", "-n", "100000")
		if r.code != 0 || strings.Contains(r.stdout, firstMarker) {
			return false, r.stdout + r.stderr
		}
		for _, l := range strings.Split(r.stdout, "\n") {
			if strings.HasPrefix(l, run+"-") {
				second = l
			}
		}
		return second != "", r.stdout + r.stderr
	})

	r = starter(t, "logs", "it-logkeep/app", "--previous")
	require.Equal(t, 0, r.code, r.stderr)
	prev := strings.Split(strings.TrimSpace(r.stdout), "\n")
	require.Equal(t, firstMarker, prev[0], "the previous run, from its start")
	require.Equal(t, "burst 1 ................................................", prev[1])
	require.NotContains(t, r.stdout, second, "and only it")

	r = starter(t, "logs", "it-logkeep/app", "--since", "1h")
	require.Equal(t, 0, r.code, r.stderr)
	i, j := strings.Index(r.stdout, firstMarker), strings.Index(r.stdout, second)
	require.True(t, i >= 0 && j > i, "both runs, in order, from the compressed file on: %q", r.stdout)
	require.Equal(t, 80, strings.Count(r.stdout[i:j], "burst "), "nothing of the first run lost across its files")

	r = starter(t, "logs", "it-logkeep/app", "--previous", "-n", "2")
	require.Equal(t, 0, r.code, r.stderr)
	require.Len(t, strings.Split(strings.TrimSpace(r.stdout), "\n"), 2)
	r = starter(t, "logs", "it-logkeep/app", "--since", "soon")
	require.Equal(t, 2, r.code)
	require.Contains(t, r.stderr, `--since "soon"`)
	r = starter(t, "logs", "it-logkeep/app", "--previous", "-f")
	require.Equal(t, 2, r.code)
}

// starter logs prints the last lines of a process's output, follows new
// lines until interrupted, and refuses nodes that are not processes.
func TestLogsTailAndFollow(t *testing.T) {
	needServer(t)
	// The log file is appended to across runs of the service: a marker
	// tells this run's output.
	marker := fmt.Sprintf("first-%d", time.Now().UnixNano())
	r := starter(t, "apply", "-f", writeSpec(t, `
name: it-logs
children:
  - name: app
    kind: process
    process:
      command: sh
      args: ["-c", "echo `+marker+`; echo to-stderr >&2; i=0; while true; do sleep 0.2; i=$((i+1)); echo tick $i; done"]
      startSeconds: 200ms
  - {name: s, kind: stub}
`), "--wait")
	require.Equal(t, 0, r.code, r.stdout+r.stderr)
	t.Cleanup(func() { deleteTree(t, "it-logs") })

	var lines []string
	eventually(t, 30*time.Second, func() (bool, string) {
		r = starter(t, "logs", "it-logs/app", "-n", "1000")
		all := strings.Split(strings.TrimSpace(r.stdout), "\n")
		i := slices.Index(all, marker)
		if i >= 0 {
			lines = all[i:]
		}
		return r.code == 0 && len(lines) >= 4, r.stdout + r.stderr
	})
	require.Equal(t, marker, lines[0], "stdout")
	require.Equal(t, "to-stderr", lines[1], "and stderr")
	require.True(t, strings.HasPrefix(lines[2], "tick "), lines[2])

	r = starter(t, "logs", "it-logs/app", "-n", "2")
	require.Equal(t, 0, r.code, r.stderr)
	two := strings.Split(strings.TrimSpace(r.stdout), "\n")
	require.Len(t, two, 2)
	require.True(t, strings.HasPrefix(two[1], "tick "), two[1])

	// -f: new ticks keep coming until SIGTERM, which ends it cleanly.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, starterBin, "logs", "it-logs/app", "-n", "1", "-f")
	cmd.Env = append(os.Environ(), "TEMPORAL_ADDRESS="+address)
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Start())
	seen := make(chan string, 100)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			seen <- sc.Text()
		}
		close(seen)
	}()
	var ticks []string
	var gaps []time.Duration
	last := time.Now()
	for len(ticks) < 10 {
		select {
		case l, ok := <-seen:
			require.True(t, ok, "follow ended early: %s", stderr.String())
			if strings.HasPrefix(l, "tick ") {
				ticks = append(ticks, l)
				gaps = append(gaps, time.Since(last))
				last = time.Now()
			}
		case <-ctx.Done():
			t.Fatalf("follow printed %v only; stderr %s", ticks, stderr.String())
		}
	}
	t.Logf("follow: 10 ticks written every 200ms arrived with gaps %v", gaps)
	require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
	for range seen {
	}
	require.NoError(t, cmd.Wait(), "SIGTERM ends a follow with exit 0: %s", stderr.String())

	r = starter(t, "logs", "it-logs/s")
	require.Equal(t, 2, r.code, r.stdout+r.stderr)
	require.Contains(t, r.stderr, "it-logs/s is a stub worker: only process services have logs")
	r = starter(t, "logs", "it-logs")
	require.Equal(t, 2, r.code)
	require.Contains(t, r.stderr, "it-logs is a supervisor")
	r = starter(t, "logs", "it-logs/nope")
	require.Equal(t, 1, r.code)
	require.Contains(t, r.stderr, `no workflow at "it-logs/nope"`)

	// The service's own workflow never holds its output; no read is left
	// running (the interrupted one was ended), and the server is asked to
	// delete each (it does so tens of seconds later: not waited for here).
	r = temporalCLI(t, "workflow", "show", "-w", "it-logs/app", "-o", "json")
	require.Equal(t, 0, r.code, r.stderr)
	require.NotContains(t, r.stdout, "tick", "no output in the service's history")
	eventually(t, time.Minute, func() (bool, string) {
		r := temporalCLI(t, "workflow", "count", "--query", "WorkflowId STARTS_WITH '"+workflows.LogsWorkflowIDPrefix+"' AND ExecutionStatus = 'Running'")
		return r.code == 0 && strings.Contains(r.stdout, "Total: 0"), r.stdout + r.stderr
	})
}
