package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strings"
	"sync"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/steward-sh/steward/workflows"
)

// updateStep measures rolling updates (docs/updates.md):
//
//   - update_ratio_1000: a spec change of 1,000 stub workers in 10 groups
//     of 100 at maxParallel 5 each (50 in all), `starter apply --wait` from
//     the change to every worker updated, against a `starter rollout
//     restart` of the same workers at chunk 50 in the same run
//     (update_seconds_1000, update_rollout_seconds_1000). (Not 1,000 under
//     one supervisor: its first workflow task, 1,000 child starts, outruns
//     the SDK's 1 s deadlock detector on this machine.)
//   - update_max_down_1000: the most workers down at once during that
//     update, counted from the workers' journals (down: from leaving
//     running to running again);
//   - revert_seconds_100 and revert_touched_100: a bad change (every
//     restart fails) of 100 workers at maxParallel 10 with autoRevert and
//     healthyDeadline 30s, from the apply until `apply --wait` exits (1:
//     reverted), and how many workers the bad spec reached.
func updateStep(ctx context.Context, c client.Client, o options, res Result) error {
	const name = "bench-update"
	fleet := func(delay string) string {
		var b strings.Builder
		// The policy on each group: one on the root would cut the
		// rollout below to its maxParallel (5).
		fmt.Fprintf(&b, "name: %s\nintensity: {maxRestarts: 5000, period: 1m}\nchildren:\n", name)
		for g := range 10 {
			fmt.Fprintf(&b, "  - name: g%02d\n    intensity: {maxRestarts: 5000, period: 1m}\n    update: {maxParallel: 5}\n    children:\n", g)
			for i := g * 100; i < (g+1)*100; i++ {
				fmt.Fprintf(&b, "      - {name: w%04d, kind: stub, stub: {delay: %s}, observe: {interval: 1h}}\n", i, delay)
			}
		}
		return writeTemp(name, b.String())
	}
	if _, err := starterRun(o, 20*time.Minute, "apply", "-f", fleet("0s"), "--wait", "--timeout", "10m"); err != nil {
		return fmt.Errorf("update: apply: %w", err)
	}
	began := time.Now()
	if _, err := starterRun(o, 30*time.Minute, "apply", "-f", fleet("1ms"), "--wait", "--timeout", "10m"); err != nil {
		return fmt.Errorf("update: the change: %w", err)
	}
	ended := time.Now()
	res["update_seconds_1000"] = round(ended.Sub(began).Seconds())
	down, err := mostDown(ctx, c, updatePaths(name), began, ended)
	if err != nil {
		return err
	}
	res["update_max_down_1000"] = down
	began = time.Now()
	if _, err := starterRun(o, 30*time.Minute, "rollout", "restart", name, "--chunk", "50"); err != nil {
		return fmt.Errorf("update: rollout: %w", err)
	}
	res["update_rollout_seconds_1000"] = round(time.Since(began).Seconds())
	res["update_ratio_1000"] = ratio(res["update_seconds_1000"], res["update_rollout_seconds_1000"])
	if _, err := starterRun(o, 5*time.Minute, "delete", name); err != nil {
		return err
	}

	const bad = "bench-revert"
	small := func(failureRate float64) string {
		var b strings.Builder
		fmt.Fprintf(&b, "name: %s\nintensity: {maxRestarts: 5000, period: 1m}\nupdate: {maxParallel: 10, healthyDeadline: 30s, autoRevert: true}\nchildren:\n", bad)
		for i := range 100 {
			fmt.Fprintf(&b, "  - {name: w%03d, kind: stub, stub: {delay: 0s, failureRate: %g, seed: %d}, retry: {maxAttempts: 2, initialInterval: 100ms}, observe: {interval: 1h}}\n", i, failureRate, i+1)
		}
		return writeTemp(bad, b.String())
	}
	if _, err := starterRun(o, 10*time.Minute, "apply", "-f", small(0), "--wait", "--timeout", "5m"); err != nil {
		return fmt.Errorf("update: apply %s: %w", bad, err)
	}
	began = time.Now()
	if _, err := starterRun(o, 10*time.Minute, "apply", "-f", small(1), "--wait", "--timeout", "5m"); err == nil {
		return fmt.Errorf("update: the bad change of %s was not refused", bad)
	}
	res["revert_seconds_100"] = round(time.Since(began).Seconds())
	out, err := starterRun(o, time.Minute, "status", bad, "-o", "json")
	if err != nil {
		return err
	}
	var st workflows.Status
	if err := json.Unmarshal([]byte(out), &st); err != nil {
		return err
	}
	if st.Update == nil || st.Update.State != "reverted" {
		return fmt.Errorf("update: %s's update is %+v, not reverted", bad, st.Update)
	}
	res["revert_touched_100"] = st.Update.Total
	_, err = starterRun(o, 5*time.Minute, "delete", bad)
	return err
}

// updatePaths are the 1,000 workers of the update step's tree root.
func updatePaths(root string) []string {
	paths := make([]string, 1000)
	for i := range paths {
		paths[i] = fmt.Sprintf("%s/g%02d/w%04d", root, i/100, i)
	}
	return paths
}

// mostDown is the most of the workers at paths down at once between from
// and to, from their journals: a worker is down from a transition out of
// running to the next into running.
func mostDown(ctx context.Context, c client.Client, paths []string, from, to time.Time) (int, error) {
	type edge struct {
		at   time.Time
		down int
	}
	var mu sync.Mutex
	var edges []edge
	var firstErr error
	sem := make(chan struct{}, 32)
	var wg sync.WaitGroup
	for _, path := range paths {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			v, err := c.QueryWorkflow(ctx, path, "", workflows.QueryHistory)
			var j []workflows.JournalEntry
			if err == nil {
				err = v.Get(&j)
			}
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				if firstErr == nil {
					firstErr = fmt.Errorf("history of %s: %w", path, err)
				}
				return
			}
			down := false
			for _, e := range j {
				if e.Time.Before(from) || e.Time.After(to) {
					continue
				}
				switch {
				case e.From == "running" && e.State != "running" && !down:
					edges, down = append(edges, edge{e.Time, 1}), true
				case e.State == "running" && down:
					edges, down = append(edges, edge{e.Time, -1}), false
				}
			}
		}()
	}
	wg.Wait()
	if firstErr != nil {
		return 0, firstErr
	}
	sort.Slice(edges, func(i, j int) bool {
		if edges[i].at.Equal(edges[j].at) {
			return edges[i].down < edges[j].down // up before down at the same instant
		}
		return edges[i].at.Before(edges[j].at)
	})
	most, now := 0, 0
	for _, e := range edges {
		now += e.down
		most = max(most, now)
	}
	return most, nil
}

// writeTemp writes a spec to a temporary file and returns its path.
func writeTemp(name, content string) string {
	f, err := os.CreateTemp("", name+"-*.yaml")
	if err != nil {
		panic(err)
	}
	defer f.Close()
	if _, err := f.WriteString(content); err != nil {
		panic(err)
	}
	return f.Name()
}
