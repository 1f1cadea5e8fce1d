package telemetry

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
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
