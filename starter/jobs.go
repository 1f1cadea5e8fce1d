package main

// Jobs (docs/jobs.md): `starter jobs`, `starter runs` and `starter run`.
// A job's own workflow answers its status (its last run, its counts); its
// Temporal Schedule (a periodic job's) what comes next and what runs; its
// runs are workflows of their own, listed by visibility with their
// outcome in their memo.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"

	"github.com/steward-sh/steward/internal/temporalclient"
	"github.com/steward-sh/steward/internal/treestatus"
	"github.com/steward-sh/steward/workflows"
)

// jobRow is one job of `starter jobs -o json` (docs/contract.md).
type jobRow struct {
	Path     string                `json:"path"`
	Schedule string                `json:"schedule"`
	Paused   bool                  `json:"paused"`
	NextRun  *time.Time            `json:"nextRun"`
	LastRun  *treestatus.JobRun    `json:"lastRun"`
	Running  bool                  `json:"running"`
	Skipped  int                   `json:"skipped"`
	State    string                `json:"state"`
	Runs     int                   `json:"runs"`
	Failures int                   `json:"failures"`
	Job      *treestatus.JobStatus `json:"-"`
}

func jobsCmd(g *globals) *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "jobs [PATH]",
		Short: "List the jobs (of the tree or subtree at PATH): schedule, paused, next run, last run, running, skipped runs",
		Args:  args(cobra.MaximumNArgs(1)),
		RunE: func(cmd *cobra.Command, a []string) error {
			if output != "text" && output != "json" {
				return badInput("-o must be text or json, not %q", output)
			}
			c, err := g.dial()
			if err != nil {
				return err
			}
			defer c.Close()
			under := ""
			if len(a) == 1 {
				under = strings.TrimSuffix(a[0], "/")
			}
			rows, err := listJobs(cmd.Context(), c, under)
			if err != nil {
				return err
			}
			if output == "json" {
				return writeJSON(cmd.OutOrStdout(), rows)
			}
			printJobs(cmd.OutOrStdout(), rows)
			return nil
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "text", "output format: text or json (a list of {path, schedule, paused, nextRun, lastRun, running, skipped})")
	return cmd
}

// listJobs is every running job workflow at or under under ("" all), with
// its schedule's view.
func listJobs(ctx context.Context, c client.Client, under string) ([]jobRow, error) {
	q := "WorkflowType = 'JobWorkflow' AND ExecutionStatus = 'Running'"
	if under != "" {
		q += fmt.Sprintf(" AND (WorkflowId = '%s' OR WorkflowId STARTS_WITH '%s/')", under, under)
	}
	var paths []string
	var token []byte
	for {
		resp, err := c.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{Query: q, NextPageToken: token, PageSize: 1000})
		if err != nil {
			return nil, failure("list jobs: %v", err)
		}
		for _, e := range resp.Executions {
			paths = append(paths, e.Execution.WorkflowId)
		}
		if token = resp.NextPageToken; len(token) == 0 {
			break
		}
	}
	slices.Sort(paths)
	rows := make([]jobRow, 0, len(paths))
	for _, p := range paths {
		row, err := jobOf(ctx, c, p)
		if err != nil {
			return nil, err
		}
		rows = append(rows, row)
	}
	return rows, nil
}

