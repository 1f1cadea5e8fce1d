// Package integration drives the real binaries (bin/worker, bin/starter, the
// pinned Temporal CLI) against a real Temporal dev server that the tests
// start themselves on free ports.
//
// The Temporal CLI is found through STEWARD_TEMPORAL_BIN (make test sets it)
// or at ../bin/temporal. Without it the tests are skipped, unless
// STEWARD_REQUIRE_INTEGRATION is set, as it is by make test: then they fail.
package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/testsuite"

	"github.com/steward-sh/steward/workflows"
)

var (
	address    string
	temporal   string
	starterBin string
	workerBin  string
	workDir    string
	skipReason string
)

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	temporal = os.Getenv("STEWARD_TEMPORAL_BIN")
	if temporal == "" {
		temporal, _ = filepath.Abs("../bin/temporal")
	}
	if _, err := os.Stat(temporal); err != nil {
		if os.Getenv("STEWARD_REQUIRE_INTEGRATION") != "" {
			fmt.Fprintf(os.Stderr, "integration: no Temporal CLI at %s (run `make temporal-cli`)\n", temporal)
			return 1
		}
		skipReason = "no Temporal CLI at " + temporal + " (make temporal-cli builds it)"
		return m.Run()
	}
	var err error
	workDir, err = os.MkdirTemp("", "steward-it-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(workDir)
	starterBin = filepath.Join(workDir, "starter")
	workerBin = filepath.Join(workDir, "worker")
	// With STEWARD_RACE=1 (make test) the worker runs under the race
	// detector too, and a race it reports fails the run.
	race := os.Getenv("STEWARD_RACE") != ""
	for bin, pkg := range map[string]string{starterBin: "../starter", workerBin: "../worker"} {
		args := []string{"build", "-o", bin}
		if race && bin == workerBin {
			args = append(args, "-race")
		}
		if out, err := exec.Command("go", append(args, pkg)...).CombinedOutput(); err != nil {
			fmt.Fprintf(os.Stderr, "integration: build %s: %v\n%s", pkg, err, out)
			return 1
		}
	}
	serverLog, _ := os.Create(filepath.Join(workDir, "server.log"))
	extra := []string{}
	if withUI { // the browser tests (build tag browser)
		if uiAddr, err = freePort(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		// The UI decodes encrypted payloads through a codec server.
		stop, err := startCodecServer()
		if err != nil {
			fmt.Fprintln(os.Stderr, "integration:", err)
			return 1
		}
		defer stop()
		extra = append(extra, "--ui-codec-endpoint", "http://"+codecAddr)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	_, uiPortOnly, _ := strings.Cut(uiAddr, ":")
	server, err := testsuite.StartDevServer(ctx, testsuite.DevServerOptions{
		EnableUI:     withUI,
		UIPort:       uiPortOnly,
		ExistingPath: temporal,
		LogLevel:     "error",
		ClientOptions: &client.Options{
			Logger: quiet{},
		},
		// The settings of the table of docs/design.md: fast dispatch, WAL, one partition.
		ExtraArgs: append(slices.Clone(devServerSettings), extra...),
		Stdout:    serverLog, Stderr: serverLog,
	})
	cancel()
	if err != nil {
		fmt.Fprintf(os.Stderr, "integration: start dev server: %v\n", err)
		return 1
	}
	defer server.Stop()
	address = server.FrontendHostPort()

	mainWorker, err = startWorker("worker-1")
	if err != nil {
		fmt.Fprintln(os.Stderr, "integration:", err)
		return 1
	}
	code := m.Run()
	mainWorker.stop()
	killLeftovers(filepath.Join(workDir, "state"))
	if logs, _ := filepath.Glob(filepath.Join(workDir, "worker*.log")); race {
		for _, f := range logs {
			if b, err := os.ReadFile(f); err == nil && strings.Contains(string(b), "WARNING: DATA RACE") {
				fmt.Fprintf(os.Stderr, "integration: the race detector reported a race in %s:\n%s\n", filepath.Base(f), tail(string(b), 6000))
				code = 1
			}
		}
	}
	if code != 0 {
		for _, f := range []string{"worker-1.log", "server.log"} {
			if b, err := os.ReadFile(filepath.Join(workDir, f)); err == nil {
				fmt.Fprintf(os.Stderr, "---- last of %s ----\n%s\n", f, tail(string(b), 4000))
			}
		}
	}
	return code
}

// devServerSettings are the dev server's settings of the table in
// docs/design.md: fast dispatch, WAL, one partition.
var devServerSettings = []string{
	"--sqlite-pragma", "journal_mode=wal", "--sqlite-pragma", "synchronous=normal",
	"--dynamic-config-value", "history.transferProcessorMaxPollRPS=1000",
	"--dynamic-config-value", "history.timerProcessorMaxPollRPS=1000",
	"--dynamic-config-value", "matching.numTaskqueueReadPartitions=1",
	"--dynamic-config-value", "matching.numTaskqueueWritePartitions=1",
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

// workerProc is a running bin/worker.
type workerProc struct {
	cmd     *exec.Cmd
	done    chan struct{}
	log     *os.File
	metrics string // URL of its /metrics
}

// freePort returns a loopback host:port that was free a moment ago.
func freePort() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

// stop ends the worker with SIGTERM (a graceful shutdown) and waits.
func (w *workerProc) stop() {
	_ = w.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-w.done:
	case <-time.After(30 * time.Second):
		_ = w.cmd.Process.Kill()
		<-w.done
	}
	w.log.Close()
}

// kill ends the worker with SIGKILL, as a crash would.
func (w *workerProc) kill() {
	_ = w.cmd.Process.Kill()
	<-w.done
	w.log.Close()
}

// withUI (set by the browser tests' build) starts the dev server with its
// Web UI, at uiAddr, and a codec server at codecAddr with the key in
// codecKey.
var (
	withUI    bool
	uiAddr    string
	codecAddr string
	codecKey  string
)

// mainWorker serves every test; a test that kills it starts a replacement.
var mainWorker *workerProc

// startWorker runs bin/worker against the test server.
func startWorker(name string, extra ...string) (*workerProc, error) {
	return startWorkerAt(name, address, extra...)
}

// startWorkerAt runs bin/worker against the server at addr.
func startWorkerAt(name, addr string, extra ...string) (*workerProc, error) {
	return startWorkerBin(workerBin, name, addr, extra...)
}

// startWorkerBin runs a worker binary (another build's, say) against the
// server at addr.
func startWorkerBin(bin, name, addr string, extra ...string) (*workerProc, error) {
	return startWorkerEnv(bin, name, addr, nil, extra...)
}

// startWorkerEnv is startWorkerBin with env added to the worker's
// environment.
func startWorkerEnv(bin, name, addr string, env []string, extra ...string) (*workerProc, error) {
	logf, err := os.Create(filepath.Join(workDir, name+".log"))
	if err != nil {
		return nil, err
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	// Every worker of a run keeps its records of the processes it started
	// (which outlive it) under workDir: the next worker of its host adopts
	// them, and the run kills what is left at its end (killLeftovers).
	// And their services' logs under workDir too: the default log dir,
	// under the machine's temporary directory, outlives a run, and a later
	// run's service of the same path would find the earlier run's output
	// in its log (found: `logs --previous` printed a run of the run before).
	cmd := exec.Command(bin, append([]string{"--address", addr, "--log-level", "warn", "--metrics", port,
		"--state-dir", filepath.Join(workDir, "state"), "--log-dir", filepath.Join(workDir, "logs")}, extra...)...)
	cmd.Stdout, cmd.Stderr = logf, logf
	if env != nil {
		cmd.Env = append(os.Environ(), env...)
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start worker: %w", err)
	}
	w := &workerProc{cmd: cmd, done: make(chan struct{}), log: logf, metrics: "http://" + port + "/metrics"}
	go func() { _ = cmd.Wait(); close(w.done) }()
	return w, nil
}

func needServer(t *testing.T) {
	t.Helper()
	if skipReason != "" {
		t.Skip(skipReason)
	}
}

type result struct {
	stdout, stderr string
	code           int
}

// cli runs a binary with TEMPORAL_ADDRESS pointing at the test server.
func cli(t *testing.T, bin string, args ...string) result {
	t.Helper()
	return runAt(t, bin, address, 2*time.Minute, args...)
}

// runAt runs a binary (a starter, the temporal CLI) with TEMPORAL_ADDRESS
// pointing at the server at addr.
func runAt(t *testing.T, bin, addr string, timeout time.Duration, args ...string) result {
	t.Helper()
	return runAtEnv(t, bin, addr, timeout, nil, args...)
}

// runAtEnv is runAt with env added to the binary's environment.
func runAtEnv(t *testing.T, bin, addr string, timeout time.Duration, env []string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = append(append(os.Environ(), "TEMPORAL_ADDRESS="+addr), env...)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("%s %v: %v", bin, args, err)
	}
	return result{o.String(), e.String(), code}
}

func starter(t *testing.T, args ...string) result {
	t.Helper()
	return cli(t, starterBin, args...)
}

func temporalCLI(t *testing.T, args ...string) result {
	t.Helper()
	return cli(t, temporal, append(args, "--address", address)...)
}

func writeSpec(t *testing.T, yaml string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "spec.yaml")
	require.NoError(t, os.WriteFile(p, []byte(yaml), 0o644))
	return p
}

// status returns `starter status PATH -o json`. A query that fails for a
// moment (the worker process that had the workflow cached just died) is
// asked again for up to 15 seconds before the test fails.
func status(t *testing.T, path string) workflows.Status {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		st, err := tryStatus(t, path)
		if err == nil {
			return st
		}
		if time.Now().After(deadline) {
			require.NoError(t, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// eventually polls cond until it holds or the deadline passes; the last
// description is in the failure message.
func eventually(t *testing.T, within time.Duration, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(within)
	last := ""
	for {
		ok, desc := cond()
		if ok {
			return
		}
		last = desc
		if time.Now().After(deadline) {
			t.Fatalf("condition not met within %s; last: %s", within, last)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// tryStatus is status for polling loops: a query can fail for a moment
// (the worker process that had the workflow cached just died), and that is
// a reason to ask again, not a failure.
func tryStatus(t *testing.T, path string) (workflows.Status, error) {
	t.Helper()
	r := starter(t, "status", path, "-o", "json")
	var st workflows.Status
	if r.code != 0 {
		return st, fmt.Errorf("status %s: %s", path, r.stderr)
	}
	if err := json.Unmarshal([]byte(r.stdout), &st); err != nil {
		return st, err
	}
	if st.Stale != "" {
		// The node did not answer in time (its worker just died, say): the
		// row is visibility's. Tests want its own answer: ask again.
		return st, fmt.Errorf("status %s: stale: %s", path, st.Stale)
	}
	return st, nil
}

func waitState(t *testing.T, path, state string, within time.Duration) workflows.Status {
	t.Helper()
	var st workflows.Status
	eventually(t, within, func() (bool, string) {
		var err error
		if st, err = tryStatus(t, path); err != nil {
			return false, err.Error()
		}
		return st.State == state, fmt.Sprintf("%s is %s (%s)", path, st.State, st.Reason)
	})
	return st
}

func deleteTree(t *testing.T, name string) {
	t.Helper()
	r := starter(t, "delete", name)
	require.Equal(t, 0, r.code, r.stderr)
}

type quiet struct{}

func (quiet) Debug(string, ...any) {}
func (quiet) Info(string, ...any)  {}
func (quiet) Warn(string, ...any)  {}
func (quiet) Error(string, ...any) {}

// startCodecServer writes a key and runs `starter codec-server` with it,
// for the Web UI (the browser tests).
func startCodecServer() (stop func(), err error) {
	codecKey = filepath.Join(workDir, "codec.key")
	key := strings.Repeat("5a", 32)
	if err := os.WriteFile(codecKey, []byte(key+"\n"), 0o600); err != nil {
		return nil, err
	}
	if codecAddr, err = freePort(); err != nil {
		return nil, err
	}
	cmd := exec.Command(starterBin, "codec-server", "--listen", codecAddr, "--encryption-key-file", codecKey,
		"--ui-origin", "http://"+uiAddr)
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	return func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }, nil
}

// killLeftovers kills the recorded service processes that outlived the
// run's workers (a tree a failed test did not delete), by their record:
// pid and start time, never a pid that was reused.
func killLeftovers(dir string) {
	files, _ := filepath.Glob(filepath.Join(dir, "*", "*.json"))
	for _, f := range files {
		var rec struct {
			WorkflowID string `json:"workflowId"`
			PID        int    `json:"pid"`
			Ticks      uint64 `json:"ticks"`
		}
		b, err := os.ReadFile(f)
		if err != nil || json.Unmarshal(b, &rec) != nil || rec.PID <= 0 {
			continue
		}
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", rec.PID))
		if err != nil {
			continue
		}
		s := string(stat)
		fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(fields) < 20 || fields[19] != strconv.FormatUint(rec.Ticks, 10) {
			continue
		}
		fmt.Fprintf(os.Stderr, "integration: killing the left-over process %d of %s\n", rec.PID, rec.WorkflowID)
		_ = syscall.Kill(-rec.PID, syscall.SIGKILL)
	}
}
