package leakcheck

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestLeakCheckDetects makes sure the leak check itself can fail.
func TestLeakCheckDetects(t *testing.T) {
	stop := make(chan struct{})
	started := make(chan struct{})
	go func() { close(started); <-stop }()
	<-started
	require.NotEmpty(t, ModuleGoroutines(), "a goroutine of this package must be seen")
	close(stop)
	deadline := time.Now().Add(Wait)
	for len(ModuleGoroutines()) != 0 {
		require.True(t, time.Now().Before(deadline), "goroutine still seen after it ended")
		time.Sleep(5 * time.Millisecond)
	}
}
