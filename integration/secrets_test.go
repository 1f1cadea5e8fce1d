package integration

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/steward-sh/steward/workflows"
)

// historiesOf returns every event, as the server stores it (payloads as
// the bytes written), of every run of every workflow whose ID starts with
// prefix (and of its rollout) in namespace ns.
func historiesOf(t *testing.T, ns, prefix string) [][]byte {
	t.Helper()
	cl, err := client.Dial(client.Options{HostPort: address, Namespace: ns, Logger: quiet{}})
	require.NoError(t, err)
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var out [][]byte
	runs := 0
	for _, q := range []string{fmt.Sprintf("WorkflowId STARTS_WITH '%s'", prefix), fmt.Sprintf("WorkflowId = 'rollout:%s'", prefix)} {
		var token []byte
		for {
			page, err := cl.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{Namespace: ns, Query: q, NextPageToken: token})
			require.NoError(t, err)
			for _, e := range page.Executions {
				runs++
				it := cl.GetWorkflowHistory(ctx, e.Execution.WorkflowId, e.Execution.RunId, false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
				for it.HasNext() {
					ev, err := it.Next()
					require.NoError(t, err)
					b, err := proto.Marshal(ev)
					require.NoError(t, err)
					out = append(out, b)
				}
			}
			if token = page.NextPageToken; len(token) == 0 {
				break
			}
		}
	}
	require.NotZero(t, runs, "no workflow starts with %s", prefix)
	return out
}

// headerServer is a real HTTP service that records the headers of its
// control requests.
type headerServer struct {
	*httptest.Server
	mu   sync.Mutex
	auth []string
}

func newHeaderServer(t *testing.T) *headerServer {
	h := &headerServer{}
	h.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/start" {
			h.mu.Lock()
			h.auth = append(h.auth, r.Header.Get("Authorization"))
			h.mu.Unlock()
		}
		w.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(h.Close)
	return h
}

func (h *headerServer) starts() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.auth...)
}

// Secrets from a file, an envFile, the worker's environment and a header
// file reach the services; their values appear in no history event of any
// run of any workflow of the tree, in no status and in no log line; a
// variable of the worker's environment that inheritEnv does not name is not
// in the service's environment.
func TestSecretsReachServicesAndNothingElse(t *testing.T) {
	needServer(t)
	dir := t.TempDir()
	values := map[string]string{
		"file":    "s3cret-file-7f3a",
		"envfile": "s3cret-envfile-91bc",
		"env":     "s3cret-env-4d2e",
		"header":  "s3cret-header-c0de",
	}
	secretFile := filepath.Join(dir, "db-password")
	require.NoError(t, os.WriteFile(secretFile, []byte(values["file"]+"\n"), 0o600))
	envFile := filepath.Join(dir, "app.env")
	require.NoError(t, os.WriteFile(envFile, []byte("# the app's settings\nENVFILE_SECRET="+values["envfile"]+"\nMODE=test\n"), 0o600))
	headerFile := filepath.Join(dir, "token")
	require.NoError(t, os.WriteFile(headerFile, []byte("Bearer "+values["header"]+"\n"), 0o600))

	// A worker of its own host, with a secret and a variable it must not
	// pass on in its environment.
	t.Setenv("STEWARD_IT_API_KEY", values["env"])
	t.Setenv("STEWARD_IT_HIDDEN", "worker-only-5e5e")
	t.Setenv("STEWARD_IT_SHARED", "shared-value")
	w, err := startWorker("worker-secrets", "--host", "secrets")
	require.NoError(t, err)
	t.Cleanup(w.stop)

	svc := newHeaderServer(t)
	r := starter(t, "apply", "-f", writeSpec(t, fmt.Sprintf(`
name: it-secrets
children:
  - name: app
    kind: process
    process:
      command: sleep
      args: ["300"]
      startSeconds: 200ms
      host: secrets
      env:
        DB_PASSWORD: {file: %s}
        API_KEY: {env: STEWARD_IT_API_KEY}
        PLAIN: visible
      envFile: %s
      inheritEnv: [STEWARD_IT_SHARED]
  - name: api
    kind: http
    http:
      start: {url: "%s/start", headers: {Authorization: {file: %s}}}
      health: {url: "%s/health"}
`, secretFile, envFile, svc.URL, headerFile, svc.URL)), "--wait", "--timeout", "2m")
	require.Equal(t, 0, r.code, r.stdout+r.stderr)
	t.Cleanup(func() { deleteTree(t, "it-secrets") })

	env := processEnviron(t, pidOf(t, status(t, "it-secrets/app").Instance))
	require.Equal(t, values["file"], env["DB_PASSWORD"])
	require.Equal(t, values["env"], env["API_KEY"])
	require.Equal(t, values["envfile"], env["ENVFILE_SECRET"])
	require.Equal(t, "test", env["MODE"])
	require.Equal(t, "visible", env["PLAIN"])
	require.Equal(t, "shared-value", env["STEWARD_IT_SHARED"], "inheritEnv passes it on")
	require.NotContains(t, env, "STEWARD_IT_HIDDEN", "not named by inheritEnv: not in the service's environment")
	require.NotContains(t, env, "STEWARD_IT_API_KEY", "a referenced variable reaches the service under its env name only")
	require.Equal(t, []string{"Bearer " + values["header"]}, svc.starts())

	// More history: a rollout restarts both (the secrets read again).
	r = starter(t, "rollout", "restart", "it-secrets", "-o", "json")
	require.Equal(t, 0, r.code, r.stdout+r.stderr)
	require.Len(t, svc.starts(), 2)

	outputs := []string{r.stdout, r.stderr}
	for _, args := range [][]string{{"status", "it-secrets"}, {"status", "it-secrets", "-o", "json"}, {"status", "it-secrets", "--exact", "true", "-o", "json"}} {
		r := starter(t, args...)
		require.Equal(t, 0, r.code, r.stderr)
		outputs = append(outputs, r.stdout, r.stderr)
	}
	events := historiesOf(t, "default", "it-secrets")
	logs := []string{"worker-secrets.log", "worker-1.log"}
	for what, v := range values {
		for i, e := range events {
			require.False(t, bytes.Contains(e, []byte(v)), "the %s secret is in history event %d", what, i)
		}
		for _, o := range outputs {
			require.NotContains(t, o, v, "the %s secret in the starter's output", what)
		}
		for _, l := range logs {
			b, err := os.ReadFile(filepath.Join(workDir, l))
			require.NoError(t, err)
			require.NotContains(t, string(b), v, "the %s secret in %s", what, l)
		}
	}
	require.True(t, containsAny(events, secretFile), "the reference is what history holds")
	t.Logf("%d history events checked", len(events))
}

