package workflows

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	failurepb "go.temporal.io/api/failure/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/steward-sh/steward/activities"
	"github.com/steward-sh/steward/internal/versions"
)

// Tests of a host's workflow: liveness by lease, subscriptions, drain.

func TestHost_LeaseDrainAndSubscribers(t *testing.T) {
	env := newEnv(t)
	info := activities.HostInfo{Name: "a", Build: "b1", Address: "10.0.0.1", PID: 42}
	hellos := 0
	env.OnActivity(activities.HostHelloName, mock.Anything).Return(func(context.Context) (activities.HostInfo, error) {
		hellos++
		return info, nil
	})
	// The first lease is lost after two minutes (its heartbeats stop), the
	// second holds.
	env.OnActivity(activities.HostLeaseName, mock.Anything).After(2 * time.Minute).Return(temporal.NewHeartbeatTimeoutError()).Once()
	env.OnActivity(activities.HostLeaseName, mock.Anything).After(time.Hour).Return(nil)
	var mu sync.Mutex
	var told []HostState
	env.OnSignalExternalWorkflow(mock.Anything, "root/g", mock.Anything, SignalHost, mock.Anything).Return(func(_, _, _, _ string, arg any) error {
		mu.Lock()
		defer mu.Unlock()
		told = append(told, arg.(HostState))
		return nil
	})
	env.OnSignalExternalWorkflow(mock.Anything, "gone", mock.Anything, SignalHost, mock.Anything).Return(&temporal.UnknownExternalWorkflowExecutionError{})

	view := func() HostView {
		v, err := env.QueryWorkflow(QueryHost)
		require.NoError(t, err)
		var hv HostView
		require.NoError(t, v.Get(&hv))
		return hv
	}
	var up, lost, draining, drained, undrained HostView
	at(env, 30*time.Second, func() {
		env.SignalWorkflow(SignalHostSubscribe, HostSubscription{Supervisor: "root/g", Movable: 2, Pinned: []string{"root/g/db"}, Seq: 5})
		// An older subscription that arrives late changes nothing.
		env.SignalWorkflow(SignalHostSubscribe, HostSubscription{Supervisor: "root/g", Seq: 4})
		env.SignalWorkflow(SignalHostSubscribe, HostSubscription{Supervisor: "gone", Movable: 1})
	})
	at(env, time.Minute, func() { up = view() })
	at(env, 2*time.Minute+time.Second, func() { lost = view() })
	at(env, 3*time.Minute, func() { env.SignalWorkflow(SignalHostDrain, HostDrain{Drain: true}) })
	at(env, 3*time.Minute+time.Second, func() { draining = view() })
	at(env, 4*time.Minute, func() {
		env.SignalWorkflow(SignalHostSubscribe, HostSubscription{Supervisor: "root/g", Pinned: []string{"root/g/db"}, Seq: 6})
	})
	at(env, 4*time.Minute+time.Second, func() { drained = view() })
	at(env, 5*time.Minute, func() { env.SignalWorkflow(SignalHostDrain, HostDrain{Drain: false}) })
	at(env, 5*time.Minute+time.Second, func() { undrained = view() })
	endAt(env, 6*time.Minute)
	runHost(env, HostInput{Name: "a"})

	require.Equal(t, HostUp, up.State)
	require.Equal(t, "b1", up.Build)
	require.Equal(t, "10.0.0.1", up.Address)
	require.Equal(t, 3, up.Services, "root/g's two movable workers and a pinned one; the subscriber whose workflow is gone (its 1) is dropped")

	// The lost lease: unknown since its last possible heartbeat, then up
	// again once the hello gets through (at once here).
	require.Equal(t, 2, hellos)
	require.Equal(t, HostUp, lost.State, "the hello got through again")
	mu.Lock()
	var lives []string
	for _, s := range told {
		lives = append(lives, s.Live)
	}
	mu.Unlock()
	require.Equal(t, []string{HostUp, HostUnknown, HostUp, HostUp, HostUp}, lives, "a new subscriber hears the state; each change is told")
	mu.Lock()
	require.Equal(t, told[0].Since.Add(2*time.Minute-hostLeaseHeartbeat), told[1].Since, "unknown since the lease's last possible heartbeat")
	mu.Unlock()

	require.Equal(t, HostDraining, draining.State, "movable workers remain")
	require.Equal(t, HostDrained, drained.State, "only a pinned worker remains")
	require.Equal(t, []string{"root/g/db"}, drained.Pinned)
	require.Equal(t, 1, drained.Services)
	require.Equal(t, HostUp, undrained.State)
	mu.Lock()
	defer mu.Unlock()
	require.True(t, told[3].Draining)
	require.False(t, told[4].Draining)
}

