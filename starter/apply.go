package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"golang.org/x/term"

	enumspb "go.temporal.io/api/enums/v1"

	"github.com/steward-sh/steward/internal/spec"
	"github.com/steward-sh/steward/internal/temporalclient"
	"github.com/steward-sh/steward/workflows"
)

func applyCmd(g *globals) *cobra.Command {
	var file string
	var wait bool
	var timeout time.Duration
	var historyLimit int
	var dryRun bool
	var output string
	cmd := &cobra.Command{
		Use:   "apply -f FILE",
		Short: "Validate a spec, then start its tree or hand the running tree the new spec (--dry-run: only say what would change)",
		Args:  args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if file == "" {
				return badInput("apply needs -f FILE")
			}
			if output != "text" && output != "json" {
				return badInput("-o must be text or json, not %q", output)
			}
			if historyLimit < 0 {
				return badInput("--history-limit must be >= 0, not %d", historyLimit)
			}
			node, err := spec.Load(file)
			if err != nil {
				return badInput("invalid spec %s:\n%v", file, err)
			}
			c, err := g.dial()
			if err != nil {
				return err
			}
			defer c.Close()
			ctx := cmd.Context()
			if dryRun {
				running, err := runningTree(ctx, c, node.Name)
				if err != nil {
					return err
				}
				return printPlan(cmd.OutOrStdout(), spec.Diff(running, node), output)
			}
			if err := temporalclient.EnsureSearchAttributes(ctx, c, g.namespace, workflows.SearchAttributeNames); err != nil {
				return failure("%v", err)
			}
			out := cmd.OutOrStdout()
			started, prevGen, err := startOrUpdate(ctx, c, node, historyLimit)
			if err != nil {
				return err
			}
			if started {
				fmt.Fprintf(out, "%s: started\n", node.Name)
			} else {
				fmt.Fprintf(out, "%s: spec sent to the running tree\n", node.Name)
			}
			warnIfNoWorker(ctx, c, cmd.ErrOrStderr())
			if !wait {
				return nil
			}
			wctx, cancel := context.WithTimeout(ctx, timeout)
			defer cancel()
			return waitDesired(wctx, c, node.Name, prevGen, node.Workers(), out)
		},
	}
	cmd.Flags().StringVarP(&file, "file", "f", "", "spec file (YAML)")
	cmd.Flags().BoolVar(&wait, "wait", false, "wait until every worker is at its desired state (or one fails), showing progress")
	cmd.Flags().DurationVar(&timeout, "timeout", 5*time.Minute, "how long --wait waits")
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "compare the file with the running tree and print what apply would add, remove and change, field by field; start and signal nothing")
	cmd.Flags().StringVarP(&output, "output", "o", "text", "output format of --dry-run: text or json")
	cmd.Flags().IntVar(&historyLimit, "history-limit", 0, fmt.Sprintf("a new tree's workflows continue as new past this many history events (0: %d; a shorter history replays faster)", workflows.DefaultHistoryLimit))
	return cmd
}

