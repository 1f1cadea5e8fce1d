package process

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"sync"
	"syscall"
	"time"
)

// systemd's notification protocol (sd_notify(3)), for process.notify.
//
// The worker binds a datagram socket in the abstract namespace for each
// instance it starts ("@steward/notify/<16 random hex>") and hands its
// name to the service as NOTIFY_SOCKET; with process.watchdog it also sets
// WATCHDOG_USEC, as systemd does (no WATCHDOG_PID: the pid is not known
// before the fork, and without it sd_watchdog_enabled accepts any process).
// The socket passes each sender's credentials (SO_PASSCRED): a message is
// taken only from a process of the service's process group (systemd's
// NotifyAccess=all: a start script's `systemd-notify --ready` is one),
// and dropped otherwise. Understood: READY=1 (the start succeeds),
// STATUS=text (shown by status), WATCHDOG=1 (the watchdog is fed),
// WATCHDOG=trigger (the watchdog fires now), and BARRIER=1 (the file
// descriptor that comes with it is closed once the messages before it
// are taken: systemd-notify waits for that). Others are ignored.
//
// The name is kept in the instance's record: the next worker of the host
// binds it again when it adopts the service, whose NOTIFY_SOCKET names it.
// A message sent while no worker has it bound is lost (systemd loses
// those sent while it re-executes, too): a watchdog restarts from its
// full period at adoption.

// notifier is one instance's notification socket.
type notifier struct {
	name string // without the '@'
	conn *net.UnixConn
	pgid int

	ready   chan struct{} // closed at the first READY=1
	pings   chan struct{} // WATCHDOG=1 (a ping not taken yet is enough)
	frames  chan string   // "RELOADING" and "READY", for a reload to wait on
	trigger chan struct{} // WATCHDOG=trigger
	once    sync.Once
	trig    sync.Once

	mu     sync.Mutex
	status string
}

// newNotifyName is a fresh socket name.
func newNotifyName() (string, error) {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	return "steward/notify/" + hex.EncodeToString(b[:]), nil
}

// listenNotify binds the socket of name (abstract namespace).
func listenNotify(name string) (*notifier, error) {
	conn, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: "@" + name, Net: "unixgram"})
	if err != nil {
		return nil, fmt.Errorf("process: notify socket: %w", err)
	}
	raw, err := conn.SyscallConn()
	if err == nil {
		cerr := raw.Control(func(fd uintptr) {
			err = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_PASSCRED, 1)
		})
		if cerr != nil {
			err = cerr
		}
	}
	if err != nil {
		conn.Close()
		return nil, fmt.Errorf("process: notify socket: credentials: %w", err)
	}
	return &notifier{name: name, conn: conn, ready: make(chan struct{}),
		pings: make(chan struct{}, 1), frames: make(chan string, 8), trigger: make(chan struct{})}, nil
}

// serve takes the messages of the service whose group is pgid until the
// socket is closed.
func (n *notifier) serve(pgid int) {
	n.pgid = pgid
	buf := make([]byte, 4096)
	oob := make([]byte, 1024)
	for {
		nb, noob, _, _, err := n.conn.ReadMsgUnix(buf, oob)
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			continue // a message too large, say
		}
		sender, fds := credentials(oob[:noob])
		if sender != 0 && n.accepts(sender) {
			n.take(buf[:nb])
		}
		closeReceived(fds) // BARRIER=1's: the messages before it are taken
	}
}

// closeReceived closes descriptors sent with a message, off the read loop:
// a close can block (a TCP socket whose last reference it holds, set to
// linger with a full send buffer: up to its linger time), and anyone on
// the host may send to the socket. Closing inline stalled the reader, and
// a local user made a service's watchdog kill it, over and over. A socket
// is first set to close at once (no linger); each close then runs on a
// goroutine of its own, at most closeSlots at once (past that, inline).
func closeReceived(fds []int) {
	for _, fd := range fds {
		_ = syscall.SetsockoptLinger(fd, syscall.SOL_SOCKET, syscall.SO_LINGER, &syscall.Linger{Onoff: 1, Linger: 0}) // not a socket: ENOTSOCK, nothing done
		select {
		case closeSlots <- struct{}{}:
			go func() {
				defer func() { <-closeSlots }()
				syscall.Close(fd)
			}()
		default:
			syscall.Close(fd)
		}
	}
}

// closeSlots bounds the closes in flight.
var closeSlots = make(chan struct{}, 64)

// accepts: the sender is a process of the service's group.
func (n *notifier) accepts(pid int) bool {
	if pid == n.pgid {
		return true
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false // gone already: cannot tell (systemd drops these too)
	}
	pgrp, _, err := parseStat(b)
	return err == nil && pgrp == n.pgid
}

