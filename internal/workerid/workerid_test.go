package workerid

import (
	"fmt"
	"os"
	"os/exec"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestParse(t *testing.T) {
	w, ok := Parse("4242@box@m0123456789ab@src-0123456789ab")
	require.True(t, ok)
	require.Equal(t, ID{PID: 4242, Host: "box", Machine: "m0123456789ab", Build: "src-0123456789ab"}, w)
	// The form without a machine part, and the SDK's default that workers
	// older than the build identity (5b9cb0e) give: "pid@host@" and their
	// task queue, often empty.
	w, ok = Parse("4242@box@src-0123456789ab")
	require.True(t, ok)
	require.Equal(t, ID{PID: 4242, Host: "box", Build: "src-0123456789ab"}, w)
	w, ok = Parse("4242@box@")
	require.True(t, ok)
	require.Equal(t, ID{PID: 4242, Host: "box"}, w)
	for _, id := range []string{"", "4242@box", "x@box@b", "0@box@b", "-1@box@b", "4242@@b", "1@a@@b", "1@a@b@c@d"} {
		_, ok := Parse(id)
		require.False(t, ok, id)
	}
}

func TestNewReadsBack(t *testing.T) {
	host, err := os.Hostname()
	require.NoError(t, err)
	w, ok := Parse(New("src-0123456789ab"))
	require.True(t, ok)
	require.Equal(t, ID{PID: os.Getpid(), Host: host, Machine: Machine(), Build: "src-0123456789ab"}, w)
	require.NotEmpty(t, Machine(), "Linux: /proc tells the boot and the PID namespace")
}

// A worker swapped on the operator's machine made `starter upgrade --wait`
// wait about 75 s for the server to forget the old worker's polls
// (docs/upgrading.md, measured on the demo): a worker of this machine whose
// process has exited is gone at once; one that runs, one of another
// machine (equal host names included), or one whose identity has no
// machine part is not.
func TestGone_OnlyAnExitedProcessOfThisMachine(t *testing.T) {
	cmd := exec.Command("true")
	require.NoError(t, cmd.Run())
	exited := cmd.Process.Pid // reaped by Run: no such process now (unless reused: then "not gone")
	host, _ := os.Hostname()
	id := func(pid int, machine string) ID { return ID{PID: pid, Host: host, Machine: machine, Build: "old"} }
	require.True(t, id(exited, Machine()).Gone(), "an exited process of this machine")
	require.False(t, id(os.Getpid(), Machine()).Gone(), "a running process")
	require.False(t, id(1, Machine()).Gone(), "a process that exists, even one this process may not signal")
	require.False(t, id(exited, "m000000000000").Gone(), "another machine with the same host name")
	require.False(t, id(exited, "").Gone(), "an identity without a machine part")
	w, ok := Parse(fmt.Sprintf("%d@%s@", exited, host))
	require.True(t, ok)
	require.False(t, w.Gone(), "the SDK's default identity of an older worker")
}

func TestBuildOf(t *testing.T) {
	require.Equal(t, "src-0123456789ab", BuildOf("4242@box@m0123456789ab@src-0123456789ab"))
	require.Equal(t, "src-0123456789ab", BuildOf("4242@box@src-0123456789ab"))
	require.Equal(t, "", BuildOf("4242@box@"))
	require.Equal(t, "no-at", BuildOf("no-at"))
}
