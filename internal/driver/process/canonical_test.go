//go:build linux

package process

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/steward-sh/steward/internal/admission"
	"github.com/steward-sh/steward/internal/driver"
)

// deployment lays out root/releases/{v2,v3} and root/current -> releases/v2
// (root canonical), each release with bin/sleep (a copy of this host's
// sleep) and bin/probe (a script that appends its release to root/probed).
func deployment(t *testing.T) string {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	sleep, err := exec.LookPath("sleep")
	require.NoError(t, err)
	bin, err := os.ReadFile(sleep)
	require.NoError(t, err)
	for _, rel := range []string{"v2", "v3"} {
		dir := filepath.Join(root, "releases", rel, "bin")
		require.NoError(t, os.MkdirAll(dir, 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(dir, "sleep"), bin, 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(dir, "probe"), []byte("#!/bin/sh\necho "+rel+" >> "+root+"/probed\n"), 0o755))
	}
	require.NoError(t, os.Symlink("releases/v2", filepath.Join(root, "current")))
	return root
}

// switchTo points root/current at release, as a deployment does.
func switchTo(t *testing.T, root, release string) {
	t.Helper()
	tmp := filepath.Join(root, "current.new")
	require.NoError(t, os.Symlink("releases/"+release, tmp))
	require.NoError(t, os.Rename(tmp, filepath.Join(root, "current")))
}

func cmdline(t *testing.T, pid int) []string {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	require.NoError(t, err)
	return strings.Split(strings.TrimSuffix(string(b), "\x00"), "\x00")
}

// The driver runs the file a command resolves to (every link followed),
// with argv[0] as the spec writes it; with limits, prlimit is handed that
// file. This holds with and without a policy.
func TestStartRunsTheCanonicalFileWithArgv0AsWritten(t *testing.T) {
	t.Parallel()
	root := deployment(t)
	d, _ := newDriver(t, nil)
	id, err := d.Start(context.Background(), req("canon/plain", map[string]any{
		"command": root + "/current/bin/sleep", "args": []string{"60"}, "startSeconds": "100ms"}))
	require.NoError(t, err)
	pid := pidOf(id)
	require.Equal(t, []string{root + "/current/bin/sleep", "60"}, cmdline(t, pid), "argv[0] as written")
	exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid))
	require.NoError(t, err)
	require.Equal(t, root+"/releases/v2/bin/sleep", exe)

	relative, err := d.Start(context.Background(), req("canon/relative", map[string]any{
		"command": "current/../v3/bin/sleep", "dir": root, "args": []string{"60"}, "startSeconds": "100ms"}))
	require.NoError(t, err, "relative, from dir; .. after a link is its target's parent, as in the kernel")
	require.Equal(t, []string{"current/../v3/bin/sleep", "60"}, cmdline(t, pidOf(relative)))
	exe, err = os.Readlink(fmt.Sprintf("/proc/%d/exe", pidOf(relative)))
	require.NoError(t, err)
	require.Equal(t, root+"/releases/v3/bin/sleep", exe)

	if _, err := exec.LookPath("prlimit"); err != nil {
		t.Log("no prlimit on this host: the limits case is skipped")
		return
	}
	limited, err := d.Start(context.Background(), req("canon/limits", map[string]any{
		"command": root + "/current/bin/sleep", "args": []string{"60"}, "startSeconds": "100ms",
		"limits": map[string]any{"nofile": 1024}}))
	require.NoError(t, err)
	require.Equal(t, []string{root + "/releases/v2/bin/sleep", "60"}, cmdline(t, pidOf(limited)),
		"prlimit execs the path the driver resolved")
}

