package hostcore

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

var t0 = time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)

// Every liveness event from each liveness state: what the host becomes,
// since when, and whether its subscribers are told.
func TestOnLiveness(t *testing.T) {
	info := Info{Name: "web-1", Build: "b2", PID: 42}
	lost := t0.Add(-7 * time.Second)
	for _, c := range []struct {
		name      string
		from      string
		ev        Liveness
		want      string
		wantSince time.Time
		told      bool
	}{
		{"hello of an unknown host: up now", Unknown, Hello, Up, t0, true},
		{"hello of an up host (a new worker): up as it was", Up, Hello, Up, t0.Add(-time.Hour), false},
		{"a lease lost: unknown since its last beat", Up, LeaseLost, Unknown, lost, true},
		{"a lease ended (its worker stopped): unknown now", Up, LeaseEnded, Unknown, t0, true},
		{"a lease held a day: up as it was", Up, LeaseHeldADay, Up, t0.Add(-time.Hour), false},
		{"a hello failed: unknown as it was", Unknown, HelloFailed, Unknown, t0.Add(-time.Hour), false},
		{"a lease lost twice: unknown as it was", Unknown, LeaseLost, Unknown, t0.Add(-time.Hour), false},
	} {
		s := State{Live: c.from, Since: t0.Add(-time.Hour)}
		told := s.OnLiveness(c.ev, info, lost, t0)
		require.Equal(t, c.want, s.Live, c.name)
		require.Equal(t, c.wantSince, s.Since, c.name)
		require.Equal(t, c.told, told, c.name)
		if c.ev == Hello {
			require.Equal(t, info, s.Info, "%s: the worker's record taken", c.name)
		} else {
			require.Zero(t, s.Info, c.name)
		}
	}
	require.Equal(t, State{Live: Unknown, Since: t0}, New(t0))
}

func TestLastBeat(t *testing.T) {
	const timeout, slack = 5 * time.Second, 30 * time.Second
	latest := t0.Add(-timeout)
	at := func(d time.Duration) *time.Time { v := t0.Add(d); return &v }
	for _, c := range []struct {
		name string
		beat *time.Time
		want time.Time
	}{
		{"the beat's time", at(-8 * time.Second), t0.Add(-8 * time.Second)},
		{"none", nil, latest},
		{"a clock ahead", at(time.Minute), latest},
		{"a clock far behind", at(-time.Hour), latest.Add(-slack)},
		{"at the slack's edge", at(-timeout - slack), latest.Add(-slack)},
	} {
		require.Equal(t, c.want, LastBeat(c.beat, t0, timeout, slack), c.name)
	}
}

// Subscriptions: the newest of each supervisor kept (by number), a gone
// one dropped, an empty one kept with its number, kept sorted; a new
// subscriber is to be told at once.
func TestSubscribe(t *testing.T) {
	var s State
	step := func(sub Subscription, wantNew bool) {
		t.Helper()
		tellNew, err := s.Subscribe(sub, 0)
		require.NoError(t, err)
		require.Equal(t, wantNew, tellNew, "%+v", sub)
	}
	step(Subscription{Supervisor: "t/b", Movable: 2, Seq: 1}, true)
	step(Subscription{Supervisor: "t/a", Pinned: []string{"t/a/x"}, Seq: 1}, true)
	require.Equal(t, []string{"t/a", "t/b"}, names(s), "sorted")
	step(Subscription{Supervisor: "t/b", Movable: 1, Seq: 3}, false)
	step(Subscription{Supervisor: "t/b", Movable: 9, Seq: 2}, false) // older: dropped
	require.Equal(t, 1, s.Subscribers[1].Movable)
	step(Subscription{Supervisor: "t/b", Seq: 4}, false) // empty: kept with its number
	step(Subscription{Supervisor: "t/b", Movable: 5, Seq: 3}, false)
	require.Equal(t, int64(4), s.Subscribers[1].Seq, "an older one arriving late is known as older")
	step(Subscription{Supervisor: "t/a", Gone: true, Seq: 2}, false)
	require.Equal(t, []string{"t/b"}, names(s))
	step(Subscription{Supervisor: "t/c", Gone: true}, false) // unknown and gone: nothing
	step(Subscription{}, false)                              // no supervisor: nothing
	require.Equal(t, []string{"t/b"}, names(s))
	s.Forget("t/b")
	require.Empty(t, s.Subscribers)
}

func names(s State) []string {
	var out []string
	for _, sub := range s.Subscribers {
		out = append(out, sub.Supervisor)
	}
	return out
}

