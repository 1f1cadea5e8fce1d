package main

import (
	"fmt"
	"os"
	"os/exec"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestParsePollerIdentity(t *testing.T) {
	p, ok := parsePollerIdentity("4242@box@src-0123456789ab")
	require.True(t, ok)
	require.Equal(t, pollerIdentity{pid: 4242, host: "box", build: "src-0123456789ab"}, p)
	// The SDK's own identity, as workers older than the build identity
	// (5b9cb0e) give it: "pid@host@" and the task queue, often empty.
	p, ok = parsePollerIdentity("4242@box@")
	require.True(t, ok)
	require.Equal(t, pollerIdentity{pid: 4242, host: "box"}, p)
	for _, id := range []string{"", "4242@box", "x@box@b", "0@box@b", "-1@box@b", "4242@@b", "1@a@b@c"} {
		_, ok := parsePollerIdentity(id)
		require.False(t, ok, id)
	}
}

// A worker swapped on the operator's machine made `starter upgrade --wait`
// wait about 75 s for the server to forget the old worker's polls
// (docs/upgrading.md, measured on the demo): a poller whose process on
// this machine has exited is gone at once; one that runs, or runs
// elsewhere, is not.
func TestPollerGone_ExitedProcessOnThisMachine(t *testing.T) {
	host, err := os.Hostname()
	require.NoError(t, err)
	cmd := exec.Command("true")
	require.NoError(t, cmd.Run())
	exited := cmd.Process.Pid // reaped by Run: no such process now (unless reused, then "not gone")
	require.True(t, pollerGone(fmt.Sprintf("%d@%s@old", exited, host)), "exited process")
	require.False(t, pollerGone(fmt.Sprintf("%d@%s@old", os.Getpid(), host)), "a running process")
	require.False(t, pollerGone(fmt.Sprintf("%d@%s-elsewhere@old", exited, host)), "another host")
	require.False(t, pollerGone(fmt.Sprintf("%d@%s", exited, host)), "an identity without a build")
}