func containsAny(events [][]byte, s string) bool {
	for _, e := range events {
		if bytes.Contains(e, []byte(s)) {
			return true
		}
	}
	return false
}

// processEnviron reads /proc/PID/environ.
func processEnviron(t *testing.T, pid int) map[string]string {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
	require.NoError(t, err)
	out := map[string]string{}
	for _, kv := range strings.Split(string(b), "\x00") {
		if k, v, ok := strings.Cut(kv, "="); ok {
			out[k] = v
		}
	}
	return out
}

// With a key, worker and starter encrypt every payload: the tree runs and
// answers signals and status as before, a history holds no readable spec,
// a starter without the key cannot read the status, and the codec server
// decodes the history's payloads.
func TestEncryptedPayloads(t *testing.T) {
	needServer(t)
	const ns = "encrypted"
	r := temporalCLI(t, "operator", "namespace", "create", "-n", ns)
	require.True(t, r.code == 0 || strings.Contains(r.stderr, "already"), r.stderr)
	key := filepath.Join(t.TempDir(), "steward.key")
	require.NoError(t, os.WriteFile(key, []byte(hex.EncodeToString(bytes.Repeat([]byte{7}, 32))+"\n"), 0o600))

	eventually(t, time.Minute, func() (bool, string) { // a new namespace reaches the frontend's cache
		r := temporalCLI(t, "workflow", "list", "-n", ns, "--limit", "1")
		return r.code == 0, r.stderr
	})
	w, err := startWorker("worker-encrypted", "--namespace", ns, "--encryption-key-file", key)
	require.NoError(t, err)
	t.Cleanup(w.stop)
	on := func(args ...string) result {
		t.Helper()
		return starter(t, append([]string{"--namespace", ns, "--encryption-key-file", key}, args...)...)
	}
	const marker = "plain-marker-3b9d"
	r = on("apply", "-f", writeSpec(t, `
name: it-enc
children:
  - {name: a, kind: stub}
  - name: p
    kind: process
    process: {command: sleep, args: ["300"], startSeconds: 200ms, env: {NOTE: `+marker+`}}
`), "--wait", "--timeout", "2m")
	require.Equal(t, 0, r.code, r.stdout+r.stderr)
	t.Cleanup(func() { on("delete", "it-enc") })

	r = on("stop", "it-enc/a")
	require.Equal(t, 0, r.code, r.stderr)
	eventually(t, time.Minute, func() (bool, string) {
		var st workflows.Status
		r := on("status", "it-enc/a", "-o", "json")
		return r.code == 0 && json.Unmarshal([]byte(r.stdout), &st) == nil && st.State == "stopped", r.stdout + r.stderr
	})
	r = starter(t, "--namespace", ns, "status", "it-enc")
	require.NotEqual(t, 0, r.code, "a starter without the key cannot read the status: %s", r.stdout)

	events := historiesOf(t, ns, "it-enc")
	var encrypted *commonpb.Payload
	for i, e := range events {
		require.False(t, bytes.Contains(e, []byte(marker)), "history event %d holds the spec in plain text", i)
		require.False(t, bytes.Contains(e, []byte(`"kind":"stub"`)), "history event %d holds the spec in plain text", i)
	}
	cl, err := client.Dial(client.Options{HostPort: address, Namespace: ns, Logger: quiet{}})
	require.NoError(t, err)
	defer cl.Close()
	it := cl.GetWorkflowHistory(context.Background(), "it-enc/p", "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	first, err := it.Next()
	require.NoError(t, err)
	encrypted = first.GetWorkflowExecutionStartedEventAttributes().GetInput().GetPayloads()[0]
	require.Equal(t, "binary/encrypted", string(encrypted.Metadata["encoding"]))

	// The codec server, as the Web UI would call it.
	listen, err := freePort()
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cs := exec.CommandContext(ctx, starterBin, "codec-server", "--listen", listen, "--encryption-key-file", key, "--ui-origin", "http://127.0.0.1:8233")
	require.NoError(t, cs.Start())
	t.Cleanup(func() { cancel(); _ = cs.Wait() })
	body, err := protojson.Marshal(&commonpb.Payloads{Payloads: []*commonpb.Payload{encrypted}})
	require.NoError(t, err)
	var decoded []byte
	eventually(t, 30*time.Second, func() (bool, string) {
		resp, err := http.Post("http://"+listen+"/decode", "application/json", bytes.NewReader(body))
		if err != nil {
			return false, err.Error()
		}
		defer resp.Body.Close()
		decoded, _ = io.ReadAll(resp.Body)
		return resp.StatusCode == http.StatusOK, resp.Status
	})
	var out commonpb.Payloads
	require.NoError(t, protojson.Unmarshal(decoded, &out))
	require.Contains(t, string(out.Payloads[0].Data), marker, "the codec server decodes the worker's input")
}
