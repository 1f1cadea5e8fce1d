package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/steward-sh/steward/workflows"
)

// clusterSkipReason says why scripts/cluster.sh cannot run here, or "".
func clusterSkipReason() string {
	if _, err := exec.LookPath("pg_ctl"); err != nil {
		if m, _ := filepath.Glob("/usr/lib/postgresql/*/bin/pg_ctl"); len(m) == 0 {
			return "PostgreSQL is not installed (Debian: apt-get install postgresql)"
		}
	}
	return ""
}

// freeBlock returns the first of n consecutive loopback ports that were
// free a moment ago, below 32768 (what the cluster script takes).
func freeBlock(t *testing.T, n int) int {
	t.Helper()
	for range 100 {
		base := 20000 + rand.IntN(12700)
		free := true
		for p := base; p < base+n && free; p++ {
			l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p))
			if err != nil {
				free = false
				continue
			}
			l.Close()
		}
		if free {
			return base
		}
	}
	t.Fatalf("no %d free consecutive ports", n)
	return 0
}

// cluster runs scripts/cluster.sh with the test cluster's settings.
type cluster struct {
	t   *testing.T
	env []string
	dir string
}

func (c *cluster) run(within time.Duration, args ...string) (string, error) {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	cmd := exec.CommandContext(ctx, "../scripts/cluster.sh", args...)
	cmd.Env = append(os.Environ(), c.env...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// newCluster is a cluster of shards history shards on free ports, with its
// frontend's address and the Web UI's (skips the test where the script
// cannot run).
func newCluster(t *testing.T, shards int) (c *cluster, addr, uiAddr string) {
	needServer(t)
	if reason := clusterSkipReason(); reason != "" {
		t.Skip(reason)
	}
	base := freeBlock(t, 11)
	uiAddr, err := freePort()
	require.NoError(t, err)
	_, uiPort, _ := strings.Cut(uiAddr, ":")
	c = &cluster{t: t, dir: t.TempDir()}
	c.env = []string{"STEWARD_CLUSTER_PORT=" + strconv.Itoa(base), "STEWARD_CLUSTER_UI_PORT=" + uiPort,
		"STEWARD_CLUSTER_DIR=" + c.dir, "STEWARD_CLUSTER_SHARDS=" + strconv.Itoa(shards)}
	return c, fmt.Sprintf("127.0.0.1:%d", base), uiAddr
}

// up runs `cluster.sh up ARGS` and takes the cluster down at the test's
// end (its logs printed if the test failed).
func (c *cluster) up(args ...string) (string, error) {
	t := c.t
	t.Helper()
	out, err := c.run(15*time.Minute, append([]string{"up"}, args...)...)
	t.Cleanup(func() {
		if out, err := c.run(2*time.Minute, "down"); err != nil {
			t.Errorf("cluster down: %v\n%s", err, out)
		}
		// PostgreSQL's data: linked from the cluster directory when that
		// directory is out of the PostgreSQL user's reach.
		if own, err := os.Readlink(filepath.Join(c.dir, "postgres")); err == nil {
			_ = os.RemoveAll(own)
		}
		if t.Failed() {
			for _, f := range []string{"server.log", "schema.log", "ui.log"} {
				if b, err := os.ReadFile(filepath.Join(c.dir, f)); err == nil {
					t.Logf("---- last of %s ----\n%s", f, tail(string(b), 3000))
				}
			}
		}
	})
	return out, err
}

// The cluster script brings a Temporal server on PostgreSQL up on free
// ports, with its data under a directory only root can enter (a test's
// temporary directory); steward runs a tree and a rollout on it; down
// stops it all, and a second up resumes the same data: the tree is there.
func TestClusterOnPostgres(t *testing.T) {
	c, addr, uiAddr := newCluster(t, 2)

	began := time.Now()
	out, err := c.up() // builds the server into bin/ when it is not there
	require.NoError(t, err, out)
	t.Logf("cluster up in %s:\n%s", time.Since(began).Round(time.Second), out)
	require.Contains(t, out, "2 history shards on PostgreSQL")
	out, err = c.run(time.Minute, "status")
	require.NoError(t, err, out)
	require.Contains(t, out, "frontend: serving")

	on := func(args ...string) result {
		t.Helper()
		return cli(t, starterBin, append([]string{"--address", addr}, args...)...)
	}
	w, err := startWorkerAt("worker-cluster", addr)
	require.NoError(t, err)
	t.Cleanup(w.stop)
	// A new namespace's search attributes reach the frontend's namespace
	// cache some seconds after they are registered: until then a start
	// that sets them is refused (and starts nothing), so apply is retried.
	var r result
	tree := writeSpec(t, `
name: it-cluster
children:
  - name: g
    children:
      - {name: a, kind: stub}
      - {name: b, kind: stub}
      - {name: c, kind: stub}
  - name: p
    kind: process
    process: {command: sleep, args: ["300"], startSeconds: 200ms}
`)
	eventually(t, time.Minute, func() (bool, string) {
		r = on("apply", "-f", tree, "--wait", "--timeout", "2m")
		return r.code == 0 || !strings.Contains(r.stderr, "has no mapping defined for search attribute"), r.stderr
	})
	require.Equal(t, 0, r.code, r.stdout+r.stderr)

	r = on("rollout", "restart", "it-cluster", "--chunk", "2", "-o", "json")
	require.Equal(t, 0, r.code, r.stdout+r.stderr)
	var res workflows.RolloutStatus
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &res), r.stdout)
	require.Equal(t, 4, res.Succeeded, r.stdout)

	// Visibility on PostgreSQL: steward's search attributes filter.
	eventually(t, time.Minute, func() (bool, string) { // visibility is eventually consistent
		r := cli(t, temporal, "workflow", "count", "--address", addr, "--query", "StewardKind IN ('stub', 'process') AND StewardState='running' AND StewardPath STARTS_WITH 'it-cluster/'")
		return r.code == 0 && strings.TrimSpace(r.stdout) == "Total: 4", r.stdout + r.stderr
	})

	resp, err := http.Get("http://" + uiAddr + "/namespaces/default/workflows")
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode, "the Web UI serves")

	out, err = c.run(2*time.Minute, "down")
	require.NoError(t, err, out)
	_, err = c.run(time.Minute, "status")
	require.Error(t, err, "status after down fails")
	_, err = net.DialTimeout("tcp", addr, time.Second)
	require.Error(t, err, "the frontend is down")

	out, err = c.run(5*time.Minute, "up")
	require.NoError(t, err, out)
	eventually(t, 2*time.Minute, func() (bool, string) {
		var st workflows.Status
		r := on("status", "it-cluster", "-o", "json")
		if r.code != 0 || json.Unmarshal([]byte(r.stdout), &st) != nil {
			return false, r.stderr
		}
		return st.State == "running" && len(st.Children) == 2, r.stdout
	})
	r = on("delete", "it-cluster")
	require.Equal(t, 0, r.code, r.stdout+r.stderr)
}
