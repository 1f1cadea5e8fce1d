package process

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"time"

	"go.uber.org/zap"

	"github.com/steward-sh/steward/internal/cgroup"
	"github.com/steward-sh/steward/internal/driver"
	"github.com/steward-sh/steward/internal/spec"
)

// Resources (process.resources) are enforced by a cgroup of the service's
// own (internal/cgroup), made before the start and removed after the end.
// The service must be in it before it runs anything, and os/exec cannot
// place a child in a cgroup between fork and exec on cgroup v1; so the
// command is started through `sh -c`, which waits on a pipe until the
// worker has moved it into the group, then execs the command: the service
// keeps the pid the worker forked, with the spec's arguments, and no
// wrapper is left. A worker that dies before moving it closes the pipe,
// and the shell exits (125) instead of running the service unlimited.
const cgroupGate = `IFS= read -r go <&3 && [ "$go" = go ] || exit 125; exec 3<&-; exec "$@"`

// cgroupStart makes the service's group and wraps cmd to wait for it; the
// returned function places the forked process (pid) and lets it run.
func cgroupStart(wfID string, r *spec.Resources, cmd *exec.Cmd) (*cgroup.Group, func(pid int) error, func(), error) {
	// The shell would turn a command that cannot run into exit 126/127, a
	// failed start retried: it is a permanent failure, as without the gate.
	if _, err := exec.LookPath(cmd.Path); err != nil {
		return nil, nil, nil, classify(cmd.Path, err)
	}
	var lim cgroup.Limits
	if r.MemoryMax != "" {
		b, err := r.MemoryMax.Bytes()
		if err != nil {
			return nil, nil, nil, driver.Permanent(fmt.Errorf("process.resources.memoryMax: %w", err))
		}
		lim.MemoryMax = b
	}
	lim.CPUMax, lim.PidsMax = r.CPUMax, r.PidsMax
	var nonce [4]byte
	_, _ = rand.Read(nonce[:])
	// Named by the workflow's file stem (logfile.go: one to one, whatever
	// the ID's length) and a nonce (a restart's new group never meets the
	// old one, which the kernel may not have let go of yet).
	g, err := cgroup.New(fileStem(wfID)+"."+hex.EncodeToString(nonce[:]), lim)
	if err != nil {
		return nil, nil, nil, driver.Permanent(fmt.Errorf("process.resources: %w (the service is not started unlimited)", err))
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		_ = g.Remove()
		return nil, nil, nil, err
	}
	sh, err := exec.LookPath("sh")
	if err != nil {
		_ = g.Remove()
		pr.Close()
		pw.Close()
		return nil, nil, nil, driver.Permanent(fmt.Errorf("process.resources: no sh on this host's PATH: %w", err))
	}
	cmd.Args = append([]string{"sh", "-c", cgroupGate, "steward-cgroup", cmd.Path}, cmd.Args[1:]...)
	cmd.Path = sh
	cmd.ExtraFiles = append(cmd.ExtraFiles, pr)
	place := func(pid int) error {
		pr.Close() // the child has its own copy
		defer pw.Close()
		if err := g.Add(pid); err != nil {
			return driver.Permanent(fmt.Errorf("process.resources: %w", err))
		}
		_, err := pw.Write([]byte("go\n"))
		return err
	}
	abandon := func() {
		pr.Close()
		pw.Close()
		_ = g.Remove()
	}
	return g, place, abandon, nil
}

// removeCgroup removes an ended service's group (in the background: the
// kernel lets go of it once its last process is reaped), after killing
// what the service left in it: the group is the service's, as its process
// group is, and what its main process started outlives it only there.
func (d *Driver) removeCgroup(g *cgroup.Group) {
	go func() {
		g.Kill()
		if err := g.Remove(); err != nil {
			d.log.Warn("process: cannot remove the cgroup of an ended service", zap.Strings("dirs", g.Dirs), zap.Error(err))
		}
	}()
}

// oomReason is the reason of an end the kernel's OOM killer caused.
func oomReason(p *proc) string {
	if p.cgroup == nil || p.cgroup.OOMKills() == 0 {
		return ""
	}
	return fmt.Sprintf("out of memory (memoryMax %s)", spec.FormatSize(p.memoryMax))
}

// endUnhealthy ends p as a crash with reason: its stop signal, then
// SIGKILL after DefaultStopGrace (a health probe's failures, a watchdog,
// restartOnMemory).
func (d *Driver) endUnhealthy(p *proc, reason string) {
	d.mu.Lock()
	if p.unhealthy != "" {
		d.mu.Unlock()
		return // ending already
	}
	p.unhealthy = reason
	d.mu.Unlock()
	d.log.Info("process: ending a service: "+reason, zap.String("instance", p.id))
	signalGroup(p.pid, p.stopSignal)
	select {
	case <-p.exited:
	case <-d.quit:
	case <-time.After(DefaultStopGrace):
		signalGroup(p.pid, syscall.SIGKILL)
	}
}
