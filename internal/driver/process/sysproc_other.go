//go:build unix && !linux

package process

import (
	"errors"
	"syscall"
	"time"
)

// sysProcAttr makes the child lead its own session and process group.
// Without Linux's Pdeathsig, a child outlives a worker that is killed
// outright even with dieWithWorker; Close still kills those on an orderly
// shutdown.
func sysProcAttr(bool) *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setsid: true} // (dieWithWorker too: sysproc_linux.go says why)
}

// startTicks is not known here: adoption needs Linux's /proc.
func startTicks(int) (uint64, error) { return 0, errors.New("process start times need /proc (Linux)") }

// waitGone waits for quit: nothing is adopted without /proc.
func waitGone(_ int, _ uint64, quit <-chan struct{}) bool {
	<-quit
	return false
}

// Boot is this host's kernel boot (unknown here: zero).
type Boot struct {
	ID string
	At time.Time
}

// CurrentBoot is this host's boot: unknown without Linux's /proc.
func CurrentBoot() Boot { return Boot{} }
