package httpdrv

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/steward-sh/steward/internal/driver"
)

// Each worker process counted the failed checks of every service whose
// check it ran, and a service deleted while failing (or one a workflow
// started by hand made up) kept its count for as long as it ran.
func TestDriver_TheCountedServicesAreBounded(t *testing.T) {
	defer func(n int) { maxCounted = n }(maxCounted)
	maxCounted = 5
	s := newServer(t)
	s.set("/health", http.StatusServiceUnavailable)
	d := newDriver(t)
	b := block(s)
	b["health"] = map[string]any{"url": s.URL + "/health", "failureThreshold": 3}
	for i := range 20 {
		obs, err := d.Observe(ctxT(t, 10*time.Second), req(fmt.Sprintf("made-up/%d", i), b))
		require.NoError(t, err)
		require.Equal(t, driver.Running, obs, "one failed check of three")
	}
	d.mu.Lock()
	counted := len(d.failures)
	d.mu.Unlock()
	require.Equal(t, 5, counted)
	for range 2 {
		_, err := d.Observe(ctxT(t, 10*time.Second), req("made-up/19", b))
		require.NoError(t, err)
	}
	require.Equal(t, 3, d.Failures("made-up/19"), "a service counted keeps its count")
}
