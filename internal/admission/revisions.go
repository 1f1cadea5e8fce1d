package admission

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
)

// RevisionStore keeps, per path, the newest signed revision this host has
// started and the one it ran before that, in a file of the host's state
// directory (it outlives the worker, as the process records do). A start
// whose signature is older than the newest is refused unless it is that
// previous revision: a rolling update's revert sends back the spec it
// replaced, which its operator signed; anything older is a replay.
//
// Version 1 signatures have revision 0: a host that has run a version 2
// spec of a path takes a version 1 spec of it only as the revert to what
// it ran before.
type RevisionStore struct {
	file string
	mu   sync.Mutex
	runs map[string]revisions
}

// revisions are a path's newest revision started here and the one before.
type revisions struct {
	Newest   int64 `json:"newest"`
	Previous int64 `json:"previous"`
}

// RevisionsFile is the store's file in a host's state directory.
const RevisionsFile = "signed-revisions.json"

// OpenRevisions reads the store in dir (none yet: empty). A file that
// cannot be read is an error: a host that forgot what it ran would take
// every replay.
func OpenRevisions(dir string) (*RevisionStore, error) {
	s := &RevisionStore{file: filepath.Join(dir, RevisionsFile), runs: map[string]revisions{}}
	data, err := os.ReadFile(s.file)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return s, nil
	case err != nil:
		return nil, fmt.Errorf("signed revisions: %w", err)
	}
	if err := json.Unmarshal(data, &s.runs); err != nil {
		return nil, fmt.Errorf("signed revisions %s: %w", s.file, err)
	}
	return s, nil
}

// Admit refuses revision rev of path if it is older than the newest this
// host has started and not the one before it; otherwise it records it as
// started (before anything runs: a start that then fails still counts,
// its operator signed it). A nil store admits everything.
func (s *RevisionStore) Admit(path string, rev int64) error {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	r, seen := s.runs[path]
	switch {
	case !seen:
		r = revisions{Newest: rev, Previous: rev}
	case rev > r.Newest:
		r = revisions{Newest: rev, Previous: r.Newest}
	case rev == r.Newest || rev == r.Previous:
		return nil
	default:
		return &Refusal{Rule: "signature", Msg: fmt.Sprintf(
			"the spec of %s is signed at revision %d, older than revision %d this host has run (and not %d, the one it ran before): an old signed spec is not run again",
			path, rev, r.Newest, r.Previous)}
	}
	s.runs[path] = r
	return s.save()
}

// save writes the store whole: a temporary file renamed over it.
func (s *RevisionStore) save() error {
	data, err := json.Marshal(s.runs)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(s.file), 0o700); err != nil {
		return fmt.Errorf("signed revisions: %w", err)
	}
	tmp := s.file + ".tmp"
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return fmt.Errorf("signed revisions: %w", err)
	}
	if err := os.Rename(tmp, s.file); err != nil {
		return fmt.Errorf("signed revisions: %w", err)
	}
	return nil
}
