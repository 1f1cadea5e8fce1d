package stub

import (
	"context"
	"errors"
	"fmt"
	"github.com/steward-sh/steward/internal/leakcheck"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/steward-sh/steward/internal/driver"
	"github.com/steward-sh/steward/internal/spec"
)

// wait is the generous deadline of every Eventually: timers here are tens of
// milliseconds, so only a broken driver (or a machine on fire) reaches it.
const (
	wait = 5 * time.Second
	tick = 5 * time.Millisecond
)

// --- helpers ----------------------------------------------------------------

type pushed struct {
	workflowID string
	exit       driver.Exit
}

// collector returns a Notifier that sends every push into the returned channel.
func collector() (driver.Notifier, chan pushed) {
	ch := make(chan pushed, 64)
	return driver.NotifierFunc(func(_ context.Context, wf string, e driver.Exit) error {
		ch <- pushed{workflowID: wf, exit: e}
		return nil
	}), ch
}

// newDriver returns a driver closed at the end of the test (before the leak check).
func newDriver(t *testing.T, n driver.Notifier) *Driver {
	t.Helper()
	d := New(n, nil)
	t.Cleanup(d.Close)
	return d
}

func req(wf string, seq int64, attempt int32, s *spec.Stub) driver.Request {
	return driver.Request{
		WorkflowID: wf,
		Path:       "path:" + wf,
		Spec:       spec.Node{Name: wf, Kind: spec.KindStub, Stub: s},
		Seq:        seq,
		Attempt:    attempt,
	}
}

func dur(d time.Duration) spec.Duration { return spec.Duration(d) }

// receive waits for one push.
func receive(t *testing.T, ch chan pushed) pushed {
	t.Helper()
	select {
	case p := <-ch:
		return p
	case <-time.After(wait):
		t.Fatalf("no exit pushed within %v", wait)
		return pushed{}
	}
}

// call runs one action by name.
func call(ctx context.Context, d *Driver, action string, r driver.Request) error {
	switch action {
	case "start":
		_, err := d.Start(ctx, r)
		return err
	case "stop":
		return d.Stop(ctx, r)
	case "restart":
		_, err := d.Restart(ctx, r)
		return err
	case "observe":
		_, err := d.Observe(ctx, r)
		return err
	}
	panic("unknown action " + action)
}

var actions = []string{"start", "stop", "restart", "observe"}

// --- outcomes ---------------------------------------------------------------

func TestOutcomes(t *testing.T) {
	leakcheck.NoLeaks(t)
	d := newDriver(t, nil)
	for _, action := range actions {
		for _, tc := range []struct {
			outcome   string
			wantErr   bool
			permanent bool
		}{
			{spec.OutcomeSuccess, false, false},
			{spec.OutcomeFailure, true, false},
			{spec.OutcomeError, true, false},
			{spec.OutcomePermanent, true, true},
		} {
			t.Run(action+"/"+tc.outcome, func(t *testing.T) {
				r := req("w", 1, 1, &spec.Stub{Outcomes: map[string][]string{action: {tc.outcome}}})
				r.Instance = "stub/1/1"
				err := call(context.Background(), d, action, r)
				if !tc.wantErr {
					require.NoError(t, err)
					return
				}
				require.Error(t, err)
				assert.Contains(t, err.Error(), action)
				assert.Contains(t, err.Error(), "attempt 1")
				assert.Equal(t, tc.permanent, driver.IsPermanent(err), "IsPermanent(%v)", err)
			})
		}
	}
}

func TestOutcomeSuccessStartReturnsInstance(t *testing.T) {
	leakcheck.NoLeaks(t)
	d := newDriver(t, nil)
	s := &spec.Stub{Outcomes: map[string][]string{"start": {spec.OutcomeSuccess}, "restart": {spec.OutcomeSuccess}}}
	id, err := d.Start(context.Background(), req("w", 7, 1, s))
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(id, "stub/7/"), "instance %q", id)

	r := req("w", 8, 1, s)
	r.Instance = id
	id2, err := d.Restart(context.Background(), r)
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(id2, "stub/8/"), "instance %q", id2)
	assert.NotEqual(t, id, id2)
}

