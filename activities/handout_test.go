package activities

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	"go.temporal.io/api/serviceerror"

	"github.com/steward-sh/steward/internal/spec"
)

// A hand-out signals every child; a child whose workflow is not running is
// reported undelivered without a second try, a refusal of another kind is
// tried again (and given up after handOutAttempts), and the undelivered
// come back in the order handed out.
func TestHandOut_DeliversEachAndReportsTheUndelivered(t *testing.T) {
	var mu sync.Mutex
	tries := map[string]int{}
	got := map[string]int64{}
	a := &Activities{Signal: func(_ context.Context, id, name string, arg any) error {
		require.Equal(t, "spec", name)
		mu.Lock()
		defer mu.Unlock()
		tries[id]++
		switch {
		case id == "t/gone":
			return serviceerror.NewNotFound("workflow not found")
		case id == "t/busy" && tries[id] == 1:
			return serviceerror.NewUnavailable("try again")
		case id == "t/down":
			return errors.New("connection refused")
		}
		got[id] = arg.(spec.Update).Generation
		return nil
	}}
	var req HandOutRequest
	req.Signal = "spec"
	for i, p := range []string{"t/down", "t/a", "t/gone", "t/busy"} {
		req.Deliveries = append(req.Deliveries, Delivery{Path: p, Update: spec.Update{Generation: int64(i + 1)}})
	}
	missed, err := a.HandOut(context.Background(), req)
	require.NoError(t, err)
	require.Len(t, missed, 2)
	require.Equal(t, "t/down", missed[0].Path)
	require.Contains(t, missed[0].Error, "connection refused")
	require.Equal(t, "t/gone", missed[1].Path)
	require.Equal(t, map[string]int64{"t/a": 2, "t/busy": 4}, got)
	require.Equal(t, map[string]int{"t/down": handOutAttempts, "t/a": 1, "t/gone": 1, "t/busy": 2}, tries)
}

// A worker built without a signal sender fails the hand-out whole (the
// SDK retries it; the supervisor logs it), never reporting it delivered.
func TestHandOut_WithoutASenderFails(t *testing.T) {
	_, err := (&Activities{}).HandOut(context.Background(), HandOutRequest{Signal: "spec", Deliveries: []Delivery{{Path: "t/a"}}})
	require.ErrorContains(t, err, "Activities.Signal unset")
}

// A worker whose delivery says so gets its spec by the Update of the
// signal's name, under an ID that names the spec (the same spec handed out
// again is the same Update); a worker whose delivery does not (its code
// predates the Update), a supervisor child, and a worker whose Update
// failed (it refused the spec, it did not answer) get the signal.
func TestHandOut_WorkersByUpdateTheRestBySignal(t *testing.T) {
	var mu sync.Mutex
	updated, signalled := map[string]string{}, map[string]bool{}
	a := &Activities{
		Update: func(_ context.Context, id, updateID, name string, arg any) error {
			require.Equal(t, "spec", name)
			mu.Lock()
			defer mu.Unlock()
			if id == "t/old" {
				return errors.New("unknown update spec")
			}
			updated[id] = updateID
			return nil
		},
		Signal: func(_ context.Context, id, name string, arg any) error {
			mu.Lock()
			defer mu.Unlock()
			signalled[id] = true
			return nil
		},
	}
	worker := func(gen int64) spec.Update {
		return spec.Update{Generation: gen, Spec: spec.Node{Name: "w", Kind: spec.KindStub}}
	}
	req := HandOutRequest{Signal: "spec", Deliveries: []Delivery{
		{Path: "t/a", Update: worker(3), ByUpdate: true},
		{Path: "t/old", Update: worker(3), ByUpdate: true},
		{Path: "t/v5", Update: worker(3)},
		{Path: "t/group", Update: spec.Update{Generation: 3, Spec: spec.Node{Name: "group", Kind: spec.KindSupervisor}}, ByUpdate: true},
	}}
	missed, err := a.HandOut(context.Background(), req)
	require.NoError(t, err)
	require.Empty(t, missed)
	require.Equal(t, map[string]bool{"t/old": true, "t/v5": true, "t/group": true}, signalled)
	require.Len(t, updated, 1)
	require.Regexp(t, `^spec/3/[0-9a-f]{16}$`, updated["t/a"])

	again := specUpdateID(Delivery{Path: "t/a", Update: worker(3)})
	require.Equal(t, updated["t/a"], again, "the same spec, the same Update")
	other := worker(3)
	other.Spec.Stub = &spec.Stub{Delay: spec.Duration(1)}
	require.NotEqual(t, again, specUpdateID(Delivery{Path: "t/a", Update: other}), "another spec, another Update")
}

// A run tells its job how it ended by signal; a job that is gone is not
// an error (the run ended all the same).
func TestTellJob_SignalsItsJobAndAGoneJobIsNoError(t *testing.T) {
	var got []string
	a := &Activities{Signal: func(_ context.Context, id, name string, arg any) error {
		if id == "t/gone" {
			return serviceerror.NewNotFound("workflow not found")
		}
		got = append(got, id+" "+name+" "+string(arg.(json.RawMessage)))
		return nil
	}}
	require.NoError(t, a.TellJob(context.Background(), TellJobRequest{Job: "t/backup", Signal: "jobRun", Run: json.RawMessage(`{"id":"t/backup/run-1"}`)}))
	require.NoError(t, a.TellJob(context.Background(), TellJobRequest{Job: "t/gone", Signal: "jobRun", Run: json.RawMessage(`{}`)}))
	require.Equal(t, []string{`t/backup jobRun {"id":"t/backup/run-1"}`}, got)
}
