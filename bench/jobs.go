package main

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/workflow"

	"github.com/steward-sh/steward/internal/treestatus"
	"github.com/steward-sh/steward/workflows"
)

// jobsStep measures jobs (docs/jobs.md) beside raw Temporal Schedules:
//
//   - steward: jobsCount process jobs (`true`) `every: 10s` for
//     o.jobsDuration, the steward worker killed with -9 halfway; then every
//     run read back (visibility and memo): job_runs_missed (slots of the
//     schedules with no run, counted from each job's first run to the end
//     less one period), job_runs_doubled (two runs of one slot),
//     job_overlaps (two runs of one job at once), job_start_lag_p99_ms
//     (from a run's scheduled time to its process running, outside the
//     minute after the kill);
//   - raw: as many Temporal Schedules of a workflow that runs one no-op
//     activity (RawOneActivity), as often, for as long;
//   - job_events_ratio: the events of a run (its own history, and the
//     events its job's workflow takes per run) over a raw run's;
//     job_server_cpu_ratio: the dev server's CPU over the steward window
//     over the raw window's.
//
// The dev server is not restarted (the bench's server keeps no file to
// come back to): the runs the catch-up window makes up are not measured.
func jobsStep(ctx context.Context, c client.Client, o options, res Result, restartWorker func() error) error {
	const name, period = "bench-jobs", 10 * time.Second
	var b strings.Builder
	fmt.Fprintf(&b, "name: %s\nchildren:\n", name)
	for i := range jobsCount {
		fmt.Fprintf(&b, "  - {name: j%03d, kind: process, process: {command: \"true\"}, job: {every: %s}}\n", i, period)
	}
	began := time.Now()
	cpu0 := cpuSeconds(o.serverPid)
	if _, err := starterRun(o, 5*time.Minute, "apply", "-f", writeTemp(name, b.String()), "--wait", "--timeout", "4m"); err != nil {
		return fmt.Errorf("jobs: apply: %w", err)
	}
	half := began.Add(o.jobsDuration / 2)
	time.Sleep(time.Until(half))
	killedAt := time.Now()
	if err := restartWorker(); err != nil {
		return err
	}
	time.Sleep(time.Until(began.Add(o.jobsDuration)))
	ended := time.Now()
	cpuJobs := cpuSeconds(o.serverPid) - cpu0
	// The runs the overlap policy (skip) skipped, by the schedules' count:
	// a run that waits for the killed worker holds its job's next slots.
	skipped := 0
	for i := range jobsCount {
		d, err := c.ScheduleClient().GetHandle(ctx, fmt.Sprintf("%s/j%03d", name, i)).Describe(ctx)
		if err != nil {
			return fmt.Errorf("jobs: describe a schedule: %w", err)
		}
		skipped += d.Info.NumActionsSkippedOverlap
	}
	if _, err := starterRun(o, 5*time.Minute, "delete", name); err != nil {
		return err
	}
	time.Sleep(2 * period) // the runs in flight end

	runs := map[string][]treestatus.JobRun{}
	var lags []float64
	total := 0
	for i := range jobsCount {
		path := fmt.Sprintf("%s/j%03d", name, i)
		rs, err := jobRuns(ctx, c, path)
		if err != nil {
			return err
		}
		runs[path] = rs
		total += len(rs)
		for _, r := range rs {
			if r.StartedAt.IsZero() || r.ScheduledAt.IsZero() || (r.ScheduledAt.After(killedAt.Add(-period)) && r.ScheduledAt.Before(killedAt.Add(time.Minute))) {
				continue
			}
			lags = append(lags, float64(r.StartedAt.Sub(r.ScheduledAt).Milliseconds()))
		}
	}
	empty, doubled, overlaps := jobSlots(runs, period, ended.Add(-period))
	res["job_runs"] = total
	res["job_runs_skipped"] = skipped
	res["job_runs_missed"] = max(empty-skipped, 0)
	res["job_runs_doubled"] = doubled
	res["job_overlaps"] = overlaps
	res["job_start_lag_p99_ms"] = round(pct(lags, 99))
	res["job_start_lag_p50_ms"] = round(pct(lags, 50))
	res["jobs_duration_seconds"] = round(o.jobsDuration.Seconds())

	// The events a run costs: its own history and its share of its job's.
	var runEvents, jobEvents float64
	sample := 0
	for path, rs := range runs {
		if sample >= 10 || len(rs) == 0 {
			continue
		}
		sample++
		n, err := historyLength(ctx, c, rs[len(rs)/2].ID)
		if err != nil {
			return err
		}
		runEvents += float64(n)
		jn, err := historyLength(ctx, c, path)
		if err != nil {
			return err
		}
		jobEvents += float64(jn) / float64(len(rs))
	}
	stewardPerRun := (runEvents + jobEvents) / float64(max(sample, 1))
	res["job_events_per_run"] = round(stewardPerRun)

	// The raw side: as many schedules of one activity.
	rawCPU0 := cpuSeconds(o.serverPid)
	rawBegan := time.Now()
	sc := c.ScheduleClient()
	var ids []string
	for i := range jobsCount {
		id := fmt.Sprintf("bench-raw-job-%03d", i)
		_, err := sc.Create(ctx, client.ScheduleOptions{ID: id, Spec: client.ScheduleSpec{Intervals: []client.ScheduleIntervalSpec{{Every: period}}},
			Action: &client.ScheduleWorkflowAction{ID: id + "-run", Workflow: RawOneActivity, TaskQueue: rawQueue}})
		if err != nil {
			return fmt.Errorf("jobs: raw schedule: %w", err)
		}
		ids = append(ids, id)
	}
	time.Sleep(time.Until(rawBegan.Add(o.jobsDuration)))
	cpuRaw := cpuSeconds(o.serverPid) - rawCPU0
	for _, id := range ids {
		_ = sc.GetHandle(ctx, id).Delete(ctx)
	}
	rawRuns, rawEvents := 0, 0.0
	resp, err := c.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{Query: "WorkflowType = 'RawOneActivity' AND ExecutionStatus = 'Completed'", PageSize: 10})
	if err != nil {
		return err
	}
	for _, e := range resp.Executions {
		n, err := historyLength(ctx, c, e.Execution.WorkflowId)
		if err != nil {
			return err
		}
		rawEvents += float64(n)
		rawRuns++
	}
	if rawRuns > 0 {
		res["raw_job_events_per_run"] = round(rawEvents / float64(rawRuns))
		res["job_events_ratio"] = ratio(stewardPerRun, rawEvents/float64(rawRuns))
	}
	if o.serverPid != 0 {
		res["job_server_cpu_seconds"] = round(cpuJobs)
		res["raw_job_server_cpu_seconds"] = round(cpuRaw)
		res["job_server_cpu_ratio"] = ratio(cpuJobs, cpuRaw)
	}
	return nil
}

