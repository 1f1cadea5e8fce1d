package process

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// Regression (attack review): the worker's default --log-dir and
// --state-dir are under /tmp, where any local user could make them first
// and plant links (a service's output appended to /etc/sudoers as root) or
// records (a process adopted and signalled). SecureDir refuses a directory
// another user can write, or one that belongs to another user.
func TestSecureDir_RefusesADirectoryOthersCanWrite(t *testing.T) {
	base := t.TempDir()
	ok := filepath.Join(base, "state", "host-a")
	require.NoError(t, SecureDir(ok, 0o700))
	fi, err := os.Stat(ok)
	require.NoError(t, err)
	require.True(t, fi.IsDir())
	require.Zero(t, fi.Mode().Perm()&0o077, "made private: %v", fi.Mode())

	open := filepath.Join(base, "open")
	require.NoError(t, os.Mkdir(open, 0o755))
	require.NoError(t, os.Chmod(open, 0o777))
	require.ErrorContains(t, SecureDir(filepath.Join(open, "logs"), 0o750), "is writable by every user")
	require.ErrorContains(t, SecureDir(open, 0o750), "is writable by other users")

	group := filepath.Join(base, "var-log") // Ubuntu's /var/log: root:syslog 0775
	require.NoError(t, os.Mkdir(group, 0o755))
	require.NoError(t, os.Chmod(group, 0o775))
	require.NoError(t, SecureDir(filepath.Join(group, "steward"), 0o750), "a directory above that its group may write")
	require.NoError(t, os.Chmod(filepath.Join(group, "steward"), 0o770))
	require.ErrorContains(t, SecureDir(filepath.Join(group, "steward"), 0o750), "is writable by other users", "the directory itself: its owner's alone")

	sticky := filepath.Join(base, "tmp")
	require.NoError(t, os.Mkdir(sticky, 0o755))
	require.NoError(t, os.Chmod(sticky, 0o777|os.ModeSticky))
	require.NoError(t, SecureDir(filepath.Join(sticky, "steward"), 0o700), "a sticky directory above (/tmp) is fine")

	link := filepath.Join(base, "link")
	require.NoError(t, os.Symlink(filepath.Join(open, "logs"), link))
	require.ErrorContains(t, SecureDir(link, 0o750), "is writable by every user", "judged as its link resolves too")

	if os.Geteuid() == 0 {
		theirs := filepath.Join(base, "theirs")
		require.NoError(t, os.Mkdir(theirs, 0o755))
		require.NoError(t, os.Chown(theirs, 65534, 65534))
		require.ErrorContains(t, SecureDir(filepath.Join(theirs, "state"), 0o700), "belongs to uid 65534")
	}
}

// Regression (attack review): a group that may write a directory above the
// state directory could rename it away and put its own in its place, with
// records the next worker adopts and signals. The state directory's check
// refuses such a directory above (the logs are written through an anchor:
// AnchorDir); sticky ones (/tmp) stay fine.
func TestSecureStateDir_RefusesADirectoryAboveItsGroupMayWrite(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("the rule is a root worker's (and needs root to give a directory to another group)")
	}
	base := t.TempDir()
	group := filepath.Join(base, "var-log")
	require.NoError(t, os.Mkdir(group, 0o755))
	require.NoError(t, os.Chmod(group, 0o775))
	require.NoError(t, SecureStateDir(filepath.Join(group, "own"), 0o700), "root's own group may write it")
	require.NoError(t, os.Chown(group, 0, 65534)) // root:nogroup 0775, as root:syslog
	require.ErrorContains(t, SecureStateDir(filepath.Join(group, "state"), 0o700), "is writable by its group (gid 65534, mode 0775) and not sticky")
	require.NoError(t, SecureDir(filepath.Join(group, "logs"), 0o750), "the logs' check takes it")
	sticky := filepath.Join(base, "tmp")
	require.NoError(t, os.Mkdir(sticky, 0o755))
	require.NoError(t, os.Chmod(sticky, 0o777|os.ModeSticky))
	require.NoError(t, SecureStateDir(filepath.Join(sticky, "steward", "state"), 0o700))
}