// A lost host is dated from the last beat its lease carried, within
// bounds; a beat with no time, or one from a wrong clock, falls back on
// the timeout's own bounds.
func TestHost_ALostHostIsDatedFromItsLastBeat(t *testing.T) {
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	latest := now.Add(-hostLeaseHeartbeat)
	// As the server sends it: the details are payloads.
	timeout := func(details ...any) *temporal.TimeoutError {
		info := &failurepb.TimeoutFailureInfo{TimeoutType: enumspb.TIMEOUT_TYPE_HEARTBEAT}
		if len(details) > 0 {
			p, err := converter.GetDefaultDataConverter().ToPayloads(details...)
			require.NoError(t, err)
			info.LastHeartbeatDetails = p
		}
		err := temporal.GetDefaultFailureConverter().FailureToError(&failurepb.Failure{
			Message: "activity Heartbeat timeout", FailureInfo: &failurepb.Failure_TimeoutFailureInfo{TimeoutFailureInfo: info}})
		var te *temporal.TimeoutError
		require.True(t, errors.As(err, &te))
		return te
	}
	for _, c := range []struct {
		name string
		te   *temporal.TimeoutError
		want time.Time
	}{
		{"the beat's time", timeout(now.Add(-8 * time.Second)), now.Add(-8 * time.Second)},
		{"no details", timeout(), latest},
		{"not a time", timeout("x"), latest},
		{"a clock ahead", timeout(now.Add(time.Minute)), latest},
		{"a clock far behind", timeout(now.Add(-time.Hour)), latest.Add(-lostBeatSlack)},
	} {
		require.Equal(t, c.want, lastBeat(c.te, now), c.name)
	}
}

// TestHost_ForgedSubscriptionsAreRejected: a subscription sent with the
// temporal CLI whose supervisor path names no workflow (1,100 characters:
// the host's signal to it failed every task) or with a list of pinned
// workers longer than a supervisor has children is rejected; the host goes
// on and a real subscriber is told.
func TestHost_ForgedSubscriptionsAreRejected(t *testing.T) {
	env := upHostEnv(t)
	told := 0
	env.OnSignalExternalWorkflow(mock.Anything, "root/g", mock.Anything, SignalHost, mock.Anything).Return(func(_, _, _, _ string, _ any) error {
		told++
		return nil
	})
	var hv HostView
	at(env, 30*time.Second, func() {
		env.SignalWorkflow(SignalHostSubscribe, HostSubscription{Supervisor: strings.Repeat("s", 1100), Movable: 1})
		env.SignalWorkflow(SignalHostSubscribe, HostSubscription{Supervisor: "root/x", Pinned: make([]string, 5000)})
		env.SignalWorkflow(SignalHostSubscribe, HostSubscription{Supervisor: "root/../x", Movable: 1})
		env.SignalWorkflow(SignalHostSubscribe, HostSubscription{Supervisor: "root/g", Movable: 2})
	})
	at(env, time.Minute, func() {
		v, err := env.QueryWorkflow(QueryHost)
		require.NoError(t, err)
		require.NoError(t, v.Get(&hv))
	})
	endAt(env, 2*time.Minute)
	runHost(env, HostInput{Name: "a"})
	require.Equal(t, []string{"root/g"}, hv.Subscribers)
	require.Equal(t, 2, hv.Services)
	require.Equal(t, 1, told)
}

