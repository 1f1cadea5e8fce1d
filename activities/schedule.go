package activities

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/steward-sh/steward/internal/spec"
)

// A periodic job's Temporal Schedule (docs/jobs.md): its job's workflow
// creates, updates, pauses and deletes it through these control
// activities, so that the schedule follows the tree (apply, re-apply,
// stop, delete) as a service's process does.

// Schedule activity names.
const (
	PutScheduleName    = Prefix + "PutSchedule"
	DeleteScheduleName = Prefix + "DeleteSchedule"
)

// JobSchedule is a periodic job's schedule as its workflow wants it.
type JobSchedule struct {
	// ID is the schedule's ID: the job's path.
	ID  string   `json:"id"`
	Job spec.Job `json:"job"`
	// Paused: the job's desired state is stopped (`starter stop`).
	Paused bool `json:"paused"`
	// Run is what each run starts: the workflow type, its ID (the server
	// adds the time the run is due), its task queue, its input, and the
	// keyword search attributes each run carries.
	Workflow  string            `json:"workflow"`
	RunID     string            `json:"runId"`
	TaskQueue string            `json:"taskQueue"`
	Input     json.RawMessage   `json:"input"`
	Search    map[string]string `json:"search,omitempty"`
}

// overlapPolicies maps a job's overlap to Temporal's.
var overlapPolicies = map[string]enumspb.ScheduleOverlapPolicy{
	spec.OverlapSkip:           enumspb.SCHEDULE_OVERLAP_POLICY_SKIP,
	spec.OverlapBufferOne:      enumspb.SCHEDULE_OVERLAP_POLICY_BUFFER_ONE,
	spec.OverlapBufferAll:      enumspb.SCHEDULE_OVERLAP_POLICY_BUFFER_ALL,
	spec.OverlapCancelOther:    enumspb.SCHEDULE_OVERLAP_POLICY_CANCEL_OTHER,
	spec.OverlapTerminateOther: enumspb.SCHEDULE_OVERLAP_POLICY_TERMINATE_OTHER,
	spec.OverlapAllowAll:       enumspb.SCHEDULE_OVERLAP_POLICY_ALLOW_ALL,
}

// schedule is the Temporal schedule of s.
func (s JobSchedule) schedule() (client.ScheduleSpec, *client.ScheduleWorkflowAction, error) {
	j := s.Job.Resolved()
	var ss client.ScheduleSpec
	switch {
	case j.Every != nil:
		ss.Intervals = []client.ScheduleIntervalSpec{{Every: j.Every.D(), Offset: spec.Phase(s.ID, j.Every.D())}}
	case j.Schedule != "":
		ss.CronExpressions = []string{j.Schedule}
		ss.TimeZoneName = j.Timezone
	default:
		return ss, nil, temporal.NewNonRetryableApplicationError(fmt.Sprintf("job %s has no schedule (a once job has none)", s.ID), ErrPermanent, nil)
	}
	ss.Jitter = j.Jitter.D()
	var attrs []temporal.SearchAttributeUpdate
	for _, k := range slices.Sorted(maps.Keys(s.Search)) {
		attrs = append(attrs, temporal.NewSearchAttributeKeyKeyword(k).ValueSet(s.Search[k]))
	}
	action := &client.ScheduleWorkflowAction{
		ID:        s.RunID,
		Workflow:  s.Workflow,
		Args:      []any{s.Input},
		TaskQueue: s.TaskQueue,
		// A run ends itself at its timeout; this is the bound past its
		// stop (and past a run whose workflow was never picked up).
		WorkflowExecutionTimeout: j.Timeout.D() + runStopMargin,
		TypedSearchAttributes:    temporal.NewSearchAttributes(attrs...),
	}
	return ss, action, nil
}

// PutSchedule creates the job's schedule, or updates the one there to s
// (its spec, its run, its policies, whether it is paused).
func (c *Control) PutSchedule(ctx context.Context, s JobSchedule) error {
	ss, action, err := s.schedule()
	if err != nil {
		return err
	}
	j := s.Job.Resolved()
	policy := &client.SchedulePolicies{Overlap: overlapPolicies[j.Overlap], CatchupWindow: j.CatchupWindow.D(), PauseOnFailure: j.PauseOnFailure}
	note := "steward: " + map[bool]string{true: "stopped", false: "running"}[s.Paused]
	sc := c.Client.ScheduleClient()
	_, err = sc.Create(ctx, client.ScheduleOptions{
		ID: s.ID, Spec: ss, Action: action, Overlap: policy.Overlap, CatchupWindow: policy.CatchupWindow,
		PauseOnFailure: policy.PauseOnFailure, Paused: s.Paused, Note: note,
	})
	if !errors.Is(err, temporal.ErrScheduleAlreadyRunning) {
		return scheduleError(err)
	}
	return scheduleError(sc.GetHandle(ctx, s.ID).Update(ctx, client.ScheduleUpdateOptions{
		DoUpdate: func(in client.ScheduleUpdateInput) (*client.ScheduleUpdate, error) {
			sch := in.Description.Schedule
			sch.Spec, sch.Action, sch.Policy = &ss, action, policy
			if sch.State == nil {
				sch.State = &client.ScheduleState{}
			}
			if sch.State.Paused != s.Paused {
				sch.State.Paused, sch.State.Note = s.Paused, note
			}
			// A limit on its runs (a schedule made, or changed, by hand with
			// remaining actions) stopped the job for good once spent, while
			// its status said scheduled: a job runs as its spec says.
			sch.State.LimitedActions, sch.State.RemainingActions = false, 0
			return &client.ScheduleUpdate{Schedule: &sch}, nil
		},
	}))
}

// DeleteSchedule deletes the job's schedule; one already gone is not an
// error. Runs in progress go on to their end.
func (c *Control) DeleteSchedule(ctx context.Context, id string) error {
	err := c.Client.ScheduleClient().GetHandle(ctx, id).Delete(ctx)
	if errors.As(err, new(*serviceerror.NotFound)) {
		return nil
	}
	return scheduleError(err)
}

// runStopMargin is how long past its timeout a run may take to stop its
// process and end.
const runStopMargin = 10 * time.Minute

// scheduleError marks what retrying cannot fix (the server refused the
// schedule as invalid) as permanent.
func scheduleError(err error) error {
	if err == nil {
		return nil
	}
	if errors.As(err, new(*serviceerror.InvalidArgument)) {
		return temporal.NewNonRetryableApplicationError("schedule: "+err.Error(), ErrPermanent, err)
	}
	return err
}

// TellJobName is the local activity by which a job's run tells its job how
// it ended (the `jobRun` signal), in the run's last workflow task: no
// signal command, and no task after it to learn that it was delivered.
const TellJobName = Prefix + "TellJob"

// TellJobRequest is a run's end for its job (Run: a JobRun, as JSON).
type TellJobRequest struct {
	Job    string          `json:"job"`
	Signal string          `json:"signal"`
	Run    json.RawMessage `json:"run"`
}

// TellJob signals the job; a job that is gone (its tree deleted) is not an
// error: the run ended all the same.
func (a *Activities) TellJob(ctx context.Context, req TellJobRequest) error {
	if a.Signal == nil {
		return errors.New("this worker sends no signals (Activities.Signal unset)")
	}
	err := a.signalWithRetries(ctx, req.Job, req.Signal, req.Run)
	if errors.As(err, new(*serviceerror.NotFound)) {
		return nil
	}
	return err
}
