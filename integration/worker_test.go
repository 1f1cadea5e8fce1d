package integration

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"

	"github.com/steward-sh/steward/internal/metricstest"
	"github.com/steward-sh/steward/internal/telemetry"
	"github.com/steward-sh/steward/workflows"
)

// The worker serves the SDK's metrics in Prometheus format, without a scope
// prefix, on --metrics.
func TestWorkerServesSDKMetrics(t *testing.T) {
	needServer(t)
	eventually(t, time.Minute, func() (bool, string) {
		resp, err := http.Get(mainWorker.metrics)
		if err != nil {
			return false, err.Error()
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		text := string(body)
		return resp.StatusCode == 200 && strings.Contains(text, "temporal_worker_task_slots_available") &&
			strings.Contains(text, `task_queue="steward"`), text[:min(len(text), 500)]
	})
}

// The worker also polls its host's task queue (--host, default local).
func TestWorkerPollsItsHostTaskQueue(t *testing.T) {
	needServer(t)
	eventually(t, time.Minute, func() (bool, string) {
		r := temporalCLI(t, "task-queue", "describe", "--task-queue", "steward-host-local", "--task-queue-type", "activity", "-o", "json")
		return r.code == 0 && strings.Contains(r.stdout, "identity"), r.stdout + r.stderr
	})
}

// steward's own metrics are on the same endpoint, beside the SDK's, and
// move with what happens: a tree applied queues and runs start actions,
// the workers' transitions are counted, and the pool gauges are reported.
func TestWorkerServesStewardMetrics(t *testing.T) {
	needServer(t)
	r := starter(t, "apply", "-f", writeSpec(t, `
name: it-metrics
children:
  - {name: a, kind: stub, observe: {interval: 1h}}
  - {name: b, kind: stub, observe: {interval: 1h}}
`), "--wait")
	require.Equal(t, 0, r.code, r.stdout+r.stderr)
	t.Cleanup(func() { deleteTree(t, "it-metrics") })
	// (Workflow-side metrics also carry the SDK's labels: namespace,
	// task_queue, workflow_type, ...)
	want := []*regexp.Regexp{
		regexp.MustCompile(`steward_action_queued_total\{action="start",[^}]*kind="stub"[^}]*\} [1-9]`),
		regexp.MustCompile(`steward_action_execution_duration_seconds_count\{action="start",kind="stub",status="success"\} [1-9]`),
		regexp.MustCompile(`steward_state_transitions_total\{[^}]*from="starting",[^}]*to="running"[^}]*\} [1-9]`),
		regexp.MustCompile(`steward_worker_pool_utilization\{task_queue="steward"\} `),
		regexp.MustCompile(`steward_worker_pool_queue_size\{task_queue="steward-host-local"\} `),
		regexp.MustCompile(`steward_child_count\{[^}]*path="it-metrics"[^}]*\} 2`),
		regexp.MustCompile(`temporal_workflow_task_execution_latency_seconds_bucket`),
	}
	eventually(t, time.Minute, func() (bool, string) {
		text := scrape(t)
		for _, w := range want {
			if !w.MatchString(text) {
				return false, "missing " + w.String()
			}
		}
		return true, ""
	})
}

func scrape(t *testing.T) string {
	t.Helper()
	resp, err := http.Get(mainWorker.metrics)
	if err != nil {
		return err.Error()
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return string(body)
}

// The queue-size reporter reads the backlog the server reports: actions
// for a host no worker serves wait in its queue.
func TestQueueSizeReportsTheBacklog(t *testing.T) {
	needServer(t)
	r := starter(t, "apply", "-f", writeSpec(t, `
name: it-backlog
children:
  - {name: p, kind: process, process: {command: sleep, args: ["60"], host: ghost, unreachableAfter: 5s}}
`))
	require.Equal(t, 0, r.code, r.stdout+r.stderr)
	t.Cleanup(func() { deleteTree(t, "it-backlog") })
	c, err := client.Dial(client.Options{HostPort: address, Logger: quiet{}})
	require.NoError(t, err)
	defer c.Close()
	rec := metricstest.New()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go telemetry.ReportQueueSize(ctx, c, "default", rec, 200*time.Millisecond, workflows.HostTaskQueue("ghost"))
	eventually(t, time.Minute, func() (bool, string) {
		v, _ := rec.Last(telemetry.MetricPoolQueueSize, map[string]string{"task_queue": "steward-host-ghost"})
		return v >= 1, fmt.Sprintf("backlog %v", v)
	})
}

// A worker given a bad flag exits 2 naming it, before it connects.
func TestWorkerRejectsBadFlagsNamingThem(t *testing.T) {
	for _, c := range []struct{ flag, value string }{
		{"--workflow-cache", "0"},
		{"--pool-size", "0"},
		{"--grpc-compression", "zstd"},
		{"--host", "a b"},
	} {
		r := cli(t, workerBin, c.flag, c.value)
		require.Equal(t, 2, r.code, "%s %s: %s", c.flag, c.value, r.stderr)
		require.Contains(t, r.stderr, c.flag, "%s %s", c.flag, c.value)
	}
}
