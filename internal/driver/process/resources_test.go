//go:build linux

package process

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/steward-sh/steward/internal/cgroup"
)

// needCgroups skips where this process cannot make cgroups (not root, no
// controller): the start would fail, as TestResourcesWithoutCgroupsFail
// shows.
func needCgroups(t *testing.T) {
	t.Helper()
	g, err := cgroup.New("steward-probe-"+strconv.Itoa(os.Getpid()), cgroup.Limits{MemoryMax: 64 << 20, CPUMax: 1, PidsMax: 64})
	if err != nil {
		t.Skipf("no cgroups here: %v", err)
	}
	require.NoError(t, g.Remove())
}

// A service under memoryMax that passes it is killed by the kernel; the
// crash pushed says "out of memory (memoryMax 32Mi)", and the service ran
// as itself (its pid is the instance's, in its group), with no wrapper.
func TestMemoryMaxKillIsReportedAsOutOfMemory(t *testing.T) {
	needCgroups(t)
	rec := newRecorder()
	d, _ := newDriver(t, rec)
	r := req("tree/hog", map[string]any{"command": "sh", "args": []string{"-c", "sleep 0.5; head -c 300M /dev/zero | tail"},
		"startSeconds": "100ms", "resources": map[string]any{"memoryMax": "32Mi", "pidsMax": 20, "cpuMax": 0.5}})
	id, err := d.Start(context.Background(), r)
	require.NoError(t, err)
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pidOf(id)) + "/cgroup")
	require.NoError(t, err)
	require.Contains(t, string(b), "/steward/"+fileStem("tree/hog")+".", "the service itself is in its group")
	cmdline, _ := os.ReadFile("/proc/" + strconv.Itoa(pidOf(id)) + "/cmdline")
	require.Contains(t, string(cmdline), "sh\x00-c\x00sleep 0.5", "the spec's command, exec'd in place")
	require.NotContains(t, string(cmdline), "steward-cgroup", "no wrapper left")
	select {
	case got := <-rec.ch:
		require.Equal(t, "out of memory (memoryMax 32Mi)", got.exit.Reason)
		require.False(t, got.exit.Normal)
	case <-time.After(30 * time.Second):
		t.Fatal("the hog was not killed")
	}
	var dir string
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line[strings.Index(line, ":")+1:], "memory:"); ok {
			dir = cgroup.Root + "/memory" + rest // v1
		} else if rest, ok := strings.CutPrefix(line, "0::/steward/"); ok {
			dir = cgroup.Root + "/steward/" + rest // v2
		}
	}
	require.NotEmpty(t, dir, string(b))
	require.Eventually(t, func() bool {
		_, err := os.Stat(dir)
		return os.IsNotExist(err)
	}, 5*time.Second, 50*time.Millisecond, "its group %s is removed", dir)
}

// A service whose sampled memory passes restartOnMemory is ended as a
// crash with a reason that names both sizes.
func TestRestartOnMemoryEndsAServiceOverIt(t *testing.T) {
	t.Parallel()
	need(t, "sh", "head", "tail")
	rec := newRecorder()
	d, _ := newDriver(t, rec)
	// tail holds its input's last line: 64 MiB without a newline, kept.
	r := req("tree/grow", map[string]any{"command": "sh", "args": []string{"-c", "{ head -c 64M /dev/zero; sleep 60; } | tail"},
		"startSeconds": "100ms", "restartOnMemory": "16Mi"})
	_, err := d.Start(context.Background(), r)
	require.NoError(t, err)
	deadline := time.Now().Add(30 * time.Second)
	for {
		require.NoError(t, d.SampleUsage(time.Now()))
		select {
		case got := <-rec.ch:
			require.Regexp(t, `^memory \d+(\.\d)?Mi over restartOnMemory 16Mi$`, got.exit.Reason)
			return
		case <-time.After(200 * time.Millisecond):
		}
		require.True(t, time.Now().Before(deadline), "not ended for its memory")
	}
}

// Where no cgroup can be made, a start with resources fails for good, and
// nothing runs.
func TestResourcesWithoutCgroupsFail(t *testing.T) {
	old := cgroup.Root
	cgroup.Root = t.TempDir() // no hierarchy at all
	t.Cleanup(func() { cgroup.Root = old })
	d, _ := newDriver(t, nil)
	_, err := d.Start(context.Background(), req("tree/capped", map[string]any{"command": "sleep", "args": []string{"60"},
		"resources": map[string]any{"memoryMax": "64Mi"}}))
	require.ErrorContains(t, err, "process.resources: cgroup: no memory controller on this host")
	require.ErrorContains(t, err, "not started unlimited")
	require.Zero(t, d.Running())
}

// A service under resources whose child left its process group (setsid,
// as a daemon's double fork does) outlived its main process: the kill of
// the group missed it, its cgroup could not be removed, and it ran on,
// supervised by nothing, at every restart one more.
func TestDriver_WhatAServiceLeftInItsCgroupIsKilledAtItsEnd(t *testing.T) {
	needCgroups(t)
	need(t, "sh", "setsid", "sleep")
	rec := newRecorder()
	d, dir := newDriver(t, rec)
	pidFile := filepath.Join(dir, "escaped.pid")
	id, err := d.Start(context.Background(), req("tree/daemon", map[string]any{"command": "sh",
		"args":         []string{"-c", "setsid sh -c 'echo $$ > " + pidFile + "; exec sleep 300' </dev/null >/dev/null 2>&1 & sleep 0.5; exit 3"},
		"startSeconds": "100ms", "resources": map[string]any{"memoryMax": "64Mi"}}))
	require.NoError(t, err)
	require.NotEmpty(t, id)
	select {
	case <-rec.ch:
	case <-time.After(30 * time.Second):
		t.Fatal("the service did not end")
	}
	b, err := os.ReadFile(pidFile)
	require.NoError(t, err)
	escaped, err := strconv.Atoi(strings.TrimSpace(string(b)))
	require.NoError(t, err)
	require.Eventually(t, func() bool { return !alive(escaped) }, 10*time.Second, 50*time.Millisecond,
		"the child that left the process group is killed with the service's cgroup")
}
