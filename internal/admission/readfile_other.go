//go:build unix && !linux

package admission

import (
	"os"
	"syscall"
)

// openResolved opens path, which has no link in it, refusing a last
// component that became a link (O_NOFOLLOW): openat2's check of the whole
// path is Linux's.
func openResolved(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
}
