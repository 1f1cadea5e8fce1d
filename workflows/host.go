package workflows

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/steward-sh/steward/activities"
	"github.com/steward-sh/steward/internal/spec"
)

// Hosts (docs/fleet.md).
//
// Every host has a HostWorkflow, ID HostID(name): its worker process
// starts it (or finds it running) when it starts, a supervisor that places
// workers on a host starts it if needs be when it subscribes. It holds the
// host's record (what its worker said of itself), its liveness and its
// drain, and tells its subscribers (the supervisors with workers on the
// host) each change.
//
// Liveness is a lease: while the host is up, the workflow holds one
// activity on the host's own task queue (activities.Host.HostLease), which
// the host's worker runs and heartbeats. Heartbeats are no history events:
// an up host costs its workflow nothing, and the server one heartbeat RPC
// every hostLeaseHeartbeat*0.8. When the heartbeats stop (the worker
// process or its machine died, or the link to it is cut), the lease times
// out and the host is unknown since its last possible heartbeat; a
// HostHello activity then waits on the host's queue, and the host is up
// again once a worker of the host takes it.

// Host signals and query.
const (
	// SignalHostSubscribe: a supervisor's workers on the host
	// (HostSubscription; none: it unsubscribes).
	SignalHostSubscribe = "subscribe"
	// SignalHostDrain: HostDrain (`starter drain`, `starter undrain`).
	SignalHostDrain = "drain"
	// SignalHost: a host's state, to its subscribers (HostState).
	SignalHost = "host"
	// SignalHostWake: a worker of the host started (no payload); the run
	// continues as new at once, onto the newest code.
	SignalHostWake = "wake"
	// QueryHost answers HostView.
	QueryHost = "host"
)

// Host states as `starter hosts` shows them.
const (
	HostUp       = "up"
	HostUnknown  = "unknown"
	HostDraining = "draining"
	HostDrained  = "drained"
)

// hostLeaseHeartbeat is the lease's heartbeat timeout: how soon a lost host
// is noticed.
const hostLeaseHeartbeat = 5 * time.Second

// hostRunLimit: a host's run continues as new after this many events of
// its own (signals and liveness changes).
const hostRunLimit = 500

// HostID is the workflow ID of a host's workflow.
func HostID(name string) string { return "host:" + name }

// HostSubscription is a supervisor's workers on a host.
type HostSubscription = activities.HostSubscription

func emptySubscription(s HostSubscription) bool { return s.Movable == 0 && len(s.Pinned) == 0 }

// HostDrain is a drain (Drain) or an undrain; Force: stop the services
// that can run nowhere else too.
type HostDrain struct {
	Drain bool `json:"drain"`
	Force bool `json:"force,omitempty"`
}

// HostState is what a host tells its subscribers.
type HostState struct {
	Host string `json:"host"`
	// Live is up or unknown, since Since.
	Live     string    `json:"live"`
	Since    time.Time `json:"since"`
	Draining bool      `json:"draining,omitempty"`
	Force    bool      `json:"force,omitempty"`
}

