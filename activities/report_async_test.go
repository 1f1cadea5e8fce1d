package activities

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"

	"github.com/steward-sh/steward/internal/spec"
	"github.com/steward-sh/steward/internal/treestatus"
)

type completion struct {
	token []byte
	res   ActionResult
}

// asyncFixture is the fixture with a report sender and an activity
// completer that record what they were given.
func asyncFixture(t *testing.T, reportErr error) (*fixture, chan treestatus.ChildReport, chan completion) {
	f := newFixture(t)
	reports := make(chan treestatus.ChildReport, 4)
	done := make(chan completion, 4)
	f.acts.Report = func(_ context.Context, parent string, r treestatus.ChildReport) error {
		require.Equal(t, "steward/shop", parent)
		reports <- r
		return reportErr
	}
	f.acts.Complete = func(_ context.Context, token []byte, result any, err error) error {
		require.NoError(t, err)
		done <- completion{token: token, res: result.(ActionResult)}
		return nil
	}
	f.acts.Heartbeat = func(context.Context, []byte, ...any) error { return nil }
	return f, reports, done
}

func reportingReq() ActionRequest {
	req := stubReq(&spec.Stub{CrashAfter: spec.Duration(time.Hour)})
	req.OnSuccess = &SuccessReport{Parent: "steward/shop", Report: treestatus.ChildReport{Seq: 7}}
	return req
}

// A succeeded action that reports returns its slot (the activity is left
// pending) and completes by its token once the report went out, with the
// result the workflow would have had: the instance, Reported, Done.
func TestReportAsync_ASucceededActionCompletesAfterItsReport(t *testing.T) {
	f, reports, done := asyncFixture(t, nil)
	env := f.activityEnv()
	_, err := env.ExecuteActivity(StartName, reportingReq())
	require.ErrorIs(t, err, activity.ErrResultPending)
	var r treestatus.ChildReport
	select {
	case r = <-reports:
	case <-time.After(10 * time.Second):
		t.Fatal("no report")
	}
	var c completion
	select {
	case c = <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("not completed")
	}
	WaitReports(f.acts)
	require.True(t, c.res.Reported)
	require.True(t, strings.HasPrefix(c.res.Instance, "stub/3/"), c.res.Instance)
	require.Equal(t, c.res.Instance, r.Status.Instance, "the report names the instance")
	require.False(t, c.res.Done.IsZero())
	require.EqualValues(t, 1, c.res.Attempt)
	require.Len(t, done, 0, "completed once")
}

// A report that fails leaves it to the workflow: the completion says
// Reported false.
func TestReportAsync_AFailedReportIsLeftToTheWorkflow(t *testing.T) {
	f, _, done := asyncFixture(t, errors.New("signal refused"))
	env := f.activityEnv()
	_, err := env.ExecuteActivity(StartName, reportingReq())
	require.ErrorIs(t, err, activity.ErrResultPending)
	WaitReports(f.acts)
	c := <-done
	require.False(t, c.res.Reported)
	require.NotEmpty(t, c.res.Instance)
}

// Without a report, or without a completer, the activity returns its
// result itself, as before.
func TestReportAsync_OnlyWhenThereIsAReportAndACompleter(t *testing.T) {
	f, _, done := asyncFixture(t, nil)
	env := f.activityEnv()
	v, err := env.ExecuteActivity(StartName, stubReq(&spec.Stub{CrashAfter: spec.Duration(time.Hour)}))
	require.NoError(t, err)
	require.False(t, result(t, v).Reported)

	f.acts.Complete = nil
	v, err = env.ExecuteActivity(StartName, reportingReq())
	require.NoError(t, err)
	require.True(t, result(t, v).Reported, "reported before returning")
	require.Len(t, done, 0)
}

// A worker that has begun to stop (WaitReports) counts no more background
// reports: an action succeeding then reports before it returns.
func TestReportAsync_AStoppingWorkerReportsBeforeReturning(t *testing.T) {
	f, reports, done := asyncFixture(t, nil)
	WaitReports(f.acts)
	env := f.activityEnv()
	v, err := env.ExecuteActivity(StartName, reportingReq())
	require.NoError(t, err)
	require.True(t, result(t, v).Reported)
	require.Len(t, reports, 1)
	require.Len(t, done, 0, "not completed by token")
}

// The beat at once when a succeeded action hands its completion to the
// background: only for an action that ran a third of its heartbeat timeout
// or more (one that ended sooner has had only its first heartbeat, which
// the SDK sends at once). Under a rolling update it was one RPC of every
// ten the server took.
func TestReportAsync_AShortActionDoesNotBeatAgainAtOnce(t *testing.T) {
	const hb = 30 * time.Second // the ticker's first beat is 10 s away: never within the test
	for _, tc := range []struct {
		ran   time.Duration
		beats int
	}{
		{ran: 0, beats: 0},
		{ran: hb/3 - time.Millisecond, beats: 0},
		{ran: hb / 3, beats: 1},
		{ran: time.Minute, beats: 1},
	} {
		f, _, done := asyncFixture(t, nil)
		var beats, atReport int
		f.acts.Heartbeat = func(context.Context, []byte, ...any) error { beats++; return nil }
		f.acts.Report = func(context.Context, string, treestatus.ChildReport) error { atReport = beats; return nil }
		require.True(t, f.acts.beginReport())
		f.acts.completeAfterReport([]byte("token"), hb, tc.ran, &SuccessReport{Parent: "steward/shop"}, ActionResult{Attempt: 1}, nil)
		WaitReports(f.acts)
		c := <-done
		require.True(t, c.res.Reported)
		require.Equal(t, tc.beats, atReport, "beats before the report, for an action that ran %s", tc.ran)
	}
}

// A report that takes its time still heartbeats every third of the
// heartbeat timeout, whether or not it beat at once.
func TestReportAsync_ASlowReportKeepsHeartbeating(t *testing.T) {
	f, _, done := asyncFixture(t, nil)
	beats := make(chan struct{}, 100)
	f.acts.Heartbeat = func(context.Context, []byte, ...any) error { beats <- struct{}{}; return nil }
	f.acts.Report = func(ctx context.Context, _ string, _ treestatus.ChildReport) error {
		for range 2 {
			select {
			case <-beats:
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		return nil
	}
	require.True(t, f.acts.beginReport())
	f.acts.completeAfterReport([]byte("token"), 150*time.Millisecond, 0, &SuccessReport{Parent: "steward/shop"}, ActionResult{Attempt: 1}, nil)
	WaitReports(f.acts)
	require.True(t, (<-done).res.Reported, "two beats came while the report waited")
}
