package integration

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
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
