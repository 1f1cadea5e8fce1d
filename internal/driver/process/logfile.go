package process

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"sync"
)

// DefaultLogMaxBytes is the size at which a log file is rotated.
const DefaultLogMaxBytes = 10 << 20

// tailBytes is how much recent output a sink keeps in memory, for the error
// of a failed start.
const tailBytes = 4 << 10

// logName is the file name of a workflow's log: the workflow ID with every
// character outside [A-Za-z0-9._-] (path separators included) replaced by
// '_', so it always names a file directly under the log directory.
func logName(workflowID string) string {
	name := strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '.', r == '-', r == '_':
			return r
		}
		return '_'
	}, workflowID)
	if name == "" {
		name = "_"
	}
	return name + ".log"
}

// sink receives a process's stdout and stderr: it appends them to a file
// that it rotates by size (one backup, "<name>.1"), and keeps the last few
// KiB in memory. With no path, output is only kept in memory.
type sink struct {
	path string
	max  int64

	mu   sync.Mutex
	f    *os.File
	size int64
	err  error // the first file error; the tail is still kept
	tail []byte
}

// openSink opens (appending) the log file at path, creating its directory,
// and rotates it at once if it is already too big.
func openSink(path string, max int64) (*sink, error) {
	s := &sink{path: path, max: max}
	if path == "" {
		return s, nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, err
	}
	if err := s.open(); err != nil {
		return nil, err
	}
	if s.max > 0 && s.size >= s.max {
		if err := s.rotate(); err != nil {
			s.f.Close()
			return nil, err
		}
	}
	return s, nil
}

func (s *sink) open() error {
	f, err := os.OpenFile(s.path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return err
	}
	s.f, s.size = f, st.Size()
	return nil
}

// rotate renames the file to "<path>.1" (replacing the previous backup)
// and starts a new one.
func (s *sink) rotate() error {
	if err := s.f.Close(); err != nil {
		return err
	}
	s.f = nil
	if err := os.Rename(s.path, s.path+".1"); err != nil && !os.IsNotExist(err) {
		return err
	}
	return s.open()
}

// Write appends p to the file (rotating first when p would take it past
// the limit) and to the in-memory tail. It never fails: a file error is
// recorded and the output still reaches the tail, so a full disk cannot
// block the process on a full pipe.
func (s *sink) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tail = append(s.tail, p...)
	if len(s.tail) > tailBytes {
		s.tail = append(s.tail[:0:0], s.tail[len(s.tail)-tailBytes:]...)
	}
	if s.path == "" || s.err != nil {
		return len(p), nil
	}
	if s.f == nil {
		s.err = os.ErrClosed
		return len(p), nil
	}
	if s.max > 0 && s.size > 0 && s.size+int64(len(p)) > s.max {
		if err := s.rotate(); err != nil {
			s.err = err
			return len(p), nil
		}
	}
	n, err := s.f.Write(p)
	s.size += int64(n)
	if err != nil {
		s.err = err
	}
	return len(p), nil
}

// Tail returns the last n lines kept in memory.
func (s *sink) Tail(n int) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	t := bytes.TrimRight(s.tail, "\n")
	for i := len(t) - 1; i >= 0; i-- {
		if t[i] == '\n' {
			n--
			if n == 0 {
				return string(t[i+1:])
			}
		}
	}
	return string(t)
}

// Close closes the file.
func (s *sink) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.f == nil {
		return nil
	}
	err := s.f.Close()
	s.f = nil
	return err
}
