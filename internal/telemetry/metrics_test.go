package telemetry

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/steward-sh/steward/internal/treestatus"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// The registry serves the SDK handler's metrics with no prefix and keeps
// label values (paths) readable; Close stops the server and leaks nothing.
func TestMetricsServeWhatTheHandlerRecords(t *testing.T) {
	m := NewMetrics(func(err error) { t.Error(err) })
	addr, err := m.Serve("127.0.0.1:0")
	require.NoError(t, err)
	m.Handler.WithTags(map[string]string{"path": "plant/line-1"}).Gauge("steward_child_count").Update(3)
	m.Handler.Counter("steward_supervisor_give_ups_total").Inc(2)
	require.Eventually(t, func() bool {
		resp, err := http.Get("http://" + addr.String() + "/metrics")
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return strings.Contains(string(b), `steward_child_count{path="plant/line-1"} 3`) &&
			strings.Contains(string(b), "steward_supervisor_give_ups_total 2")
	}, 10*time.Second, 50*time.Millisecond)
	m.Close()
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
	scrape := func() string {
		resp, err := http.Get("http://" + addr.String() + "/metrics")
		require.NoError(t, err)
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return string(b)
	}
	got := scrape()
	require.Contains(t, got, `steward_service_cpu_seconds_total{host="db1",path="web/api"} 12.5`)
	require.Contains(t, got, `steward_service_memory_bytes{host="db1",path="web/api"} 1.048576e+06`)
	samples = map[string]treestatus.Usage{}
	require.NotContains(t, scrape(), `path="web/api"`)
}
