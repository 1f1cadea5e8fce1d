package process

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"sync"
	"syscall"
)

// anchors are the directories AnchorDir holds open for the life of the
// process (a closed *os.File would free its descriptor, and with it the
// path that names it).
var anchors []*os.File

// anchorNames maps each anchored path to the name its directory was given,
// for messages (ShowAnchors).
var (
	anchorMu    sync.Mutex
	anchorNames = map[string]string{}
)

// anchoredPath finds the paths AnchorDir hands out, in a message.
var anchoredPath = regexp.MustCompile(`/proc/self/fd/[0-9]+`)

// ShowAnchors returns msg with each anchored directory (/proc/self/fd/N,
// which names nothing outside this process) written as the name the
// operator gave it, so that an error about a log reads
// "/var/log/steward/x.log: no space left on device". What is written is the
// name as it was checked, not necessarily the directory's name now.
func ShowAnchors(msg string) string {
	anchorMu.Lock()
	defer anchorMu.Unlock()
	if len(anchorNames) == 0 {
		return msg
	}
	return anchoredPath.ReplaceAllStringFunc(msg, func(p string) string {
		if dir, ok := anchorNames[p]; ok {
			return dir
		}
		return p
	})
}

// AnchorDir holds dir open and returns a path that names the directory
// itself, whatever its name becomes: /proc/self/fd/N. SecureDir checks a
// directory and every one above it once; a group that may write a
// directory above (Ubuntu's /var/log, root:syslog 0775) can rename the
// checked directory away and put one of its own in its place, and a worker
// that then writes by name (rotating logs as root, every second) writes
// through the links planted there: a member of that group had root copy a
// file of its choosing to /etc/sudoers.d. Through the anchor the worker
// goes on writing in the directory it checked. The path is for this
// process only (a child's /proc/self is its own): nothing that a service
// or a probe is given may name it. Where /proc does not show the
// directory (not mounted), dir is returned as it is.
//
// The directory opened is checked itself (SecureDir checked it by name, a
// moment before: it could have been swapped since): it must be a
// directory of this process's user or root, that no other may write.
func AnchorDir(dir string) (string, error) {
	f, err := os.OpenFile(dir, os.O_RDONLY|syscall.O_DIRECTORY, 0)
	if err != nil {
		return "", err
	}
	if err := checkOpenDir(f); err != nil {
		f.Close()
		return "", fmt.Errorf("%s: %w", dir, err)
	}
	anchored := "/proc/self/fd/" + strconv.Itoa(int(f.Fd()))
	want, err1 := f.Stat()
	got, err2 := os.Stat(anchored)
	if err1 != nil || err2 != nil || !os.SameFile(want, got) {
		f.Close()
		return dir, nil
	}
	anchors = append(anchors, f)
	anchorMu.Lock()
	anchorNames[anchored] = filepath.Clean(dir)
	anchorMu.Unlock()
	return anchored, nil
}

// checkOpenDir holds the open directory f to SecureDir's rule for the
// directory itself: its owner this process's user or root, writable by
// its owner alone.
func checkOpenDir(f *os.File) error {
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return nil
	}
	if uid := uint32(os.Geteuid()); st.Uid != uid && st.Uid != 0 {
		return fmt.Errorf("the directory opened belongs to uid %d, not to this worker's user (%d) or root", st.Uid, uid)
	}
	if perm := fi.Mode().Perm(); perm&0o022 != 0 {
		return fmt.Errorf("the directory opened is writable by other users (mode %#o)", perm)
	}
	return nil
}