func TestFailedStartReturnsNoInstance(t *testing.T) {
	leakcheck.NoLeaks(t)
	n, ch := collector()
	d := newDriver(t, n)
	for _, o := range []string{spec.OutcomeFailure, spec.OutcomeError, spec.OutcomePermanent} {
		s := &spec.Stub{CrashAfter: dur(time.Millisecond), Outcomes: map[string][]string{"start": {o}, "restart": {o}}}
		id, err := d.Start(context.Background(), req("w", 1, 1, s))
		require.Error(t, err)
		assert.Empty(t, id, o)
		id, err = d.Restart(context.Background(), req("w", 1, 1, s))
		require.Error(t, err)
		assert.Empty(t, id, o)
	}
	assert.Zero(t, d.Armed(), "a failed start must not arm an exit timer")
	assert.Empty(t, ch)
}

func TestOutcomeTimeoutBlocksUntilCancelled(t *testing.T) {
	leakcheck.NoLeaks(t)
	n, ch := collector()
	d := newDriver(t, n)
	for _, action := range actions {
		t.Run(action, func(t *testing.T) {
			s := &spec.Stub{CrashAfter: dur(time.Millisecond), Outcomes: map[string][]string{action: {spec.OutcomeTimeout}}}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			done := make(chan error, 1)
			go func() { done <- call(ctx, d, action, req("w", 1, 1, s)) }()

			// It hangs: nothing comes back while the context lives.
			require.Never(t, func() bool { return len(done) > 0 }, 100*time.Millisecond, tick,
				"a timeout outcome must block until its context ends")
			cancel()
			select {
			case err := <-done:
				require.ErrorIs(t, err, context.Canceled)
				assert.False(t, driver.IsPermanent(err))
			case <-time.After(wait):
				t.Fatal("timeout outcome did not return after its context was cancelled")
			}
		})
	}
	assert.Zero(t, d.Armed(), "a start that timed out must not arm an exit timer")
	assert.Empty(t, ch)
}

func TestOutcomeTimeoutReturnsDeadline(t *testing.T) {
	leakcheck.NoLeaks(t)
	d := newDriver(t, nil)
	s := &spec.Stub{Outcomes: map[string][]string{"start": {spec.OutcomeTimeout}}}
	// The deadline counts from the context's creation, so the clock starts
	// before it (starting it after made the test fail under -race, when
	// creating the context took longer than the margin).
	begin := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer cancel()
	id, err := d.Start(ctx, req("w", 1, 1, s))
	require.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Empty(t, id)
	assert.GreaterOrEqual(t, time.Since(begin), 30*time.Millisecond, "returned before the deadline")
}

func TestOutcomesAttemptByAttempt(t *testing.T) {
	leakcheck.NoLeaks(t)
	d := newDriver(t, nil)
	list := []string{spec.OutcomeFailure, spec.OutcomeError, spec.OutcomePermanent, spec.OutcomeSuccess}
	for _, action := range actions {
		t.Run(action, func(t *testing.T) {
			s := &spec.Stub{Outcomes: map[string][]string{action: list}}
			for i, want := range list {
				attempt := int32(i + 1)
				err := call(context.Background(), d, action, req("w", 3, attempt, s))
				switch want {
				case spec.OutcomeSuccess:
					require.NoError(t, err, "attempt %d", attempt)
				case spec.OutcomePermanent:
					require.Error(t, err, "attempt %d", attempt)
					require.True(t, driver.IsPermanent(err), "attempt %d: %v", attempt, err)
				default:
					require.Error(t, err, "attempt %d", attempt)
					require.False(t, driver.IsPermanent(err), "attempt %d: %v", attempt, err)
					require.Contains(t, err.Error(), fmt.Sprintf("attempt %d", attempt))
				}
			}
		})
	}
	// Outcomes are per action: a list for start does not script stop.
	s := &spec.Stub{Outcomes: map[string][]string{"start": {spec.OutcomePermanent}}}
	require.NoError(t, d.Stop(context.Background(), req("w", 1, 1, s)))
	require.Error(t, call(context.Background(), d, "start", req("w", 1, 1, s)))
}

