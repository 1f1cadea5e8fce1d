package process

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// A policy, a configuration or a trusted key that any local user could
// write was read all the same, and the root worker then ran what that user
// allowed; a secret (a TLS key) readable by every user was used.
func TestSecureFile_RefusesAFileOthersCanChangeOrASecretAllCanRead(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "policy.yaml")
	require.NoError(t, os.WriteFile(file, []byte("commands: []\n"), 0o644))
	require.NoError(t, SecureFile(file, false))

	require.NoError(t, os.Chmod(file, 0o666))
	require.ErrorContains(t, SecureFile(file, false), "writable by other users")
	require.NoError(t, os.Chmod(file, 0o664))
	require.ErrorContains(t, SecureFile(file, false), "writable by other users")

	require.NoError(t, os.Chmod(file, 0o644))
	require.ErrorContains(t, SecureFile(file, true), "a secret readable by every user")
	require.NoError(t, os.Chmod(file, 0o640))
	require.NoError(t, SecureFile(file, true), "its group may read a secret")

	// The directory that holds it: another user could swap the file.
	require.NoError(t, os.Chmod(dir, 0o777))
	require.ErrorContains(t, SecureFile(file, false), "another file could be put in this one's place")
	require.NoError(t, os.Chmod(dir, 0o777|os.ModeSticky))
	require.NoError(t, SecureFile(file, false), "a sticky directory's files are their owners'")
	require.NoError(t, os.Chmod(dir, 0o700))

	// Through a link, the file it names is judged.
	link := filepath.Join(dir, "link.yaml")
	require.NoError(t, os.Symlink(file, link))
	require.NoError(t, os.Chmod(file, 0o666))
	require.ErrorContains(t, SecureFile(link, false), "writable by other users")

	require.ErrorContains(t, SecureFile(dir, false), "not a regular file")
	// A missing file is its reader's to name; its directory is checked.
	require.NoError(t, SecureFile(filepath.Join(dir, "missing"), false))
	require.NoError(t, SecureFile("/nonexistent-dir/missing", false))
	require.NoError(t, os.Chmod(dir, 0o777))
	require.ErrorContains(t, SecureFile(filepath.Join(dir, "missing"), false), "another file could be put in this one's place")
	require.NoError(t, os.Chmod(dir, 0o700))
}

// A file of another user (not root) is refused: that user could change it.
func TestSecureFile_RefusesAnotherUsersFile(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to give a file away")
	}
	file := filepath.Join(t.TempDir(), "ops.pub")
	require.NoError(t, os.WriteFile(file, []byte("key\n"), 0o644))
	require.NoError(t, os.Chown(file, 65534, 65534))
	require.ErrorContains(t, SecureFile(file, false), "belongs to uid 65534")
}

// A directory two levels up that a group may write let that group rename
// the file's directory away and put its own in its place; a link another
// user owns, in a sticky directory, could be pointed elsewhere after the
// check (the reviewer's findings).
func TestSecureFile_RefusesAGroupWritableDirectoryAboveAndAnotherUsersLink(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: the group rule is a root worker's, and a link is given away with chown")
	}
	top := t.TempDir()
	srv := filepath.Join(top, "srv")
	require.NoError(t, os.MkdirAll(filepath.Join(srv, "steward"), 0o755))
	file := filepath.Join(srv, "steward", "policy.yaml")
	require.NoError(t, os.WriteFile(file, []byte("commands: []\n"), 0o644))
	require.NoError(t, SecureFile(file, false))
	require.NoError(t, os.Chown(srv, 0, 50))
	require.NoError(t, os.Chmod(srv, 0o775))
	require.ErrorContains(t, SecureFile(file, false), "writable by its group")
	require.NoError(t, os.Chmod(srv, 0o755))

	sticky := filepath.Join(top, "tmp")
	require.NoError(t, os.Mkdir(sticky, 0o777))
	require.NoError(t, os.Chmod(sticky, 0o777|os.ModeSticky))
	link := filepath.Join(sticky, "policy.yaml")
	require.NoError(t, os.Symlink(file, link))
	require.NoError(t, SecureFile(link, false), "root's own link")
	require.NoError(t, os.Lchown(link, 65534, 65534))
	require.ErrorContains(t, SecureFile(link, false), "belongs to uid 65534")
}
