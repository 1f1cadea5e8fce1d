package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"

	"github.com/spf13/cobra"

	"github.com/steward-sh/steward/internal/spec"
	"github.com/steward-sh/steward/internal/telemetry"
	"github.com/steward-sh/steward/internal/treestatus"
	"github.com/steward-sh/steward/workflows"
)

// exactUpTo is the largest subtree whose workers `starter status` asks
// one by one by default (about 4 s here; 10,000 take about 40 s on the dev
// server, while the supervisors alone answer in well under a second).
const exactUpTo = 1000

func statusCmd(g *globals) *cobra.Command {
	var output, exact string
	var watch, usage bool
	var interval, timeout time.Duration
	var signKey string
	cmd := &cobra.Command{
		Use:   "status [PATH]",
		Short: "Show the status of the tree at PATH (every running tree when omitted)",
		Args:  args(cobra.MaximumNArgs(1)),
		RunE: func(cmd *cobra.Command, a []string) error {
			if output != "text" && output != "json" {
				return badInput("-o must be text or json, not %q", output)
			}
			rd, err := readSigner(signKey)
			if err != nil {
				return err
			}
			if exact != "auto" && exact != "true" && exact != "false" {
				return badInput("--exact must be auto, true or false, not %q", exact)
			}
			if watch && interval <= 0 {
				return badInput("--interval must be > 0, not %s", interval)
			}
			if timeout <= 0 {
				return badInput("--timeout must be > 0, not %s", timeout)
			}
			began := time.Now()
			c, err := g.dial()
			if err != nil {
				return err
			}
			defer c.Close()
			collect := func(ctx context.Context) ([]workflows.Status, error) {
				bounds := statusBounds(time.Now(), timeout)
				sts, err := collectTrees(ctx, c, g.namespace, a, exact, bounds)
				if err == nil {
					markTaskFailures(ctx, c, g.namespace, sts, bounds)
				}
				return sts, err
			}
			out := cmd.OutOrStdout()
			if watch {
				return watchStatus(cmd.Context(), out, cmd.ErrOrStderr(), collect, output, interval, strings.Join(append([]string{"starter status"}, a...), " "))
			}
			bounds := statusBounds(began, timeout)
			sts, err := collectTrees(cmd.Context(), c, g.namespace, a, exact, bounds)
			if err != nil {
				return err
			}
			// Why a node did not answer, when its workflow task keeps
			// failing: asked of those nodes only, by FallbackDeadline.
			markTaskFailures(cmd.Context(), c, g.namespace, sts, bounds)
			// What is left of --timeout reads the queue's health (one
			// quick call, first: it says why nodes may not have answered)
			// and usage (which waits for hosts).
			rest, cancel := context.WithDeadline(cmd.Context(), began.Add(timeout))
			defer cancel()
			var health bytes.Buffer
			warnQueueHealth(rest, c, g.namespace, &health)
			if usage {
				for _, w := range addHostViews(rest, c, g.namespace, sts, rd) {
					linef(cmd.ErrOrStderr(), "warning: %s", w)
				}
			}
			warnStale(cmd.ErrOrStderr(), sts)
			warnTaskFailures(cmd.ErrOrStderr(), sts)
			_, _ = cmd.ErrOrStderr().Write(health.Bytes())
			if output == "json" {
				enc := json.NewEncoder(out)
				enc.SetIndent("", "  ")
				if len(a) == 1 {
					return enc.Encode(sts[0])
				}
				return enc.Encode(sts)
			}
			if len(sts) == 0 {
				fmt.Fprintln(out, "no running trees (apply one with `starter apply -f FILE`)")
				return nil
			}
			printTree(out, sts)
			return nil
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "text", "output format: text or json")
	cmd.Flags().BoolVarP(&watch, "watch", "w", false, "watch until interrupted: redraw on change on a terminal, otherwise print a line per change (-o json: a JSON object per change)")
	cmd.Flags().DurationVar(&interval, "interval", 2*time.Second, "how often --watch asks")
	cmd.Flags().DurationVar(&timeout, "timeout", defaultStatusTimeout, "how long status may take (each --watch round too): a node that has not answered by then shows its supervisor's record, marked stale, and the rows below it visibility's")
	cmd.Flags().BoolVar(&usage, "usage", true, "read from the hosts what each running process service uses (CPU, memory) and its notify status (not with --watch; starter top shows usage live)")
	cmd.Flags().StringVar(&exact, "exact", "auto", fmt.Sprintf("ask every worker for its row: true, false (the supervisors' records: state, desired state and generation current, counters as of the last report), or auto (true up to %d workers)", exactUpTo))
	signKeyFlag(cmd, &signKey, "sign the hosts' usage reads with this private key: a host with --trusted-keys answers only signed reads, sealed to this starter")
	return cmd
}

// defaultStatusTimeout bounds `starter status`: an operator's (or a
// script's) call answers within it however busy the tree's workflows are
// (issue 25: calls during a 4,000-worker apply took past 10 s).
const defaultStatusTimeout = 8 * time.Second

// statusBounds says when the queries of a status begun at began and
// bounded by timeout must end (Deadline: five eighths of it, from 8 s up
// 3 s before its end), and when the visibility reads must (FallbackDeadline:
// half a second before its end at most, a sixteenth of it when shorter),
// those below the nodes that did not answer and a root's own, leaving the
// rest to usage and the queue's health.
func statusBounds(began time.Time, timeout time.Duration) treestatus.Options {
	return treestatus.Options{Deadline: began.Add(timeout - min(3*time.Second, timeout*3/8)),
		FallbackDeadline: began.Add(timeout - min(500*time.Millisecond, timeout/16))}
}

// collectTrees assembles the tree at paths[0], or every running tree when
// paths is empty; no query runs past bounds.Deadline, no visibility read
// past bounds.FallbackDeadline (no bound when zero).
func collectTrees(ctx context.Context, c client.Client, namespace string, paths []string, exact string, bounds treestatus.Options) ([]workflows.Status, error) {
	listed := len(paths) == 0
	if listed {
		lctx := ctx
		if !bounds.FallbackDeadline.IsZero() {
			var cancel context.CancelFunc
			lctx, cancel = context.WithDeadline(ctx, bounds.FallbackDeadline)
			defer cancel()
		}
		roots, err := listRoots(lctx, c, namespace)
		if err != nil {
			return nil, err
		}
		paths = roots
	}
	sts := []workflows.Status{}
	for _, p := range paths {
		st, err := sizedStatus(ctx, c, p, exact, bounds)
		if err != nil && (!listed || ctx.Err() != nil) {
			return nil, err
		}
		if err != nil {
			// One root that cannot be read (a workflow started by hand
			// under a tree's name that answers no status, or garbage)
			// hides no other tree: its row says why.
			st = workflows.Status{Path: p, State: "unknown", Children: []workflows.Status{}, Stale: "could not be read: " + err.Error()}
		}
		sts = append(sts, st)
	}
	return sts, nil
}

// queryStatus asks the workflow at path for its own status (a supervisor:
// with its direct children's records).
func queryStatus(ctx context.Context, c client.Client, path string) (workflows.Status, error) {
	st, err := queryOne(ctx, c, path)
	if errors.Is(err, treestatus.ErrNotFound) {
		return workflows.Status{}, failure("no workflow at %q (see `starter status`)", path)
	}
	if err != nil {
		return workflows.Status{}, failure("%v", err)
	}
	return st, nil
}

// queryOne is one status query; a path with no running workflow is
// treestatus.ErrNotFound.
func queryOne(ctx context.Context, c client.Client, path string) (workflows.Status, error) {
	v, err := c.QueryWorkflow(ctx, path, "", workflows.QueryStatus)
	var nf *serviceerror.NotFound
	if errors.As(err, &nf) {
		return workflows.Status{}, fmt.Errorf("query %s: %w", path, treestatus.ErrNotFound)
	}
	var late *serviceerror.DeadlineExceeded
	if err != nil && (errors.Is(ctx.Err(), context.DeadlineExceeded) || errors.Is(err, context.DeadlineExceeded) || errors.As(err, &late)) {
		// Its time ran out (however the SDK words it): "did not answer in time".
		return workflows.Status{}, fmt.Errorf("query %s: %w: %w", path, context.DeadlineExceeded, treestatus.ErrNoAnswer)
	}
	if noAnswer(ctx, err) {
		return workflows.Status{}, fmt.Errorf("query %s: %v: %w", path, err, treestatus.ErrNoAnswer)
	}
	if err != nil {
		return workflows.Status{}, fmt.Errorf("query %s: %w", path, err)
	}
	var st workflows.Status
	if err := v.Get(&st); err != nil {
		return workflows.Status{}, fmt.Errorf("query %s: %w", path, err)
	}
	return st, nil
}

// noAnswer reports whether a query's error means the workflow did not
// answer (rather than answered something this starter cannot read): the
// query's time ran out, no worker took it, the server is busy, or the
// workflow has not run its first task yet.
func noAnswer(ctx context.Context, err error) bool {
	if err == nil {
		return false
	}
	var deadline *serviceerror.DeadlineExceeded
	var unavailable *serviceerror.Unavailable
	var exhausted *serviceerror.ResourceExhausted
	var notReady *serviceerror.WorkflowNotReady
	return ctx.Err() != nil || errors.Is(err, context.DeadlineExceeded) || errors.As(err, &deadline) ||
		errors.As(err, &unavailable) || errors.As(err, &exhausted) || errors.As(err, &notReady)
}

// sizedStatus assembles the subtree at path from its supervisors, then,
// when exact says so, asks every worker too (auto: up to exactUpTo), within
// bounds' deadlines.
func sizedStatus(ctx context.Context, c client.Client, path, exact string, bounds treestatus.Options) (workflows.Status, error) {
	if exact == "true" {
		return treeStatus(ctx, c, path, true, bounds)
	}
	st, err := treeStatus(ctx, c, path, false, bounds)
	if err != nil || exact == "false" || st.Stale != "" {
		return st, err // a root that did not answer would not answer twice
	}
	if _, total := st.AtDesired(); total > exactUpTo {
		return st, nil
	}
	ex, err := treeStatus(ctx, c, path, true, bounds)
	if err != nil || ex.Stale != "" {
		// The deadline came before the root answered twice: the first
		// pass's answer is fresher than visibility's.
		return st, nil
	}
	return ex, nil
}

// treeStatus assembles the status of the subtree at path, down to the
// leaves, from parallel queries of its supervisors, and with leaves of its
// workers too (internal/treestatus says how fresh each row is); the rows
// below a node that does not answer are visibility's. Only bounds'
// Deadline and FallbackDeadline are used.
func treeStatus(ctx context.Context, c client.Client, path string, leaves bool, bounds treestatus.Options) (workflows.Status, error) {
	o := treestatus.Options{Leaves: leaves, Fallback: visibilityFallback(c, path), RootFallback: visibilityChildren(c),
		Deadline: bounds.Deadline, FallbackDeadline: bounds.FallbackDeadline}
	if !o.Deadline.IsZero() {
		// A root that does not answer within half of the queries' time is
		// shown from visibility, and the other half asks its children
		// (at 10,000 workers, a root whose task waited in the queue left
		// its children no time, and no rows at all).
		o.RootTimeout = max(time.Until(o.Deadline)/2, time.Millisecond)
	}
	return assembleTree(ctx, c, path, o)
}

// assembleTree is treeStatus with the assembly's options as given.
func assembleTree(ctx context.Context, c client.Client, path string, o treestatus.Options) (workflows.Status, error) {
	st, err := treestatus.Assemble(ctx, path, func(ctx context.Context, p string) (workflows.Status, error) {
		return queryOne(ctx, c, p)
	}, o)
	if errors.Is(err, treestatus.ErrNotFound) {
		return workflows.Status{}, failure("no workflow at %q (see `starter status`)", path)
	}
	if err != nil {
		return workflows.Status{}, failure("%v", err)
	}
	return st, nil
}

// listRoots finds the running trees: steward workflows with no parent
// whose path has no '/' (not a rollout's, a log read's or revisions'), of
// the two types `apply` starts a root as (another type started by hand
// under a name answers no status). Asking for no parent lists the roots
// only, not every workflow of a large tree.
func listRoots(ctx context.Context, c client.Client, namespace string) ([]string, error) {
	var roots []string
	var token []byte
	for {
		resp, err := c.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{
			Namespace: namespace, NextPageToken: token,
			Query: "ExecutionStatus = 'Running' AND TaskQueue = '" + workflows.TaskQueue + "' AND ParentWorkflowId IS NULL AND WorkflowType IN ('SupervisorWorkflow', 'WorkerWorkflow')",
		})
		if err != nil {
			return nil, failure("list workflows: %v", err)
		}
		for _, e := range resp.GetExecutions() {
			id := e.GetExecution().GetWorkflowId()
			// A name has neither '/' nor ':' (rollouts and revisions have
			// one), nor a quote or a control character.
			if spec.NameShaped(id) && !strings.HasPrefix(id, workflows.LogsWorkflowIDPrefix) {
				roots = append(roots, id)
			}
		}
		token = resp.GetNextPageToken()
		if len(token) == 0 {
			break
		}
	}
	sort.Strings(roots)
	return roots, nil
}

