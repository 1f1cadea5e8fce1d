// Package hostcore is the pure decision core of a host's workflow
// (workflows.HostWorkflow, docs/fleet.md): what a host's liveness, drain
// and subscribers become with each event, and whom to tell. It has no
// Temporal import; the workflow carries out what it returns (the lease and
// hello activities, the signals to subscribers).
//
// A host is up while its lease holds (an activity its worker heartbeats),
// unknown from its last possible heartbeat until a worker of the host
// answers a hello. A drain is the operator's: draining while a subscriber
// still has movable workers there, drained after. Subscribers are the
// supervisors with workers on the host; each tells its own by numbered
// subscriptions, which may arrive out of order (the newest is kept), and
// each is told every change of the host's state.
package hostcore

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/steward-sh/steward/internal/spec"
)

// Liveness states, and the states `starter hosts` shows.
const (
	Up       = "up"
	Unknown  = "unknown"
	Draining = "draining"
	Drained  = "drained"
)

// Info is what a host's worker says of itself.
type Info struct {
	Name    string    `json:"name"`
	Address string    `json:"address,omitempty"`
	Build   string    `json:"build"`
	PID     int       `json:"pid"`
	UpSince time.Time `json:"upSince"`
	// BootedAt is when the host's kernel booted (zero: unknown).
	BootedAt time.Time `json:"bootedAt,omitzero"`
}

// Subscription is a supervisor's workers on a host: how many could run
// elsewhere (Movable) and the paths of those that can run nowhere else
// (Pinned). None: the supervisor unsubscribes.
type Subscription struct {
	Supervisor string   `json:"supervisor"`
	Movable    int      `json:"movable"`
	Pinned     []string `json:"pinned,omitempty"`
	// Seq numbers a supervisor's subscriptions: each is an activity of its
	// own, and two may arrive out of order (the host keeps the newest).
	Seq int64 `json:"seq,omitempty"`
	// Gone: the supervisor is deleted.
	Gone bool `json:"gone,omitempty"`
}

// empty: no worker of the supervisor is on the host.
func (s Subscription) empty() bool { return s.Movable == 0 && len(s.Pinned) == 0 }

// Drain is a drain (Drain) or an undrain; Force: stop the services that
// can run nowhere else too.
type Drain struct {
	Drain bool `json:"drain"`
	Force bool `json:"force,omitempty"`
}

// State is a host's state, carried across continue-as-new.
type State struct {
	Live        string         `json:"live"`
	Since       time.Time      `json:"since"`
	Info        Info           `json:"info"`
	Drain       Drain          `json:"drain"`
	DrainSince  time.Time      `json:"drainSince,omitzero"`
	Subscribers []Subscription `json:"subscribers,omitempty"`
}

// New is the state of a host whose workflow begins: unknown since now.
func New(now time.Time) State { return State{Live: Unknown, Since: now} }

// View is what `starter hosts` shows of a host.
type View struct {
	Name  string    `json:"name"`
	State string    `json:"state"`
	Since time.Time `json:"since"`
	// Services counts the workers placed on the host; Pinned are those of
	// them that can run nowhere else.
	Services int      `json:"services"`
	Pinned   []string `json:"pinned,omitempty"`
	// Subscribers are the supervisors with workers on the host.
	Subscribers []string  `json:"subscribers,omitempty"`
	Build       string    `json:"build"`
	Address     string    `json:"address,omitempty"`
	PID         int       `json:"pid,omitempty"`
	UpSince     time.Time `json:"upSince,omitzero"`
	// BootedAt is when the host last booted, as its worker said.
	BootedAt time.Time `json:"bootedAt,omitzero"`
}

// Shown is the host's state as `starter hosts` shows it, and since when.
func (s *State) Shown() (string, time.Time) {
	if !s.Drain.Drain {
		return s.Live, s.Since
	}
	for _, sub := range s.Subscribers {
		if sub.Movable > 0 {
			return Draining, s.DrainSince
		}
	}
	return Drained, s.DrainSince
}

// View is the host named name as `starter hosts` shows it.
func (s *State) View(name string) View {
	st, since := s.Shown()
	v := View{Name: name, State: st, Since: since, Build: s.Info.Build, Address: s.Info.Address, PID: s.Info.PID,
		UpSince: s.Info.UpSince, BootedAt: s.Info.BootedAt}
	for _, sub := range s.Subscribers {
		if sub.empty() {
			continue
		}
		v.Services += sub.Movable + len(sub.Pinned)
		v.Pinned = append(v.Pinned, sub.Pinned...)
		v.Subscribers = append(v.Subscribers, sub.Supervisor)
	}
	slices.Sort(v.Pinned)
	return v
}