func TestOutcomesPastEndFallBackToFailureRate(t *testing.T) {
	leakcheck.NoLeaks(t)
	d := newDriver(t, nil)
	list := []string{spec.OutcomeFailure, spec.OutcomeSuccess}

	always := &spec.Stub{FailureRate: 1, Outcomes: map[string][]string{"start": list}}
	_, err := d.Start(context.Background(), req("w", 1, 1, always))
	require.Error(t, err, "attempt 1 is scripted failure")
	_, err = d.Start(context.Background(), req("w", 1, 2, always))
	require.NoError(t, err, "attempt 2 is scripted success despite failureRate 1")
	for attempt := int32(3); attempt <= 10; attempt++ {
		_, err = d.Start(context.Background(), req("w", 1, attempt, always))
		require.Error(t, err, "attempt %d is past the list: failureRate 1 fails it", attempt)
		require.False(t, driver.IsPermanent(err))
	}

	never := &spec.Stub{Outcomes: map[string][]string{"start": {spec.OutcomeFailure}}}
	for attempt := int32(2); attempt <= 10; attempt++ {
		_, err = d.Start(context.Background(), req("w", 1, attempt, never))
		require.NoError(t, err, "attempt %d is past the list: failureRate 0 succeeds", attempt)
	}
}

// --- failureRate ------------------------------------------------------------

func startFails(d *Driver, s *spec.Stub, path string, seq int64, attempt int32) bool {
	r := req(path, seq, attempt, s)
	_, err := d.Start(context.Background(), r)
	return err != nil
}

func TestFailureRateRepeatable(t *testing.T) {
	leakcheck.NoLeaks(t)
	s := &spec.Stub{FailureRate: 0.5, Seed: 42}
	d1, d2 := newDriver(t, nil), newDriver(t, nil) // two processes of the pool
	var pattern []bool
	for seq := int64(0); seq < 200; seq++ {
		for attempt := int32(1); attempt <= 3; attempt++ {
			a := startFails(d1, s, "a/b", seq, attempt)
			require.Equal(t, a, startFails(d1, s, "a/b", seq, attempt), "same driver, seq %d attempt %d", seq, attempt)
			require.Equal(t, a, startFails(d2, s, "a/b", seq, attempt), "other driver, seq %d attempt %d", seq, attempt)
			pattern = append(pattern, a)
		}
	}
	// The draw depends on its inputs: another seed, path, seq or attempt gives another pattern.
	differs := func(name string, f func(seq int64, attempt int32) bool) {
		i, n := 0, 0
		for seq := int64(0); seq < 200; seq++ {
			for attempt := int32(1); attempt <= 3; attempt++ {
				if f(seq, attempt) != pattern[i] {
					n++
				}
				i++
			}
		}
		assert.Greater(t, n, 100, "%s should change about half the draws, changed %d of 600", name, n)
	}
	differs("seed", func(seq int64, a int32) bool {
		return startFails(d1, &spec.Stub{FailureRate: 0.5, Seed: 43}, "a/b", seq, a)
	})
	differs("path", func(seq int64, a int32) bool { return startFails(d1, s, "a/c", seq, a) })
	differs("seq", func(seq int64, a int32) bool { return startFails(d1, s, "a/b", seq+1000, a) })
	differs("attempt", func(seq int64, a int32) bool { return startFails(d1, s, "a/b", seq, a+3) })
}

func TestFailureRateMatchesRate(t *testing.T) {
	leakcheck.NoLeaks(t)
	d := newDriver(t, nil)
	for _, rate := range []float64{0.3, 0.7} {
		for _, seed := range []int64{0, 1, 12345} {
			const draws = 2000
			fails := 0
			for seq := int64(0); seq < draws; seq++ {
				if startFails(d, &spec.Stub{FailureRate: rate, Seed: seed}, "svc/api", seq, 1) {
					fails++
				}
			}
			got := float64(fails) / draws
			assert.InDelta(t, rate, got, 0.05, "rate %v seed %d: %d of %d failed", rate, seed, fails, draws)
		}
	}
	// Failures drawn from the rate are retryable.
	_, err := d.Start(context.Background(), req("w", 1, 1, &spec.Stub{FailureRate: 1}))
	require.Error(t, err)
	assert.False(t, driver.IsPermanent(err))
}

