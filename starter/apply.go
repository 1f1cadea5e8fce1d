package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"golang.org/x/term"

	enumspb "go.temporal.io/api/enums/v1"

	"github.com/steward-sh/steward/internal/revision"
	"github.com/steward-sh/steward/internal/spec"
	"github.com/steward-sh/steward/internal/temporalclient"
	"github.com/steward-sh/steward/internal/treestatus"
	"github.com/steward-sh/steward/workflows"
)

func applyCmd(g *globals) *cobra.Command {
	var file string
	var dryRun bool
	var output string
	var signKey string
	var o applyOptions
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
			if err := o.check(); err != nil {
				return err
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
			if signKeyFile(signKey) != "" {
				if node, err = signSpec(cmd.Context(), c, node, signKey); err != nil {
					return err
				}
			}
			if dryRun {
				ctx := cmd.Context()
				running, stale, err := runningTree(ctx, c, node.Name)
				if err != nil {
					return err
				}
				plan := planOf(running, node, stale)
				if len(stale) > 0 {
					fmt.Fprintf(cmd.ErrOrStderr(), "warning: %d subtrees did not answer in time and were not compared (listed as stale)\n", len(stale))
				}
				return printPlan(cmd.OutOrStdout(), plan, output)
			}
			return applyNode(cmd, g, c, node, o)
		},
	}
	cmd.Flags().StringVarP(&file, "file", "f", "", "spec file (YAML)")
	o.flags(cmd, "wait until every worker is at its desired state (or one fails), showing progress")
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "compare the file with the running tree and print what apply would add, remove and change, field by field; start and signal nothing")
	cmd.Flags().StringVarP(&output, "output", "o", "text", "output format of --dry-run: text or json")
	signKeyFlag(cmd, &signKey, "sign what each host will run with this private key: hosts started with --trusted-keys run only specs signed by a key they trust")
	cmd.Flags().IntVar(&o.historyLimit, "history-limit", 0, fmt.Sprintf("a new tree's workflows continue as new past this many history events (0: %d; a shorter history replays faster)", workflows.DefaultHistoryLimit))
	return cmd
}

// applyOptions are what apply and revert share: how to apply, and whether
// to wait.
type applyOptions struct {
	message      string
	wait         bool
	timeout      time.Duration
	historyLimit int
}

func (o *applyOptions) flags(cmd *cobra.Command, waitHelp string) {
	cmd.Flags().StringVarP(&o.message, "message", "m", "", "a message kept with the revision this apply makes (see: starter revisions)")
	cmd.Flags().BoolVar(&o.wait, "wait", false, waitHelp)
	cmd.Flags().DurationVar(&o.timeout, "timeout", 5*time.Minute, "how long --wait waits without progress (a worker more at its desired state) before it gives up")
}

func (o *applyOptions) check() error {
	if o.timeout <= 0 {
		return badInput("--timeout must be > 0, not %s", o.timeout)
	}
	if o.historyLimit < 0 {
		return badInput("--history-limit must be >= 0, not %d", o.historyLimit)
	}
	if len(o.message) > revision.MaxMessage {
		return badInput("--message is %d characters long (at most %d)", len(o.message), revision.MaxMessage)
	}
	return nil
}

// applyNode records the apply of node in its tree's revisions (a tree with
// a supervisor at its root), then starts the tree or hands the running one
// the spec, and with --wait follows it to its desired state.
func applyNode(cmd *cobra.Command, g *globals, c client.Client, node spec.Node, o applyOptions) error {
	ctx := cmd.Context()
	if err := temporalclient.EnsureSearchAttributes(ctx, c, g.namespace, workflows.SearchAttributeNames); err != nil {
		return failure("%v", err)
	}
	out := cmd.OutOrStdout()
	request := ""
	if node.IsSupervisor() {
		var err error
		if request, err = recordApply(ctx, c, node, o.message); err != nil {
			return err
		}
	}
	started, prevGen, err := startOrUpdate(ctx, c, node, o.historyLimit, request)
	if err != nil {
		if request != "" { // the tree has nothing: the record goes
			_ = c.SignalWorkflow(ctx, workflows.RevisionsID(node.Name), "", workflows.SignalTaken, revision.Taken{Request: request})
		}
		return err
	}
	if started {
		fmt.Fprintf(out, "%s: started\n", node.Name)
	} else {
		fmt.Fprintf(out, "%s: spec sent to the running tree\n", node.Name)
	}
	warnIfNoWorker(ctx, c, cmd.ErrOrStderr())
	if !o.wait {
		return nil
	}
	err = waitDesired(ctx, c, g.namespace, node.Name, prevGen, node.Workers(), o.timeout, out)
	if node.IsSupervisor() { // the revision's outcome, while the tree shows it
		if l, qerr := queryRevisions(ctx, c, node.Name); qerr == nil {
			judgeLatest(ctx, c, node.Name, l)
		}
	}
	return err
}

