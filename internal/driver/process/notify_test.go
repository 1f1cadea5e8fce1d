//go:build linux

package process

import (
	"context"
	"fmt"
	"net"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A notify service's start succeeds at its READY=1, sent late by Debian's
// systemd-notify from its start script (another process of its group,
// which waits on a BARRIER=1), and its STATUS= is kept.
func TestNotifyReadyEndsTheStart(t *testing.T) {
	t.Parallel()
	need(t, "sh", "systemd-notify")
	d, _ := newDriver(t, nil)
	r := req("tree/notify", map[string]any{"command": "sh", "args": []string{"-c",
		"sleep 1.5; systemd-notify --ready --status='serving 3 clients' || exit 7; exec sleep 60"}, "notify": true, "startSeconds": "100ms"})
	began := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	id, err := d.Start(ctx, r)
	require.NoError(t, err)
	require.GreaterOrEqual(t, time.Since(began), 1500*time.Millisecond, "the start waits for READY=1, not startSeconds")
	require.Equal(t, "serving 3 clients", d.Services("tree/notify")["tree/notify"].NotifyStatus)
	require.True(t, alive(pidOf(id)), "systemd-notify returned: the barrier was answered")
}

// READY=1 from a process outside the service's group is dropped: the
// start times out instead, and the process is killed.
func TestNotifyFromOutsideTheGroupIsDropped(t *testing.T) {
	t.Parallel()
	need(t, "sleep")
	d, _ := newDriver(t, nil)
	r := req("tree/mute", map[string]any{"command": "sleep", "args": []string{"60"}, "notify": true})
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() { _, err := d.Start(ctx, r); done <- err }()
	var sock string
	require.Eventually(t, func() bool {
		d.mu.Lock()
		defer d.mu.Unlock()
		for _, p := range d.procs {
			b, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", p.pid))
			if err != nil {
				continue
			}
			for _, kv := range strings.Split(string(b), "\x00") {
				if v, ok := strings.CutPrefix(kv, "NOTIFY_SOCKET="); ok {
					sock = v
				}
			}
		}
		return sock != ""
	}, 2*time.Second, 20*time.Millisecond)
	require.True(t, strings.HasPrefix(sock, "@steward/notify/"), sock)
	c, err := net.DialUnix("unixgram", nil, &net.UnixAddr{Name: sock, Net: "unixgram"})
	require.NoError(t, err)
	_, err = c.Write([]byte("READY=1"))
	require.NoError(t, err)
	c.Close()
	err = <-done
	require.ErrorContains(t, err, "did not send READY=1")
	require.Zero(t, d.Running(), "killed at the timeout")
}

// A service that stops feeding its watchdog is ended as a crash whose
// reason says so, and the crash is pushed.
func TestWatchdogEndsAServiceThatStopsFeedingIt(t *testing.T) {
	t.Parallel()
	need(t, "sh", "systemd-notify")
	rec := newRecorder()
	d, _ := newDriver(t, rec)
	r := req("tree/dog", map[string]any{"command": "sh", "args": []string{"-c",
		`systemd-notify --ready; for i in 1 2 3 4; do systemd-notify WATCHDOG=1; sleep 0.5; done; [ "$WATCHDOG_USEC" = 1000000 ] || exit 9; exec sleep 60`},
		"notify": true, "watchdog": "1s"})
	began := time.Now()
	_, err := d.Start(context.Background(), r)
	require.NoError(t, err)
	select {
	case got := <-rec.ch:
		require.Equal(t, "tree/dog", got.wfID)
		require.False(t, got.exit.Normal)
		require.Contains(t, got.exit.Reason, "watchdog timeout: no WATCHDOG=1 for 1s")
		require.GreaterOrEqual(t, time.Since(began), 2*time.Second, "fed for 2 s, it lived through them")
	case <-time.After(30 * time.Second):
		t.Fatal("the watchdog did not end the service")
	}
}

// Regression (attack review): the notify reader closed the descriptors a
// message carried inline, and anyone on the host may send to the socket:
// a TCP socket with a full send buffer, set to linger an hour, blocked
// that close, and with it READY=1 and WATCHDOG=1 (a local user made a
// service's watchdog kill it, over and over). A message after it is taken
// at once now.
func TestNotify_ALingeringSocketSentToItDoesNotStallTheReader(t *testing.T) {
	name, err := newNotifyName()
	require.NoError(t, err)
	n, err := listenNotify(name)
	require.NoError(t, err)
	defer n.close()
	go n.serve(syscall.Getpgrp())

	// The attacker's socket: connected to a listener that never accepts,
	// its send buffer full, lingering an hour at close.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	c, err := net.Dial("tcp", l.Addr().String())
	require.NoError(t, err)
	tc := c.(*net.TCPConn)
	require.NoError(t, tc.SetWriteBuffer(4096))
	chunk := make([]byte, 64<<10)
	for {
		require.NoError(t, tc.SetWriteDeadline(time.Now().Add(200*time.Millisecond)))
		if _, err := tc.Write(chunk); err != nil {
			break // full
		}
	}
	require.NoError(t, tc.SetLinger(3600))
	f, err := tc.File()
	require.NoError(t, err)
	u, err := net.DialUnix("unixgram", nil, &net.UnixAddr{Name: "@" + name, Net: "unixgram"})
	require.NoError(t, err)
	defer u.Close()
	raw, err := u.SyscallConn()
	require.NoError(t, err)
	require.NoError(t, raw.Control(func(fd uintptr) {
		err = syscall.Sendmsg(int(fd), []byte("STATUS=x"), syscall.UnixRights(int(f.Fd())), nil, 0)
	}))
	require.NoError(t, err)
	f.Close()
	c.Close() // the worker now holds its last reference

	_, err = u.Write([]byte("READY=1"))
	require.NoError(t, err)
	select {
	case <-n.ready:
	case <-time.After(5 * time.Second):
		t.Fatal("READY=1 after a lingering socket was not taken: the reader is stalled")
	}
}