// Finding 3: what was checked is what runs. A health probe's program is
// resolved (and, under a policy, checked) at the start: after the
// deployment's link moves to another release, the probe still runs the
// file that was checked. Under a policy, the driver checks again what it
// is about to run: a start after the move is refused (the policy's entry
// was resolved at load), naming what the link resolves to now.
func TestTheCheckedPathIsTheOneThatRuns(t *testing.T) {
	t.Parallel()
	root := deployment(t)
	pol, err := admission.ParsePolicy([]byte("commands: [" + root + "/current/bin/*]\n"))
	require.NoError(t, err)
	d, _ := newDriver(t, nil)
	d.Policy = pol
	cfg := map[string]any{"command": root + "/current/bin/sleep", "args": []string{"60"}, "startSeconds": "100ms",
		"health": map[string]any{"exec": []string{root + "/current/bin/probe"}, "interval": "20ms"}}
	id, err := d.Start(context.Background(), req("canon/checked", cfg))
	require.NoError(t, err)
	probed := filepath.Join(root, "probed")
	lines := func() []string {
		b, _ := os.ReadFile(probed)
		return strings.Fields(string(b))
	}
	require.Eventually(t, func() bool { return len(lines()) >= 2 }, 10*time.Second, 10*time.Millisecond)

	switchTo(t, root, "v3")
	n := len(lines())
	require.Eventually(t, func() bool { return len(lines()) >= n+5 }, 10*time.Second, 10*time.Millisecond)
	for _, l := range lines() {
		require.Equal(t, "v2", l, "the probe runs the file checked at the start, not what the link names now")
	}
	require.True(t, alive(pidOf(id)))

	_, err = d.Start(context.Background(), req("canon/after", cfg))
	require.True(t, driver.IsPermanent(err), "%v", err)
	require.EqualError(t, err, "policy (inline): command "+root+"/current/bin/sleep (resolved to "+root+"/releases/v3/bin/sleep) is not allowed"+
		" (the policy's "+root+"/current/bin/* stands for "+root+"/releases/v2/bin/*: its links as they were when the worker loaded the policy)")
	require.Equal(t, 1, d.Running(), "nothing ran")

	// A probe is checked too, before anything runs.
	switchTo(t, root, "v2")
	bad := map[string]any{"command": root + "/current/bin/sleep", "args": []string{"60"}, "startSeconds": "100ms",
		"ready": map[string]any{"exec": []string{root + "/releases/v3/bin/probe"}}}
	_, err = d.Start(context.Background(), req("canon/probe", bad))
	require.EqualError(t, err, "policy (inline): probe command (process.ready.exec) "+root+"/releases/v3/bin/probe is not allowed")
	require.Equal(t, 1, d.Running())

	// And a reload's program, where the reload runs it.
	r := req("canon/checked", map[string]any{"command": root + "/current/bin/sleep", "args": []string{"60"},
		"reload": map[string]any{"exec": []string{"../v3/bin/probe"}}, "dir": root + "/current"})
	r.Instance = id
	err = d.Reload(context.Background(), r)
	require.EqualError(t, err, "policy (inline): reload command (process.reload.exec) "+root+"/current/../v3/bin/probe (resolved to "+root+"/releases/v3/bin/probe) is not allowed")
}

// Finding 4: an envFile's variables are known only where the driver reads
// it; under a policy, one that makes an allowed program load other code
// is refused there, before anything runs. Without a policy the file is
// the spec's to name.
func TestPolicyRefusesLoaderVariablesOfAnEnvFile(t *testing.T) {
	t.Parallel()
	root := deployment(t)
	envFile := filepath.Join(root, "service.env")
	require.NoError(t, os.WriteFile(envFile, []byte("LANG=C\nLD_PRELOAD="+root+"/evil.so\n"), 0o644))
	cfg := map[string]any{"command": root + "/current/bin/sleep", "args": []string{"60"}, "startSeconds": "100ms", "envFile": envFile}
	pol, err := admission.ParsePolicy([]byte("commands: [" + root + "/releases/*/bin/sleep]\nsecrets: [" + envFile + "]\n"))
	require.NoError(t, err)

	d, _ := newDriver(t, nil)
	d.Policy = pol
	_, err = d.Start(context.Background(), req("env/file", cfg))
	require.True(t, driver.IsPermanent(err), "%v", err)
	require.EqualError(t, err, "policy (inline): env LD_PRELOAD (from envFile "+envFile+") is not allowed (it makes an allowed program load other code): list LD_PRELOAD by name in the policy's env to allow it")
	cfg["envFile"] = nil
	cfg["env"] = map[string]any{"JAVA_TOOL_OPTIONS": "-javaagent:" + root + "/evil.jar"}
	_, err = d.Start(context.Background(), req("env/spec", cfg))
	require.EqualError(t, err, "policy (inline): env JAVA_TOOL_OPTIONS is not allowed (it makes an allowed program load other code): list JAVA_TOOL_OPTIONS by name in the policy's env to allow it")
	require.Zero(t, d.Running())

	require.NoError(t, os.WriteFile(envFile, []byte("LANG=C\nSHOP_MODE=prod\n"), 0o644))
	cfg["env"], cfg["envFile"] = map[string]any{"TZ": "UTC"}, envFile
	_, err = d.Start(context.Background(), req("env/fine", cfg))
	require.NoError(t, err)

	open, _ := newDriver(t, nil)
	require.NoError(t, os.WriteFile(envFile, []byte("LD_PRELOAD=\n"), 0o644))
	_, err = open.Start(context.Background(), req("env/open", map[string]any{
		"command": root + "/current/bin/sleep", "args": []string{"60"}, "startSeconds": "100ms", "envFile": envFile}))
	require.NoError(t, err, "no policy: not refused")
}
