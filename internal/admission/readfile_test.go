package admission

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// Regression (attack review): a secret path or a working directory that
// could not be resolved (a link loop; a link whose target makes the path
// longer than the kernel resolves) was judged as text, ".." and all, while
// the kernel opened another file: a local user's tree of links made
// "secrets/../x" admitted and read /etc/shadow. What cannot be resolved is
// refused now.
func TestPolicy_ASecretPathThatCannotBeResolvedIsRefused(t *testing.T) {
	root := t.TempDir()
	secrets := filepath.Join(root, "secrets")
	require.NoError(t, os.MkdirAll(filepath.Join(secrets, "d"), 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(secrets, "token"), []byte("s3cret"), 0o600))
	require.NoError(t, os.Symlink("loop", filepath.Join(secrets, "loop"))) // a link to itself
	srv := filepath.Join(root, "srv")
	require.NoError(t, os.MkdirAll(filepath.Join(srv, "app"), 0o755))
	require.NoError(t, os.Symlink("loop", filepath.Join(srv, "loop")))
	p := policy(t, "commands: [/usr/bin/*]\nsecrets: ["+secrets+"/*]\ndirs: ["+srv+"/*]\n")
	proc := func(y string) error { return p.Check(processNode(t, "{command: /usr/bin/sleep, "+y+"}")) }

	require.NoError(t, proc("env: {S: {file: "+secrets+"/d/../token}}"), "a path that resolves is judged by where it leads")
	require.ErrorContains(t, proc("env: {S: {file: "+secrets+"/loop/../token}}"), "cannot be resolved on this host")
	require.ErrorContains(t, proc("envFile: "+secrets+"/loop/../token"), "cannot be resolved on this host")
	require.ErrorContains(t, proc("env: {S: {file: "+secrets+"/missing}}"), "no such file on this host")
	require.NoError(t, proc("dir: "+srv+"/app"))
	require.ErrorContains(t, proc("dir: "+srv+"/loop/../app"), "process.dir "+srv+"/loop/../app: cannot be resolved on this host")
}

// Regression (attack review): the policy judged a secret file by its
// links at admission, and the driver then read the path as written: a link
// swapped in between (a compromised service can stretch the time between,
// by a slow stop) made root read a file the policy does not list, into a
// service's environment. The driver now reads through Policy.ReadFile,
// which checks the path again and reads the very path it checked,
// following no link.
func TestPolicy_ReadFileReadsOnlyTheFileItChecked(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir()) // a canonical path: TMPDIR may have a link in it
	require.NoError(t, err)
	secrets := filepath.Join(root, "secrets")
	require.NoError(t, os.MkdirAll(secrets, 0o700))
	token := filepath.Join(secrets, "token")
	require.NoError(t, os.WriteFile(token, []byte("s3cret"), 0o600))
	shadow := filepath.Join(root, "shadow")
	require.NoError(t, os.WriteFile(shadow, []byte("root:x"), 0o600))
	link := filepath.Join(secrets, "current")
	require.NoError(t, os.Symlink(token, link))
	p := policy(t, "commands: [/usr/bin/*]\nsecrets: ["+secrets+"/*]\n")

	b, err := p.ReadFile(link)
	require.NoError(t, err)
	require.Equal(t, "s3cret", string(b))
	require.NoError(t, p.Check(processNode(t, "{command: /usr/bin/sleep, env: {S: {file: "+link+"}}}")), "admitted while it leads to the token")

	// The link is swapped after the admission: the read refuses it.
	require.NoError(t, os.Remove(link))
	require.NoError(t, os.Symlink(shadow, link))
	_, err = p.ReadFile(link)
	require.ErrorContains(t, err, "is not allowed")
	require.NotContains(t, err.Error(), "root:x")

	// A listed file too large for a secret (a glob can name a log).
	big := filepath.Join(secrets, "big")
	require.NoError(t, os.WriteFile(big, []byte(strings.Repeat("x", maxSecretFile+1)), 0o600))
	_, err = p.ReadFile(big)
	require.ErrorContains(t, err, "holds more than a secret file may")

	// Without a policy, any file is read as written.
	var none *Policy
	b, err = none.ReadFile(shadow)
	require.NoError(t, err)
	require.Equal(t, "root:x", string(b))

	// Swapped between the read's check and its open: the open follows no
	// link, so the path checked (which had none) fails to open (Linux's
	// openat2; elsewhere O_NOFOLLOW checks the last component only).
	if runtime.GOOS != "linux" {
		return
	}
	dir := filepath.Join(root, "real")
	require.NoError(t, os.MkdirAll(dir, 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "f"), []byte("x"), 0o600))
	require.NoError(t, os.Symlink(dir, filepath.Join(root, "via")))
	_, err = openResolved(filepath.Join(root, "via", "f"))
	require.ErrorIs(t, err, errChanged)
	f, err := openResolved(filepath.Join(dir, "f"))
	require.NoError(t, err)
	f.Close()
}