// --- delay ------------------------------------------------------------------

func TestDelayHonoured(t *testing.T) {
	leakcheck.NoLeaks(t)
	d := newDriver(t, nil)
	const delay = 40 * time.Millisecond
	for _, action := range actions {
		for _, o := range []string{spec.OutcomeSuccess, spec.OutcomeFailure} {
			s := &spec.Stub{Delay: dur(delay), Outcomes: map[string][]string{action: {o}}}
			begin := time.Now()
			err := call(context.Background(), d, action, req("w", 1, 1, s))
			took := time.Since(begin)
			assert.Equal(t, o == spec.OutcomeFailure, err != nil, "%s/%s: %v", action, o, err)
			assert.GreaterOrEqual(t, took, delay, "%s/%s returned before its delay", action, o)
		}
	}
}

func TestDelayCancellable(t *testing.T) {
	leakcheck.NoLeaks(t)
	n, ch := collector()
	d := newDriver(t, n)
	for _, action := range actions {
		t.Run(action, func(t *testing.T) {
			s := &spec.Stub{Delay: dur(time.Hour), CrashAfter: dur(time.Millisecond)}
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() { done <- call(ctx, d, action, req("w", 1, 1, s)) }()
			cancel()
			select {
			case err := <-done:
				require.ErrorIs(t, err, context.Canceled)
			case <-time.After(wait):
				t.Fatal("delay not cancelled by its context")
			}
		})
	}
	assert.Zero(t, d.Armed(), "a cancelled start must not arm an exit timer")
	assert.Empty(t, ch)
}

// --- crash and exit pushes --------------------------------------------------

func TestCrashAfterPushesAbnormalExit(t *testing.T) {
	leakcheck.NoLeaks(t)
	n, ch := collector()
	d := newDriver(t, n)
	id, err := d.Start(context.Background(), req("wf/db", 1, 1, &spec.Stub{CrashAfter: dur(30 * time.Millisecond)}))
	require.NoError(t, err)
	require.Equal(t, 1, d.Armed())

	p := receive(t, ch)
	assert.Equal(t, "wf/db", p.workflowID)
	assert.Equal(t, id, p.exit.Instance)
	assert.False(t, p.exit.Normal)
	assert.NotEmpty(t, p.exit.Reason)
	require.Eventually(t, func() bool { return d.Armed() == 0 }, wait, tick)
}

func TestExitAfterPushesNormalExit(t *testing.T) {
	leakcheck.NoLeaks(t)
	n, ch := collector()
	d := newDriver(t, n)
	id, err := d.Start(context.Background(), req("wf/job", 2, 1, &spec.Stub{ExitAfter: dur(30 * time.Millisecond)}))
	require.NoError(t, err)

	p := receive(t, ch)
	assert.Equal(t, "wf/job", p.workflowID)
	assert.Equal(t, id, p.exit.Instance)
	assert.True(t, p.exit.Normal)
	require.Eventually(t, func() bool { return d.Armed() == 0 }, wait, tick)
}

func TestRestartedInstancePushes(t *testing.T) {
	leakcheck.NoLeaks(t)
	n, ch := collector()
	d := newDriver(t, n)
	r := req("wf/r", 4, 1, &spec.Stub{ExitAfter: dur(30 * time.Millisecond)})
	id, err := d.Restart(context.Background(), r)
	require.NoError(t, err)
	p := receive(t, ch)
	assert.Equal(t, "wf/r", p.workflowID)
	assert.Equal(t, id, p.exit.Instance)
	assert.True(t, p.exit.Normal)
}

