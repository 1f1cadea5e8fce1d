package main

import (
	"io"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/steward-sh/steward/internal/admission"
)

// Each unauthenticated GET /api/logs started a workflow (issue 47): pages
// asking the same read at once, or within a second, now share one.
func TestConsoleReadsAreSharedAmongPagesThatAskTheSame(t *testing.T) {
	now := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	var clock sync.Mutex
	r := &sharedReads{now: func() time.Time { clock.Lock(); defer clock.Unlock(); return now }}
	var reads atomic.Int32
	release := make(chan struct{})
	read := func() (any, error) { reads.Add(1); <-release; return "tail", nil }

	var wg sync.WaitGroup
	for range 20 {
		wg.Go(func() {
			v, err := r.do("log\x00a", read)
			require.NoError(t, err)
			require.Equal(t, "tail", v)
		})
	}
	require.Eventually(t, func() bool { return reads.Load() == 1 }, 5*time.Second, time.Millisecond)
	close(release)
	wg.Wait()
	require.Equal(t, int32(1), reads.Load(), "twenty pages at once: one read")

	_, err := r.do("log\x00a", read)
	require.NoError(t, err)
	require.Equal(t, int32(1), reads.Load(), "within a second: the same answer")
	_, err = r.do("log\x00b", read)
	require.NoError(t, err)
	require.Equal(t, int32(2), reads.Load(), "another read is its own")
	clock.Lock()
	now = now.Add(keepReadsFor)
	clock.Unlock()
	_, err = r.do("log\x00a", read)
	require.NoError(t, err)
	require.Equal(t, int32(3), reads.Load(), "a second later: read again")
}

// The console signed log and usage reads for whoever reached its address,
// and loopback is every local user's: on hosts that answer only signed
// reads, any local user read every service's log through it. With
// --sign-key it now needs --read-token-file, before it listens or dials.
func TestConsole_ASignKeyWithoutAReadTokenIsRefused(t *testing.T) {
	prefix := filepath.Join(t.TempDir(), "ops")
	_, err := admission.GenerateKey(prefix)
	require.NoError(t, err)
	cmd := consoleCmd(&globals{})
	cmd.SetArgs([]string{"--listen", "127.0.0.1:0", "--sign-key", prefix})
	cmd.SetOut(io.Discard)
	cmd.SetErr(io.Discard)
	err = cmd.Execute()
	require.ErrorContains(t, err, "give --read-token-file too")
}