// jobOf is one job's row: its status, and its schedule's description.
func jobOf(ctx context.Context, c client.Client, path string) (jobRow, error) {
	st, err := queryStatus(ctx, c, path)
	if err != nil {
		return jobRow{}, err
	}
	if st.Job == nil {
		return jobRow{}, badInput("%s is not a job (it is a %s)", path, st.Kind)
	}
	row := jobRow{Path: path, Schedule: st.Job.Schedule, Paused: st.Job.Paused, LastRun: st.Job.LastRun, State: st.State,
		Runs: st.Job.Runs, Failures: st.Job.Failures, Job: st.Job}
	if st.Job.ScheduleID == "" {
		row.Running = st.State == "starting"
		return row, nil
	}
	d, err := c.ScheduleClient().GetHandle(ctx, st.Job.ScheduleID).Describe(ctx)
	if err != nil {
		return row, failure("describe the schedule of %s: %v", path, err)
	}
	if s := d.Schedule.State; s != nil {
		row.Paused = s.Paused
	}
	if len(d.Info.NextActionTimes) > 0 && !row.Paused {
		t := d.Info.NextActionTimes[0].UTC()
		row.NextRun = &t
	}
	row.Running = len(d.Info.RunningWorkflows) > 0
	row.Skipped = d.Info.NumActionsSkippedOverlap
	return row, nil
}

func printJobs(out io.Writer, rows []jobRow) {
	if len(rows) == 0 {
		fmt.Fprintln(out, "no jobs")
		return
	}
	tw := tabwriter.NewWriter(terminalSafe{out}, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "PATH\tSCHEDULE\tSTATE\tNEXT RUN\tLAST RUN\tRUNS\tFAILED\tSKIPPED")
	for _, r := range rows {
		next, last := "-", "-"
		if r.Paused {
			next = "paused"
		} else if r.NextRun != nil {
			next = r.NextRun.Format(time.RFC3339)
		}
		if r.Running {
			next += " (one runs)"
		}
		if l := r.LastRun; l != nil {
			last = l.Outcome
			if l.ExitCode != nil {
				last += fmt.Sprintf(" (exit %d)", *l.ExitCode)
			}
			last += " " + l.EndedAt.UTC().Format(time.RFC3339)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d\t%d\t%d\n", cell(r.Path), cell(r.Schedule), cell(r.State), next, cell(last), r.Runs, r.Failures, r.Skipped)
	}
	_ = tw.Flush()
}

func runsCmd(g *globals) *cobra.Command {
	var output string
	var limit int
	cmd := &cobra.Command{
		Use:   "runs PATH",
		Short: "List a job's runs, newest first: when each was due, started and ended, its outcome, exit code and host",
		Args:  args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, a []string) error {
			if output != "text" && output != "json" {
				return badInput("-o must be text or json, not %q", output)
			}
			if limit < 1 || limit > 1000 {
				return badInput("--limit must be 1 .. 1000, not %d", limit)
			}
			c, err := g.dial()
			if err != nil {
				return err
			}
			defer c.Close()
			runs, err := listRuns(cmd.Context(), c, g.dataConverter(), strings.TrimSuffix(a[0], "/"), limit)
			if err != nil {
				return err
			}
			if output == "json" {
				return writeJSON(cmd.OutOrStdout(), runs)
			}
			printRuns(cmd.OutOrStdout(), runs)
			return nil
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "text", "output format: text or json (a list of {id, scheduledAt, startedAt, endedAt, outcome, exitCode, host})")
	cmd.Flags().IntVar(&limit, "limit", 20, "how many runs, newest first")
	return cmd
}

// listRuns is the newest limit runs of the job at path, from visibility:
// an ended run by its memo, one in progress by its start.
func listRuns(ctx context.Context, c client.Client, dc converter.DataConverter, path string, limit int) ([]treestatus.JobRun, error) {
	// Visibility lists the runs in progress first, then the closed ones
	// newest first (an ORDER BY is not every store's): sorted below.
	q := fmt.Sprintf("WorkflowType = 'JobRunWorkflow' AND WorkflowId STARTS_WITH '%s'", workflows.JobRunPrefix(path))
	var out []treestatus.JobRun
	var token []byte
	for len(out) < limit {
		resp, err := c.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{Query: q, NextPageToken: token, PageSize: int32(limit)})
		if err != nil {
			return nil, failure("list the runs of %s: %v", path, err)
		}
		for _, e := range resp.Executions {
			out = append(out, temporalclient.JobRunOf(ctx, c, dc, e, workflows.JobRunMemo))
		}
		if token = resp.NextPageToken; len(token) == 0 {
			break
		}
	}
	slices.SortStableFunc(out, func(a, b treestatus.JobRun) int { return b.StartedAt.Compare(a.StartedAt) })
	if len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}

