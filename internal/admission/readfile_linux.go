package admission

import (
	"errors"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// openResolved opens path, which has no link in it (a canonical path),
// following none: a component made a link since path was resolved fails
// the open (ELOOP, EXDEV) instead of reading whatever the link names.
// Kernels before openat2 (5.6) open it and compare the file opened with
// path by its name in /proc/self/fd.
func openResolved(path string) (*os.File, error) {
	fd, err := unix.Openat2(unix.AT_FDCWD, path, &unix.OpenHow{
		Flags:   unix.O_RDONLY | unix.O_CLOEXEC,
		Resolve: unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS,
	})
	if err == nil {
		return os.NewFile(uintptr(fd), path), nil
	}
	if !errors.Is(err, unix.ENOSYS) && !errors.Is(err, unix.EPERM) { // EPERM: a seccomp filter that refuses it
		if errors.Is(err, unix.ELOOP) || errors.Is(err, unix.EXDEV) {
			return nil, errChanged
		}
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	if opened, err := os.Readlink("/proc/self/fd/" + strconv.Itoa(int(f.Fd()))); err != nil || opened != path {
		f.Close()
		return nil, errChanged
	}
	return f, nil
}
