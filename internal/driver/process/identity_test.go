//go:build linux

package process

import (
	"context"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/steward-sh/steward/internal/driver"
)

// environOf reads /proc/PID/environ of a running process.
func environOf(t *testing.T, pid int) map[string]string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "environ"))
	require.NoError(t, err)
	out := map[string]string{}
	for _, kv := range strings.Split(string(b), "\x00") {
		if k, v, ok := strings.Cut(kv, "="); ok {
			out[k] = v
		}
	}
	return out
}

// ownerName is the user name of the owner of a /proc entry.
func ownerName(t *testing.T, st os.FileInfo) string {
	t.Helper()
	u, err := user.LookupId(strconv.Itoa(int(st.Sys().(*syscall.Stat_t).Uid)))
	require.NoError(t, err)
	return u.Username
}

// A service's environment is the base, what inheritEnv names, the envFiles
// and env (secrets resolved from a file and from the worker's environment),
// and nothing else of the worker's.
func TestServiceEnvironmentIsExplicit(t *testing.T) {
	d, _ := newDriver(t, nil)
	dir := t.TempDir()
	secret := filepath.Join(dir, "token")
	require.NoError(t, os.WriteFile(secret, []byte("s3cret-from-file\n"), 0o600))
	envFile := filepath.Join(dir, "app.env")
	require.NoError(t, os.WriteFile(envFile, []byte("# comment\n\nFROM_FILE=one\nQUOTED=\"two words\"\nOVERRIDDEN=file\n"), 0o600))
	t.Setenv("STEWARD_TEST_INHERITED", "inherited")
	t.Setenv("STEWARD_TEST_HIDDEN", "must not leak")
	t.Setenv("STEWARD_TEST_SECRET", "s3cret-from-env")

	id, err := d.Start(context.Background(), req("env", map[string]any{
		"command": "sleep", "args": []string{"30"}, "startSeconds": "50ms",
		"env": map[string]any{
			"TOKEN":      map[string]any{"file": secret},
			"API_KEY":    map[string]any{"env": "STEWARD_TEST_SECRET"},
			"PLAIN":      "literal",
			"OVERRIDDEN": "env",
		},
		"envFile":    envFile,
		"inheritEnv": []string{"STEWARD_TEST_INHERITED"},
	}))
	require.NoError(t, err)
	env := environOf(t, pidOf(id))
	require.Equal(t, "s3cret-from-file", env["TOKEN"], "a file's content, trailing newline trimmed")
	require.Equal(t, "s3cret-from-env", env["API_KEY"])
	require.Equal(t, "literal", env["PLAIN"])
	require.Equal(t, "one", env["FROM_FILE"])
	require.Equal(t, "two words", env["QUOTED"])
	require.Equal(t, "env", env["OVERRIDDEN"], "env wins over envFile")
	require.Equal(t, "inherited", env["STEWARD_TEST_INHERITED"])
	require.Equal(t, os.Getenv("PATH"), env["PATH"], "the base is kept")
	require.NotContains(t, env, "STEWARD_TEST_HIDDEN", "nothing else of the worker's environment")
	require.NotContains(t, env, "STEWARD_TEST_SECRET", "a referenced variable reaches the service only under its env name")
}

// A reference that cannot be resolved is a failed start that names it and
// no value, is not retried, and starts nothing.
func TestUnresolvableSecretIsAPermanentFailedStart(t *testing.T) {
	d, _ := newDriver(t, nil)
	t.Setenv("STEWARD_TEST_OTHER", "s3cret-value")
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.env")
	require.NoError(t, os.WriteFile(bad, []byte("OK=1\nthis line has s3cret-value\n"), 0o600))
	for name, tc := range map[string]struct {
		cfg  map[string]any
		want string
	}{
		"missing file": {map[string]any{"env": map[string]any{"T": map[string]any{"file": filepath.Join(dir, "none")}}},
			"process.env.T: secret file " + filepath.Join(dir, "none") + ": no such file"},
		"missing variable": {map[string]any{"env": map[string]any{"T": map[string]any{"env": "STEWARD_TEST_UNSET"}}},
			"process.env.T: variable STEWARD_TEST_UNSET is not set in the worker's environment on this host"},
		"bad envFile line": {map[string]any{"envFile": bad}, "process.envFile " + bad + " line 2: not KEY=VALUE"},
		"missing envFile":  {map[string]any{"envFile": []string{filepath.Join(dir, "none.env")}}, "no such file"},
		"unknown user":     {map[string]any{"user": "steward-no-such-user"}, `process.user: no user "steward-no-such-user" on this host`},
	} {
		t.Run(name, func(t *testing.T) {
			cfg := map[string]any{"command": "sleep", "args": []string{"30"}, "startSeconds": "50ms"}
			for k, v := range tc.cfg {
				cfg[k] = v
			}
			id, err := d.Start(context.Background(), req("bad-"+strings.ReplaceAll(name, " ", "-"), cfg))
			require.Error(t, err)
			require.Empty(t, id)
			require.True(t, driver.IsPermanent(err), "%v", err)
			require.Contains(t, err.Error(), tc.want)
			require.NotContains(t, err.Error(), "s3cret-value")
			require.Zero(t, d.Running(), "nothing started")
		})
	}
}

// process.limits: the service runs under them from its first instruction
// (prlimit(1) sets them, then execs it: the same PID).
func TestLimitsApplyToTheService(t *testing.T) {
	need(t, "prlimit", "sh")
	d, _ := newDriver(t, nil)
	out := filepath.Join(t.TempDir(), "limits")
	id, err := d.Start(context.Background(), req("limits", map[string]any{
		"command": "sh", "args": []string{"-c", "echo $(ulimit -n) $(ulimit -c) > " + out + "; exec sleep 30"},
		"startSeconds": "100ms",
		"limits":       map[string]any{"nofile": 123, "core": 0},
	}))
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		b, err := os.ReadFile(out)
		return err == nil && strings.TrimSpace(string(b)) == "123 0"
	}, 10*time.Second, 20*time.Millisecond)
	cmdline, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pidOf(id)), "cmdline"))
	require.NoError(t, err)
	require.Equal(t, "sleep\x0030\x00", string(cmdline), "the instance's PID is the service itself")
}

// process.user: a root worker runs the service as that user, with its
// HOME, USER and LOGNAME; a worker that is not root refuses another user.
func TestUserChangesIdentity(t *testing.T) {
	d, _ := newDriver(t, nil)
	cfg := map[string]any{"command": "sleep", "args": []string{"30"}, "startSeconds": "50ms", "user": "nobody"}
	id, err := d.Start(context.Background(), req("user", cfg))
	if os.Geteuid() != 0 {
		require.Error(t, err)
		require.True(t, driver.IsPermanent(err))
		require.Contains(t, err.Error(), "needs a worker running as root")
		return
	}
	require.NoError(t, err)
	st, err := os.Stat(filepath.Join("/proc", strconv.Itoa(pidOf(id))))
	require.NoError(t, err)
	require.Equal(t, "nobody", ownerName(t, st))
	env := environOf(t, pidOf(id))
	require.Equal(t, "nobody", env["USER"])
	require.Equal(t, "nobody", env["LOGNAME"])
}
