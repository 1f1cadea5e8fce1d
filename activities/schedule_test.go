package activities

import (
	"context"
	"testing"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/mocks"
	"go.temporal.io/sdk/temporal"

	"github.com/steward-sh/steward/internal/spec"
)

// A namespace writer who made a job's Schedule first, or changed steward's,
// with a limit on its runs (remaining actions) stopped the job for good
// once the limit was spent: steward's put kept the limit, and the job's
// status still said scheduled. The put now takes the limit away, and puts
// the spec's action back.
func TestPutSchedule_ALimitOnItsRunsSetByHandIsTakenAway(t *testing.T) {
	c := &mocks.Client{}
	sc := &mocks.ScheduleClient{}
	h := &mocks.ScheduleHandle{}
	c.On("ScheduleClient").Return(sc)
	sc.On("Create", mock.Anything, mock.Anything).Return(nil, temporal.ErrScheduleAlreadyRunning)
	sc.On("GetHandle", mock.Anything, "shop/backup").Return(h)
	var out *client.ScheduleUpdate
	h.On("Update", mock.Anything, mock.Anything).Return(func(_ context.Context, o client.ScheduleUpdateOptions) error {
		var err error
		out, err = o.DoUpdate(client.ScheduleUpdateInput{Description: client.ScheduleDescription{Schedule: client.Schedule{
			Action: &client.ScheduleWorkflowAction{ID: "evil", Workflow: "JobRunWorkflow"},
			State:  &client.ScheduleState{LimitedActions: true, RemainingActions: 0, Note: "by hand"},
		}}})
		return err
	})
	var every spec.Duration
	require.NoError(t, every.UnmarshalText([]byte("10s")))
	ctl := &Control{Client: c}
	require.NoError(t, ctl.PutSchedule(context.Background(), JobSchedule{ID: "shop/backup", Job: spec.Job{Every: &every},
		Workflow: "JobRunWorkflow", RunID: "shop/backup/run", TaskQueue: "steward", Input: []byte(`{}`)}))
	require.NotNil(t, out)
	st := out.Schedule.State
	require.False(t, st.LimitedActions, "no limit on the job's runs")
	require.Zero(t, st.RemainingActions)
	require.Equal(t, "shop/backup/run", out.Schedule.Action.(*client.ScheduleWorkflowAction).ID, "the spec's action, not the one put by hand")
}