// HostView answers QueryHost (`starter hosts`).
type HostView struct {
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

// HostInput starts a host's run (a new one: activities.HostStart).
type HostInput struct {
	Name  string     `json:"name"`
	Carry *HostCarry `json:"carry,omitempty"`
	// Version is the version of the code that began the run (versions.go;
	// 0: older than the versions).
	Version int `json:"version,omitempty"`
}

// HostCarry is a host's state across continue-as-new.
type HostCarry struct {
	Live        string              `json:"live"`
	Since       time.Time           `json:"since"`
	Info        activities.HostInfo `json:"info"`
	Drain       HostDrain           `json:"drain"`
	DrainSince  time.Time           `json:"drainSince,omitzero"`
	Subscribers []HostSubscription  `json:"subscribers,omitempty"`
}

// state is the host's state as `starter hosts` shows it.
func (c *HostCarry) state() (string, time.Time) {
	if !c.Drain.Drain {
		return c.Live, c.Since
	}
	for _, s := range c.Subscribers {
		if s.Movable > 0 {
			return HostDraining, c.DrainSince
		}
	}
	return HostDrained, c.DrainSince
}

func (c *HostCarry) view(name string) HostView {
	st, since := c.state()
	v := HostView{Name: name, State: st, Since: since, Build: c.Info.Build, Address: c.Info.Address, PID: c.Info.PID, UpSince: c.Info.UpSince,
		BootedAt: c.Info.BootedAt}
	for _, s := range c.Subscribers {
		if emptySubscription(s) {
			continue
		}
		v.Services += s.Movable + len(s.Pinned)
		v.Pinned = append(v.Pinned, s.Pinned...)
		v.Subscribers = append(v.Subscribers, s.Supervisor)
	}
	slices.Sort(v.Pinned)
	return v
}

func (c *HostCarry) subscribe(s HostSubscription) {
	i := slices.IndexFunc(c.Subscribers, func(o HostSubscription) bool { return o.Supervisor == s.Supervisor })
	switch {
	case i >= 0 && s.Seq != 0 && s.Seq <= c.Subscribers[i].Seq:
		// Older than what it holds: subscriptions may arrive out of order.
	case i >= 0 && s.Gone:
		c.Subscribers = slices.Delete(c.Subscribers, i, i+1)
	case i >= 0:
		c.Subscribers[i] = s
	case !s.Gone:
		// An empty subscription is kept (with its number), so that an
		// older one arriving late is known as older.
		c.Subscribers = append(c.Subscribers, s)
		slices.SortFunc(c.Subscribers, func(a, b HostSubscription) int { return strings.Compare(a.Supervisor, b.Supervisor) })
	}
}

// HostWorkflow is one host's record, liveness and drain (see above).
func HostWorkflow(ctx workflow.Context, in HostInput) error {
	checkVersion("HostWorkflow", in.Version, HostVersion)
	h := &hostRun{ctx: ctx, name: in.Name}
	if in.Carry != nil {
		h.carry = *in.Carry
	} else {
		h.carry = HostCarry{Live: HostUnknown, Since: workflow.Now(ctx)}
	}
	if err := workflow.SetQueryHandler(ctx, QueryHost, func() (HostView, error) { return h.carry.view(in.Name), nil }); err != nil {
		return err
	}
	subs := workflow.GetSignalChannel(ctx, SignalHostSubscribe)
	drains := workflow.GetSignalChannel(ctx, SignalHostDrain)
	wakes := workflow.GetSignalChannel(ctx, SignalHostWake)
	events := 0
	woken := false
	h.watch()
	for {
		sel := workflow.NewSelector(ctx)
		cancelled := false
		sel.AddReceive(ctx.Done(), func(workflow.ReceiveChannel, bool) { cancelled = true })
		sel.AddReceive(subs, func(c workflow.ReceiveChannel, _ bool) { h.onSubscribe(c) })
		sel.AddReceive(drains, func(c workflow.ReceiveChannel, _ bool) { h.onDrain(c) })
		sel.AddReceive(wakes, func(c workflow.ReceiveChannel, _ bool) { c.Receive(ctx, nil); woken = true })
		sel.AddFuture(h.liveness, func(f workflow.Future) { h.onLiveness(f) })
		for _, n := range h.notes {
			sel.AddFuture(n.fut, func(workflow.Future) {})
		}
		sel.Select(ctx)
		if cancelled {
			return nil
		}
		h.settleNotes()
		events++
		if events < hostRunLimit && !woken {
			continue
		}
		// Continue as new: the liveness activity is let go (the next run
		// asks again), signals are taken first, notes delivered.
		h.stop()
		for h.takeAsync(subs, drains) || wakes.ReceiveAsync(nil) {
		}
		for _, n := range h.notes {
			_ = n.fut.Get(ctx, nil)
		}
		return workflow.NewContinueAsNewError(ctx, HostWorkflow, HostInput{Name: in.Name, Carry: &h.carry, Version: HostVersion})
	}
}

type hostNote struct {
	to  string
	fut workflow.Future
}

type hostRun struct {
	ctx      workflow.Context
	name     string
	carry    HostCarry
	liveness workflow.Future
	cancel   workflow.CancelFunc
	leasing  bool
	notes    []hostNote
}

// watch starts the liveness activity the state calls for: the lease of an
// up host, the hello of an unknown one.
func (h *hostRun) watch() {
	actx, cancel := workflow.WithCancel(h.ctx)
	h.cancel = cancel
	queue := HostTaskQueue(h.name)
	if h.carry.Live == HostUp {
		h.leasing = true
		actx = workflow.WithActivityOptions(actx, workflow.ActivityOptions{
			TaskQueue: queue, StartToCloseTimeout: 24 * time.Hour, HeartbeatTimeout: hostLeaseHeartbeat,
			RetryPolicy: &temporal.RetryPolicy{MaximumAttempts: 1}, Summary: "lease of host " + h.name,
		})
		h.liveness = workflow.ExecuteActivity(actx, activities.HostLeaseName)
		return
	}
	h.leasing = false
	// No schedule-to-start limit: it waits on the host's queue until a
	// worker of the host takes it.
	actx = workflow.WithActivityOptions(actx, workflow.ActivityOptions{
		TaskQueue: queue, StartToCloseTimeout: 10 * time.Second,
		RetryPolicy: &temporal.RetryPolicy{InitialInterval: time.Second, MaximumInterval: 10 * time.Second}, Summary: "hello of host " + h.name,
	})
	h.liveness = workflow.ExecuteActivity(actx, activities.HostHelloName)
}

func (h *hostRun) stop() {
	if h.cancel != nil {
		h.cancel()
	}
}

func (h *hostRun) onLiveness(f workflow.Future) {
	releaseContext(h.cancel)
	now := workflow.Now(h.ctx)
	if !h.leasing {
		var info activities.HostInfo
		if err := f.Get(h.ctx, &info); err == nil {
			h.carry.Info = info
			h.setLive(HostUp, now)
		}
		h.watch()
		return
	}
	err := f.Get(h.ctx, nil)
	var te *temporal.TimeoutError
	switch {
	case errors.As(err, &te) && te.TimeoutType() == enumspb.TIMEOUT_TYPE_START_TO_CLOSE:
		// A lease held a whole day: the host is up, a new lease begins.
	case errors.As(err, &te) && te.TimeoutType() == enumspb.TIMEOUT_TYPE_HEARTBEAT:
		h.setLive(HostUnknown, lastBeat(te, now))
	default:
		h.setLive(HostUnknown, now) // its worker stopped
	}
	h.watch()
}

// lostBeatSlack bounds how far before the heartbeat timeout's task a lost
// host's last beat may be dated: the task may have waited on a dead
// worker's sticky queue, a host's clock may be wrong.
const lostBeatSlack = 30 * time.Second

// lastBeat dates a lost host's last heartbeat: the time its lease's last
// beat carries (the host's clock), within [now-timeout-slack, now-timeout],
// or now-timeout when the beat carries none (the earliest the server could
// have timed it out).
func lastBeat(te *temporal.TimeoutError, now time.Time) time.Time {
	latest := now.Add(-hostLeaseHeartbeat)
	var at time.Time
	if !te.HasLastHeartbeatDetails() || te.LastHeartbeatDetails(&at) != nil || at.After(latest) {
		return latest
	}
	if earliest := latest.Add(-lostBeatSlack); at.Before(earliest) {
		return earliest
	}
	return at
}

func (h *hostRun) setLive(live string, since time.Time) {
	if h.carry.Live == live {
		return
	}
	h.carry.Live, h.carry.Since = live, since
	workflow.GetLogger(h.ctx).Info("host", "host", h.name, "live", live, "since", since)
	h.tellAll()
}

// onSubscribe and onDrain take one signal raw and decode it: the SDK drops
// a payload that does not decode and waits on for the next, so a typed
// Receive in the selector's callback stalled the host's loop on one bad
// payload sent with the temporal CLI (found by FuzzHostSignals). A bad one
// is rejected and counted.
func (h *hostRun) onSubscribe(c workflow.ReceiveChannel) {
	h.takeSubscription(receiveRaw(h.ctx, c))
}

func (h *hostRun) takeSubscription(raw converter.RawValue) {
	var s HostSubscription
	if err := decodeRaw(raw, &s); err != nil {
		h.rejectSignal(SignalHostSubscribe, err)
		return
	}
	h.subscribeOne(s)
}

func (h *hostRun) rejectSignal(signal string, err error) {
	workflow.GetLogger(h.ctx).Warn("host: rejected signal", "host", h.name, "signal", signal, "error", err.Error())
	count(h.ctx, MetricRejectedSignals, map[string]string{"signal": signal})
}

func (h *hostRun) subscribeOne(s HostSubscription) {
	if s.Supervisor == "" {
		return
	}
	has := func() bool {
		return slices.ContainsFunc(h.carry.Subscribers, func(o HostSubscription) bool { return o.Supervisor == s.Supervisor })
	}
	heard := has()
	if err := checkSubscription(s, heard, len(h.carry.Subscribers)); err != nil {
		workflow.GetLogger(h.ctx).Warn("host: rejected subscription", "host", h.name, "error", err.Error())
		count(h.ctx, MetricRejectedSignals, map[string]string{"signal": SignalHostSubscribe})
		return
	}
	h.carry.subscribe(s)
	if has() && !heard {
		h.tell(s.Supervisor) // a new subscriber hears the state at once
	}
}

func (h *hostRun) onDrain(c workflow.ReceiveChannel) {
	h.takeDrain(receiveRaw(h.ctx, c))
}

func (h *hostRun) takeDrain(raw converter.RawValue) {
	var d HostDrain
	if err := decodeRaw(raw, &d); err != nil {
		h.rejectSignal(SignalHostDrain, err)
		return
	}
	h.drainOne(d)
}

func (h *hostRun) drainOne(d HostDrain) {
	if d == h.carry.Drain {
		return
	}
	if d.Drain != h.carry.Drain.Drain {
		h.carry.DrainSince = workflow.Now(h.ctx)
	}
	h.carry.Drain = d
	h.tellAll()
}

// takeAsync takes one pending signal; false when none is left.
func (h *hostRun) takeAsync(subs, drains workflow.ReceiveChannel) bool {
	var raw converter.RawValue
	if subs.ReceiveAsync(&raw) {
		h.takeSubscription(raw)
		return true
	}
	if drains.ReceiveAsync(&raw) {
		h.takeDrain(raw)
		return true
	}
	return false
}

// tellAll tells every subscriber, those with no worker on the host too
// (the host is on their workers' lists: they place by it).
func (h *hostRun) tellAll() {
	for _, s := range h.carry.Subscribers {
		h.tell(s.Supervisor)
	}
}

func (h *hostRun) tell(to string) {
	st := HostState{Host: h.name, Live: h.carry.Live, Since: h.carry.Since, Draining: h.carry.Drain.Drain, Force: h.carry.Drain.Force}
	h.notes = append(h.notes, hostNote{to: to, fut: workflow.SignalExternalWorkflow(h.ctx, to, "", SignalHost, st)})
}

// settleNotes drops delivered notes, and the subscribers a note could not
// reach (their workflow is gone: a deleted tree).
func (h *hostRun) settleNotes() {
	pending := h.notes[:0]
	for _, n := range h.notes {
		if !n.fut.IsReady() {
			pending = append(pending, n)
			continue
		}
		var gone *temporal.UnknownExternalWorkflowExecutionError
		if err := n.fut.Get(h.ctx, nil); errors.As(err, &gone) {
			workflow.GetLogger(h.ctx).Info("host: subscriber gone", "host", h.name, "subscriber", n.to)
			h.carry.subscribe(HostSubscription{Supervisor: n.to, Gone: true})
		}
	}
	h.notes = pending
}

// maxHostSubscribers bounds a host's subscribers: each is told of every
// change by a signal of its own, and Temporal allows 2,000 pending
// external signals per workflow.
const maxHostSubscribers = 1000

// checkSubscription says why a subscription is not a supervisor's (one
// sent with the temporal CLI may be anything): its supervisor's path names
// no workflow steward makes (a signal to it would fail the host's task),
// its pinned list is longer than a supervisor's children, or a new one
// would pass maxHostSubscribers.
func checkSubscription(s HostSubscription, known bool, n int) error {
	if err := spec.CheckPath(s.Supervisor); err != nil {
		return fmt.Errorf("subscriber: %w", err)
	}
	if len(s.Pinned) > spec.MaxChildren {
		return fmt.Errorf("subscriber %s: %d pinned workers (at most %d)", s.Supervisor, len(s.Pinned), spec.MaxChildren)
	}
	for _, p := range s.Pinned {
		if len(p) > spec.MaxPathLength {
			return fmt.Errorf("subscriber %s: a pinned worker's name of %d characters", s.Supervisor, len(p))
		}
	}
	if !known && !s.Gone && n >= maxHostSubscribers {
		return fmt.Errorf("subscriber %s: the host has %d subscribers already (at most %d)", s.Supervisor, n, maxHostSubscribers)
	}
	return nil
}
