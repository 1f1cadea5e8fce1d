package workflows

import (
	"errors"
	"fmt"
	"slices"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/steward-sh/steward/activities"
	"github.com/steward-sh/steward/internal/hostcore"
	"github.com/steward-sh/steward/internal/versions"
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
	HostUp       = hostcore.Up
	HostUnknown  = hostcore.Unknown
	HostDraining = hostcore.Draining
	HostDrained  = hostcore.Drained
)

// hostLeaseHeartbeat is the lease's heartbeat timeout: how soon a lost host
// is noticed.
const hostLeaseHeartbeat = 5 * time.Second

// hostRunLimit: a host's run continues as new after this many events of
// its own (signals and liveness changes).
const hostRunLimit = 500

// hostFinalRounds bounds the rounds a run's continue-as-new waits for its
// notes, taking the signals that came meanwhile (versions.HostNotesBounded).
const hostFinalRounds = 10

// HostID is the workflow ID of a host's workflow.
func HostID(name string) string { return "host:" + name }

// HostSubscription is a supervisor's workers on a host.
type HostSubscription = activities.HostSubscription

// HostDrain is a drain (Drain) or an undrain (internal/hostcore).
type HostDrain = hostcore.Drain

// HostState is what a host tells its subscribers.
type HostState struct {
	Host string `json:"host"`
	// Live is up or unknown, since Since.
	Live     string    `json:"live"`
	Since    time.Time `json:"since"`
	Draining bool      `json:"draining,omitempty"`
	Force    bool      `json:"force,omitempty"`
}

// HostView answers QueryHost (`starter hosts`; internal/hostcore).
type HostView = hostcore.View

// HostInput starts a host's run (a new one: activities.HostStart).
type HostInput struct {
	Name  string     `json:"name"`
	Carry *HostCarry `json:"carry,omitempty"`
	// Version is the version of the code that began the run (internal/versions;
	// 0: older than the versions).
	Version int `json:"version,omitempty"`
}

// HostCarry is a host's state across continue-as-new: the core's state
// (internal/hostcore decides what each event makes of it).
type HostCarry = hostcore.State

// HostWorkflow is one host's record, liveness and drain (see above).
func HostWorkflow(ctx workflow.Context, in HostInput) error {
	// A run whose name is not its ID's (started by hand as host:a, named
	// b) leased b's queue and told a's subscribers of b, and a's workers
	// never replaced it: it ends at once, whatever version it says (its
	// starter picks that; a real host's name is always its ID's), before
	// the version is looked at (one from the future is retried until a
	// newer worker takes it: a squatter's would be kept for good).
	if id := workflow.GetInfo(ctx).WorkflowExecution.ID; id != HostID(in.Name) {
		return temporal.NewNonRetryableApplicationError(fmt.Sprintf("host workflow %s named %.100q: a host's workflow is %s", id, in.Name, HostID(in.Name)), "InvalidHost", nil)
	}
	checkVersion("HostWorkflow", in.Version, HostVersion)
	h := &hostRun{ctx: ctx, name: in.Name, version: in.Version}
	if in.Carry != nil {
		h.carry = *in.Carry
		if n := h.carry.Sane(); n > 0 { // (a real host's carry never has any)
			workflow.GetLogger(ctx).Warn("host: subscribers dropped from its carry", "host", in.Name, "dropped", n)
		}
	} else {
		h.carry = hostcore.New(workflow.Now(ctx))
	}
	if n := h.seqBound(); n != 0 {
		h.carry.ForgetFutureSeqs(n) // carried from a run that took any number
	}
	if err := workflow.SetQueryHandler(ctx, QueryHost, func() (HostView, error) { return h.carry.View(in.Name), nil }); err != nil {
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
		if versions.HostNotesBounded.In(h.version) {
			// Signals that come while the notes are awaited are taken too,
			// and the changes owed follow their notes (settleNotes); a
			// flood of signals holds the continue-as-new a few rounds at
			// most (its history stays bounded).
			for round := 0; round < hostFinalRounds; round++ {
				for h.takeAsync(subs, drains) || wakes.ReceiveAsync(nil) {
				}
				if len(h.notes) == 0 {
					break
				}
				for _, n := range h.notes {
					_ = n.fut.Get(ctx, nil)
				}
				h.settleNotes()
			}
			for len(h.notes) > 0 { // (past the rounds: the notes and the owed, no more signals)
				for _, n := range h.notes {
					_ = n.fut.Get(ctx, nil)
				}
				h.settleNotes()
			}
		} else {
			for h.takeAsync(subs, drains) || wakes.ReceiveAsync(nil) {
			}
			for _, n := range h.notes {
				_ = n.fut.Get(ctx, nil)
			}
		}
		return workflow.NewContinueAsNewError(ctx, HostWorkflow, HostInput{Name: in.Name, Carry: &h.carry, Version: HostVersion})
	}
}