// startOrUpdate starts the root workflow, or signals the new spec to the
// running one. It returns the generation the tree had before (0 when new).
func startOrUpdate(ctx context.Context, c client.Client, node spec.Node, historyLimit int, request string) (started bool, prevGen int64, err error) {
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
		wf, input = workflows.SupervisorWorkflow, workflows.SupervisorInput{Path: node.Name, Spec: node, Generation: 1, HistoryLimit: historyLimit, Version: workflows.SupervisorVersion, Request: request}
	} else {
		wf, input = workflows.WorkerWorkflow, workflows.WorkerInput{Path: node.Name, Spec: node, Generation: 1, HistoryLimit: historyLimit, Version: workflows.WorkerVersion}
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
	if err := signal(ctx, c, node.Name, workflows.SignalSpec, spec.Update{Spec: node, Request: request}); err != nil {
		return false, 0, err
	}
	return false, st.Generation, nil
}

// waitDesired polls the tree's assembled status until every worker is at
// its desired state (exit 0) or one has failed (exit 1), showing N of M. It
// never waits silently: every waitReportEvery without a change it says what
// it waits for (the slowest supervisors, the nodes that do not answer, the
// workflow queue's health). It gives up after patience without progress
// (more workers at their desired state than ever before, or the tree taking
// the new spec), however long the tree as a whole takes.
func waitDesired(ctx context.Context, c client.Client, namespace, root string, prevGen int64, want int, patience time.Duration, out io.Writer) error {
	tty := false
	if f, ok := out.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		tty = true
	}
	var bar *progressbar.ProgressBar
	lastLine := ""
	last, lastTotal, took := -1, -1, false
	lastProgress, lastReport := time.Now(), time.Now()
	for {
		// States are always reported: the supervisors' records suffice.
		// No visibility listing below a node that does not answer: its
		// workers count as not there yet, and a listing of the whole tree
		// twice a second would load the server the tree is starting on.
		asked := time.Now()
		st, err := assembleTree(ctx, c, root, treestatus.Options{})
		pause := waitPause(time.Since(asked))
		waiting := ""
		switch {
		case err != nil:
			waiting = err.Error()
		case st.Generation <= prevGen && st.Stale == "":
			waiting = fmt.Sprintf("%s has not taken the new spec yet (generation %d)", root, st.Generation)
		default:
			if !took {
				took, lastProgress = true, time.Now()
			}
			at, total := st.AtDesired()
			// Until every child workflow has started, count the spec's workers.
			total = max(total, want)
			if at != last || total != lastTotal {
				last, lastTotal, lastProgress = at, total, time.Now()
			}
			ups := updatesOf(st, beganAfter(prevGen))
			msg, updating := updateOutcome(ups)
			if msg != "" {
				if bar != nil {
					_ = bar.Exit()
					fmt.Fprintln(out)
				}
				return failure("%d of %d at desired state; %s", at, total, msg)
			}
			var failed []string
			if !updating {
				failed = failedWorkers(st) // while an update runs, it answers for its failed workers
			}
			progress := updateSummary(ups)
			if tty {
				if bar == nil {
					bar = progressbar.NewOptions(total, progressbar.OptionSetWriter(out),
						progressbar.OptionSetDescription("at desired state"), progressbar.OptionShowCount())
				}
				bar.ChangeMax(total)
				_ = bar.Set(at)
				if progress != "" {
					bar.Describe("at desired state (" + progress + ")")
				}
			} else if line := strings.TrimSuffix(fmt.Sprintf("%d of %d at desired state; %s", at, total, progress), "; "); line != lastLine {
				fmt.Fprintln(out, line)
				lastLine, lastReport = line, time.Now()
			}
			if len(failed) > 0 {
				if bar != nil {
					_ = bar.Exit()
					fmt.Fprintln(out)
				}
				return failure("%d of %d at desired state; failed: %s", at, total, strings.Join(failed, "; "))
			}
			if at == total && st.Stale == "" && len(st.StaleNodes()) == 0 {
				if bar != nil {
					_ = bar.Finish()
					fmt.Fprintln(out)
				}
				fmt.Fprintf(out, "%s: all %d workers at their desired state\n", root, total)
				return nil
			}
			waiting = fmt.Sprintf("%d of %d at desired state", at, total)
			if progress != "" {
				waiting += "; " + progress
			}
			if slow := slowest(st, 3); slow != "" {
				waiting += "; slowest: " + slow
			}
			if stale := staleSummary([]workflows.Status{st}); stale != "" {
				waiting += "; " + stale
			}
		}
		if time.Since(lastReport) >= waitReportEvery {
			lastReport = time.Now()
			if bar != nil {
				_ = bar.Clear()
			}
			fmt.Fprintf(out, "waiting (%s without progress, giving up after %s): %s\n", time.Since(lastProgress).Round(time.Second), patience, waiting)
			warnQueueHealth(ctx, c, namespace, out)
		}
		if time.Since(lastProgress) > patience {
			return failure("gave up waiting for %s: no progress for %s (%s)", root, patience, waiting)
		}
		select {
		case <-ctx.Done():
			return failure("stopped waiting for %s: %v (%s)", root, ctx.Err(), waiting)
		case <-time.After(pause):
		}
	}
}

