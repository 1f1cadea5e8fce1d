package process

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// Reading a service's log (`starter logs`): the host's worker reads the
// file its process driver writes (LogPath), so output never travels
// through the workflows that supervise the service.

// MaxLogRead bounds what one read returns: the tail's oldest lines are cut
// beyond it, and a follow read returns the rest at its next call.
const MaxLogRead = 256 << 10

// LogPath is the log file of the process of a workflow under dir.
func LogPath(dir, workflowID string) string { return filepath.Join(dir, logName(workflowID)) }

// ErrNoLog says the log file does not exist on this host.
var ErrNoLog = errors.New("no log file")

// TailLog returns the last n lines of the log of workflowID under dir (from
// its rotated backup too, when the file holds fewer), at most MaxLogRead
// bytes of them, and the file's size: where a follow read goes on.
func TailLog(dir, workflowID string, n int) (text string, end int64, err error) {
	path := LogPath(dir, workflowID)
	cur, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return "", 0, fmt.Errorf("%w %s", ErrNoLog, path)
	}
	if err != nil {
		return "", 0, err
	}
	out := lastLines(cur, n)
	if k := countLines(out); k < n {
		if old, err := os.ReadFile(path + ".1"); err == nil {
			out = append(lastLines(old, n-k), out...)
		}
	}
	if len(out) > MaxLogRead {
		out = out[len(out)-MaxLogRead:]
		if i := bytes.IndexByte(out, '\n'); i >= 0 {
			out = out[i+1:]
		}
	}
	return string(out), int64(len(cur)), nil
}

// ReadLogFrom returns what the log holds from offset on (at most
// MaxLogRead bytes) and the offset after it. A file shorter than offset was
// rotated: it is read from its start.
func ReadLogFrom(dir, workflowID string, offset int64) (text string, next int64, err error) {
	path := LogPath(dir, workflowID)
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return "", 0, nil // rotated away this instant, or not written yet
	}
	if err != nil {
		return "", offset, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return "", offset, err
	}
	if st.Size() < offset {
		offset = 0
	}
	if st.Size() == offset {
		return "", offset, nil
	}
	buf := make([]byte, min(st.Size()-offset, MaxLogRead))
	k, err := f.ReadAt(buf, offset)
	if err != nil && !errors.Is(err, io.EOF) {
		return "", offset, err
	}
	return string(buf[:k]), offset + int64(k), nil
}

// lastLines returns the last n lines of b (a final line without its
// newline counts).
func lastLines(b []byte, n int) []byte {
	if n <= 0 || len(b) == 0 {
		return nil
	}
	end := len(b)
	if b[end-1] == '\n' {
		end--
	}
	for i := end - 1; i >= 0; i-- {
		if b[i] == '\n' {
			n--
			if n == 0 {
				return b[i+1:]
			}
		}
	}
	return b
}

func countLines(b []byte) int {
	if len(b) == 0 {
		return 0
	}
	n := bytes.Count(b, []byte{'\n'})
	if b[len(b)-1] != '\n' {
		n++
	}
	return n
}