// startOrUpdate starts the root workflow, or signals the new spec to the
// running one. It returns the generation the tree had before (0 when new).
func startOrUpdate(ctx context.Context, c client.Client, node spec.Node, historyLimit int) (started bool, prevGen int64, err error) {
	kind := node.Kind
	if node.IsSupervisor() {
		kind = spec.KindSupervisor
	}
	opts := client.StartWorkflowOptions{
		ID:                       node.Name,
		TaskQueue:                workflows.TaskQueue,
		WorkflowIDReusePolicy:    enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE,
		WorkflowIDConflictPolicy: enumspb.WORKFLOW_ID_CONFLICT_POLICY_FAIL,
		// Without this the SDK hands back the running workflow as if started.
		WorkflowExecutionErrorWhenAlreadyStarted: true,
		StaticSummary:                            "steward " + kind + " " + node.Name,
		TypedSearchAttributes: temporal.NewSearchAttributes(
			workflows.SearchPath.ValueSet(node.Name), workflows.SearchKind.ValueSet(kind), workflows.SearchState.ValueSet("stopped")),
	}
	var wf, input any
	if node.IsSupervisor() {
		wf, input = workflows.SupervisorWorkflow, workflows.SupervisorInput{Path: node.Name, Spec: node, Generation: 1, HistoryLimit: historyLimit}
	} else {
		wf, input = workflows.WorkerWorkflow, workflows.WorkerInput{Path: node.Name, Spec: node, Generation: 1, HistoryLimit: historyLimit}
	}
	_, err = c.ExecuteWorkflow(ctx, opts, wf, input)
	if err == nil {
		return true, 0, nil
	}
	var already *serviceerror.WorkflowExecutionAlreadyStarted
	if !errors.As(err, &already) {
		return false, 0, failure("start %s: %v", node.Name, err)
	}
	st, err := queryStatus(ctx, c, node.Name)
	if err != nil {
		return false, 0, err
	}
	if st.Kind != kind && (st.Kind == spec.KindSupervisor || kind == spec.KindSupervisor) {
		return false, 0, badInput("%s is running as a %s; delete it before applying it as a %s", node.Name, st.Kind, kind)
	}
	if err := signal(ctx, c, node.Name, workflows.SignalSpec, spec.Update{Spec: node}); err != nil {
		return false, 0, err
	}
	return false, st.Generation, nil
}

// waitDesired polls the tree's assembled status until every worker is at its desired
// state (exit 0) or one has failed (exit 1), showing N of M.
func waitDesired(ctx context.Context, c client.Client, root string, prevGen int64, want int, out io.Writer) error {
	tty := false
	if f, ok := out.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		tty = true
	}
	var bar *progressbar.ProgressBar
	lastLine := ""
	tick := time.NewTicker(500 * time.Millisecond)
	defer tick.Stop()
	for {
		st, err := treeStatus(ctx, c, root, false) // states are always reported
		if err == nil && st.Generation > prevGen {
			at, total := st.AtDesired()
			// Until every child workflow has started, count the spec's workers.
			total = max(total, want)
			failed := failedWorkers(st)
			if tty {
				if bar == nil {
					bar = progressbar.NewOptions(total, progressbar.OptionSetWriter(out),
						progressbar.OptionSetDescription("at desired state"), progressbar.OptionShowCount())
				}
				bar.ChangeMax(total)
				_ = bar.Set(at)
			} else if line := fmt.Sprintf("%d of %d at desired state", at, total); line != lastLine {
				fmt.Fprintln(out, line)
				lastLine = line
			}
			if len(failed) > 0 {
				if bar != nil {
					_ = bar.Exit()
					fmt.Fprintln(out)
				}
				return failure("%d of %d at desired state; failed: %s", at, total, strings.Join(failed, "; "))
			}
			if at == total {
				if bar != nil {
					_ = bar.Finish()
					fmt.Fprintln(out)
				}
				fmt.Fprintf(out, "%s: all %d workers at their desired state\n", root, total)
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return failure("timed out waiting for %s to reach its desired state", root)
		case <-tick.C:
		}
	}
}

func failedWorkers(st workflows.Status) []string {
	var out []string
	if st.State == "failed" && !st.Applying {
		msg := st.Path + " (" + st.Reason
		if st.LastAction.Error != "" && !strings.Contains(st.Reason, st.LastAction.Error) {
			msg += ": " + st.LastAction.Error
		}
		out = append(out, msg+")")
	}
	for _, c := range st.Children {
		out = append(out, failedWorkers(c)...)
	}
	return out
}

// warnIfNoWorker says so when no worker process polls steward's task queue:
// the tree is durable and will start once one does, but nothing moves now.
func warnIfNoWorker(ctx context.Context, c client.Client, w io.Writer) {
	resp, err := c.DescribeTaskQueue(ctx, workflows.TaskQueue, enumspb.TASK_QUEUE_TYPE_WORKFLOW)
	if err == nil && len(resp.GetPollers()) == 0 {
		fmt.Fprintf(w, "warning: no worker polls task queue %q; nothing moves until one runs (start bin/worker)\n", workflows.TaskQueue)
	}
}