func TestEarlierOfCrashAndExitWins(t *testing.T) {
	leakcheck.NoLeaks(t)
	n, ch := collector()
	d := newDriver(t, n)

	crashID, err := d.Start(context.Background(), req("wf/c", 1, 1,
		&spec.Stub{CrashAfter: dur(30 * time.Millisecond), ExitAfter: dur(150 * time.Millisecond)}))
	require.NoError(t, err)
	exitID, err := d.Start(context.Background(), req("wf/e", 1, 1,
		&spec.Stub{CrashAfter: dur(150 * time.Millisecond), ExitAfter: dur(30 * time.Millisecond)}))
	require.NoError(t, err)
	require.Equal(t, 2, d.Armed())

	got := map[string]pushed{}
	for range 2 {
		p := receive(t, ch)
		got[p.workflowID] = p
	}
	require.Equal(t, crashID, got["wf/c"].exit.Instance)
	assert.False(t, got["wf/c"].exit.Normal, "crashAfter < exitAfter: a crash")
	require.Equal(t, exitID, got["wf/e"].exit.Instance)
	assert.True(t, got["wf/e"].exit.Normal, "exitAfter < crashAfter: an exit")

	// One push per instance: the later of the two is never pushed.
	require.Eventually(t, func() bool { return d.Armed() == 0 }, wait, tick)
	sentinel, err := d.Start(context.Background(), req("wf/s", 1, 1, &spec.Stub{CrashAfter: dur(250 * time.Millisecond)}))
	require.NoError(t, err)
	p := receive(t, ch)
	assert.Equal(t, sentinel, p.exit.Instance, "only the sentinel may push after the first exits: got %+v", p)
}

func TestNoPushWithoutCrashOrExit(t *testing.T) {
	leakcheck.NoLeaks(t)
	n, ch := collector()
	d := newDriver(t, n)
	_, err := d.Start(context.Background(), req("wf", 1, 1, &spec.Stub{}))
	require.NoError(t, err)
	_, err = d.Start(context.Background(), req("wf", 2, 1, nil)) // no stub block at all
	require.NoError(t, err)
	assert.Zero(t, d.Armed())
	assert.Empty(t, ch)
}

func TestNilNotifierArmsNothing(t *testing.T) {
	leakcheck.NoLeaks(t)
	d := newDriver(t, nil)
	_, err := d.Start(context.Background(), req("wf", 1, 1, &spec.Stub{CrashAfter: dur(time.Millisecond)}))
	require.NoError(t, err)
	assert.Zero(t, d.Armed())
}

func TestPushErrorIsTolerated(t *testing.T) {
	leakcheck.NoLeaks(t)
	calls := make(chan struct{}, 4)
	d := newDriver(t, driver.NotifierFunc(func(ctx context.Context, wf string, e driver.Exit) error {
		_, ok := ctx.Deadline()
		if !ok {
			t.Errorf("push without a deadline")
		}
		calls <- struct{}{}
		return errors.New("frontend unavailable")
	}))
	_, err := d.Start(context.Background(), req("wf", 1, 1, &spec.Stub{CrashAfter: dur(10 * time.Millisecond)}))
	require.NoError(t, err)
	select {
	case <-calls:
	case <-time.After(wait):
		t.Fatal("no push")
	}
	require.Eventually(t, func() bool { return d.Armed() == 0 }, wait, tick)
}

// --- stop and restart disarm ------------------------------------------------

func TestStopDisarms(t *testing.T) {
	leakcheck.NoLeaks(t)
	n, ch := collector()
	d := newDriver(t, n)
	s := &spec.Stub{CrashAfter: dur(200 * time.Millisecond)}
	id, err := d.Start(context.Background(), req("wf/a", 1, 1, s))
	require.NoError(t, err)
	require.Equal(t, 1, d.Armed())

	stop := req("wf/a", 2, 1, s)
	stop.Instance = id
	require.NoError(t, d.Stop(context.Background(), stop))
	require.Zero(t, d.Armed(), "Stop must disarm the instance's timer")

	// A sentinel launched after and due later: when it pushes, the stopped
	// instance would long have pushed if it were still armed.
	sentinel, err := d.Start(context.Background(), req("wf/sentinel", 1, 1, &spec.Stub{CrashAfter: dur(350 * time.Millisecond)}))
	require.NoError(t, err)
	p := receive(t, ch)
	require.Equal(t, sentinel, p.exit.Instance, "a stopped instance pushed an exit: %+v", p)
	assert.Empty(t, ch)

	// Stopping again, or stopping what was never started, succeeds.
	require.NoError(t, d.Stop(context.Background(), stop))
	require.NoError(t, d.Stop(context.Background(), req("wf/a", 3, 1, s)))
}

