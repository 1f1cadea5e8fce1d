package main

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	workflowpb "go.temporal.io/api/workflow/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/workflow"

	"github.com/steward-sh/steward/internal/spec"
	"github.com/steward-sh/steward/internal/temporalclient"
	"github.com/steward-sh/steward/internal/treestatus"
	"github.com/steward-sh/steward/workflows"
)

// jobsStep measures jobs (docs/jobs.md) beside raw Temporal Schedules:
//
//   - steward: jobsCount process jobs (`true`) `every: 10s` for
//     o.jobsDuration, the steward worker killed with -9 at a third of it
//     and the dev server restarted at two thirds (when it is the bench's
//     own, with a file: -only jobs); then every run read back (visibility,
//     and each run's result): job_runs_missed (slots of the schedules with
//     no run, counted from each job's first run to the end less one
//     period, less the runs the overlap policy skipped), job_runs_doubled
//     (two runs of one slot), job_overlaps (two runs of one job at once),
//     job_start_lag_p99_ms (from a run's scheduled time to its process
//     running, outside the minute after each fault);
//   - raw: as many Temporal Schedules of a workflow that runs one no-op
//     activity (RawOneActivity), as often, for as long, the server
//     restarted at two thirds too; raw_job_start_lag_p99_ms from a run's
//     scheduled time to its activity's start;
//   - job_events_ratio: the events of a run (its own history, and the
//     events its job's workflow takes per run) over a raw run's;
//     job_server_cpu_ratio: the dev server's CPU over the steward window
//     over the raw window's (each server process's, summed across the
//     restart).
func jobsStep(ctx context.Context, c client.Client, o options, res Result, restartWorker, restartServer func() error) error {
	const name, period = "bench-jobs", 10 * time.Second
	var b strings.Builder
	fmt.Fprintf(&b, "name: %s\nchildren:\n", name)
	for i := range jobsCount {
		fmt.Fprintf(&b, "  - {name: j%03d, kind: process, process: {command: \"true\"}, job: {every: %s}}\n", i, period)
	}
	began := time.Now()
	var cpu serverCPU
	cpu.begin(o.serverPid)
	if _, err := starterRun(o, 5*time.Minute, "apply", "-f", writeTemp(name, b.String()), "--wait", "--timeout", "4m"); err != nil {
		return fmt.Errorf("jobs: apply: %w", err)
	}
	var faults []time.Time
	time.Sleep(time.Until(began.Add(o.jobsDuration / 3)))
	faults = append(faults, time.Now())
	if err := restartWorker(); err != nil {
		return err
	}
	if restartServer != nil {
		time.Sleep(time.Until(began.Add(2 * o.jobsDuration / 3)))
		faults = append(faults, time.Now())
		if err := cpu.restart(restartServer); err != nil {
			return err
		}
	}
	res["jobs_faults"] = len(faults)
	time.Sleep(time.Until(began.Add(o.jobsDuration)))
	ended := time.Now()
	cpuJobs := cpu.total()
	inFault := func(t time.Time) bool {
		for _, f := range faults {
			if t.After(f.Add(-period)) && t.Before(f.Add(time.Minute)) {
				return true
			}
		}
		return false
	}
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
	byMinute := map[string][]float64{} // the minutes from the apply: where a tail comes from
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
			if r.StartedAt.IsZero() || r.ScheduledAt.IsZero() || inFault(r.ScheduledAt) {
				continue
			}
			lag := float64(r.StartedAt.Sub(r.ScheduledAt).Milliseconds())
			lags = append(lags, lag)
			minute := fmt.Sprintf("%02d", int(r.ScheduledAt.Sub(began).Minutes()))
			byMinute[minute] = append(byMinute[minute], lag)
		}
	}
	empty, doubled, overlaps := jobSlots(runs, period, ended.Add(-period), func(path string) time.Duration { return spec.Phase(path, period) })
	res["job_runs"] = total
	res["job_runs_skipped"] = skipped
	res["job_runs_missed"] = max(empty-skipped, 0)
	res["job_runs_doubled"] = doubled
	res["job_overlaps"] = overlaps
	res["job_start_lag_p99_ms"] = round(pct(lags, 99))
	res["job_start_lag_p50_ms"] = round(pct(lags, 50))
	p99s := map[string]float64{}
	for m, ls := range byMinute {
		p99s[m] = round(pct(ls, 99))
	}
	res["job_start_lag_p99_ms_by_minute"] = p99s
	res["jobs_fault_minutes"] = faultMinutes(began, faults)
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
	var rawCPU serverCPU
	rawCPU.begin(cpu.pid)
	rawBegan := time.Now()
	var rawFaults []time.Time
	sc := c.ScheduleClient()
	var ids []string
	for i := range jobsCount {
		id := fmt.Sprintf("bench-raw-job-%03d", i)
		// Due at the phase of the steward job of its number (spec.Phase):
		// the same load, spread the same way.
		phase := spec.Phase(fmt.Sprintf("%s/j%03d", name, i), period)
		_, err := sc.Create(ctx, client.ScheduleOptions{ID: id, Spec: client.ScheduleSpec{Intervals: []client.ScheduleIntervalSpec{{Every: period, Offset: phase}}},
			Action: &client.ScheduleWorkflowAction{ID: id + "-run", Workflow: RawOneActivity, TaskQueue: rawQueue}})
		if err != nil {
			return fmt.Errorf("jobs: raw schedule: %w", err)
		}
		ids = append(ids, id)
	}
	if restartServer != nil {
		time.Sleep(time.Until(rawBegan.Add(2 * o.jobsDuration / 3)))
		rawFaults = append(rawFaults, time.Now())
		if err := rawCPU.restart(restartServer); err != nil {
			return err
		}
	}
	time.Sleep(time.Until(rawBegan.Add(o.jobsDuration)))
	cpuRaw := rawCPU.total()
	for _, id := range ids {
		_ = sc.GetHandle(ctx, id).Delete(ctx)
	}
	faults = rawFaults
	rawRuns, rawEvents := 0, 0.0
	var rawLags []float64
	var token []byte
	for len(rawLags) < 2000 {
		resp, err := c.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{Query: "WorkflowType = 'RawOneActivity' AND ExecutionStatus = 'Completed'", PageSize: 500, NextPageToken: token})
		if err != nil {
			return err
		}
		for _, e := range resp.Executions {
			scheduled, started, n, err := rawRun(ctx, c, e)
			if err != nil {
				return err
			}
			if rawRuns < 10 {
				rawEvents += float64(n)
				rawRuns++
			}
			if !scheduled.IsZero() && !started.IsZero() && !inFault(scheduled) {
				rawLags = append(rawLags, float64(started.Sub(scheduled).Milliseconds()))
			}
		}
		if token = resp.NextPageToken; len(token) == 0 {
			break
		}
	}
	res["raw_job_start_lag_p99_ms"] = round(pct(rawLags, 99))
	res["raw_job_start_lag_p50_ms"] = round(pct(rawLags, 50))
	if rawRuns > 0 {
		res["raw_job_events_per_run"] = round(rawEvents / float64(rawRuns))
		res["job_events_ratio"] = ratio(stewardPerRun, rawEvents/float64(rawRuns))
	}
	if cpu.pid != 0 {
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
			out = append(out, temporalclient.JobRunOf(ctx, c, converter.GetDefaultDataConverter(), e, workflows.JobRunMemo))
		}
		if token = resp.NextPageToken; len(token) == 0 {
			break
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ScheduledAt.Before(out[j].ScheduledAt) })
	return out, nil
}

