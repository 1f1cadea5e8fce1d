package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/steward-sh/steward/internal/release"
	"github.com/steward-sh/steward/workflows"
)

// upgradeStep applies a 1,000-worker tree with the last release's worker and
// starter, replaces the worker with this build, and times `starter upgrade
// --wait` (upgrade_seconds_1000); upgrade_restarts_1000 counts the workers
// whose service started again meanwhile (another instance, or more
// restarts). The bench's worker is this build again afterwards.
func upgradeStep(ctx context.Context, c client.Client, o options, res Result, swapWorker func(bin string, kill bool) error) error {
	dir, err := os.MkdirTemp("", "steward-release-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	oldWorker, oldStarter, err := release.Build(".", release.Last, dir)
	if err != nil {
		return err
	}
	if err := swapWorker(oldWorker, false); err != nil {
		return err
	}
	old := o
	old.starterBin = oldStarter
	const name = "bench-upgrade"
	if _, err := starterRun(old, 20*time.Minute, "apply", "-f", writeFleet(name, 1000, 100), "--wait", "--timeout", "10m"); err != nil {
		return fmt.Errorf("upgrade: apply with %s: %w", release.Last, err)
	}
	before, err := workerRows(o, name)
	if err != nil {
		return err
	}
	if err := swapWorker(o.workerBin, false); err != nil {
		return err
	}
	began := time.Now()
	// --force: the old worker is gone (swapWorker waited for its exit); the
	// server would list its poller for another minute, and a worker of
	// 5b9cb0e names no machine for the starter to find it gone by.
	out, err := starterRun(o, 20*time.Minute, "upgrade", name, "--wait", "--force", "--timeout", "15m", "-o", "json")
	if err != nil {
		return err
	}
	res["upgrade_seconds_1000"] = round(time.Since(began).Seconds())
	var up struct {
		Total, Upgraded int
	}
	if err := json.Unmarshal([]byte(out), &up); err != nil {
		return fmt.Errorf("upgrade: %q: %w", out, err)
	}
	res["upgrade_workflows_1000"] = up.Total
	after, err := workerRows(o, name)
	if err != nil {
		return err
	}
	restarted := 0
	for path, b := range before {
		a, ok := after[path]
		if !ok || a.Instance != b.Instance || a.Restarts != b.Restarts || a.ManualRestarts != b.ManualRestarts || a.State != "running" {
			restarted++
		}
	}
	res["upgrade_restarts_1000"] = restarted
	_, err = starterRun(o, 5*time.Minute, "delete", name)
	return err
}

// workerRows is every worker of the tree at root as it answers for itself
// (`starter status --exact true`). A row marked stale (its node, or a
// supervisor above it, did not answer in time: right after an upgrade the
// workflow queue still holds the new runs' tasks) is a record or
// visibility's, with no instance or restart count to compare: status is
// asked again, up to five times, and only the workers' own answers are
// kept; a worker that never answered counts as restarted.
func workerRows(o options, root string) (map[string]workflows.Status, error) {
	rows := map[string]workflows.Status{}
	for attempt := 1; attempt <= 5; attempt++ {
		out, err := starterRun(o, 5*time.Minute, "status", root, "--exact", "true", "-o", "json")
		if err != nil {
			return nil, err
		}
		var st workflows.Status
		if err := json.Unmarshal([]byte(out), &st); err != nil {
			return nil, err
		}
		stale := 0
		var walk func(s workflows.Status)
		walk = func(s workflows.Status) {
			switch {
			case s.IsSupervisor():
			case s.Stale != "":
				stale++
			default:
				rows[s.Path] = s
			}
			for _, ch := range s.Children {
				walk(ch)
			}
		}
		walk(st)
		if stale == 0 {
			break
		}
		fmt.Fprintf(os.Stderr, "bench: %d rows of %s stale: asking again\n", stale, root)
		time.Sleep(5 * time.Second)
	}
	if len(rows) == 0 {
		return nil, fmt.Errorf("upgrade: no workers under %s", root)
	}
	return rows, nil
}