func TestStopDisarmsOnlyItsInstance(t *testing.T) {
	leakcheck.NoLeaks(t)
	n, ch := collector()
	d := newDriver(t, n)
	s := &spec.Stub{CrashAfter: dur(60 * time.Millisecond)}
	a, err := d.Start(context.Background(), req("wf/a", 1, 1, s))
	require.NoError(t, err)
	b, err := d.Start(context.Background(), req("wf/b", 1, 1, s))
	require.NoError(t, err)
	require.NotEqual(t, a, b)
	require.Equal(t, 2, d.Armed())

	stop := req("wf/a", 2, 1, s)
	stop.Instance = a
	require.NoError(t, d.Stop(context.Background(), stop))
	require.Equal(t, 1, d.Armed())
	p := receive(t, ch)
	assert.Equal(t, "wf/b", p.workflowID)
	assert.Equal(t, b, p.exit.Instance)
}

func TestRestartDisarmsOldInstance(t *testing.T) {
	leakcheck.NoLeaks(t)
	n, ch := collector()
	d := newDriver(t, n)
	s := &spec.Stub{CrashAfter: dur(200 * time.Millisecond)}
	old, err := d.Start(context.Background(), req("wf/a", 1, 1, s))
	require.NoError(t, err)

	r := req("wf/a", 2, 1, s)
	r.Instance = old
	fresh, err := d.Restart(context.Background(), r)
	require.NoError(t, err)
	require.NotEqual(t, old, fresh)
	require.Equal(t, 1, d.Armed(), "the old timer is disarmed, the new one armed")

	sentinel, err := d.Start(context.Background(), req("wf/sentinel", 1, 1, &spec.Stub{CrashAfter: dur(400 * time.Millisecond)}))
	require.NoError(t, err)
	var got []string
	for range 2 {
		p := receive(t, ch)
		got = append(got, p.exit.Instance)
	}
	assert.Equal(t, []string{fresh, sentinel}, got, "old=%s must never push", old)
	assert.Empty(t, ch)
}

func TestFailedRestartDisarmsOldInstance(t *testing.T) {
	leakcheck.NoLeaks(t)
	n, _ := collector()
	d := newDriver(t, n)
	s := &spec.Stub{CrashAfter: dur(time.Hour), Outcomes: map[string][]string{"restart": {spec.OutcomeFailure}}}
	old, err := d.Start(context.Background(), req("wf/a", 1, 1, s))
	require.NoError(t, err)
	require.Equal(t, 1, d.Armed())
	r := req("wf/a", 2, 1, s)
	r.Instance = old
	_, err = d.Restart(context.Background(), r)
	require.Error(t, err)
	assert.Zero(t, d.Armed(), "neither the old nor a new instance is armed after a failed restart")
}

// --- observe ----------------------------------------------------------------

