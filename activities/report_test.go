package activities

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/steward-sh/steward/internal/treestatus"
)

// Reports that come while a signal to the same supervisor is on its way go
// together in the next one; each Report returns its signal's outcome, and
// supervisors do not wait for each other.
// Regression: the last sender used to leave only after its callers heard
// back, so a caller could still find it (a CI failure: "no sender left").
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
	// The first is on its way (taken from the queue, its sender running).
	require.Eventually(t, func() bool { r.mu.Lock(); defer r.mu.Unlock(); q, ok := r.queues["p1"]; return ok && len(q) == 0 }, wait, tick)
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

// A report whose caller gave up before its signal left is taken back: it
// is not sent later behind the caller's back ("not reported" is true).
func TestReporter_AReportGivenUpOnIsNotSentLater(t *testing.T) {
	release := make(chan struct{})
	var mu sync.Mutex
	var sent []string
	r := &Reporter{Send: func(ctx context.Context, parent string, rep treestatus.ChildReport) error {
		if rep.Status.Path == "p/first" {
			<-release
		}
		mu.Lock()
		defer mu.Unlock()
		sent = append(sent, rep.Status.Path)
		for _, m := range rep.More {
			sent = append(sent, m.Status.Path)
		}
		return nil
	}}
	first := make(chan error, 1)
	go func() {
		first <- r.Report(context.Background(), "p", treestatus.ChildReport{Status: treestatus.Status{Path: "p/first"}})
	}()
	// The first is on its way (taken from the queue, its sender running).
	require.Eventually(t, func() bool { r.mu.Lock(); defer r.mu.Unlock(); q, ok := r.queues["p"]; return ok && len(q) == 0 }, wait, tick)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	require.ErrorIs(t, r.Report(ctx, "p", treestatus.ChildReport{Status: treestatus.Status{Path: "p/late"}}), context.DeadlineExceeded)
	close(release)
	require.NoError(t, <-first)
	require.Eventually(t, func() bool { r.mu.Lock(); defer r.mu.Unlock(); return len(r.queues) == 0 }, wait, tick)
	mu.Lock()
	defer mu.Unlock()
	require.Equal(t, []string{"p/first"}, sent)
}