type hostNote struct {
	to  string
	fut workflow.Future
}

type hostRun struct {
	ctx  workflow.Context
	name string
	// version is the code version of this run (internal/versions).
	version  int
	carry    HostCarry
	liveness workflow.Future
	cancel   workflow.CancelFunc
	leasing  bool
	notes    []hostNote
	// owed are the subscribers a change happened for while a note to them
	// was in flight (versions.HostNotesBounded): each is told the state of
	// then once that note is delivered.
	owed []string
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
	ev, info, lostAt := hostcore.HelloFailed, activities.HostInfo{}, time.Time{}
	if !h.leasing {
		if err := f.Get(h.ctx, &info); err == nil {
			ev = hostcore.Hello
		}
	} else {
		err := f.Get(h.ctx, nil)
		var te *temporal.TimeoutError
		switch {
		case errors.As(err, &te) && te.TimeoutType() == enumspb.TIMEOUT_TYPE_START_TO_CLOSE:
			ev = hostcore.LeaseHeldADay // a new lease begins
		case errors.As(err, &te) && te.TimeoutType() == enumspb.TIMEOUT_TYPE_HEARTBEAT:
			ev, lostAt = hostcore.LeaseLost, lastBeat(te, now)
		default:
			ev = hostcore.LeaseEnded // its worker stopped
		}
	}
	if h.carry.OnLiveness(ev, info, lostAt, now) {
		workflow.GetLogger(h.ctx).Info("host", "host", h.name, "live", h.carry.Live, "since", h.carry.Since)
		h.tellAll()
	}
	h.watch()
}

// lostBeatSlack bounds how far before the heartbeat timeout's task a lost
// host's last beat may be dated (hostcore.LastBeat).
const lostBeatSlack = 30 * time.Second

// lastBeat dates a lost host's last heartbeat from the time its lease's
// last beat carries (hostcore.LastBeat).
func lastBeat(te *temporal.TimeoutError, now time.Time) time.Time {
	var at time.Time
	if !te.HasLastHeartbeatDetails() || te.LastHeartbeatDetails(&at) != nil {
		return hostcore.LastBeat(nil, now, hostLeaseHeartbeat, lostBeatSlack)
	}
	return hostcore.LastBeat(&at, now, hostLeaseHeartbeat, lostBeatSlack)
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

// seqBound is the highest subscription number this run takes (0: any;
// versions.HostSeqBounded).
func (h *hostRun) seqBound() int64 {
	if !versions.HostSeqBounded.In(h.version) {
		return 0
	}
	return workflow.Now(h.ctx).Add(hostcore.SeqSkew).UnixNano()
}

func (h *hostRun) subscribeOne(s HostSubscription) {
	if versions.HostNotesBounded.In(h.version) {
		if err := h.carry.CheckTotal(s); err != nil {
			h.rejectSignal(SignalHostSubscribe, err)
			return
		}
	}
	tellNew, err := h.carry.Subscribe(s, h.seqBound())
	if err != nil {
		workflow.GetLogger(h.ctx).Warn("host: rejected subscription", "host", h.name, "error", err.Error())
		count(h.ctx, MetricRejectedSignals, map[string]string{"signal": SignalHostSubscribe})
		return
	}
	if tellNew {
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
	if h.carry.SetDrain(d, workflow.Now(h.ctx)) {
		h.tellAll()
	}
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
	if versions.HostNotesBounded.In(h.version) && slices.ContainsFunc(h.notes, func(n hostNote) bool { return n.to == to && !n.fut.IsReady() }) {
		// One note in flight per subscriber: this change follows it.
		if !slices.Contains(h.owed, to) {
			h.owed = append(h.owed, to)
		}
		return
	}
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
			h.carry.Forget(n.to)
			h.owed = slices.DeleteFunc(h.owed, func(o string) bool { return o == n.to })
		}
	}
	h.notes = pending
	// The subscribers owed a change whose note is delivered hear it now.
	owed := h.owed
	h.owed = nil
	for _, to := range owed {
		if h.carry.Subscribed(to) {
			h.tell(to)
		}
	}
}