// clock is a settable clock for a driver's now.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func TestObserveFromStartTimeAlone(t *testing.T) {
	leakcheck.NoLeaks(t)
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)
	for _, tc := range []struct {
		name  string
		stub  *spec.Stub
		at    time.Duration
		want  driver.Observation
		notes string
	}{
		{"no crash or exit", &spec.Stub{}, 1000 * time.Hour, driver.Running, ""},
		{"no stub block", nil, 1000 * time.Hour, driver.Running, ""},
		{"before crash", &spec.Stub{CrashAfter: dur(time.Minute)}, time.Minute - time.Nanosecond, driver.Running, ""},
		{"at crash", &spec.Stub{CrashAfter: dur(time.Minute)}, time.Minute, driver.Crashed, ""},
		{"after crash", &spec.Stub{CrashAfter: dur(time.Minute)}, time.Hour, driver.Crashed, ""},
		{"before exit", &spec.Stub{ExitAfter: dur(time.Minute)}, 59 * time.Second, driver.Running, ""},
		{"at exit", &spec.Stub{ExitAfter: dur(time.Minute)}, time.Minute, driver.Exited, ""},
		{"after exit", &spec.Stub{ExitAfter: dur(time.Minute)}, time.Hour, driver.Exited, ""},
		{"crash first", &spec.Stub{CrashAfter: dur(time.Minute), ExitAfter: dur(2 * time.Minute)}, 90 * time.Second, driver.Crashed, ""},
		{"crash first, past exit", &spec.Stub{CrashAfter: dur(time.Minute), ExitAfter: dur(2 * time.Minute)}, time.Hour, driver.Crashed, ""},
		{"exit first", &spec.Stub{CrashAfter: dur(2 * time.Minute), ExitAfter: dur(time.Minute)}, 90 * time.Second, driver.Exited, ""},
		{"exit first, past crash", &spec.Stub{CrashAfter: dur(2 * time.Minute), ExitAfter: dur(time.Minute)}, time.Hour, driver.Exited, ""},
		{"both, before either", &spec.Stub{CrashAfter: dur(2 * time.Minute), ExitAfter: dur(time.Minute)}, 30 * time.Second, driver.Running, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// The first process starts the instance at t0 ...
			c1 := &clock{t: t0}
			first := New(nil, nil)
			first.now = c1.now
			defer first.Close()
			id, err := first.Start(context.Background(), req("wf", 9, 1, tc.stub))
			require.NoError(t, err)

			// ... another process, sharing nothing but the instance, observes it.
			c2 := &clock{t: t0.Add(tc.at)}
			other := New(nil, nil)
			other.now = c2.now
			defer other.Close()
			r := req("wf", 10, 1, tc.stub)
			r.Instance = id
			obs, err := other.Observe(context.Background(), r)
			require.NoError(t, err)
			assert.Equal(t, tc.want, obs, "instance %s observed %v after start", id, tc.at)
		})
	}
}

func TestObserveRealClockAcrossDrivers(t *testing.T) {
	leakcheck.NoLeaks(t)
	first := newDriver(t, nil)
	other := newDriver(t, nil)
	s := &spec.Stub{CrashAfter: dur(60 * time.Millisecond)}
	id, err := first.Start(context.Background(), req("wf", 1, 1, s))
	require.NoError(t, err)
	r := req("wf", 2, 1, s)
	r.Instance = id
	obs, err := other.Observe(context.Background(), r)
	require.NoError(t, err)
	require.Equal(t, driver.Running, obs, "just started")
	require.Eventually(t, func() bool {
		obs, err := other.Observe(context.Background(), r)
		return err == nil && obs == driver.Crashed
	}, wait, tick)

	s = &spec.Stub{ExitAfter: dur(60 * time.Millisecond)}
	id, err = first.Start(context.Background(), req("wf", 3, 1, s))
	require.NoError(t, err)
	r = req("wf", 4, 1, s)
	r.Instance = id
	require.Eventually(t, func() bool {
		obs, err := other.Observe(context.Background(), r)
		return err == nil && obs == driver.Exited
	}, wait, tick)
}

func TestObserveUnparsableInstanceIsCrashed(t *testing.T) {
	leakcheck.NoLeaks(t)
	d := newDriver(t, nil)
	for _, inst := range []string{"", "garbage", "stub/1", "stub/1/x", "proc/1/1700000000000000000", "stub/1/2/3"} {
		r := req("wf", 1, 1, &spec.Stub{})
		r.Instance = inst
		obs, err := d.Observe(context.Background(), r)
		require.NoError(t, err, "instance %q", inst)
		assert.Equal(t, driver.Crashed, obs, "instance %q", inst)
	}
}

func TestObserveOutcomeFailureIsAnError(t *testing.T) {
	leakcheck.NoLeaks(t)
	d := newDriver(t, nil)
	id, err := d.Start(context.Background(), req("wf", 1, 1, &spec.Stub{}))
	require.NoError(t, err)
	r := req("wf", 2, 1, &spec.Stub{Outcomes: map[string][]string{"observe": {spec.OutcomeFailure}}})
	r.Instance = id
	obs, err := d.Observe(context.Background(), r)
	require.Error(t, err)
	assert.Empty(t, obs)
}

// --- close ------------------------------------------------------------------