// jobSlots counts, over each job's runs, the schedule's slots (every
// period from the epoch plus the job's phase, as its Schedule's interval
// is) from its first run to until with no run, those with two, and runs
// that overlap.
func jobSlots(runs map[string][]treestatus.JobRun, period time.Duration, until time.Time, phase func(path string) time.Duration) (missed, doubled, overlaps int) {
	for path, rs := range runs {
		if len(rs) == 0 {
			continue
		}
		off := phase(path)
		slot := func(t time.Time) time.Time { return t.Add(-off).Truncate(period) }
		bySlot := map[int64]int{}
		for _, r := range rs {
			bySlot[slot(r.ScheduledAt).Unix()]++
		}
		for t := slot(rs[0].ScheduledAt); t.Add(off).Before(until); t = t.Add(period) {
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

// rawRun is a raw run's scheduled time (its TemporalScheduledStartTime),
// its activity's start and its number of events.
func rawRun(ctx context.Context, c client.Client, e *workflowpb.WorkflowExecutionInfo) (scheduled, started time.Time, events int, err error) {
	if p := e.GetSearchAttributes().GetIndexedFields()["TemporalScheduledStartTime"]; p != nil {
		_ = converter.GetDefaultDataConverter().FromPayload(p, &scheduled)
	}
	it := c.GetWorkflowHistory(ctx, e.Execution.WorkflowId, e.Execution.RunId, false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			return scheduled, started, events, fmt.Errorf("history of %s: %w", e.Execution.WorkflowId, err)
		}
		events++
		if ev.EventType == enumspb.EVENT_TYPE_ACTIVITY_TASK_STARTED && started.IsZero() {
			started = ev.EventTime.AsTime()
		}
	}
	return scheduled, started, events, nil
}

// serverCPU is the dev server's CPU seconds over a window, summed across
// its restarts (each process's own from when it was found).
type serverCPU struct {
	pid        int
	base, done float64
}

func (m *serverCPU) begin(pid int) { m.pid, m.base = pid, cpuSeconds(pid) }

// restart restarts the server (do), and goes on with its new process.
func (m *serverCPU) restart(do func() error) error {
	m.done += cpuSeconds(m.pid) - m.base
	if err := do(); err != nil {
		return err
	}
	m.begin(devServerPid())
	return nil
}

func (m *serverCPU) total() float64 { return m.done + cpuSeconds(m.pid) - m.base }

// faultMinutes is when each fault struck, in minutes from began.
func faultMinutes(began time.Time, faults []time.Time) []float64 {
	var out []float64
	for _, f := range faults {
		out = append(out, round(f.Sub(began).Minutes()))
	}
	return out
}