// Subscriptions sent by hand with nonsense in them are refused whole.
func TestSubscribeRefusesWhatNoSupervisorSends(t *testing.T) {
	var full State
	for i := range MaxSubscribers {
		full.Subscribers = append(full.Subscribers, Subscription{Supervisor: fmt.Sprintf("t/s%04d", i)})
	}
	for _, c := range []struct {
		name string
		s    State
		sub  Subscription
		want string
	}{
		{"a path no workflow has", State{}, Subscription{Supervisor: strings.Repeat("x", 1100)}, "subscriber: "},
		{"too many pinned", State{}, Subscription{Supervisor: "t", Pinned: make([]string, 100001)}, "pinned workers (at most"},
		{"a pinned name too long", State{}, Subscription{Supervisor: "t", Pinned: []string{strings.Repeat("p", 5000)}}, "a pinned worker's name of 5000 characters"},
		{"one subscriber too many", full, Subscription{Supervisor: "t/new"}, "subscribers already (at most 1000)"},
	} {
		before := len(c.s.Subscribers)
		_, err := c.s.Subscribe(c.sub, 0)
		require.ErrorContains(t, err, c.want, c.name)
		require.Len(t, c.s.Subscribers, before, c.name)
	}
	_, err := full.Subscribe(Subscription{Supervisor: "t/s0001", Movable: 1, Seq: 2}, 0)
	require.NoError(t, err, "a known subscriber of a full host changes its subscription")
	_, err = full.Subscribe(Subscription{Supervisor: "t/new", Gone: true}, 0)
	require.NoError(t, err, "and an unknown one may say it is gone")
}

// A drain shows draining while a subscriber has movable workers there,
// drained once none has; an undrain shows the liveness again.
func TestDrainAndView(t *testing.T) {
	s := State{Live: Up, Since: t0.Add(-time.Hour), Info: Info{Build: "b1", Address: "10.0.0.2", PID: 7, BootedAt: t0.Add(-24 * time.Hour)}}
	_, _ = s.Subscribe(Subscription{Supervisor: "t/a", Movable: 2, Pinned: []string{"t/a/z", "t/a/y"}, Seq: 1}, 0)
	_, _ = s.Subscribe(Subscription{Supervisor: "t/b", Seq: 1}, 0)
	v := s.View("web-1")
	require.Equal(t, View{Name: "web-1", State: Up, Since: t0.Add(-time.Hour), Services: 4, Pinned: []string{"t/a/y", "t/a/z"},
		Subscribers: []string{"t/a"}, Build: "b1", Address: "10.0.0.2", PID: 7, BootedAt: t0.Add(-24 * time.Hour)}, v)

	require.True(t, s.SetDrain(Drain{Drain: true}, t0))
	require.False(t, s.SetDrain(Drain{Drain: true}, t0.Add(time.Minute)), "the same drain again changes nothing")
	st, since := s.Shown()
	require.Equal(t, Draining, st)
	require.Equal(t, t0, since)
	require.True(t, s.SetDrain(Drain{Drain: true, Force: true}, t0.Add(time.Minute)))
	_, since = s.Shown()
	require.Equal(t, t0, since, "force changes the drain, not when it began")
	_, _ = s.Subscribe(Subscription{Supervisor: "t/a", Pinned: []string{"t/a/z"}, Seq: 2}, 0)
	st, _ = s.Shown()
	require.Equal(t, Drained, st, "no movable worker left")
	require.True(t, s.SetDrain(Drain{}, t0.Add(2*time.Minute)))
	st, since = s.Shown()
	require.Equal(t, Up, st)
	require.Equal(t, t0.Add(-time.Hour), since)
}

// An entry a run of host version 1 took from a forged number has its
// number cleared once a bounded run carries it: the next real
// subscription replaces it.
func TestForgetFutureSeqs(t *testing.T) {
	now := time.Date(2026, 11, 28, 6, 0, 0, 0, time.UTC)
	s := New(now)
	_, err := s.Subscribe(Subscription{Supervisor: "t/a", Movable: 9, Seq: math.MaxInt64}, 0)
	require.NoError(t, err)
	_, err = s.Subscribe(Subscription{Supervisor: "t/b", Movable: 1, Seq: now.UnixNano()}, 0)
	require.NoError(t, err)
	s.ForgetFutureSeqs(now.Add(SeqSkew).UnixNano())
	_, err = s.Subscribe(Subscription{Supervisor: "t/a", Movable: 2, Seq: now.UnixNano()}, now.Add(SeqSkew).UnixNano())
	require.NoError(t, err)
	require.Equal(t, 3, s.View("h").Services, "t/a's real 2 and t/b's 1")
}

// A host's workflow started by hand with a carry of thousands of
// subscribers told each at every change, more signals than one task may
// send: a carried state keeps only what a host takes.
func TestSane_ACarryKeepsWhatAHostTakes(t *testing.T) {
	s := New(time.Date(2026, 11, 28, 7, 0, 0, 0, time.UTC))
	for i := range MaxSubscribers + 500 {
		s.Subscribers = append(s.Subscribers, Subscription{Supervisor: fmt.Sprintf("t/s%05d", i), Movable: 1})
	}
	s.Subscribers = append(s.Subscribers, Subscription{Supervisor: "t/../x"}, Subscription{})
	require.Equal(t, 502, s.Sane())
	require.Len(t, s.Subscribers, MaxSubscribers)
	require.Zero(t, s.Sane(), "a sane carry is kept as it is")
}