// waitPause is how long apply --wait rests between two assemblies of the
// tree, the last of which took took: at least half a second, and as long as
// the assembly took, so that its queries hold the tree's supervisors at most
// half the time. A supervisor answers a query between its workflow tasks:
// at 4,000 workers the 41 queries of an assembly took seconds, and asked
// back to back they competed with the very starts they wait for.
func waitPause(took time.Duration) time.Duration {
	return max(500*time.Millisecond, took)
}

// waitReportEvery is how often apply --wait says what it waits for while
// nothing changes.
const waitReportEvery = 15 * time.Second

// slowest names the n supervisors of an assembled tree with the most
// direct workers not at their desired state, as "path (at of total)", and
// a stale supervisor with no rows as "path (no answer)".
func slowest(st workflows.Status, n int) string {
	type part struct {
		path      string
		at, total int
		noAnswer  bool
	}
	var parts []part
	var walk func(s workflows.Status)
	walk = func(s workflows.Status) {
		if !s.IsSupervisor() {
			return
		}
		p := part{path: s.Path, noAnswer: s.Stale != "" && len(s.Children) == 0}
		for _, c := range s.Children {
			if c.IsSupervisor() {
				walk(c)
				continue
			}
			p.total++
			if c.Settled() {
				p.at++
			}
		}
		if p.noAnswer || p.at < p.total {
			parts = append(parts, p)
		}
	}
	walk(st)
	sort.SliceStable(parts, func(i, j int) bool {
		if parts[i].noAnswer != parts[j].noAnswer {
			return parts[i].noAnswer
		}
		return parts[i].total-parts[i].at > parts[j].total-parts[j].at
	})
	var out []string
	for _, p := range parts[:min(n, len(parts))] {
		if p.noAnswer {
			out = append(out, p.path+" (no answer)")
		} else {
			out = append(out, fmt.Sprintf("%s (%d of %d)", p.path, p.at, p.total))
		}
	}
	return strings.Join(out, ", ")
}

func failedWorkers(st workflows.Status) []string {
	var out []string
	switch {
	case st.Stale != "" || st.Applying: // a stale row proves nothing
	case st.State == "failed":
		// (Its reason is anyone's who may signal it: one line, printable.)
		msg := cell(st.Path) + " (" + cell(st.Reason)
		if st.LastAction.Error != "" && !strings.Contains(st.Reason, st.LastAction.Error) {
			msg += ": " + cell(st.LastAction.Error)
		}
		out = append(out, msg+")")
	case st.LastAction.Status == "refused":
		// Its host refused the new spec: the service runs on as it was,
		// which is not what was applied.
		out = append(out, fmt.Sprintf("%s (%s refused, running as before: %s)", cell(st.Path), cell(st.LastAction.Name), cell(st.LastAction.Error)))
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
