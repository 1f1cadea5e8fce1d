package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	ossignal "os/signal"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"golang.org/x/term"

	"github.com/steward-sh/steward/internal/rolloutcore"
	"github.com/steward-sh/steward/internal/treestatus"
	"github.com/steward-sh/steward/workflows"
)

func rolloutCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "rollout restart|stop|start|reload PATH | rollout cancel ID",
		Short: "Restart, stop, start or reload every worker under PATH, a chunk at a time",
		Long: `A rollout restarts, stops, starts or reloads every leaf worker under PATH, in spec
order, --chunk of them at a time; the next chunk starts when every target of
the one before has reached its state, failed, or timed out. With --fail-fast
no chunk starts after a failure. It runs as a durable workflow (ID
rollout:PATH, one per subtree at a time); this command shows its progress
and its summary, and Ctrl-C asks it to stop issuing chunks.`,
	}
	for _, op := range []string{workflows.RolloutRestart, workflows.RolloutStop, workflows.RolloutStart, workflows.RolloutReload} {
		cmd.AddCommand(rolloutOpCmd(g, op))
	}
	cmd.AddCommand(rolloutCancelCmd(g))
	return cmd
}

func rolloutOpCmd(g *globals, op string) *cobra.Command {
	var chunk, historyLimit int
	var failFast bool
	var output string
	c := &cobra.Command{
		Use:   op + " PATH",
		Short: fmt.Sprintf("%s every worker under PATH, --chunk at a time", strings.ToUpper(op[:1])+op[1:]),
		Args:  args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, a []string) error {
			if chunk < 1 || chunk > rolloutcore.MaxChunk {
				return badInput("--chunk must be 1 to %d, not %d", rolloutcore.MaxChunk, chunk)
			}
			if historyLimit < 0 {
				return badInput("--history-limit must be >= 0, not %d", historyLimit)
			}
			if output != "text" && output != "json" {
				return badInput("-o must be text or json, not %q", output)
			}
			path := strings.TrimSuffix(a[0], "/")
			cl, err := g.dial()
			if err != nil {
				return err
			}
			defer cl.Close()
			ctx := cmd.Context()
			if n, why := updateCap(ctx, cl, path); n > 0 && n < chunk {
				fmt.Fprintf(cmd.ErrOrStderr(), "rollout: --chunk %d cut to %d: %s\n", chunk, n, why)
				chunk = n
			}
			id, targets, err := startRollout(ctx, cl, g.namespace, workflows.RolloutInput{Path: path, Op: op, Chunk: chunk, FailFast: failFast, HistoryLimit: historyLimit}, cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "rollout %s: %s %d workers under %s, %d at a time%s\n", id, op, targets, path, chunk, map[bool]string{true: ", fail-fast"}[failFast])
			res, err := followRollout(ctx, cl, id, targets, cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			if err := printRollout(cmd.OutOrStdout(), res, output); err != nil {
				return err
			}
			if res.Failed > 0 {
				return &exitError{code: 1, err: fmt.Errorf("%d of %d failed", res.Failed, res.Total)}
			}
			return nil
		},
	}
	c.Flags().IntVar(&chunk, "chunk", workflows.DefaultRolloutChunk, fmt.Sprintf("how many workers at a time (1 to %d)", rolloutcore.MaxChunk))
	c.Flags().BoolVar(&failFast, "fail-fast", false, "start no chunk after a failure (the rest are skipped)")
	c.Flags().IntVar(&historyLimit, "history-limit", 0, "the rollout continues as new between chunks past this many history events (0: the default)")
	c.Flags().StringVarP(&output, "output", "o", "text", "summary format: text or json")
	return c
}

func rolloutCancelCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "cancel ID",
		Short: "Stop a rollout issuing chunks (its in-flight targets finish; the rest are cancelled)",
		Args:  args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, a []string) error {
			id := a[0]
			if !strings.HasPrefix(id, "rollout:") {
				id = workflows.RolloutID(id) // a path names its rollout too
			}
			cl, err := g.dial()
			if err != nil {
				return err
			}
			defer cl.Close()
			if err := cl.SignalWorkflow(cmd.Context(), id, "", workflows.SignalCancel, nil); err != nil {
				var nf *serviceerror.NotFound
				if errors.As(err, &nf) {
					return failure("no running rollout %q", id)
				}
				return failure("cancel %s: %v", id, err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s: cancel requested (targets in flight finish)\n", id)
			return nil
		},
	}
}

// refuseOverlap refuses a rollout over a subtree that a running rollout
// covers, or that covers one (the same path is refused by the server).
func refuseOverlap(ctx context.Context, c client.Client, namespace, path string) error {
	resp, err := c.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{
		Namespace: namespace,
		Query:     "WorkflowType = 'RolloutWorkflow' AND ExecutionStatus = 'Running'",
	})
	if err != nil {
		return failure("list rollouts: %v", err)
	}
	for _, e := range resp.GetExecutions() {
		id := e.GetExecution().GetWorkflowId()
		other := strings.TrimPrefix(id, "rollout:")
		if other != path && (strings.HasPrefix(path, other+"/") || strings.HasPrefix(other, path+"/")) {
			return failure("rollout %s is running over %s, which overlaps %s; wait for it or `starter rollout cancel %s`", id, other, path, id)
		}
	}
	return nil
}

// followRollout shows the rollout's progress until it ends and returns its
// result. The first Ctrl-C asks the rollout to stop issuing chunks (and
// keeps following it); a second one leaves it running and returns.
func followRollout(ctx context.Context, c client.Client, id string, total int, out io.Writer) (workflows.RolloutStatus, error) {
	sigs := make(chan os.Signal, 2)
	ossignal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer ossignal.Stop(sigs)

	tty := false
	if f, ok := out.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		tty = true
	}
	var bar *progressbar.ProgressBar
	if tty {
		bar = progressbar.NewOptions(total, progressbar.OptionSetWriter(out), progressbar.OptionShowCount(),
			progressbar.OptionSetDescription("rollout"), progressbar.OptionSetPredictTime(true))
	}
	done := make(chan error, 1)
	var res workflows.RolloutStatus
	go func() { done <- c.GetWorkflow(ctx, id, "").Get(ctx, &res) }()
	tick := time.NewTicker(300 * time.Millisecond)
	defer tick.Stop()
	lastLine, interrupts := "", 0
	for {
		select {
		case err := <-done:
			if bar != nil {
				_ = bar.Finish()
				fmt.Fprintln(out)
			}
			if err != nil {
				return res, failure("rollout %s: %v", id, err)
			}
			return res, nil
		case <-sigs:
			interrupts++
			if interrupts > 1 {
				return res, failure("left rollout %s running; `starter rollout cancel %s` stops it", id, id)
			}
			if err := c.SignalWorkflow(ctx, id, "", workflows.SignalCancel, nil); err != nil {
				fmt.Fprintf(out, "\ncould not cancel %s: %v\n", id, err)
			} else {
				fmt.Fprintf(out, "\ncancelling %s: targets in flight finish, the rest are cancelled (Ctrl-C again to stop watching)\n", id)
			}
		case <-tick.C:
			v, err := c.QueryWorkflow(ctx, id, "", workflows.QueryStatus)
			if err != nil {
				continue
			}
			var st workflows.RolloutStatus
			if v.Get(&st) != nil {
				continue
			}
			finishedN := st.Total - st.Counts[workflows.TargetPending] - st.Counts[workflows.TargetRunning]
			if bar != nil {
				bar.Describe(fmt.Sprintf("rollout: %d ok, %d failed", st.Succeeded, st.Failed))
				_ = bar.Set(finishedN)
				continue
			}
			line := fmt.Sprintf("%d of %d done: %d succeeded, %d failed, %d in flight", finishedN, st.Total, st.Succeeded, st.Failed,
				st.Counts[workflows.TargetRunning])
			if line != lastLine {
				fmt.Fprintln(out, line)
				lastLine = line
			}
		}
	}
}