func printRuns(out io.Writer, runs []treestatus.JobRun) {
	if len(runs) == 0 {
		fmt.Fprintln(out, "no runs")
		return
	}
	tw := tabwriter.NewWriter(terminalSafe{out}, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "RUN\tOUTCOME\tEXIT\tSTARTED\tTOOK\tHOST")
	for _, r := range runs {
		code, took := "-", "-"
		if r.ExitCode != nil {
			code = fmt.Sprint(*r.ExitCode)
		}
		if !r.EndedAt.IsZero() && !r.StartedAt.IsZero() {
			took = r.EndedAt.Sub(r.StartedAt).Round(time.Millisecond).String()
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", cell(r.ID), cell(r.Outcome), code, r.StartedAt.UTC().Format(time.RFC3339), took, cell(r.Host))
	}
	_ = tw.Flush()
}

func runCmd(g *globals) *cobra.Command {
	var wait bool
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "run PATH",
		Short: "Run a job now (beside its schedule); with --wait, exit 0 when the run succeeded and 1 when not",
		Args:  args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, a []string) error {
			path := strings.TrimSuffix(a[0], "/")
			c, err := g.dial()
			if err != nil {
				return err
			}
			defer c.Close()
			ctx := cmd.Context()
			n, err := querySpec(ctx, c, path)
			if errors.As(err, new(*serviceerror.NotFound)) {
				return failure("no workflow at %q (see `starter jobs`)", path)
			}
			if err != nil {
				return failure("%v", err)
			}
			if !n.IsJob() {
				return badInput("%s is not a job: `starter restart %s` restarts a service", path, path)
			}
			st, err := queryStatus(ctx, c, path)
			if err != nil {
				return err
			}
			id := workflows.JobRunPrefix(path) + "now-" + time.Now().UTC().Format("20060102T150405.000Z")
			run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
				ID: id, TaskQueue: workflows.TaskQueue,
				WorkflowExecutionTimeout: n.Job.Resolved().Timeout.D() + 10*time.Minute,
				TypedSearchAttributes:    temporal.NewSearchAttributes(workflows.SearchPath.ValueSet(path), workflows.SearchKind.ValueSet(workflows.JobRunKind)),
			}, workflows.JobRunWorkflow, workflows.JobRunInput{Job: path, Spec: n, Generation: st.Generation})
			if err != nil {
				return failure("start a run of %s: %v", path, err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s: run %s started\n", path, id)
			if !wait {
				return nil
			}
			wctx, cancel := context.WithTimeout(ctx, timeout)
			defer cancel()
			var res treestatus.JobRun
			err = run.Get(wctx, &res)
			var app *temporal.ApplicationError
			if errors.As(err, &app) && app.HasDetails() {
				_ = app.Details(&res)
			}
			if res.ID == "" && err != nil {
				return failure("run %s: %v", id, err)
			}
			printRuns(cmd.OutOrStdout(), []treestatus.JobRun{res})
			if res.Outcome != treestatus.RunSucceeded {
				return failure("run %s %s: %s", id, res.Outcome, res.Reason)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&wait, "wait", false, "wait for the run to end: exit 0 when it succeeded, 1 when not")
	cmd.Flags().DurationVar(&timeout, "timeout", 2*time.Hour, "how long --wait waits")
	return cmd
}

// dataConverter reads payloads as the workers wrote them (decrypted with
// --encryption-key-file's keys when given).
func (g *globals) dataConverter() converter.DataConverter {
	if codec, err := g.conn.Codec(); err == nil && codec != nil {
		return codec.DataConverter()
	}
	return converter.GetDefaultDataConverter()
}
