package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"

	"github.com/steward-sh/steward/internal/buildinfo"
	"github.com/steward-sh/steward/internal/workerid"
	"github.com/steward-sh/steward/workflows"
)

func versionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print this starter's build (the build its workers must run; see `starter upgrade`)",
		Args:  args(cobra.NoArgs),
		Run:   func(cmd *cobra.Command, _ []string) { fmt.Fprintln(cmd.OutOrStdout(), buildinfo.ID()) },
	}
}

// UpgradeResult is `starter upgrade -o json`.
type UpgradeResult struct {
	Total    int            `json:"total"`
	Upgraded int            `json:"upgraded"`
	Builds   map[string]int `json:"builds"`
}

// noBuild is the build of a workflow whose run began before builds were
// recorded.
const noBuild = "none"

// pollerFresh is how recently a poller must have polled to count as a
// running worker (an idle long poll lasts about a minute).
const pollerFresh = 75 * time.Second

func upgradeCmd(g *globals) *cobra.Command {
	var wait, force bool
	var timeout time.Duration
	var output string
	cmd := &cobra.Command{
		Use:   "upgrade [PATH]",
		Short: "Move every workflow of the tree at PATH (of every tree when omitted) onto the code of this starter's build, restarting no service",
		Long: `upgrade asks every workflow of the tree that runs an older build to continue
as new at its next safe point (no action in flight, its handlers finished):
the new run is this build's code, with the same state, and its children and
services keep running. Replace every worker process with this build first:
upgrade refuses while a worker of another build polls (--force skips that).
With --wait it waits until every workflow runs this build (exit 0), or gives
up after --timeout naming what lags (exit 1).`,
		Args: args(cobra.MaximumNArgs(1)),
		RunE: func(cmd *cobra.Command, a []string) error {
			if output != "text" && output != "json" {
				return badInput("-o must be text or json, not %q", output)
			}
			if timeout <= 0 {
				return badInput("--timeout must be > 0, not %s", timeout)
			}
			path := ""
			if len(a) == 1 {
				path = strings.TrimSuffix(a[0], "/")
			}
			c, err := g.dial()
			if err != nil {
				return err
			}
			defer c.Close()
			ctx, cancel := context.WithTimeout(cmd.Context(), timeout)
			defer cancel()
			build, errOut := buildinfo.ID(), cmd.ErrOrStderr()
			if !force {
				if err := waitForWorkersOf(ctx, c, build, wait, timeout, errOut); err != nil {
					return err
				}
			}
			var res UpgradeResult
			var behind []upgradeRow
			lastSignal := time.Time{}
			for {
				rows, err := stewardWorkflows(ctx, c, path)
				if err != nil {
					return failure("%v", err)
				}
				if path != "" && len(rows) == 0 {
					return failure("no running workflow of steward at %q (see `starter status`)", path)
				}
				res, behind = countBuilds(rows, build)
				linef(errOut, "upgrade: %d of %d workflows on build %s%s", res.Upgraded, res.Total, build, otherBuilds(res.Builds, build))
				if len(behind) == 0 {
					break
				}
				// Ask again now and then: a signal sent while a worker of
				// the older build still served the workflow was dropped.
				if time.Since(lastSignal) >= 30*time.Second {
					if err := signalUpgrade(ctx, c, behind); err != nil {
						return failure("%v", err)
					}
					lastSignal = time.Now()
				}
				if !wait {
					break
				}
				select {
				case <-ctx.Done():
					return failure("gave up after %s: %d of %d workflows still run an older build: %s", timeout, len(behind), res.Total, lagging(behind, 10))
				case <-time.After(2 * time.Second):
				}
			}
			if output == "json" {
				return json.NewEncoder(cmd.OutOrStdout()).Encode(res)
			}
			if len(behind) == 0 {
				fmt.Fprintf(cmd.OutOrStdout(), "all %d workflows run build %s\n", res.Total, build)
			} else {
				fmt.Fprintf(cmd.OutOrStdout(), "asked %d workflows to upgrade to build %s (they do at their next safe point; --wait waits)\n", len(behind), build)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&wait, "wait", false, "wait until every workflow runs this build")
	cmd.Flags().BoolVar(&force, "force", false, "do not check the builds of the workers that poll")
	cmd.Flags().DurationVar(&timeout, "timeout", 10*time.Minute, "how long it waits in all")
	cmd.Flags().StringVarP(&output, "output", "o", "text", "summary format: text or json (one object; progress goes to stderr)")
	return cmd
}

// upgradeRow is one running workflow of steward and its build.
type upgradeRow struct {
	id, build string
}

// stewardWorkflows lists the running workflows of steward (supervisors,
// workers, jobs, rollouts) under path ("" for all) with their builds.
func stewardWorkflows(ctx context.Context, c client.Client, path string) ([]upgradeRow, error) {
	q := fmt.Sprintf("ExecutionStatus = 'Running' AND TaskQueue = '%s' AND WorkflowType IN ('SupervisorWorkflow', 'WorkerWorkflow', 'JobWorkflow', 'RolloutWorkflow')", workflows.TaskQueue)
	if path != "" {
		q += fmt.Sprintf(" AND (StewardPath = '%s' OR StewardPath STARTS_WITH '%s/')", path, path)
	}
	var rows []upgradeRow
	var token []byte
	for {
		resp, err := c.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{Query: q, NextPageToken: token, PageSize: 1000})
		if err != nil {
			return nil, fmt.Errorf("list workflows: %w", err)
		}
		for _, e := range resp.GetExecutions() {
			b := keyword(e.GetSearchAttributes().GetIndexedFields(), workflows.SearchBuild.GetName())
			if b == "" {
				b = noBuild
			}
			id := e.GetExecution().GetWorkflowId()
			if path != "" && !inTree(id, path) {
				// Its StewardPath says path, its ID another: a workflow
				// started by hand with the attribute, which had kept
				// `upgrade --wait` waiting on it.
				continue
			}
			rows = append(rows, upgradeRow{id: id, build: b})
		}
		if token = resp.GetNextPageToken(); len(token) == 0 {
			return rows, nil
		}
	}
}

// inTree: the workflow ID id is of the tree at path: path's own, one below
// it, or a rollout of either.
func inTree(id, path string) bool {
	return atOrUnder(strings.TrimPrefix(id, workflows.RolloutID("")), path)
}

// atOrUnder: p is path or a path below it.
func atOrUnder(p, path string) bool {
	return p == path || strings.HasPrefix(p, path+"/")
}

// countBuilds counts rows by build, and lists those not on build.
func countBuilds(rows []upgradeRow, build string) (UpgradeResult, []upgradeRow) {
	res := UpgradeResult{Total: len(rows), Builds: map[string]int{}}
	var behind []upgradeRow
	for _, r := range rows {
		res.Builds[r.build]++
		if r.build == build {
			res.Upgraded++
		} else {
			behind = append(behind, r)
		}
	}
	sort.Slice(behind, func(i, j int) bool { return behind[i].id < behind[j].id })
	return res, behind
}

func otherBuilds(builds map[string]int, build string) string {
	var parts []string
	for b, n := range builds {
		if b != build {
			parts = append(parts, fmt.Sprintf("%s: %d", b, n))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	sort.Strings(parts)
	return " (others: " + strings.Join(parts, ", ") + ")"
}

func lagging(rows []upgradeRow, n int) string {
	var parts []string
	for _, r := range rows[:min(n, len(rows))] {
		parts = append(parts, r.id+" ("+r.build+")")
	}
	if len(rows) > n {
		parts = append(parts, fmt.Sprintf("and %d more", len(rows)-n))
	}
	return strings.Join(parts, ", ")
}

// signalUpgrade sends the upgrade signal to each row, 16 at a time; a
// workflow that closed meanwhile is skipped.
func signalUpgrade(ctx context.Context, c client.Client, rows []upgradeRow) error {
	sem := make(chan struct{}, 16)
	var mu sync.Mutex
	var first error
	var wg sync.WaitGroup
	for _, r := range rows {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			err := c.SignalWorkflow(ctx, r.id, "", workflows.SignalUpgrade, nil)
			var nf *serviceerror.NotFound
			if err != nil && !errors.As(err, &nf) {
				mu.Lock()
				if first == nil {
					first = fmt.Errorf("signal %s: %w", r.id, err)
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return first
}

// waitForWorkersOf checks that every worker polling steward's workflow
// queue runs build (the build ends each worker's identity): a worker of an
// older build would run the new runs with older code. With wait it waits
// for the others to go (a stopped worker stays listed until its last poll
// is pollerFresh old, unless it ran where the starter runs and has exited:
// workerid) and for a worker of build to poll; without, it refuses at once.
func waitForWorkersOf(ctx context.Context, c client.Client, build string, wait bool, timeout time.Duration, errOut io.Writer) error {
	said := ""
	for {
		resp, err := c.DescribeTaskQueue(ctx, workflows.TaskQueue, enumspb.TASK_QUEUE_TYPE_WORKFLOW)
		if err != nil && ctx.Err() == nil {
			return failure("describe task queue %s: %v", workflows.TaskQueue, err)
		}
		var others []string
		current := 0
		for _, p := range resp.GetPollers() {
			id := p.GetIdentity()
			if time.Since(p.GetLastAccessTime().AsTime()) > pollerFresh {
				continue
			}
			if w, ok := workerid.Parse(id); ok && w.Gone() {
				continue // it ran where the starter runs, and has exited
			}
			if workerid.BuildOf(id) == build {
				current++
				continue
			}
			others = append(others, id)
		}
		sort.Strings(others)
		switch {
		case err != nil: // the time ran out during the call
		case len(others) == 0 && current > 0:
			return nil
		case len(others) == 0 && !wait:
			return failure("no worker of build %s polls task queue %q: start one, then upgrade", build, workflows.TaskQueue)
		case !wait:
			return failure("workers of another build poll task queue %q: %s; replace them with build %s first (their identity ends with the build; --force skips this check)",
				workflows.TaskQueue, strings.Join(others, ", "), build)
		}
		waiting := "no worker of build " + build + " polls task queue " + workflows.TaskQueue + " yet"
		if len(others) > 0 {
			waiting = "workers of other builds still poll: " + strings.Join(others, ", ")
		}
		if waiting != said {
			linef(errOut, "upgrade: waiting: %s", waiting)
			said = waiting
		}
		select {
		case <-ctx.Done():
			return failure("gave up after %s: %s", timeout, waiting)
		case <-time.After(2 * time.Second):
		}
	}
}
