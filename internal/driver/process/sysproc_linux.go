package process

import "syscall"

// sysProcAttr makes the child lead its own process group (so stop and
// close reach its children) and die with the thread that forked it.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