func printTree(out io.Writer, sts []workflows.Status) {
	tw := tabwriter.NewWriter(terminalSafe{out}, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "PATH\tKIND\tSTATE\tDESIRED\tRESTARTS\tMANUAL\tGEN\tLAST ACTION\tREASON")
	for _, st := range sts {
		printNode(tw, st, "", "")
	}
	tw.Flush()
}

func printNode(tw io.Writer, st workflows.Status, prefix, childPrefix string) {
	restarts, manual, last, kind := fmt.Sprint(st.Restarts), fmt.Sprint(st.ManualRestarts), "-", st.Kind
	if st.Kind == "supervisor" && st.Strategy != "" {
		kind += " " + st.Strategy
	}
	if st.Kind != "supervisor" {
		if la := st.LastAction; la.Name != "" {
			last = fmt.Sprintf("%s %s", la.Name, la.Status)
			if la.Attempts > 1 {
				last += fmt.Sprintf(" (%d attempts)", la.Attempts)
			}
		}
	}
	reason := st.Reason
	if st.LastAction.Error != "" && st.State == "failed" {
		reason += ": " + st.LastAction.Error
	}
	if st.RejectedSignals > 0 {
		reason += fmt.Sprintf(" [%d signals rejected]", st.RejectedSignals)
	}
	if st.Stale != "" {
		reason += " [stale: " + st.Stale + "]"
	}
	if f := st.TaskFailing; f != nil {
		reason += " [workflow task failing: " + f.Summary() + "]"
	}
	if st.NotifyStatus != "" {
		reason += " [status: " + st.NotifyStatus + "]"
	}
	if u := st.Update; u != nil && st.Kind == "supervisor" {
		reason += fmt.Sprintf(" [revision %d; update %s", st.Revision, u.State)
		if u.Total > 0 { // a stale row holds its parent's record: the state, not the progress
			reason += fmt.Sprintf(": %d of %d updated", u.Updated, u.Total)
		}
		if u.State != "complete" && u.Reason != "" {
			reason += ": " + u.Reason
		}
		reason += "]"
	}
	if u := st.Usage; u != nil {
		reason += fmt.Sprintf(" [cpu %.1f%%, mem %s]", u.CPUPercent, humanBytes(u.MemoryBytes))
	}
	fmt.Fprintf(tw, "%s%s\t%s\t%s\t%s\t%s\t%s\t%d\t%s\t%s\n", prefix, cell(st.Path), cell(kind), cell(st.State), cell(st.Desired), restarts, manual, st.Generation, cell(last), cell(reason))
	for i, c := range st.Children {
		if i == len(st.Children)-1 {
			printNode(tw, c, childPrefix+"└─ ", childPrefix+"   ")
		} else {
			printNode(tw, c, childPrefix+"├─ ", childPrefix+"│  ")
		}
	}
}

