package telemetry

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/steward-sh/steward/internal/treestatus"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// scrape reads the /metrics page served on addr.
func scrape(t *testing.T, addr net.Addr) string {
	t.Helper()
	resp, err := http.Get("http://" + addr.String() + "/metrics")
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return string(b)
}

// The registry serves the SDK handler's metrics with no prefix and keeps
// label values (paths) readable; Close stops the server and leaks nothing.
func TestMetricsServeWhatTheHandlerRecords(t *testing.T) {
	m := NewMetrics(func(err error) { t.Error(err) })
	addr, err := m.Serve("127.0.0.1:0")
	require.NoError(t, err)
	m.Handler.WithTags(map[string]string{"path": "plant/line-1"}).Gauge("steward_child_count").Update(3)
	m.Handler.Counter("steward_supervisor_give_ups_total").Inc(2)
	require.Eventually(t, func() bool {
		got := scrape(t, addr)
		return strings.Contains(got, `steward_child_count{path="plant/line-1"} 3`) &&
			strings.Contains(got, "steward_supervisor_give_ups_total 2")
	}, 10*time.Second, 50*time.Millisecond)
	m.Close()
}

// A workflow task's time (1 to 5 ms) falls in buckets fine enough to tell
// 1.3 ms from 1.9: tally's default bounds were 1, 2 and 5 ms.
func TestLatencyHistogramsTellMillisecondsApart(t *testing.T) {
	m := NewMetrics(func(err error) { t.Error(err) })
	defer m.Close()
	addr, err := m.Serve("127.0.0.1:0")
	require.NoError(t, err)
	timer := m.Handler.Timer("temporal_workflow_task_execution_latency")
	timer.Record(1300 * time.Microsecond)
	timer.Record(1900 * time.Microsecond)
	require.Eventually(t, func() bool {
		got := scrape(t, addr)
		return strings.Contains(got, `temporal_workflow_task_execution_latency_seconds_bucket{le="0.00125"} 0`) &&
			strings.Contains(got, `temporal_workflow_task_execution_latency_seconds_bucket{le="0.0015"} 1`) &&
			strings.Contains(got, `temporal_workflow_task_execution_latency_seconds_bucket{le="0.00175"} 1`) &&
			strings.Contains(got, `temporal_workflow_task_execution_latency_seconds_bucket{le="0.002"} 2`)
	}, 10*time.Second, 50*time.Millisecond)
}

// The SDK's counter of failed workflow tasks, which the alert
// StewardWorkflowTaskFailing reads, is served under
// MetricWorkflowTaskFailed with its labels (integration/taskfail_test.go
// sees a real worker count a real failure).
func TestSDKWorkflowTaskFailedCounterName(t *testing.T) {
	m := NewMetrics(func(err error) { t.Error(err) })
	defer m.Close()
	addr, err := m.Serve("127.0.0.1:0")
	require.NoError(t, err)
	m.Handler.WithTags(map[string]string{"namespace": "default", "task_queue": "steward", "workflow_type": "SupervisorWorkflow"}).
		WithTags(map[string]string{"failure_reason": "WorkflowError"}).
		Counter("temporal_workflow_task_execution_failed").Inc(1)
	require.Eventually(t, func() bool {
		return strings.Contains(scrape(t, addr),
			MetricWorkflowTaskFailed+`{failure_reason="WorkflowError",namespace="default",task_queue="steward",workflow_type="SupervisorWorkflow"} 1`)
	}, 10*time.Second, 50*time.Millisecond)
}

// Each service's last sample is exported at scrape time; one that left
// the samples leaves the series.
func TestServiceUsageExportsTheLastSamples(t *testing.T) {
	m := NewMetrics(func(err error) { t.Error(err) })
	defer m.Close()
	samples := map[string]treestatus.Usage{"web/api": {CPUSeconds: 12.5, MemoryBytes: 1 << 20}}
	m.Registry.MustRegister(ServiceUsage{Host: "db1", Samples: func() map[string]treestatus.Usage { return samples }})
	addr, err := m.Serve("127.0.0.1:0")
	require.NoError(t, err)
	got := scrape(t, addr)
	require.Contains(t, got, `steward_service_cpu_seconds_total{host="db1",path="web/api"} 12.5`)
	require.Contains(t, got, `steward_service_memory_bytes{host="db1",path="web/api"} 1.048576e+06`)
	samples = map[string]treestatus.Usage{}
	require.NotContains(t, scrape(t, addr), `path="web/api"`)
}

// A metrics port held by another process (any local user may bind an
// unprivileged one, before the worker starts at boot) made the worker
// exit, its services unsupervised, again at every restart: it now runs
// without metrics and binds the address once it is free.
func TestMetrics_APortHeldElsewhereIsServedWhenFree(t *testing.T) {
	squatter, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := squatter.Addr().String()
	m := NewMetrics(func(err error) { t.Error(err) })
	defer m.Close()
	warned := make(chan error, 1)
	served := make(chan net.Addr, 1)
	require.NoError(t, m.ServeWhenFree(addr, 20*time.Millisecond, func(err error) { warned <- err }, func(a net.Addr) { served <- a }))
	select {
	case err := <-warned:
		require.ErrorContains(t, err, "address already in use")
	case <-time.After(10 * time.Second):
		t.Fatal("no warning of the port held")
	}
	require.Empty(t, served)
	require.NoError(t, squatter.Close())
	select {
	case a := <-served:
		require.Equal(t, addr, a.String())
		require.Contains(t, scrape(t, a), "go_goroutines")
	case <-time.After(10 * time.Second):
		t.Fatal("the address was never served once free")
	}
}

// Closed before the port frees, it stops trying (goleak checks that its
// goroutine is gone).
func TestMetrics_ServeWhenFreeStopsAtClose(t *testing.T) {
	squatter, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer squatter.Close()
	m := NewMetrics(func(err error) { t.Error(err) })
	require.NoError(t, m.ServeWhenFree(squatter.Addr().String(), 10*time.Millisecond, func(error) {}, func(net.Addr) { t.Error("served") }))
	m.Close()
}

// Only a port another process holds is waited for: an address that can
// never be bound is the operator's mistake, refused at once as before.
func TestMetrics_AnAddressThatCannotBeBoundIsRefused(t *testing.T) {
	m := NewMetrics(func(err error) { t.Error(err) })
	defer m.Close()
	err := m.ServeWhenFree("127.0.0.1:99999", 10*time.Millisecond, func(error) { t.Error("warned: retried") }, func(net.Addr) { t.Error("served") })
	require.ErrorContains(t, err, "invalid port")
}

// The live heap (what a leak grows) is served beside the runtime's
// memstats, whose heap in use and the RSS also hold garbage until the
// next collection: a soak's slopes of those were a saw's.
func TestMetrics_ServeTheLiveHeap(t *testing.T) {
	m := NewMetrics(func(err error) { t.Error(err) })
	defer m.Close()
	addr, err := m.Serve("127.0.0.1:0")
	require.NoError(t, err)
	runtime.GC() // (none has run yet in a test this short: the live heap is then 0)
	got := scrape(t, addr)
	var v float64
	for _, line := range strings.Split(got, "\n") {
		if strings.HasPrefix(line, MetricHeapLive+" ") {
			_, err := fmt.Sscanf(line, MetricHeapLive+" %g", &v)
			require.NoError(t, err)
		}
	}
	require.Positive(t, v, "a positive live heap in:\n%.2000s", got)
}
