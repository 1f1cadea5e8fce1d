package cgroup

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func fakeRoot(t *testing.T, files map[string]string) {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644))
	}
	old := Root
	Root = dir
	t.Cleanup(func() { Root = old })
}

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return string(b)
}

// A unified hierarchy with the controllers: one group, the controllers
// enabled down to it, the v2 files, and OOM kills read from memory.events.
func TestNewOnCgroupV2(t *testing.T) {
	fakeRoot(t, map[string]string{"cgroup.controllers": "cpuset cpu io memory pids\n"})
	g, err := New("web_api.1", Limits{MemoryMax: 256 << 20, CPUMax: 0.5, PidsMax: 100})
	require.NoError(t, err)
	dir := filepath.Join(Root, "steward", "web_api.1")
	require.Equal(t, &Group{Version: 2, Dirs: []string{dir}, Memory: dir}, g)
	require.Equal(t, "+memory +cpu +pids", read(t, filepath.Join(Root, "cgroup.subtree_control")))
	require.Equal(t, "+memory +cpu +pids", read(t, filepath.Join(Root, "steward", "cgroup.subtree_control")))
	require.Equal(t, "268435456", read(t, filepath.Join(dir, "memory.max")))
	require.Equal(t, "50000 100000", read(t, filepath.Join(dir, "cpu.max")))
	require.Equal(t, "100", read(t, filepath.Join(dir, "pids.max")))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "memory.events"), []byte("low 0\nhigh 0\nmax 3\noom 1\noom_kill 1\n"), 0o644))
	require.Equal(t, 1, g.OOMKills())
}

// Only v1 controllers (this machine's case): a group per controller used.
func TestNewOnCgroupV1(t *testing.T) {
	fakeRoot(t, map[string]string{"memory/cgroup.procs": "", "cpu/cgroup.procs": "", "pids/cgroup.procs": "", "unified/cgroup.procs": ""})
	g, err := New("db.2", Limits{MemoryMax: 64 << 20, CPUMax: 1.5})
	require.NoError(t, err)
	mem, cpu := filepath.Join(Root, "memory", "steward", "db.2"), filepath.Join(Root, "cpu", "steward", "db.2")
	require.Equal(t, &Group{Version: 1, Dirs: []string{mem, cpu}, Memory: mem}, g)
	require.Equal(t, "67108864", read(t, filepath.Join(mem, "memory.limit_in_bytes")))
	require.Equal(t, "150000", read(t, filepath.Join(cpu, "cpu.cfs_quota_us")))
	require.Equal(t, "100000", read(t, filepath.Join(cpu, "cpu.cfs_period_us")))
	require.NoDirExists(t, filepath.Join(Root, "pids", "steward"), "no pids limit: no pids group")
}

// A controller the host lacks fails the group, naming it; nothing is left.
func TestNewWithoutTheControllerFails(t *testing.T) {
	fakeRoot(t, map[string]string{"memory/cgroup.procs": "", "unified/cgroup.controllers": ""})
	_, err := New("x", Limits{MemoryMax: 1 << 30, PidsMax: 10})
	require.ErrorContains(t, err, "no pids controller on this host")
	_, err = New("a/b", Limits{PidsMax: 10})
	require.ErrorContains(t, err, "bad group name")
	_, err = New("x", Limits{})
	require.ErrorContains(t, err, "no limit")
}

// On this machine's real hierarchy (root only): a process added to a
// group with a memory limit that it passes is killed by the kernel, and
// the kill is counted; the group is removed after.
func TestMemoryLimitKillsAndCounts(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to make cgroups")
	}
	g, err := New("steward-test-"+strconv.Itoa(os.Getpid()), Limits{MemoryMax: 32 << 20, PidsMax: 50})
	if err != nil {
		t.Skipf("no cgroup here: %v", err)
	}
	t.Cleanup(func() { _ = g.Remove() })
	// tail keeps its whole last line: 200 MiB of zeros without a newline.
	cmd := exec.Command("sh", "-c", "read _ <&0; head -c 200M /dev/zero | tail > /dev/null")
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	require.NoError(t, g.Add(cmd.Process.Pid))
	b, err := os.ReadFile("/proc/" + strconv.Itoa(cmd.Process.Pid) + "/cgroup")
	require.NoError(t, err)
	require.Contains(t, string(b), "/steward/steward-test-")
	_, _ = stdin.Write([]byte("go\n"))
	stdin.Close()
	err = cmd.Wait()
	require.Error(t, err, "tail was killed, so the pipeline failed")
	require.Eventually(t, func() bool { return g.OOMKills() >= 1 }, 5*time.Second, 50*time.Millisecond)
	require.NoError(t, g.Remove())
	for _, d := range g.Dirs {
		require.NoDirExists(t, d)
	}
}