// staleSummary says how many rows of the assembled trees are stale and
// names the first few ("" when none is).
func staleSummary(sts []workflows.Status) string {
	var unanswered []string
	rows := 0
	for _, st := range sts {
		unanswered = append(unanswered, st.Unanswered()...)
		rows += len(st.StaleNodes())
	}
	if len(unanswered) == 0 {
		return ""
	}
	names := strings.Join(unanswered[:min(len(unanswered), 5)], ", ")
	if len(unanswered) > 5 {
		names += fmt.Sprintf(" and %d more", len(unanswered)-5)
	}
	s := fmt.Sprintf("%d nodes did not answer (%s): their rows are their supervisors' records, marked stale", len(unanswered), names)
	if below := rows - len(unanswered); below > 0 {
		s += fmt.Sprintf(", and the %d rows below them visibility's", below)
	}
	return s
}

// warnStale writes staleSummary to w as a warning.
func warnStale(w io.Writer, sts []workflows.Status) {
	if s := staleSummary(sts); s != "" {
		linef(w, "warning: %s", s)
	}
}

// warnQueueHealth writes a warning for each problem the server reports of
// steward's workflow queue (no poller, a backlog waiting too long): why
// nodes may not answer, or trees not move.
func warnQueueHealth(ctx context.Context, c client.Client, namespace string, w io.Writer) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	h, err := telemetry.DescribeQueue(ctx, c, namespace, workflows.TaskQueue, enumspb.TASK_QUEUE_TYPE_WORKFLOW)
	if err != nil {
		return
	}
	for _, warning := range h.Warnings(time.Now()) {
		fmt.Fprintln(w, "warning:", warning)
	}
}
