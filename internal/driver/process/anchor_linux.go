package process

import (
	"os"
	"strconv"
)

// anchors are the directories AnchorDir holds open for the life of the
// process (a closed *os.File would free its descriptor, and with it the
// path that names it).
var anchors []*os.File

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
func AnchorDir(dir string) (string, error) {
	f, err := os.Open(dir)
	if err != nil {
		return "", err
	}
	anchored := "/proc/self/fd/" + strconv.Itoa(int(f.Fd()))
	want, err1 := f.Stat()
	got, err2 := os.Stat(anchored)
	if err1 != nil || err2 != nil || !os.SameFile(want, got) {
		f.Close()
		return dir, nil
	}
	anchors = append(anchors, f)
	return anchored, nil
}
