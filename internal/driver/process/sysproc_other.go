//go:build unix && !linux

package process

import "syscall"

// sysProcAttr makes the child lead its own process group. Without Linux's
// Pdeathsig, a child outlives a worker that is killed outright; Close still
// kills every child on an orderly shutdown.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
