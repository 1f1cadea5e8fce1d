//go:build unix

package process

import (
	"os"
	"syscall"
)

// fileID identifies a file across renames (its inode), to see a log
// rotated between two reads.
func fileID(fi os.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Ino)
	}
	return 0
}
