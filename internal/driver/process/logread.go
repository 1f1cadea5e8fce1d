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

// legacyLogPath is the log file of a workflow under dir in the layout of
// older workers (logfile.go).
func legacyLogPath(dir, workflowID string) string {
	return filepath.Join(dir, legacyLogName(workflowID))
}

// readPath is the log file to read for a workflow: LogPath, or, when that
// does not exist and the legacy one does, the legacy one (a service an
// older worker started writes it still, or wrote it last). A legacy name
// may have been shared by two workflow IDs ("a/b_c" and "a_b/c"): its
// file then holds what both wrote.
func readPath(dir, workflowID string) string {
	path := LogPath(dir, workflowID)
	if _, err := os.Lstat(path); errors.Is(err, fs.ErrNotExist) {
		if _, err := os.Lstat(legacyLogPath(dir, workflowID)); err == nil {
			return legacyLogPath(dir, workflowID)
		}
	}
	return path
}

// ErrNoLog says the log file does not exist on this host.
var ErrNoLog = errors.New("no log file")

// LogPosition is where a follow read of a log goes on: the offset in the
// file with identity File (its inode; 0 where unknown).
type LogPosition struct {
	Offset int64  `json:"offset"`
	File   uint64 `json:"file,omitempty"`
	// Backup: Offset is in the ".1" copy of a file truncated since (it is
	// read to its end, then the file from its start).
	Backup bool `json:"backup,omitempty"`
}

// TailLog returns the last n lines of the log of workflowID under dir (from
// its rotated backup too, when the file holds fewer), at most MaxLogRead
// bytes of them, and the position of the file's end: where a follow read
// goes on. Without the log of this layout it reads the legacy one
// (readPath).
func TailLog(dir, workflowID string, n int) ([]byte, LogPosition, error) {
	path := readPath(dir, workflowID)
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, LogPosition{}, fmt.Errorf("%w %s", ErrNoLog, LogPath(dir, workflowID))
	}
	if err != nil {
		return nil, LogPosition{}, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, LogPosition{}, err
	}
	cur, whole, err := readTail(f, fi.Size())
	if err != nil {
		return nil, LogPosition{}, err
	}
	out := lastLines(cur, n)
	if k := countLines(out); k < n && whole { // (the backup's lines come before the file's first: not before a cut)
		if old, err := os.Open(path + ".1"); err == nil {
			if oi, err := old.Stat(); err == nil {
				if b, _, err := readTail(old, oi.Size()); err == nil {
					out = append(lastLines(b, n-k), out...)
				}
			}
			old.Close()
		}
	}
	if len(out) > MaxLogRead {
		out = out[len(out)-MaxLogRead:]
		if i := bytes.IndexByte(out, '\n'); i >= 0 && i+1 < len(out) {
			out = out[i+1:] // from a whole line; a last line longer than all of it is kept cut
		}
	}
	return out, LogPosition{Offset: fi.Size(), File: fileID(fi)}, nil
}

// readTail reads the last MaxLogRead bytes (and one more) of f, of size:
// a tail never holds more of a log in memory, however large the log (one
// whose maxSize is huge, or that grows between two rotations; the whole
// file was read before, and a tail of 1 line of a 300 MiB log held 616 MiB
// of the worker's memory). A first line cut by the window is left out,
// unless it is all the window holds. whole: the window is all of f.
func readTail(f *os.File, size int64) (buf []byte, whole bool, err error) {
	from := max(0, size-MaxLogRead-1)
	buf = make([]byte, size-from)
	n, err := f.ReadAt(buf, from)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, false, err
	}
	buf = buf[:n]
	if from > 0 {
		if i := bytes.IndexByte(buf, '\n'); i >= 0 && i+1 < len(buf) {
			buf = buf[i+1:]
		}
	}
	return buf, from == 0, nil
}

// ReadLogFrom returns what the log holds from pos on (at most MaxLogRead
// bytes) and the position after it. When the file was rotated since pos
// (its backup ".1" is now the file pos was in), the rest of the backup comes
// first, then the new file from its start; a file shorter than pos's offset
// (truncated) is read from its start. Without the log of this layout it
// reads the legacy one (readPath); when the service is started again, and
// writes the new file, a follow goes on there from its start (another
// file).
func ReadLogFrom(dir, workflowID string, pos LogPosition) ([]byte, LogPosition, error) {
	path := readPath(dir, workflowID)
	fi, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, pos, nil // rotated away this instant, or not written yet
	}
	if err != nil {
		return nil, pos, err
	}
	if id := fileID(fi); pos.File != 0 && id != pos.File {
		if old, err := os.Stat(path + ".1"); err == nil && fileID(old) == pos.File && old.Size() > pos.Offset {
			b, next, err := readFrom(path+".1", pos.Offset)
			return b, LogPosition{Offset: next, File: pos.File}, err
		}
		pos = LogPosition{File: id}
	}
	pos.File = fileID(fi)
	// Truncated: the driver rotates by copying the file to ".1" and
	// truncating it. The rest of the copy comes first (the copy is at least
	// as long as what was read), then the file from its start.
	if pos.Backup || fi.Size() < pos.Offset {
		if old, err := os.Stat(path + ".1"); err == nil && old.Size() > pos.Offset {
			b, next, err := readFrom(path+".1", pos.Offset)
			return b, LogPosition{Offset: next, File: pos.File, Backup: true}, err
		}
		pos.Offset, pos.Backup = 0, false
	}
	if fi.Size() == pos.Offset {
		return nil, pos, nil // nothing new: the common case of a follow
	}
	b, next, err := readFrom(path, pos.Offset)
	return b, LogPosition{Offset: next, File: pos.File}, err
}

// readFrom reads the file at path from offset, at most MaxLogRead bytes.
func readFrom(path string, offset int64) ([]byte, int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, offset, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, offset, err
	}
	buf := make([]byte, max(0, min(fi.Size()-offset, MaxLogRead)))
	k, err := f.ReadAt(buf, offset)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, offset, err
	}
	return buf[:k], offset + int64(k), nil
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
