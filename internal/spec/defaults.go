package spec

import "time"

// Defaults of every worker option. They are written down here, in one place,
// and in docs/spec.md.
var (
	DefaultStartTimeout   = 30 * time.Second
	DefaultStopTimeout    = 10 * time.Second
	DefaultRestartTimeout = 45 * time.Second
	DefaultObserveTimeout = 10 * time.Second

	DefaultRetryMaxAttempts        = 3
	DefaultRetryInitialInterval    = 1 * time.Second
	DefaultRetryBackoffCoefficient = 2.0
	DefaultRetryMaxInterval        = 10 * time.Second

	DefaultBackoffInitial    = 1 * time.Second
	DefaultBackoffMax        = 1 * time.Minute
	DefaultBackoffMultiplier = 2.0
	DefaultBackoffJitter     = 0.1
	DefaultBackoffResetAfter = 1 * time.Minute

	// DefaultObserveInterval is slow on purpose: drivers push exits, the
	// observe is the fallback, and 1,000 idle workers must cost almost nothing.
	DefaultObserveInterval = 1 * time.Minute

	DefaultStrategy = OneForOne

	// Restart intensity: more than DefaultMaxRestarts restarts within
	// DefaultIntensityPeriod make a supervisor give up; it tries again after
	// DefaultCooldown. OTP's default (1 in 5s) assumes instant restarts;
	// steward's restarts back off (1s, 2s, 4s, ...), so a service crashing
	// at once on every start gives up within about a minute.
	DefaultMaxRestarts     = 5
	DefaultIntensityPeriod = 1 * time.Minute
	DefaultCooldown        = 5 * time.Minute
)

// Resolved returns a copy of a worker node with every default filled in.
// It does not validate: call Validate first.
func (n Node) Resolved() Node {
	r := n
	if r.Desired == "" {
		r.Desired = DesiredRunning
	}
	if r.Restart == "" {
		r.Restart = RestartPermanent
	}
	t := Timeouts{}
	if n.Timeouts != nil {
		t = *n.Timeouts
	}
	setDur(&t.Start, DefaultStartTimeout)
	setDur(&t.Stop, DefaultStopTimeout)
	setDur(&t.Restart, DefaultRestartTimeout)
	setDur(&t.Observe, DefaultObserveTimeout)
	r.Timeouts = &t

	rt := Retry{}
	if n.Retry != nil {
		rt = *n.Retry
	}
	if rt.MaxAttempts == 0 {
		rt.MaxAttempts = DefaultRetryMaxAttempts
	}
	setDur(&rt.InitialInterval, DefaultRetryInitialInterval)
	if rt.BackoffCoefficient == 0 {
		rt.BackoffCoefficient = DefaultRetryBackoffCoefficient
	}
	// An unset maximum never falls below an explicit initial interval.
	setDur(&rt.MaxInterval, max(DefaultRetryMaxInterval, rt.InitialInterval.D()))
	r.Retry = &rt

	b := Backoff{}
	if n.Backoff != nil {
		b = *n.Backoff
	}
	setDur(&b.Initial, DefaultBackoffInitial)
	setDur(&b.Max, max(DefaultBackoffMax, b.Initial.D()))
	if b.Multiplier == 0 {
		b.Multiplier = DefaultBackoffMultiplier
	}
	if b.Jitter == nil {
		j := DefaultBackoffJitter
		b.Jitter = &j
	}
	setDur(&b.ResetAfter, DefaultBackoffResetAfter)
	r.Backoff = &b

	o := Observe{}
	if n.Observe != nil {
		o = *n.Observe
	}
	setDur(&o.Interval, DefaultObserveInterval)
	r.Observe = &o

	if r.Kind == KindStub && r.Stub == nil {
		r.Stub = &Stub{}
	}
	if r.IsSupervisor() {
		if r.Strategy == "" {
			r.Strategy = DefaultStrategy
		}
		in := Intensity{MaxRestarts: DefaultMaxRestarts}
		if n.Intensity != nil {
			in = *n.Intensity
		}
		setDur(&in.Period, DefaultIntensityPeriod)
		setDur(&in.Cooldown, DefaultCooldown)
		r.Intensity = &in
	}
	return r
}

func setDur(d **Duration, def time.Duration) {
	if *d == nil {
		*d = Dur(def)
	}
}

// ReloadConfigured tells whether a worker can be reloaded: a process with
// process.reload, an http service with http.reload.
func (n *Node) ReloadConfigured() bool {
	switch n.Kind {
	case KindProcess:
		p, err := ParseProcess(n.Process)
		return err == nil && p.Reload != nil
	case KindHTTP:
		h, err := ParseHTTP(n.HTTP)
		return err == nil && h.Reload != nil
	}
	return false
}