// A subscription sent by hand with a huge number held its supervisor's
// entry against every real one after it, so the host counted the forged
// workers (a drain of it never ended). From host version 2 a number past
// the host's time is refused; version 1 takes it, as it did.
func TestHost_ASubscriptionNumberedPastTheHostsTimeIsRefused(t *testing.T) {
	for _, version := range []int{versions.HostSeqBounded.Since - 1, versions.HostSeqBounded.Since} {
		env := upHostEnv(t)
		env.OnSignalExternalWorkflow(mock.Anything, "root/g", mock.Anything, SignalHost, mock.Anything).Return(nil)
		var hv HostView
		at(env, 30*time.Second, func() {
			env.SignalWorkflow(SignalHostSubscribe, HostSubscription{Supervisor: "root/g", Movable: 50, Seq: math.MaxInt64})
		})
		at(env, 40*time.Second, func() {
			env.SignalWorkflow(SignalHostSubscribe, HostSubscription{Supervisor: "root/g", Movable: 2, Seq: env.Now().UnixNano()})
		})
		at(env, time.Minute, func() {
			v, err := env.QueryWorkflow(QueryHost)
			require.NoError(t, err)
			require.NoError(t, v.Get(&hv))
		})
		endAt(env, 2*time.Minute)
		runHost(env, HostInput{Name: "a", Version: version})
		if versions.HostSeqBounded.In(version) {
			require.Equal(t, 2, hv.Services, "version %d: the real subscription holds", version)
		} else {
			require.Equal(t, 50, hv.Services, "version %d: the forged one held", version)
		}
	}
}

// runHost runs the host workflow of in under its ID (host:NAME).
func runHost(env *testsuite.TestWorkflowEnvironment, in HostInput) {
	env.SetStartWorkflowOptions(client.StartWorkflowOptions{ID: HostID(in.Name)})
	env.ExecuteWorkflow(HostWorkflow, in)
}

// A host's workflow started by hand under a host's ID with another name
// leased that other host's queue and told this one's subscribers of it;
// the real host's workers never replaced it. It ends at once.
//
// Regression (attack review): under a version from the future the version
// check came first, and its task was retried for good (kept, as a newer
// worker's would be): the name is checked before the version.
func TestHost_ANameNotItsIDsEndsAtOnce(t *testing.T) {
	for _, version := range []int{versions.Host, versions.Host + 50} {
		env := newEnv(t)
		env.SetStartWorkflowOptions(client.StartWorkflowOptions{ID: HostID("web1")})
		env.ExecuteWorkflow(HostWorkflow, HostInput{Name: "web2", Version: version})
		require.True(t, env.IsWorkflowCompleted())
		require.ErrorContains(t, env.GetWorkflowError(), "host workflow host:web1 named \"web2\"", "version %d", version)
	}
}

// Regression (attack review): a host told every change to every subscriber
// at once, so with many subscribers (started by hand) a burst of drain
// toggles taken in one task sent a signal per toggle per subscriber, past
// Temporal's 2,000 pending signals, which failed its task for good. From
// host version 3 a subscriber has one note in flight: the changes behind
// it are told once, as the state then.
func TestHost_ABurstOfDrainsSendsEachSubscriberOneNoteInFlight(t *testing.T) {
	burst := func(version int) (told map[string][]HostState) {
		env := upHostEnv(t)
		told = map[string][]HostState{}
		var mu sync.Mutex
		for _, s := range []string{"root/g", "root/h"} {
			env.OnSignalExternalWorkflow(mock.Anything, s, mock.Anything, SignalHost, mock.Anything).Return(func(_, id, _, _ string, arg any) error {
				mu.Lock()
				defer mu.Unlock()
				told[id] = append(told[id], arg.(HostState))
				return nil
			})
		}
		at(env, 30*time.Second, func() {
			env.SignalWorkflow(SignalHostSubscribe, HostSubscription{Supervisor: "root/g", Movable: 1, Seq: env.Now().UnixNano()})
			env.SignalWorkflow(SignalHostSubscribe, HostSubscription{Supervisor: "root/h", Movable: 1, Seq: env.Now().UnixNano()})
		})
		at(env, time.Minute, func() {
			for i := range 11 { // taken in one task
				env.SignalWorkflow(SignalHostDrain, HostDrain{Drain: i%2 == 0})
			}
		})
		endAt(env, 2*time.Minute)
		runHost(env, HostInput{Name: "a", Version: version})
		return told
	}
	told := burst(HostVersion)
	for _, s := range []string{"root/g", "root/h"} {
		require.LessOrEqual(t, len(told[s]), 3, "%s: told on subscribing, then one note in flight and the state after it: %+v", s, told[s])
		require.True(t, told[s][len(told[s])-1].Draining, "%s heard the last state: draining", s)
	}
	old := burst(versions.HostNotesBounded.Since - 1)
	require.GreaterOrEqual(t, len(old["root/g"]), 12, "version 2 tells every change: %d", len(old["root/g"]))
}

