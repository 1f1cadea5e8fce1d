//go:build unix && !linux

package process

import (
	"errors"
	"syscall"
)

// sysProcAttr makes the child lead its own session and process group.
// Without Linux's Pdeathsig, a child outlives a worker that is killed
// outright even with dieWithWorker; Close still kills those on an orderly
// shutdown.
func sysProcAttr(dieWithWorker bool) *syscall.SysProcAttr {
	if dieWithWorker {
		return &syscall.SysProcAttr{Setpgid: true}
	}
	return &syscall.SysProcAttr{Setsid: true}
}

// startTicks is not known here: adoption needs Linux's /proc.
func startTicks(int) (uint64, error) { return 0, errors.New("process start times need /proc (Linux)") }

// waitGone waits for quit: nothing is adopted without /proc.
func waitGone(_ int, _ uint64, quit <-chan struct{}) bool {
	<-quit
	return false
}
