package process

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// sysProcAttr makes the child lead its own session and process group (so
// stop reaches its children, and a terminal's Ctrl-C or the worker's own
// signals do not). One that dies with its worker also gets Pdeathsig: it is
// killed when the thread that forked it exits.
func sysProcAttr(dieWithWorker bool) *syscall.SysProcAttr {
	if dieWithWorker {
		return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
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