// The subscriptions' pinned lists are bounded in total (the host's carry
// holds them): one that would pass hostcore.MaxPinnedBytes is refused.
func TestHost_PinnedListsAreBoundedInTotal(t *testing.T) {
	env := upHostEnv(t)
	env.OnSignalExternalWorkflow(mock.Anything, mock.Anything, mock.Anything, SignalHost, mock.Anything).Return(nil)
	long := func(sup string) []string {
		ps := make([]string, 1000)
		for i := range ps {
			ps[i] = fmt.Sprintf("%s/%0390d", sup, i)
		}
		return ps
	}
	var hv HostView
	at(env, 30*time.Second, func() {
		for _, s := range []string{"root/a", "root/b", "root/c"} {
			env.SignalWorkflow(SignalHostSubscribe, HostSubscription{Supervisor: s, Pinned: long(s), Seq: env.Now().UnixNano()})
		}
	})
	at(env, time.Minute, func() {
		v, err := env.QueryWorkflow(QueryHost)
		require.NoError(t, err)
		require.NoError(t, v.Get(&hv))
	})
	endAt(env, 2*time.Minute)
	runHost(env, HostInput{Name: "a", Version: HostVersion})
	require.Equal(t, []string{"root/a", "root/b"}, hv.Subscribers, "the third would pass 1 MiB")
}

// A host's run woken to continue as new (the worker's `wake`) after a
// burst of drain toggles: each subscriber hears the last state before the
// run continues as new (one note in flight at a time), which carries it.
func TestHost_AContinueAsNewTakesTheDrainsBehindItAndTellsTheLastState(t *testing.T) {
	env := upHostEnv(t)
	var told []HostState
	var mu sync.Mutex
	env.OnSignalExternalWorkflow(mock.Anything, "root/g", mock.Anything, SignalHost, mock.Anything).Return(func(_, _, _, _ string, arg any) error {
		mu.Lock()
		defer mu.Unlock()
		told = append(told, arg.(HostState))
		return nil
	})
	at(env, 30*time.Second, func() {
		env.SignalWorkflow(SignalHostSubscribe, HostSubscription{Supervisor: "root/g", Movable: 1, Seq: env.Now().UnixNano()})
	})
	at(env, time.Minute, func() {
		for i := range 5 {
			env.SignalWorkflow(SignalHostDrain, HostDrain{Drain: i%2 == 0})
		}
		env.SignalWorkflow(SignalHostWake, nil)
	})
	runHost(env, HostInput{Name: "a", Version: HostVersion})
	next, continued := continuedAs[HostInput](t, env.GetWorkflowError())
	require.True(t, continued, "%v", env.GetWorkflowError())
	require.True(t, next.Carry.Drain.Drain, "the last toggle is carried: %+v; told %+v", next.Carry.Drain, told)
	require.NotEmpty(t, told)
	require.True(t, told[len(told)-1].Draining, "the subscriber heard the last state: %+v", told)
	require.LessOrEqual(t, len(told), 3, "%+v", told)
}

// upHostEnv is a test environment for host "a", which answers its hello
// and whose lease holds (an hour).
func upHostEnv(t *testing.T) *testsuite.TestWorkflowEnvironment {
	t.Helper()
	env := newEnv(t)
	env.OnActivity(activities.HostHelloName, mock.Anything).Return(activities.HostInfo{Name: "a", Build: "b1"}, nil)
	env.OnActivity(activities.HostLeaseName, mock.Anything).After(time.Hour).Return(nil)
	return env
}
