package process

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"time"

	"go.uber.org/zap"

	"github.com/steward-sh/steward/internal/spec"
)

// Probe is a readiness or health check of a process service, with its
// defaults filled in (spec.Probe says what each form means).
type Probe struct {
	TCP  string   `json:"tcp,omitempty"`
	HTTP string   `json:"http,omitempty"`
	Exec []string `json:"exec,omitempty"`
	// Path is the file an exec probe runs (Exec[0] resolved and checked
	// at the start; "": Exec[0] looked up at every run, as an older
	// worker's record has it).
	Path string `json:"path,omitempty"`
	// Cred is the identity an exec probe runs as: the service's (nil: the
	// worker's, for a service that runs as the worker's user).
	Cred *Credential `json:"cred,omitempty"`
	// Dir is where an exec probe run as another user runs: the service's
	// dir, or / (the worker's own directory may be closed to that user).
	Dir       string        `json:"dir,omitempty"`
	Interval  time.Duration `json:"interval"`
	Timeout   time.Duration `json:"timeout,omitempty"`   // 0: the context's deadline only
	Threshold int           `json:"threshold,omitempty"` // health: failures in a row that are a crash
}

func probeOf(p *spec.Probe, interval, timeout time.Duration, threshold int) *Probe {
	if p == nil {
		return nil
	}
	out := &Probe{TCP: p.TCP, HTTP: p.HTTP, Exec: p.Exec, Interval: interval, Timeout: timeout, Threshold: threshold}
	if p.Interval != nil {
		out.Interval = p.Interval.D()
	}
	if p.Timeout != nil {
		out.Timeout = p.Timeout.D()
	}
	if p.FailureThreshold > 0 {
		out.Threshold = p.FailureThreshold
	}
	return out
}

// probeClient keeps no connections: a probe is one fresh request.
var probeClient = &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}

// check runs the probe once, within timeout (what is left of ctx if
// shorter). Its error says what failed.
func (p *Probe) check(ctx context.Context, timeout time.Duration) error {
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	switch {
	case p.TCP != "":
		var d net.Dialer
		c, err := d.DialContext(ctx, "tcp", p.TCP)
		if err != nil {
			return fmt.Errorf("tcp %s: %w", p.TCP, err)
		}
		return c.Close()
	case p.HTTP != "":
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.HTTP, nil)
		if err != nil {
			return fmt.Errorf("http %s: %w", p.HTTP, err)
		}
		resp, err := probeClient.Do(req)
		if err != nil {
			return fmt.Errorf("http %s: %w", p.HTTP, err)
		}
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16))
		resp.Body.Close()
		if resp.StatusCode/100 != 2 {
			return fmt.Errorf("http %s: %s", p.HTTP, resp.Status)
		}
		return nil
	case len(p.Exec) > 0:
		cmd := command(ctx, p.Path, p.Exec)
		// A session of its own (sysProcAttr says why), killed whole at
		// the timeout; a child it leaves holding its output does not hold
		// the check past it (the check stopped for good, and the driver's
		// Close with it).
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		cmd.WaitDelay = 2 * time.Second
		if p.Cred != nil {
			// As the service: a probe may do no more on the host than it.
			cmd.SysProcAttr.Credential = &syscall.Credential{Uid: p.Cred.UID, Gid: p.Cred.GID, Groups: p.Cred.Groups}
			cmd.Dir = p.Dir
		}
		// The base of the worker's environment only: its credentials
		// (Temporal's, say) reach no probe, as they reach no service.
		cmd.Env = baseEnvironment()
		cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
		out, err := cmd.CombinedOutput()
		if errors.Is(err, exec.ErrWaitDelay) {
			err = nil // it exited 0; a child it left held its output
		}
		if err != nil {
			msg := strings.TrimSpace(string(out))
			if len(msg) > 200 {
				msg = msg[:200] + "…"
			}
			if msg != "" {
				return fmt.Errorf("exec %s: %w: %s", p.Exec[0], err, msg)
			}
			return fmt.Errorf("exec %s: %w", p.Exec[0], err)
		}
		return nil
	}
	return errors.New("probe: no form")
}

// describe says which probe it is, for reasons.
func (p *Probe) describe() string {
	switch {
	case p.TCP != "":
		return "tcp " + p.TCP
	case p.HTTP != "":
		return "http " + p.HTTP
	}
	return "exec " + strings.Join(p.Exec, " ")
}

// awaitReady waits until the ready probe passes with the process still up
// (the start succeeds), the process ends (the caller reports a failed
// start), the probe's timeout passes or ctx ends (the process is killed).
func (d *Driver) awaitReady(ctx context.Context, p *proc, c Config) error {
	r := c.Ready
	if r.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, r.Timeout)
		defer cancel()
	}
	var last error
	for {
		select {
		case <-p.exited:
			return nil // the caller sees it ended
		default:
		}
		last = r.check(ctx, max(r.Interval, time.Second))
		if last == nil {
			return nil // the caller checks it is still up
		}
		select {
		case <-p.exited:
			return nil
		case <-ctx.Done():
			d.kill(p)
			return fmt.Errorf("process: %s did not become ready (%s) before its start timed out: %v", c.Command, r.describe(), last)
		case <-time.After(r.Interval):
		}
	}
}

// watchHealth runs the health probe while the process runs. Threshold
// failures in a row end the process (its stop signal, then SIGKILL) as a
// crash whose reason says so; passing probes are not reported anywhere.
func (d *Driver) watchHealth(p *proc, h *Probe) {
	defer d.wg.Done()
	failures := 0
	for {
		select {
		case <-p.exited:
			return
		case <-d.quit: // this worker closes; the next one probes it
			return
		case <-time.After(h.Interval):
		}
		ctx, cancel := context.WithCancel(context.Background())
		go func() {
			select {
			case <-p.exited:
				cancel()
			case <-ctx.Done():
			}
		}()
		err := h.check(ctx, h.Timeout)
		cancel()
		select {
		case <-p.exited:
			return
		default:
		}
		if err == nil {
			failures = 0
			continue
		}
		failures++
		d.log.Info("process: health probe failed", zap.String("instance", p.id), zap.Int("failures", failures), zap.Error(err))
		if failures < h.Threshold {
			continue
		}
		d.endUnhealthy(p, fmt.Sprintf("unhealthy: %d health probes failed in a row (%s): %v", failures, h.describe(), err))
		return
	}
}

// Credential is a user and its groups, as a probe runs as them.
type Credential struct {
	UID    uint32   `json:"uid"`
	GID    uint32   `json:"gid"`
	Groups []uint32 `json:"groups,omitempty"`
}

// baseEnvironment is the base of the worker's environment every service
// gets (spec.BaseEnv and LC_*).
func baseEnvironment() []string {
	var out []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if slices.Contains(spec.BaseEnv, k) || strings.HasPrefix(k, "LC_") {
			out = append(out, kv)
		}
	}
	return out
}
