package process

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// sysProcAttr makes the child lead its own session and process group (so
// stop reaches its children, and a terminal's Ctrl-C or the worker's own
// signals do not). One that dies with its worker also gets Pdeathsig: it is
// killed when the thread that forked it exits. Every child leads its own
// session: one left in the worker's (a dieWithWorker service had only a
// group of its own) kept the worker's terminal, and as its own user it
// typed commands into the root shell that started the worker (TIOCSTI),
// or left its group for the worker's and could no longer be stopped.
func sysProcAttr(dieWithWorker bool) *syscall.SysProcAttr {
	if dieWithWorker {
		return &syscall.SysProcAttr{Setsid: true, Pdeathsig: syscall.SIGKILL}
	}
	return &syscall.SysProcAttr{Setsid: true}
}

// startTicks is when pid started, in clock ticks since boot (field 22 of
// /proc/PID/stat): with the pid, it names one process for good (a reused
// pid starts later). A zombie counts as gone.
func startTicks(pid int) (uint64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// The command name (field 2) may hold spaces and parentheses: the
	// fields after it start after the last ')'.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, fmt.Errorf("/proc/%d/stat: unexpected format", pid)
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 20 {
		return 0, fmt.Errorf("/proc/%d/stat: unexpected format", pid)
	}
	if f[0] == "Z" || f[0] == "X" {
		return 0, os.ErrNotExist
	}
	return strconv.ParseUint(f[19], 10, 64)
}

// waitGone waits until the process pid (started at ticks) has ended: true;
// false if quit closes first. It watches a pidfd (Linux 5.3+), and checks
// /proc as well (and only /proc, every 250ms, without pidfds).
func waitGone(pid int, ticks uint64, quit <-chan struct{}) bool {
	fd, err := unix.PidfdOpen(pid, 0)
	if err == nil {
		defer unix.Close(fd)
	}
	for {
		if t, err := startTicks(pid); err != nil || t != ticks {
			return true
		}
		if fd >= 0 && err == nil {
			n, perr := unix.Poll([]unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}, 250)
			if perr == nil && n > 0 {
				return true
			}
		} else {
			time.Sleep(250 * time.Millisecond)
		}
		select {
		case <-quit:
			return false
		default:
		}
	}
}

// Boot is this host's kernel boot: its ID (/proc/sys/kernel/random/boot_id,
// new at every boot) and when it began (btime of /proc/stat); zero where
// unknown.
type Boot struct {
	ID string
	At time.Time
}

// CurrentBoot is this host's boot, read once.
func CurrentBoot() Boot { return currentBoot() }

var currentBoot = sync.OnceValue(func() Boot {
	var b Boot
	if id, err := os.ReadFile("/proc/sys/kernel/random/boot_id"); err == nil {
		b.ID = strings.TrimSpace(string(id))
	}
	if stat, err := os.ReadFile("/proc/stat"); err == nil {
		for _, line := range strings.Split(string(stat), "\n") {
			if v, ok := strings.CutPrefix(line, "btime "); ok {
				if sec, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64); err == nil {
					b.At = time.Unix(sec, 0).UTC()
				}
			}
		}
	}
	return b
})
