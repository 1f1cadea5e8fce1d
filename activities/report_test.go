package activities

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/steward-sh/steward/internal/treestatus"
)

// Reports that come while a signal to the same supervisor is on its way go
// together in the next one; each Report returns its signal's outcome, and
// supervisors do not wait for each other.
func TestReporter_BatchesWhatComesWhileASignalIsOnItsWay(t *testing.T) {
	release := make(chan struct{})
	var mu sync.Mutex
	var signals [][]string // per signal, the paths it carried
	failFor := "p2"
	r := &Reporter{Send: func(ctx context.Context, parent string, rep treestatus.ChildReport) error {
		if rep.Status.Path == "p1/first" {
			<-release // the first signal to p1 takes its time
		}
		mu.Lock()
		paths := []string{rep.Status.Path}
		for _, m := range rep.More {
			paths = append(paths, m.Status.Path)
		}
		signals = append(signals, paths)
		mu.Unlock()
		if parent == failFor {
			return errors.New("no such workflow")
		}
		return nil
	}}
	report := func(parent, path string) <-chan error {
		done := make(chan error, 1)
		go func() {
			done <- r.Report(context.Background(), parent, treestatus.ChildReport{Status: treestatus.Status{Path: path}})
		}()
		return done
	}
	first := report("p1", "p1/first")
	require.Eventually(t, func() bool { r.mu.Lock(); defer r.mu.Unlock(); _, ok := r.queues["p1"]; return ok }, wait, tick)
	var later []<-chan error
	for _, p := range []string{"p1/a", "p1/b", "p1/c"} {
		later = append(later, report("p1", p))
	}
	require.Eventually(t, func() bool { r.mu.Lock(); defer r.mu.Unlock(); return len(r.queues["p1"]) == 3 }, wait, tick)
	require.Error(t, <-report("p2", "p2/x"), "another supervisor's signal does not wait for p1's, and its error comes back")
	close(release)
	require.NoError(t, <-first)
	for _, l := range later {
		require.NoError(t, <-l)
	}
	mu.Lock()
	defer mu.Unlock()
	require.Len(t, signals, 3)
	for _, s := range signals {
		slices.Sort(s) // the three that waited came in any order
	}
	require.Contains(t, signals, []string{"p1/first"})
	require.Contains(t, signals, []string{"p1/a", "p1/b", "p1/c"}, "the three that waited went as one signal")
	r.mu.Lock()
	defer r.mu.Unlock()
	require.Empty(t, r.queues, "no sender left")
}
