package process

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// SecureFile checks a file whose content decides what the worker runs or
// whom it trusts (its configuration, its policy, the keys it trusts, the
// CA it checks the server with) or proves who it is (secret: a TLS key, an
// API key, an encryption key): the file, as its links resolve, is a
// regular file of this process's user or root that no other user may
// write; the directory that holds it no other user may write either
// (unless sticky: /tmp's own files cannot be swapped by another); every
// directory above it passes SecureStateDir's rule for the directories
// above a state directory; a link on the way belongs to this process's
// user or root. A secret file may not be readable by every user (its
// group may: Debian's ssl-cert group reads /etc/ssl/private).
//
// A policy file left 0666 let any local user allow themselves a command
// that the root worker then ran; ssh's StrictModes refuses the same of
// authorized_keys.
func SecureFile(file string, secret bool) error {
	abs, err := filepath.Abs(file)
	if err != nil {
		return err
	}
	real, err := filepath.EvalSymlinks(abs)
	if errors.Is(err, fs.ErrNotExist) {
		// Missing: its reader says so in its own words. Its directory is
		// checked all the same, when there is one: another user must not
		// be able to put the file there after this check.
		if dir := filepath.Dir(abs); dirExists(dir) {
			return checkDirs(file, dir, uint32(os.Geteuid()))
		}
		return nil
	}
	if err != nil {
		return err
	}
	fi, err := os.Stat(real)
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("%s is not a regular file", file)
	}
	uid := uint32(os.Geteuid())
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && st.Uid != uid && st.Uid != 0 {
		return fmt.Errorf("%s belongs to uid %d, not to this worker's user (%d) or root: that user could change what the worker trusts", file, st.Uid, uid)
	}
	perm := fi.Mode().Perm()
	if perm&0o022 != 0 {
		return fmt.Errorf("%s is writable by other users (mode %#o): make it %#o or less", file, perm, perm&^0o022)
	}
	if secret && perm&0o004 != 0 {
		return fmt.Errorf("%s is a secret readable by every user (mode %#o): make it %#o or less", file, perm, perm&^0o007)
	}
	if err := checkLinks(abs, uid); err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	for _, path := range []string{abs, real} {
		if err := checkDirs(file, filepath.Dir(path), uid); err != nil {
			return err
		}
	}
	return nil
}

// checkDirs checks the directory dir that holds a trusted file, and every
// one above it.
func checkDirs(file, dir string, uid uint32) error {
	if err := checkHolder(dir); err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	for p := dir; ; p = filepath.Dir(p) {
		// SecureStateDir's rule: for a root worker, a directory above
		// that a group other than root's may write is refused too (that
		// group could rename the file's directory away and put its own
		// in its place between the check and the read).
		if err := checkDir(p, false, uid, false); err != nil {
			return fmt.Errorf("%s: %w", file, err)
		}
		if p == filepath.Dir(p) {
			return nil
		}
	}
}

func dirExists(dir string) bool {
	fi, err := os.Stat(dir)
	return err == nil && fi.IsDir()
}

// checkLinks refuses a link on the way to a trusted file (the file itself
// or a directory of its path as given) that belongs to another user than
// this process's or root: in a sticky directory (/tmp) its owner may point
// it elsewhere after the check (where the kernel's protected_symlinks is
// off, root follows it).
func checkLinks(abs string, uid uint32) error {
	for p := abs; p != filepath.Dir(p); p = filepath.Dir(p) {
		fi, err := os.Lstat(p)
		if err != nil {
			return err
		}
		if fi.Mode()&os.ModeSymlink == 0 {
			continue
		}
		if st, ok := fi.Sys().(*syscall.Stat_t); ok && st.Uid != uid && st.Uid != 0 {
			return fmt.Errorf("the link %s belongs to uid %d, not to this worker's user (%d) or root: that user could point it elsewhere", p, st.Uid, uid)
		}
	}
	return nil
}

// checkHolder refuses the directory that holds a trusted file when another
// user may write it and it is not sticky: they could put another file in
// the file's place.
func checkHolder(dir string) error {
	fi, err := os.Stat(dir)
	if err != nil {
		return err
	}
	if perm := fi.Mode().Perm(); perm&0o022 != 0 && fi.Mode()&os.ModeSticky == 0 {
		return fmt.Errorf("%s is writable by other users (mode %#o) and not sticky: another file could be put in this one's place", dir, perm)
	}
	return nil
}
