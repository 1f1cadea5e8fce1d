// Package stub is the simulated service of docs/spec.md, for demos, tests and
// load: actions take Delay, fail with FailureRate (repeatably, from Seed), or
// follow a scripted list of Outcomes attempt by attempt; a started service
// crashes after CrashAfter or exits normally after ExitAfter.
//
// The simulated service keeps no state a worker process could lose: an
// instance identifier records when it started, so Observe can tell from the
// clock alone whether it has crashed, in any process of the pool. Exits are
// also pushed at once through the Notifier by a timer in the process that
// started the instance; if that process dies, the periodic observe finds the
// exit instead.
package stub

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/steward-sh/steward/internal/driver"
	"github.com/steward-sh/steward/internal/spec"
)

// Driver is the stub driver. Its zero value is not usable: call New.
type Driver struct {
	notifier driver.Notifier
	log      *zap.Logger
	now      func() time.Time

	mu       sync.Mutex
	watchers map[string]*time.Timer
	closed   bool
	wg       sync.WaitGroup
}

// New returns a stub driver that pushes exits through n (nil: no push).
func New(n driver.Notifier, log *zap.Logger) *Driver {
	if log == nil {
		log = zap.NewNop()
	}
	return &Driver{notifier: n, log: log, now: time.Now, watchers: map[string]*time.Timer{}}
}

// Start simulates a start and, on success, arms the crash or exit timer.
func (d *Driver) Start(ctx context.Context, r driver.Request) (string, error) {
	if err := d.perform(ctx, r, "start"); err != nil {
		return "", err
	}
	return d.launch(r), nil
}

// Stop simulates a stop and disarms the instance's timer.
func (d *Driver) Stop(ctx context.Context, r driver.Request) error {
	d.disarm(r.Instance)
	return d.perform(ctx, r, "stop")
}

// Restart simulates a stop and a start.
func (d *Driver) Restart(ctx context.Context, r driver.Request) (string, error) {
	d.disarm(r.Instance)
	if err := d.perform(ctx, r, "restart"); err != nil {
		return "", err
	}
	return d.launch(r), nil
}

// Observe tells from the instance's start time whether it still runs.
func (d *Driver) Observe(ctx context.Context, r driver.Request) (driver.Observation, error) {
	if err := d.perform(ctx, r, "observe"); err != nil {
		return "", err
	}
	started, err := parseInstance(r.Instance)
	if err != nil {
		return driver.Crashed, nil // an instance we cannot read is not running
	}
	obs, _ := fate(cfg(r), d.now().Sub(started))
	return obs, nil
}

// Close disarms every timer and waits for pushes in progress.
func (d *Driver) Close() {
	d.mu.Lock()
	d.closed = true
	for id, t := range d.watchers {
		t.Stop()
		delete(d.watchers, id)
	}
	d.mu.Unlock()
	d.wg.Wait()
}

func cfg(r driver.Request) spec.Stub {
	if r.Spec.Stub == nil {
		return spec.Stub{}
	}
	return *r.Spec.Stub
}

// fate says what the simulated service has become after running for age,
// and how long until that happens when it still runs.
func fate(c spec.Stub, age time.Duration) (driver.Observation, time.Duration) {
	crash, exit := c.CrashAfter.D(), c.ExitAfter.D()
	switch {
	case crash > 0 && (exit <= 0 || crash <= exit):
		if age >= crash {
			return driver.Crashed, 0
		}
		return driver.Running, crash - age
	case exit > 0:
		if age >= exit {
			return driver.Exited, 0
		}
		return driver.Running, exit - age
	}
	return driver.Running, -1
}

// perform plays one attempt of an action: its delay and its outcome.
func (d *Driver) perform(ctx context.Context, r driver.Request, action string) error {
	c := cfg(r)
	outcome := pickOutcome(c, r, action)
	if outcome == spec.OutcomeTimeout {
		<-ctx.Done()
		return ctx.Err()
	}
	if delay := c.Delay.D(); delay > 0 {
		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
	}
	switch outcome {
	case spec.OutcomeFailure:
		return fmt.Errorf("stub: %s failed (simulated failure, attempt %d)", action, r.Attempt)
	case spec.OutcomeError:
		return fmt.Errorf("stub: driver error during %s (simulated, attempt %d)", action, r.Attempt)
	case spec.OutcomePermanent:
		return driver.Permanent(fmt.Errorf("stub: %s failed permanently (simulated, attempt %d)", action, r.Attempt))
	}
	return nil
}

// pickOutcome returns the scripted outcome of this attempt, or draws one
// from FailureRate.
func pickOutcome(c spec.Stub, r driver.Request, action string) string {
	if list := c.Outcomes[action]; r.Attempt >= 1 && int(r.Attempt) <= len(list) {
		return list[r.Attempt-1]
	}
	if c.FailureRate > 0 && draw(c.Seed, r.Path, action, r.Seq, r.Attempt) < c.FailureRate {
		return spec.OutcomeFailure
	}
	return spec.OutcomeSuccess
}

// draw is a repeatable number in [0,1) for one attempt of one action.
func draw(seed int64, path, action string, seq int64, attempt int32) float64 {
	h := uint64(14695981039346656037) ^ uint64(seed)
	for _, s := range []string{path, action, strconv.FormatInt(seq, 10), strconv.Itoa(int(attempt))} {
		for i := 0; i < len(s); i++ {
			h ^= uint64(s[i])
			h *= 1099511628211
		}
		h ^= 0xff
		h *= 1099511628211
	}
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	return float64(h>>11) / float64(1<<53)
}

// launch names a new instance and arms its crash or exit timer.
func (d *Driver) launch(r driver.Request) string {
	now := d.now()
	// The workflow ID keeps instances of different workers apart even when
	// they start at the same clock reading with the same seq.
	id := fmt.Sprintf("stub/%d/%d@%s", r.Seq, now.UnixNano(), r.WorkflowID)
	obs, after := fate(cfg(r), 0)
	if after < 0 || d.notifier == nil {
		return id
	}
	if obs == driver.Running {
		obs, _ = fate(cfg(r), after)
	}
	exit := driver.Exit{Instance: id, Normal: obs == driver.Exited, Reason: "simulated crash"}
	if exit.Normal {
		exit.Reason = "simulated exit"
	}
	wfID := r.WorkflowID
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return id
	}
	d.watchers[id] = time.AfterFunc(after, func() {
		d.mu.Lock()
		if _, armed := d.watchers[id]; !armed || d.closed {
			d.mu.Unlock()
			return
		}
		delete(d.watchers, id)
		d.wg.Add(1)
		d.mu.Unlock()
		defer d.wg.Done()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := d.notifier.NotifyExit(ctx, wfID, exit); err != nil {
			d.log.Warn("stub: could not push exit", zap.String("workflow", wfID), zap.String("instance", id), zap.Error(err))
		}
	})
	return id
}

func (d *Driver) disarm(instance string) {
	if instance == "" {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if t, ok := d.watchers[instance]; ok {
		t.Stop()
		delete(d.watchers, instance)
	}
}

// Armed reports how many exit timers are armed (for tests and metrics).
func (d *Driver) Armed() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return len(d.watchers)
}

func parseInstance(id string) (time.Time, error) {
	id, _, _ = strings.Cut(id, "@")
	parts := strings.Split(id, "/")
	if len(parts) != 3 || parts[0] != "stub" {
		return time.Time{}, errors.New("not a stub instance")
	}
	ns, err := strconv.ParseInt(parts[2], 10, 64)
	if err != nil {
		return time.Time{}, err
	}
	return time.Unix(0, ns), nil
}