func TestCloseDisarmsEverything(t *testing.T) {
	leakcheck.NoLeaks(t)
	n, ch := collector()
	d := New(n, nil)
	for i := range 5 {
		_, err := d.Start(context.Background(), req(fmt.Sprintf("wf/%d", i), 1, 1, &spec.Stub{CrashAfter: dur(100 * time.Millisecond)}))
		require.NoError(t, err)
	}
	require.Equal(t, 5, d.Armed())
	d.Close()
	require.Zero(t, d.Armed())

	// Started after Close: an instance, but no timer.
	id, err := d.Start(context.Background(), req("wf/late", 1, 1, &spec.Stub{CrashAfter: dur(time.Millisecond)}))
	require.NoError(t, err)
	require.NotEmpty(t, id)
	require.Zero(t, d.Armed())
	d.Close() // idempotent

	// A sentinel in another driver, due after all of them.
	other := newDriver(t, n)
	sentinel, err := other.Start(context.Background(), req("wf/sentinel", 1, 1, &spec.Stub{CrashAfter: dur(250 * time.Millisecond)}))
	require.NoError(t, err)
	p := receive(t, ch)
	require.Equal(t, sentinel, p.exit.Instance, "a closed driver pushed: %+v", p)
	assert.Empty(t, ch)
}

func TestCloseWaitsForPushInProgress(t *testing.T) {
	leakcheck.NoLeaks(t)
	entered := make(chan struct{})
	release := make(chan struct{})
	var once sync.Once
	releaseOnce := func() { once.Do(func() { close(release) }) }
	defer releaseOnce() // even when an assertion below fails
	d := New(driver.NotifierFunc(func(ctx context.Context, wf string, e driver.Exit) error {
		close(entered)
		<-release
		return nil
	}), nil)
	_, err := d.Start(context.Background(), req("wf", 1, 1, &spec.Stub{CrashAfter: dur(10 * time.Millisecond)}))
	require.NoError(t, err)
	select {
	case <-entered:
	case <-time.After(wait):
		t.Fatal("no push")
	}
	closed := make(chan struct{})
	go func() { d.Close(); close(closed) }()
	require.Never(t, func() bool {
		select {
		case <-closed:
			return true
		default:
			return false
		}
	}, 100*time.Millisecond, tick, "Close returned while a push was in progress")
	releaseOnce()
	select {
	case <-closed:
	case <-time.After(wait):
		t.Fatal("Close did not return after the push ended")
	}
}

// --- instances --------------------------------------------------------------

func TestInstancesAreDistinct(t *testing.T) {
	leakcheck.NoLeaks(t)
	n, _ := collector()
	d := newDriver(t, n)
	seen := map[string]bool{}
	for i := range 200 {
		id, err := d.Start(context.Background(), req(fmt.Sprintf("wf/%d", i%4), 1, 1, &spec.Stub{CrashAfter: dur(time.Hour)}))
		require.NoError(t, err)
		require.False(t, seen[id], "instance %s returned twice", id)
		seen[id] = true
	}
	require.Equal(t, 200, d.Armed())
}

// Two workers (distinct workflows, same seq) started by one process at the
// same clock reading must get distinct instances: the exit timers are keyed
// by instance, so a collision loses one worker's push and sends the other's
// twice or to the wrong place.
func TestInstancesDistinctAtSameClockReading(t *testing.T) {
	leakcheck.NoLeaks(t)
	n, ch := collector()
	d := newDriver(t, n)
	c := &clock{t: time.Unix(1700000000, 0)}
	d.now = c.now
	s := &spec.Stub{CrashAfter: dur(20 * time.Millisecond)}
	a, err := d.Start(context.Background(), req("wf/a", 1, 1, s))
	require.NoError(t, err)
	b, err := d.Start(context.Background(), req("wf/b", 1, 1, s))
	require.NoError(t, err)
	require.NotEqual(t, a, b)
	require.Equal(t, 2, d.Armed())
	got := map[string]string{}
	for range 2 {
		p := receive(t, ch)
		got[p.workflowID] = p.exit.Instance
	}
	assert.Equal(t, map[string]string{"wf/a": a, "wf/b": b}, got)
}