// Liveness events: what the host's liveness activity came to.
type Liveness int

const (
	// Hello: a worker of the host answered the hello (with its Info).
	Hello Liveness = iota
	// LeaseHeldADay: the lease ran its whole time; the host is up.
	LeaseHeldADay
	// LeaseLost: the lease's heartbeats stopped (at LostAt).
	LeaseLost
	// LeaseEnded: the lease ended otherwise (its worker stopped).
	LeaseEnded
	// HelloFailed: the hello failed (it is asked again).
	HelloFailed
)

// OnLiveness takes what the liveness activity came to at now (info: the
// hello's answer; lostAt: the lost lease's last beat, LastBeat). It
// returns whether every subscriber must be told (the host's liveness
// changed). The workflow then starts the activity the new state calls for:
// a lease while up, a hello while unknown.
func (s *State) OnLiveness(ev Liveness, info Info, lostAt, now time.Time) (tellAll bool) {
	switch ev {
	case Hello:
		s.Info = info
		return s.setLive(Up, now)
	case LeaseLost:
		return s.setLive(Unknown, lostAt)
	case LeaseEnded:
		return s.setLive(Unknown, now)
	}
	return false
}

func (s *State) setLive(live string, since time.Time) bool {
	if s.Live == live {
		return false
	}
	s.Live, s.Since = live, since
	return true
}

// LastBeat dates a lost host's last heartbeat: beat, the time its lease's
// last heartbeat carries (the host's clock; nil: none), within
// [now-timeout-slack, now-timeout], or now-timeout without one (the
// earliest the server could have timed it out). The heartbeat timeout's
// task may have waited on a dead worker's sticky queue, and a host's clock
// may be wrong: slack bounds how far back it is believed.
func LastBeat(beat *time.Time, now time.Time, timeout, slack time.Duration) time.Time {
	latest := now.Add(-timeout)
	if beat == nil || beat.After(latest) {
		return latest
	}
	if earliest := latest.Add(-slack); beat.Before(earliest) {
		return earliest
	}
	return *beat
}

// MaxSubscribers bounds a host's subscribers: each is told of every change
// by a signal of its own, and Temporal allows 2,000 pending external
// signals per workflow.
const MaxSubscribers = 1000

// MaxPinnedBytes bounds the pinned lists of a host's subscribers in total:
// the host's carry holds them, and a continue-as-new carries at most 2 MiB.
// Each list is a supervisor's workers that run nowhere else: far below
// this for any real tree.
const MaxPinnedBytes = 1 << 20

// CheckTotal says why taking sub would pass MaxPinnedBytes (nil: it
// would not; versions.HostNotesBounded).
func (s *State) CheckTotal(sub Subscription) error {
	n := pinnedBytes(sub)
	for _, o := range s.Subscribers {
		if o.Supervisor != sub.Supervisor {
			n += pinnedBytes(o)
		}
	}
	if n > MaxPinnedBytes {
		return fmt.Errorf("subscriber %s: the host's subscribers would pin %d bytes of workers (at most %d)", sub.Supervisor, n, MaxPinnedBytes)
	}
	return nil
}

func pinnedBytes(sub Subscription) int {
	n := 0
	for _, p := range sub.Pinned {
		n += len(p)
	}
	return n
}

// Check says why a subscription is not a supervisor's (one sent with the
// temporal CLI may be anything): its supervisor's path names no workflow
// steward makes (a signal to it would fail the host's task), its pinned
// list is longer than a supervisor's children, or a new one would pass
// MaxSubscribers.
func (s *State) Check(sub Subscription) error {
	if err := s.checkOne(sub); err != nil {
		return err
	}
	if !s.subscribed(sub.Supervisor) && !sub.Gone && len(s.Subscribers) >= MaxSubscribers {
		return fmt.Errorf("subscriber %s: the host has %d subscribers already (at most %d)", sub.Supervisor, len(s.Subscribers), MaxSubscribers)
	}
	return nil
}

// checkOne is what Check asks of a subscription by itself.
func (s *State) checkOne(sub Subscription) error {
	if err := spec.CheckPath(sub.Supervisor); err != nil {
		return fmt.Errorf("subscriber: %w", err)
	}
	if len(sub.Pinned) > spec.MaxChildren {
		return fmt.Errorf("subscriber %s: %d pinned workers (at most %d)", sub.Supervisor, len(sub.Pinned), spec.MaxChildren)
	}
	for _, p := range sub.Pinned {
		if len(p) > spec.MaxPathLength {
			return fmt.Errorf("subscriber %s: a pinned worker's name of %d characters", sub.Supervisor, len(p))
		}
	}
	return nil
}

