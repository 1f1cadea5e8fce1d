package workflows

import "time"

// A node's journal: its last transitions, for the `history` query; a
// worker's and a supervisor's alike.

// JournalLimit bounds a worker's journal: about 180 bytes an entry as JSON
// with its action, 18 KB carried over continue-as-new at most (measured).
const JournalLimit = 100

// JournalEntry is one state transition: when, from which state to which,
// the reason status gave, and the action whose end caused it (if one did).
type JournalEntry struct {
	Time   time.Time     `json:"time"`
	From   string        `json:"from"`
	State  string        `json:"state"`
	Reason string        `json:"reason"`
	Action *ActionStatus `json:"action,omitempty"`
}

// appendJournal adds e to a journal, keeping the last JournalLimit.
func appendJournal(j []JournalEntry, e JournalEntry) []JournalEntry {
	j = append(j, e)
	if n := len(j) - JournalLimit; n > 0 {
		j = append([]JournalEntry(nil), j[n:]...)
	}
	return j
}
