package process

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// SecureDir makes dir (with mode, where it is missing) and checks that no
// other user of the host can change what is in it: it and every directory
// above it, as given and as its links resolve, belong to this process's
// user or to root; none above it is writable by every user unless sticky
// (/tmp); dir itself is writable by its owner only.
//
// A worker writes its services' logs and records there as root and trusts
// what it reads back: a record names a process to adopt and, later, to
// signal; the signed revisions refuse replays. In a directory another user
// can write (the default under /tmp, made by someone else before the
// worker's first start), that user plants a link and the worker appends a
// service's output to /etc/sudoers, or plants a record and the worker
// kills what it names. ssh's StrictModes checks the same of ~/.ssh.
func SecureDir(dir string, mode os.FileMode) error { return secureDir(dir, mode, true) }

// SecureStateDir is SecureDir for the state directory, which also refuses,
// for a worker that is root, a directory above it that a group other than
// root's may write (and is not sticky): the
// logs go through a directory held open (AnchorDir), the records cannot
// (a job's shim, another process, writes its exit there by name), so a
// group that could rename the directory away could plant records.
func SecureStateDir(dir string, mode os.FileMode) error { return secureDir(dir, mode, false) }

func secureDir(dir string, mode os.FileMode, groupAbove bool) error {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	made := os.MkdirAll(abs, mode)
	have := abs // what exists of it (all of it, unless made failed)
	for {
		if _, err := os.Lstat(have); err == nil || have == filepath.Dir(have) {
			break
		}
		have = filepath.Dir(have)
	}
	real, err := filepath.EvalSymlinks(have)
	if err != nil {
		return err
	}
	uid := uint32(os.Geteuid())
	for _, path := range []string{have, real} {
		for p := path; ; p = filepath.Dir(p) {
			if err := checkDir(p, p == have || p == real, uid, groupAbove); err != nil {
				return fmt.Errorf("%s: %w", dir, err)
			}
			if p == filepath.Dir(p) {
				break
			}
		}
	}
	if made != nil {
		return &NotMadeError{Err: made}
	}
	return nil
}

// NotMadeError is SecureDir's when the directory could not be made (a
// read-only filesystem) while what exists of its path is secure: a
// worker whose state directory cannot be written runs all the same
// (docs/reliability.md), its starts unrecorded.
type NotMadeError struct{ Err error }

func (e *NotMadeError) Error() string { return e.Err.Error() }
func (e *NotMadeError) Unwrap() error { return e.Err }

// checkDir checks one directory of SecureDir's path; a link among them is
// judged by the directory that holds it (checked in turn).
func checkDir(p string, leaf bool, uid uint32, groupAbove bool) error {
	fi, err := os.Lstat(p)
	if err != nil {
		return err
	}
	if fi.Mode()&os.ModeSymlink != 0 {
		return nil
	}
	if !fi.IsDir() {
		return fmt.Errorf("%s is not a directory", p)
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return nil
	}
	if st.Uid != uid && st.Uid != 0 {
		return fmt.Errorf("%s belongs to uid %d, not to this worker's user (%d) or root: another user could change what the worker reads and writes there", p, st.Uid, uid)
	}
	perm := fi.Mode().Perm()
	switch {
	case leaf && perm&0o022 != 0:
		return fmt.Errorf("%s is writable by other users (mode %#o): make it %#o or less", p, perm, perm&^0o022)
	case !leaf && perm&0o002 != 0 && fi.Mode()&os.ModeSticky == 0:
		// (A directory above that its group may write is taken for the
		// logs: Ubuntu's /var/log is root:syslog 0775.)
		return fmt.Errorf("%s is writable by every user (mode %#o) and not sticky", p, perm)
	case !leaf && !groupAbove && uid == 0 && st.Gid != 0 && perm&0o020 != 0 && fi.Mode()&os.ModeSticky == 0:
		// (For a worker that is root; one that is not writes nothing its
		// user could not, and a user's own group, umask 002, is common.)
		return fmt.Errorf("%s is writable by its group (gid %d, mode %#o) and not sticky: that group could put another directory in this one's place", p, st.Gid, perm)
	}
	return nil
}