// take applies one datagram: newline-separated assignments. READY=1 is
// applied last: whoever waits on it sees what came with it (the STATUS=
// of `systemd-notify --ready --status=...`, sent in the same datagram).
func (n *notifier) take(msg []byte) {
	ready := false
	for _, line := range bytes.Split(msg, []byte("\n")) {
		k, v, ok := strings.Cut(string(line), "=")
		if !ok {
			continue
		}
		switch {
		case k == "READY" && v == "1":
			ready = true
		case k == "RELOADING" && v == "1":
			n.frame("RELOADING")
		case k == "STATUS":
			n.mu.Lock()
			n.status = v
			n.mu.Unlock()
		case k == "WATCHDOG" && v == "1":
			select {
			case n.pings <- struct{}{}:
			default:
			}
		case k == "WATCHDOG" && v == "trigger":
			n.trig.Do(func() { close(n.trigger) })
		}
	}
	if ready {
		// The frame first: a start that waits on ready, then a reload that
		// drains the frames, must find this READY queued, not have it
		// arrive after the drain and end the reload's wait at once (CI:
		// TestReloadWaitsForANotifyServicesFrame returned in 0.7 ms).
		n.frame("READY")
		n.once.Do(func() { close(n.ready) })
	}
}

func (n *notifier) frame(f string) {
	select {
	case n.frames <- f:
	default:
	}
}

// reloadFrame waits, after a reload was asked, for the service's
// RELOADING=1 ... READY=1 (systemd's framing of a reload): a service that
// sends RELOADING=1 within reloadAnnounce of the ask is waited on until it
// sends READY=1 (or ctx ends); one that does not is done.
func (n *notifier) reloadFrame(ctx interface {
	Done() <-chan struct{}
	Err() error
}) error {
	select {
	case f := <-n.frames:
		if f != "RELOADING" {
			return nil
		}
	case <-time.After(reloadAnnounce):
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
	for {
		select {
		case f := <-n.frames:
			if f == "READY" {
				return nil
			}
		case <-ctx.Done():
			return fmt.Errorf("process: the service sent RELOADING=1 but no READY=1 before the reload timed out: %w", ctx.Err())
		}
	}
}

// reloadAnnounce is how long a reload waits for a notify service's
// RELOADING=1 before taking the reload as done (a shell's trap runs only
// between commands: a second leaves room for one).
const reloadAnnounce = time.Second

// drainFrames forgets the frames sent before a reload (the start's READY=1).
func (n *notifier) drainFrames() {
	for {
		select {
		case <-n.frames:
		default:
			return
		}
	}
}

// Status is the last STATUS= the service sent.
func (n *notifier) Status() string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.status
}

func (n *notifier) close() { _ = n.conn.Close() }

// credentials reads the sender's pid (SCM_CREDENTIALS) and the file
// descriptors passed (SCM_RIGHTS) of a message's control data.
func credentials(oob []byte) (pid int, fds []int) {
	msgs, err := syscall.ParseSocketControlMessage(oob)
	if err != nil {
		return 0, nil
	}
	for i := range msgs {
		if cred, err := syscall.ParseUnixCredentials(&msgs[i]); err == nil {
			pid = int(cred.Pid)
			continue
		}
		if rights, err := syscall.ParseUnixRights(&msgs[i]); err == nil {
			fds = append(fds, rights...)
		}
	}
	return pid, fds
}

// notifyEnv is what the service is given to speak the protocol.
func notifyEnv(name string, watchdog time.Duration) []string {
	env := []string{"NOTIFY_SOCKET=@" + name}
	if watchdog > 0 {
		env = append(env, fmt.Sprintf("WATCHDOG_USEC=%d", watchdog.Microseconds()))
	}
	return env
}

// awaitNotifyReady waits for READY=1 (the start succeeds), the end of the
// process (the caller reports a failed start) or the end of ctx (the
// process is killed).
func (d *Driver) awaitNotifyReady(ctx interface{ Done() <-chan struct{} }, p *proc, c Config) error {
	select {
	case <-p.notify.ready:
		return nil
	case <-p.exited:
		return nil
	case <-ctx.Done():
		d.kill(p)
		return fmt.Errorf("process: %s did not send READY=1 (process.notify) before its start timed out", c.Command)
	}
}

// watchWatchdog ends the process as a crash ("watchdog timeout") when it
// does not send WATCHDOG=1 for its watchdog period, or sends
// WATCHDOG=trigger: its stop signal, then SIGKILL after DefaultStopGrace,
// as systemd's WatchdogSec with its SIGABRT replaced by the stop signal.
func (d *Driver) watchWatchdog(p *proc, period time.Duration) {
	defer d.wg.Done()
	timer := time.NewTimer(period)
	defer timer.Stop()
	reason := ""
	for reason == "" {
		select {
		case <-p.exited:
			return
		case <-d.quit: // this worker closes; the next one watches it
			return
		case <-p.notify.pings:
			if !timer.Stop() {
				select {
				case <-timer.C:
				default:
				}
			}
			timer.Reset(period)
		case <-p.notify.trigger:
			reason = "watchdog timeout: the service sent WATCHDOG=trigger"
		case <-timer.C:
			reason = fmt.Sprintf("watchdog timeout: no WATCHDOG=1 for %s (process.watchdog)", period)
		}
	}
	d.endUnhealthy(p, reason)
}