// Subscribed says whether supervisor is among the host's subscribers.
func (s *State) Subscribed(supervisor string) bool { return s.subscribed(supervisor) }

func (s *State) subscribed(supervisor string) bool {
	return slices.ContainsFunc(s.Subscribers, func(o Subscription) bool { return o.Supervisor == supervisor })
}

// Subscribe takes a subscription (a supervisor's workers on the host, or
// its leaving: Gone), checked first (Check): older than the one held, it
// is dropped; it returns whether its supervisor is new and must hear the
// host's state at once.
//
// notAfter, when not 0, is the highest number taken (the host's time in
// ns plus SeqSkew: versions.HostSeqBounded): a supervisor numbers its
// subscriptions by its time, so one numbered past the host's was sent by
// hand, and kept it would hold its supervisor's entry against every real
// one after it.
func (s *State) Subscribe(sub Subscription, notAfter int64) (tellNew bool, err error) {
	if sub.Supervisor == "" {
		return false, nil
	}
	if err := s.Check(sub); err != nil {
		return false, err
	}
	if notAfter != 0 && sub.Seq <= 0 {
		return false, fmt.Errorf("subscriber %s: a subscription without a number: not a supervisor's (each numbers its own)", sub.Supervisor)
	}
	if notAfter != 0 && sub.Seq > notAfter {
		return false, fmt.Errorf("subscriber %s: a subscription numbered %d, past the host's time (at most %d): not a supervisor's", sub.Supervisor, sub.Seq, notAfter)
	}
	heard := s.subscribed(sub.Supervisor)
	s.merge(sub)
	return s.subscribed(sub.Supervisor) && !heard, nil
}

// SeqSkew is how far past the host's time a subscription's number may be
// (Subscribe): a supervisor's task and the host's are both timed by the
// server, the supervisor's first; the rest is room for the clocks of the
// server's nodes to differ.
const SeqSkew = 10 * time.Minute

// Sane keeps of a carried state only the subscribers a host takes (Check,
// at most MaxSubscribers), and says how many it dropped: a host's
// workflow started by hand with a carry of thousands told each of them at
// every change, more signals than one task may send, and its task failed
// for good.
func (s *State) Sane() (dropped int) {
	kept := make([]Subscription, 0, min(len(s.Subscribers), MaxSubscribers))
	for _, sub := range s.Subscribers {
		if len(kept) >= MaxSubscribers || sub.Supervisor == "" || s.checkOne(sub) != nil {
			dropped++
			continue
		}
		kept = append(kept, sub)
	}
	s.Subscribers = kept
	return dropped
}

// ForgetFutureSeqs clears the number of every subscription held that is
// numbered past notAfter (one a run before versions.HostSeqBounded took
// from a forged signal): the next real subscription of its supervisor
// replaces it.
func (s *State) ForgetFutureSeqs(notAfter int64) {
	for i := range s.Subscribers {
		if s.Subscribers[i].Seq > notAfter {
			s.Subscribers[i].Seq = 0
		}
	}
}

// Forget drops a subscriber that a signal could not reach (its workflow
// is gone: a deleted tree).
func (s *State) Forget(supervisor string) { s.merge(Subscription{Supervisor: supervisor, Gone: true}) }

func (s *State) merge(sub Subscription) {
	i := slices.IndexFunc(s.Subscribers, func(o Subscription) bool { return o.Supervisor == sub.Supervisor })
	switch {
	case i >= 0 && sub.Seq != 0 && sub.Seq <= s.Subscribers[i].Seq:
		// Older than what it holds: subscriptions may arrive out of order.
	case i >= 0 && sub.Gone:
		s.Subscribers = slices.Delete(s.Subscribers, i, i+1)
	case i >= 0:
		s.Subscribers[i] = sub
	case !sub.Gone:
		// An empty subscription is kept (with its number), so that an
		// older one arriving late is known as older.
		s.Subscribers = append(s.Subscribers, sub)
		slices.SortFunc(s.Subscribers, func(a, b Subscription) int { return strings.Compare(a.Supervisor, b.Supervisor) })
	}
}

// SetDrain takes a drain or an undrain at now; it returns whether every
// subscriber must be told (it changed anything).
func (s *State) SetDrain(d Drain, now time.Time) (tellAll bool) {
	if d == s.Drain {
		return false
	}
	if d.Drain != s.Drain.Drain {
		s.DrainSince = now
	}
	s.Drain = d
	return true
}