// printRollout writes the summary: JSON, or the targets that did not
// succeed and one line of counts.
func printRollout(out io.Writer, st workflows.RolloutStatus, output string) error {
	if output == "json" {
		return writeJSON(out, st)
	}
	tw := tabwriter.NewWriter(terminalSafe{out}, 0, 0, 2, ' ', 0)
	shown := false
	for _, t := range st.Targets {
		if t.Status == workflows.TargetSucceeded {
			continue
		}
		if !shown {
			fmt.Fprintln(tw, "TARGET\tSTATUS\tERROR")
			shown = true
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", cell(t.Path), cell(t.Status), cell(t.Error))
	}
	_ = tw.Flush()
	took := st.EndedAt.Sub(st.StartedAt).Round(100 * time.Millisecond)
	fmt.Fprintf(out, "%s %s: %s — total %d, succeeded %d, failed %d, skipped %d, cancelled %d (%s)\n",
		st.Op, st.Path, st.State, st.Total, st.Succeeded, st.Failed, st.Skipped, st.Counts[workflows.TargetCancelled], took)
	return nil
}

// startRollout starts a rollout of in.Op over the workers under in.Path
// (its targets filled in here) and returns its ID and how many it targets.
func startRollout(ctx context.Context, cl client.Client, namespace string, in workflows.RolloutInput, warn io.Writer) (string, int, error) {
	path, op, chunk := in.Path, in.Op, in.Chunk
	st, err := treeStatus(ctx, cl, path, false, treestatus.Options{})
	if err != nil {
		return "", 0, err
	}
	if stale := staleSummary([]workflows.Status{st}); stale != "" {
		// The workers below a supervisor that did not answer are the
		// running ones visibility lists, in path order.
		linef(warn, "warning: %s; the workers below them are those visibility lists as running", stale)
	}
	targets := st.Leaves()
	if len(targets) == 0 {
		return "", 0, failure("no workers under %s", path)
	}
	if err := targetsUnder(path, targets); err != nil {
		return "", 0, err
	}
	if err := refuseOverlap(ctx, cl, namespace, path); err != nil {
		return "", 0, err
	}
	id := workflows.RolloutID(path)
	_, err = cl.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
		ID:                                       id,
		TaskQueue:                                workflows.TaskQueue,
		WorkflowIDReusePolicy:                    enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE,
		WorkflowIDConflictPolicy:                 enumspb.WORKFLOW_ID_CONFLICT_POLICY_FAIL,
		WorkflowExecutionErrorWhenAlreadyStarted: true,
		StaticSummary:                            fmt.Sprintf("steward rollout: %s %d workers under %s, %d at a time", op, len(targets), path, chunk),
		TypedSearchAttributes: temporal.NewSearchAttributes(
			workflows.SearchPath.ValueSet(path), workflows.SearchKind.ValueSet("rollout"), workflows.SearchState.ValueSet("running")),
	}, workflows.RolloutWorkflow, workflows.RolloutInput{Path: path, Op: op, Targets: targets, Chunk: chunk, FailFast: in.FailFast, HistoryLimit: in.HistoryLimit, Version: workflows.RolloutVersion})
	var already *serviceerror.WorkflowExecutionAlreadyStarted
	if errors.As(err, &already) {
		return "", 0, failure("a rollout of %s is already running (%s); wait for it or `starter rollout cancel %s`", path, id, id)
	}
	if err != nil {
		return "", 0, failure("start rollout: %v", err)
	}
	return id, len(targets), nil
}

// targetsUnder refuses a rollout of path whose targets are not all path
// or below it. The tree is its workflows' say, and a workflow started by
// hand may name anything: treestatus.Assemble leaves out rows that are not
// below the node that gave them; this holds whatever else gave the rows
// (a rollout of prod restarted billing/db).
func targetsUnder(path string, targets []string) error {
	for _, t := range targets {
		if !atOrUnder(t, path) {
			return failure("the status of %s names a worker %s that is not under it: no rollout started", path, printable(t))
		}
	}
	return nil
}