// jobsCount is the jobs the jobs step runs.
const jobsCount = 100

// RawOneActivity is a raw job's run: one no-op activity.
func RawOneActivity(ctx workflow.Context) error {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: time.Minute})
	return workflow.ExecuteActivity(ctx, "noop", 0).Get(ctx, nil)
}

// jobRuns lists every run of the job at path (closed ones with their
// memo).
func jobRuns(ctx context.Context, c client.Client, path string) ([]treestatus.JobRun, error) {
	var out []treestatus.JobRun
	var token []byte
	for {
		resp, err := c.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{
			Query: fmt.Sprintf("WorkflowType = 'JobRunWorkflow' AND WorkflowId STARTS_WITH '%s'", workflows.JobRunPrefix(path)), NextPageToken: token, PageSize: 1000})
		if err != nil {
			return nil, err
		}
		for _, e := range resp.Executions {
			var run treestatus.JobRun
			if p := e.Memo.GetFields()[workflows.JobRunMemo]; p != nil {
				_ = converter.GetDefaultDataConverter().FromPayload(p, &run)
			}
			run.ID = e.Execution.WorkflowId
			out = append(out, run)
		}
		if token = resp.NextPageToken; len(token) == 0 {
			break
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ScheduledAt.Before(out[j].ScheduledAt) })
	return out, nil
}

// jobSlots counts, over each job's runs, the schedule's slots (every
// period, aligned to the epoch as Temporal's intervals are) from its
// first run to until with no run, those with two, and runs that overlap.
func jobSlots(runs map[string][]treestatus.JobRun, period time.Duration, until time.Time) (missed, doubled, overlaps int) {
	for _, rs := range runs {
		if len(rs) == 0 {
			continue
		}
		bySlot := map[int64]int{}
		for _, r := range rs {
			bySlot[r.ScheduledAt.Truncate(period).Unix()]++
		}
		for t := rs[0].ScheduledAt.Truncate(period); t.Before(until); t = t.Add(period) {
			switch n := bySlot[t.Unix()]; {
			case n == 0:
				missed++
			case n > 1:
				doubled += n - 1
			}
		}
		for i := 1; i < len(rs); i++ {
			prev := rs[i-1]
			if !prev.EndedAt.IsZero() && rs[i].StartedAt.Before(prev.EndedAt) {
				overlaps++
			}
		}
	}
	return missed, doubled, overlaps
}

// historyLength is the number of events of a workflow's history.
func historyLength(ctx context.Context, c client.Client, id string) (int, error) {
	d, err := c.DescribeWorkflowExecution(ctx, id, "")
	if err != nil {
		return 0, fmt.Errorf("describe %s: %w", id, err)
	}
	return int(d.WorkflowExecutionInfo.HistoryLength), nil
}
