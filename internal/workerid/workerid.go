// Package workerid is the identity a steward worker gives the Temporal
// server, "pid@host@machine@build", and what a starter can read from it.
//
// The server lists every poller of a task queue with its identity for
// about a minute after its last poll, whether its process still runs or
// not. `starter upgrade` must not move workflows onto new code while a
// worker of another build still polls, so without more it would wait that
// long after every worker swap. The machine part tells a starter that a
// listed worker ran where the starter runs: the same kernel boot and the
// same PID namespace, where the worker's pid means the same process. Then
// a pid that no longer exists is a worker that is gone, now. A host name
// alone cannot tell that: cloned machines, containers of one pod or a
// container sharing its host's name have equal names and other pids.
//
// Identities of other forms (the SDK's default "pid@host@queue", which
// workers older than the build identity give) carry no machine part:
// Gone says false for them, and the caller waits as before.
package workerid

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

// ID is a worker identity read back.
type ID struct {
	PID     int
	Host    string
	Machine string // "" when the identity has none (another form)
	Build   string
}

// New is this process's identity for build: "pid@host@machine@build"
// ("pid@host@build" where the machine cannot be told, off Linux).
func New(build string) string {
	host, _ := os.Hostname()
	if m := Machine(); m != "" {
		return fmt.Sprintf("%d@%s@%s@%s", os.Getpid(), host, m, build)
	}
	return fmt.Sprintf("%d@%s@%s", os.Getpid(), host, build)
}

// Parse reads an identity: "pid@host@machine@build", and "pid@host@X"
// (a worker of this form's build X, or the SDK's default with its queue)
// with no machine. ok is false for any other form.
func Parse(id string) (ID, bool) {
	parts := strings.Split(id, "@")
	if len(parts) != 3 && len(parts) != 4 {
		return ID{}, false
	}
	pid, err := strconv.Atoi(parts[0])
	if err != nil || pid <= 0 || parts[1] == "" {
		return ID{}, false
	}
	w := ID{PID: pid, Host: parts[1], Build: BuildOf(id)}
	if len(parts) == 4 {
		if parts[2] == "" {
			return ID{}, false
		}
		w.Machine = parts[2]
	}
	return w, true
}

// BuildOf is the build that ends identity id (after its last "@"): what
// `starter upgrade` compares, for any form Parse reads and any other.
func BuildOf(id string) string { return id[strings.LastIndex(id, "@")+1:] }

// Gone tells that the worker ran where this process runs (its machine
// part is this process's) and has exited. Anything it cannot tell for
// sure (another machine, no machine part, a process that exists, whoever
// runs it now) is not gone.
func (w ID) Gone() bool {
	if w.Machine == "" || w.Machine != Machine() {
		return false
	}
	return errors.Is(syscall.Kill(w.PID, 0), syscall.ESRCH)
}

// Machine names the kernel boot and PID namespace this process runs in
// (a hash of /proc/sys/kernel/random/boot_id and /proc/self/ns/pid), "" if
// it cannot tell.
func Machine() string { return machine() }

var machine = sync.OnceValue(func() string {
	boot, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return ""
	}
	ns, err := os.Readlink("/proc/self/ns/pid")
	if err != nil {
		return ""
	}
	sum := sha256.Sum256([]byte(strings.TrimSpace(string(boot)) + "\n" + ns))
	return "m" + hex.EncodeToString(sum[:6])
})
