//go:build linux

package process

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// Regression (attack review): SecureDir checks the log directory once, and
// takes a directory above it that its group may write (Ubuntu's /var/log);
// a member of that group renamed the checked directory away, put its own
// in its place with links, and the worker's log rotation, writing by name
// as root, copied a file of the attacker's to /etc/sudoers.d. Through the
// anchor the worker writes in the directory it checked, whatever is put
// at its name.
func TestAnchorDir_WritesStayInTheCheckedDirectoryAfterASwap(t *testing.T) {
	parent := t.TempDir()
	dir := filepath.Join(parent, "logs")
	require.NoError(t, os.Mkdir(dir, 0o750))
	anchored, err := AnchorDir(dir)
	require.NoError(t, err)
	require.NotEqual(t, dir, anchored, "/proc shows the directory here")

	// The swap: the checked directory renamed away, another in its place
	// whose log is a link to a file outside.
	require.NoError(t, os.Rename(dir, filepath.Join(parent, "logs.old")))
	require.NoError(t, os.Mkdir(dir, 0o777))
	target := filepath.Join(parent, "sudoers")
	require.NoError(t, os.WriteFile(target, []byte("kept\n"), 0o600))
	require.NoError(t, os.Symlink(target, filepath.Join(dir, "svc.log")))

	require.NoError(t, os.WriteFile(filepath.Join(anchored, "svc.log"), []byte("service output\n"), 0o640))
	b, err := os.ReadFile(target)
	require.NoError(t, err)
	require.Equal(t, "kept\n", string(b), "nothing written through the planted link")
	b, err = os.ReadFile(filepath.Join(parent, "logs.old", "svc.log"))
	require.NoError(t, err)
	require.Equal(t, "service output\n", string(b), "written in the directory that was checked")
	entries, err := os.ReadDir(anchored)
	require.NoError(t, err)
	require.Len(t, entries, 1)
}

// The directory anchored is checked as opened (it could have been swapped
// since SecureDir checked it by name): one others may write is refused.
func TestAnchorDir_RefusesADirectoryOthersCanWrite(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "open")
	require.NoError(t, os.Mkdir(dir, 0o755))
	require.NoError(t, os.Chmod(dir, 0o777))
	_, err := AnchorDir(dir)
	require.ErrorContains(t, err, "writable by other users")
}

// An error about a log named the anchored directory (/proc/self/fd/N),
// which means nothing to the operator reading it: ShowAnchors writes the
// directory's name back.
func TestShowAnchors_AnErrorNamesTheLogDirectoryNotItsDescriptor(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "logs")
	require.NoError(t, os.Mkdir(dir, 0o750))
	anchored, err := AnchorDir(dir)
	require.NoError(t, err)
	_, err = os.Open(filepath.Join(anchored, "missing.log"))
	require.Error(t, err)
	require.Contains(t, err.Error(), anchored)
	shown := ShowAnchors(err.Error())
	require.Contains(t, shown, filepath.Join(dir, "missing.log"))
	require.NotContains(t, shown, "/proc/self/fd/")
	// A descriptor path that is not an anchor, or one that only begins
	// like one, is left as it is.
	require.Equal(t, "/proc/self/fd/999999/x", ShowAnchors("/proc/self/fd/999999/x"))
	require.Equal(t, anchored+"0000/x", ShowAnchors(anchored+"0000/x"))
}
