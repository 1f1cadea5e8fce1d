package main

import (
	"errors"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// A worker's identity is "pid@host@build" (worker/main.go,
// workerIdentity). The server lists a poller for about a minute after its
// last poll, whether its process still runs or not, so `starter upgrade`
// would wait that long after every worker swap. A poller whose host is
// the starter's own machine and whose process no longer exists is gone
// now: it cannot take a task.

// pollerIdentity is a worker identity split into its parts.
type pollerIdentity struct {
	pid   int
	host  string
	build string
}

// parsePollerIdentity splits "pid@host@build", and the SDK's default
// "pid@host@QUEUE" that workers older than the build identity give (the
// queue often empty); ok is false for an identity of another form.
func parsePollerIdentity(id string) (p pollerIdentity, ok bool) {
	parts := strings.Split(id, "@")
	if len(parts) != 3 {
		return p, false
	}
	pid, err := strconv.Atoi(parts[0])
	if err != nil || pid <= 0 || parts[1] == "" {
		return p, false
	}
	return pollerIdentity{pid: pid, host: parts[1], build: parts[2]}, true
}

// pollerGone tells that the worker of identity id ran on this machine and
// its process has exited. Anything it cannot tell for sure (another
// host, an identity of another form, a process that exists, whoever runs
// it now) counts as not gone: the caller then waits for the server to
// forget the poller, as before.
func pollerGone(id string) bool {
	p, ok := parsePollerIdentity(id)
	if !ok {
		return false
	}
	host, err := os.Hostname()
	if err != nil || host != p.host {
		return false
	}
	return errors.Is(syscall.Kill(p.pid, 0), syscall.ESRCH)
}
