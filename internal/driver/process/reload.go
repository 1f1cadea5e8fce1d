package process

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strconv"
	"syscall"
	"time"

	"github.com/steward-sh/steward/internal/driver"
)

// reloadSignals maps process.reload.signal's names to signals.
var reloadSignals = map[string]syscall.Signal{
	"HUP": syscall.SIGHUP, "USR1": syscall.SIGUSR1, "USR2": syscall.SIGUSR2, "INT": syscall.SIGINT,
	"TERM": syscall.SIGTERM, "QUIT": syscall.SIGQUIT, "WINCH": syscall.SIGWINCH,
}

// Reload asks the running instance r names to re-read its configuration
// (process.reload): its signal to the main process (HUP by default), or
// its exec run on this host as the service's user, with the service's
// environment and MAINPID; exit status 0 is success. A notify service that
// frames the reload (RELOADING=1 ... READY=1) is waited on. The instance
// goes on: same pid, no restart.
func (d *Driver) Reload(ctx context.Context, r driver.Request) error {
	c, err := ParseConfig(r.Spec.Process)
	if err != nil {
		return driver.Permanent(err)
	}
	if c.Reload == nil {
		return driver.Permanent(errors.New("process: no reload configured (process.reload)"))
	}
	p := d.held(r)
	if p == nil || !running(p) {
		return driver.Permanent(fmt.Errorf("process: %s is not running here: nothing to reload", r.Instance))
	}
	if p.notify != nil {
		p.notify.drainFrames()
	}
	if len(c.Reload.Exec) > 0 {
		if err := d.reloadExec(ctx, c, p.pid); err != nil {
			return err
		}
	} else {
		sig := syscall.SIGHUP
		if c.Reload.Signal != "" {
			sig = reloadSignals[c.Reload.Signal]
		}
		if err := syscall.Kill(p.pid, sig); err != nil {
			return fmt.Errorf("process: reload: signal %s to %d: %w", sig, p.pid, err)
		}
	}
	if p.notify != nil {
		return p.notify.reloadFrame(ctx)
	}
	return nil
}

// reloadExec runs process.reload.exec as the service would run: its user,
// its environment (secrets read now), its directory, plus MAINPID.
func (d *Driver) reloadExec(ctx context.Context, c Config, pid int) error {
	argv := c.Reload.Exec
	// Resolved and checked here, where it runs (it runs in the service's
	// directory).
	prog, err := d.program("reload command (process.reload.exec)", argv[0], c.Dir)
	if err != nil {
		return err
	}
	cmd := command(ctx, prog, argv)
	if cmd.Err != nil {
		return classify(argv[0], cmd.Err)
	}
	rc := c
	rc.Limits = nil // the command runs briefly: no prlimit exec around it
	l, err := prepare(rc, cmd, d.Policy)
	if err != nil {
		return err
	}
	cmd.Env = append(l.env, "MAINPID="+strconv.Itoa(pid))
	cmd.Dir = c.Dir
	// A group of its own, killed whole at the timeout; a child it leaves
	// holding its output does not hold the reload past it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Credential: l.credential} // (its own session: sysProcAttr)
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 2 * time.Second
	out, err := cmd.CombinedOutput()
	if err != nil {
		msg := fmt.Sprintf("process: reload: %s: %v", argv[0], err)
		if tail := lastLines(out, tailLines); len(tail) > 0 {
			msg += "; output:\n" + string(tail)
		}
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return driver.Permanent(errors.New(msg)) // it ran and said no: retrying says no again
		}
		return errors.New(msg)
	}
	return nil
}
