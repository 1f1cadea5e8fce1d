package process

import (
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"time"
)

// Reading a part of a log across its files (`starter logs --since`,
// `--previous`): the rotated files, oldest first, compressed ones
// included, then the log itself, read as one stream, located by their
// indexes (logrotate.go).

// LogSelect picks a part of a log: what was written since Since (zero:
// from the oldest file kept), of the previous run of its service only
// (Previous: from the start before the last one up to the last one).
type LogSelect struct {
	Since    time.Time `json:"since,omitempty"`
	Previous bool      `json:"previous,omitempty"`
}

// ErrNoPreviousRun: the log holds no earlier run of its service (one ran
// only once here, or its earlier runs were rotated away).
var ErrNoPreviousRun = errors.New("no earlier run of the service is in its log")

// logPart is one file of a log: a rotated one or the log itself.
type logPart struct {
	path  string
	gz    bool
	id    uint64
	mod   time.Time
	size  int64 // as stored: compressed for gz
	marks []logMark
}

// logParts lists the files of the log of workflowID under dir, oldest
// first, the log itself last (absent: not listed).
func logParts(dir, workflowID string) ([]logPart, error) {
	path := readPath(dir, workflowID)
	var parts []logPart
	add := func(file string, gz bool) error {
		st, err := os.Stat(file)
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		parts = append(parts, logPart{path: file, gz: gz, id: fileID(st), mod: st.ModTime(), size: st.Size(), marks: readIndex(file)})
		return nil
	}
	for k := highestRotated(path); k >= 1; k-- {
		if err := add(rotatedPath(path, k), k > 1); err != nil {
			return nil, err
		}
	}
	if err := add(path, false); err != nil {
		return nil, err
	}
	return parts, nil
}

// highestRotated is the highest k for which the log at path has a rotated
// file (0: none), looked up one by one: rotated files are numbered without
// gaps from 1.
func highestRotated(path string) int {
	k := 0
	for ; ; k++ {
		if _, err := os.Lstat(rotatedPath(path, k+1)); err != nil {
			if k == 0 {
				// "<log>.2.gz" without "<log>.1" (a rotation cut short):
				// go on looking.
				if _, err := os.Lstat(rotatedPath(path, 2)); err == nil {
					continue
				}
			}
			return k
		}
	}
}

// logPoint is a place in a log: a part's index and an offset in it (as
// read: decompressed; toEnd: the part's end).
type logPoint struct {
	part int
	off  int64
}

// toEnd as an offset is the end of its part.
const toEnd = -1

// after says whether a is after b.
func (a logPoint) after(b logPoint) bool {
	if a.part != b.part {
		return a.part > b.part
	}
	return b.off != toEnd && (a.off == toEnd || a.off > b.off)
}

// selectRange is where sel begins and ends in parts (empty: nothing of
// the log is selected).
func selectRange(parts []logPart, sel LogSelect) (from, to logPoint, empty bool, err error) {
	to = logPoint{part: len(parts) - 1, off: toEnd}
	if sel.Previous {
		var starts []logPoint
		for i, p := range parts {
			for _, m := range p.marks {
				if m.Start {
					starts = append(starts, logPoint{part: i, off: m.Offset})
				}
			}
		}
		switch {
		case len(starts) == 0, len(starts) == 1 && starts[0] == (logPoint{}):
			return from, to, true, ErrNoPreviousRun
		case len(starts) == 1:
			to = starts[0] // the earlier run began before the oldest file kept
		default:
			from, to = starts[len(starts)-2], starts[len(starts)-1]
		}
	}
	if !sel.Since.IsZero() {
		i := 0
		for i < len(parts) && parts[i].mod.Before(sel.Since) {
			i++ // all of it written before
		}
		if i == len(parts) {
			return from, to, true, nil
		}
		since := logPoint{part: i}
		for _, m := range parts[i].marks {
			if !m.At.After(sel.Since) && m.Offset > since.off {
				since.off = m.Offset // written by then
			}
		}
		if since.after(from) {
			from = since
		}
	}
	return from, to, from.after(to) || from == to, nil
}

// ReadLogRange returns the part of the log of workflowID under dir that sel
// picks, at most MaxLogRead bytes of it from at on (at zero: from its
// beginning), the position after what it returns, and whether more
// follows. A position at the end of the log itself is one ReadLogFrom
// follows on from.
func ReadLogRange(dir, workflowID string, sel LogSelect, at LogPosition) ([]byte, LogPosition, bool, error) {
	parts, err := logParts(dir, workflowID)
	if err != nil {
		return nil, at, false, err
	}
	if len(parts) == 0 {
		return nil, at, false, fmt.Errorf("%w %s", ErrNoLog, LogPath(dir, workflowID))
	}
	last := parts[len(parts)-1]
	endOfLog := LogPosition{File: last.id}
	if !last.gz {
		endOfLog.Offset = last.size
	}
	from, to, empty, err := selectRange(parts, sel)
	if err != nil || empty {
		return nil, endOfLog, false, err
	}
	if at != (LogPosition{}) {
		found := false
		for i, p := range parts {
			if p.id == at.File {
				from, found = logPoint{part: i, off: at.Offset}, true
				break
			}
		}
		if !found {
			return nil, at, false, errors.New("the log was rotated while it was read: read it again")
		}
	}
	var out []byte
	for cur := from; ; cur = (logPoint{part: cur.part + 1}) {
		end := int64(toEnd)
		if cur.part == to.part {
			end = to.off
		}
		b, n, err := readPart(parts[cur.part], cur.off, end, MaxLogRead-len(out))
		if err != nil {
			return out, at, false, err
		}
		out = append(out, b...)
		full := len(out) >= MaxLogRead
		if cur.part >= to.part {
			more := full && (end == toEnd || n < end)
			return out, LogPosition{File: parts[cur.part].id, Offset: n}, more, nil
		}
		if full {
			return out, LogPosition{File: parts[cur.part].id, Offset: n}, true, nil
		}
	}
}

// readPart reads the part from offset off (decompressed) up to end
// (toEnd: its end), at most limit bytes; it returns them and the offset
// after.
func readPart(p logPart, off, end int64, limit int) ([]byte, int64, error) {
	if limit <= 0 || end != toEnd && off >= end {
		return nil, off, nil
	}
	f, err := os.Open(p.path)
	if err != nil {
		return nil, off, err
	}
	defer f.Close()
	var r io.Reader = f
	if p.gz {
		zr, err := gzip.NewReader(f)
		if err != nil {
			return nil, off, fmt.Errorf("%s: %w", p.path, err)
		}
		defer zr.Close()
		if _, err := io.CopyN(io.Discard, zr, off); err != nil && !errors.Is(err, io.EOF) {
			return nil, off, fmt.Errorf("%s: %w", p.path, err)
		}
		r = zr
	} else if _, err := f.Seek(off, io.SeekStart); err != nil {
		return nil, off, err
	}
	n := int64(limit)
	if end != toEnd {
		n = min(n, end-off)
	}
	b, err := io.ReadAll(io.LimitReader(r, n))
	if err != nil {
		return nil, off, err
	}
	return b, off + int64(len(b)), nil
}
