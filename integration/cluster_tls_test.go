package integration

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"

	"github.com/steward-sh/steward/workflows"
)

// scripts/cluster.sh up --tls: the cluster requires a client certificate
// signed by its CA on every port. A worker configured by its config file
// (tls: {cert, key, ca, serverName}), another and the starter configured
// as the temporal CLI is (TEMPORAL_TLS_*) run a tree through it, and the
// Web UI reads it with its own; a client without a certificate, or without
// TLS, is refused, and the starter without one fails and says so.
func TestClusterWithMutualTLS(t *testing.T) {
	c, addr, uiAddr := newCluster(t, 1)
	out, err := c.up("--tls")
	require.NoError(t, err, out)
	require.Contains(t, out, "mutual TLS")
	out, err = c.run(time.Minute, "status")
	require.NoError(t, err, out)
	require.Contains(t, out, "frontend: serving", "status speaks TLS to a TLS cluster")

	certs := filepath.Join(c.dir, "tls")
	file := func(name string) string { return filepath.Join(certs, name) }
	for _, key := range []string{"ca-key.pem", "server-key.pem", "client-key.pem"} {
		st, err := os.Stat(file(key))
		require.NoError(t, err)
		require.Equal(t, os.FileMode(0o600), st.Mode().Perm(), key)
	}

	cfg := filepath.Join(t.TempDir(), "worker.yaml")
	require.NoError(t, os.WriteFile(cfg, []byte(fmt.Sprintf("tls:\n  cert: %s\n  key: %s\n  ca: %s\n  serverName: localhost\n",
		file("client.pem"), file("client-key.pem"), file("ca.pem"))), 0o644))
	w, err := startWorkerAt("worker-tls", addr, "--config", cfg, "--host", "tls-host")
	require.NoError(t, err)
	t.Cleanup(w.stop)
	tlsEnv := []string{"TEMPORAL_TLS_CLIENT_CERT_PATH=" + file("client.pem"), "TEMPORAL_TLS_CLIENT_KEY_PATH=" + file("client-key.pem"),
		"TEMPORAL_TLS_SERVER_CA_CERT_PATH=" + file("ca.pem"), "TEMPORAL_TLS_SERVER_NAME=localhost"}
	w2, err := startWorkerEnv(workerBin, "worker-tls-env", addr, tlsEnv, "--host", "tls-env-host")
	require.NoError(t, err)
	t.Cleanup(w2.stop)
	on := func(args ...string) result {
		t.Helper()
		return runAtEnv(t, starterBin, addr, 2*time.Minute, tlsEnv, args...)
	}
	tree := writeSpec(t, `
name: it-tls
children:
  - name: p
    kind: process
    process: {command: sleep, args: ["300"], startSeconds: 200ms, host: tls-host}
  - name: q
    kind: process
    process: {command: sleep, args: ["301"], startSeconds: 200ms, host: tls-env-host}
  - {name: s, kind: stub}
`)
	var r result
	eventually(t, time.Minute, func() (bool, string) { // search attributes reach a new namespace's cache late
		r = on("apply", "-f", tree, "--wait", "--timeout", "2m")
		return r.code == 0 || !strings.Contains(r.stderr, "has no mapping defined for search attribute"), r.stderr
	})
	require.Equal(t, 0, r.code, r.stdout+r.stderr)
	t.Cleanup(func() { on("delete", "it-tls") })
	for _, p := range []string{"it-tls/p", "it-tls/q"} {
		r = on("status", p, "-o", "json")
		require.Equal(t, 0, r.code, r.stderr)
		var st workflows.Status
		require.NoError(t, json.Unmarshal([]byte(r.stdout), &st))
		require.Equal(t, "running", st.State, p)
		require.True(t, alive(pidOf(t, st.Instance)), "%s: the process runs on its worker's host", p)
	}

	// Refused: the starter without a certificate, a Go client without TLS,
	// and one with TLS but no certificate.
	r = runAt(t, starterBin, addr, time.Minute, "status", "it-tls")
	require.NotEqual(t, 0, r.code, r.stdout)
	require.NotContains(t, r.stdout, "running")
	pool := x509.NewCertPool()
	ca, err := os.ReadFile(file("ca.pem"))
	require.NoError(t, err)
	require.True(t, pool.AppendCertsFromPEM(ca))
	dial := func(cfg *tls.Config) error {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		cl, err := client.DialContext(ctx, client.Options{HostPort: addr, ConnectionOptions: client.ConnectionOptions{TLS: cfg}})
		if err == nil {
			cl.Close()
		}
		return err
	}
	require.Error(t, dial(nil), "plaintext")
	require.Error(t, dial(&tls.Config{RootCAs: pool, ServerName: "localhost"}), "TLS without a client certificate")
	pair, err := tls.LoadX509KeyPair(file("client.pem"), file("client-key.pem"))
	require.NoError(t, err)
	require.NoError(t, dial(&tls.Config{RootCAs: pool, ServerName: "localhost", Certificates: []tls.Certificate{pair}}))

	// The Web UI reads the cluster with the client certificate the script
	// gave it.
	resp, err := http.Get("http://" + uiAddr + "/api/v1/namespaces/default/workflows?query=" + "WorkflowId%3D%22it-tls%22")
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
}
