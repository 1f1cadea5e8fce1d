package supervise

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// A carry of three parts (records, notifications, journal) whose sizes the
// test sets: FitCarry cuts them in order, each only while still over.
type fakeCarry struct {
	records, notes, journal int // bytes of each
	recordsTrimmedTo        int // what TrimRecords leaves
	journalEntries          int
	steps                   []string
}

func (c *fakeCarry) trims() CarryTrims {
	return CarryTrims{
		Size:              func() int { return c.records + c.notes + c.journal },
		TrimRecords:       func() { c.steps = append(c.steps, "records"); c.records = c.recordsTrimmedTo },
		Notifications:     3,
		DropNotifications: func() { c.steps = append(c.steps, "notifications"); c.notes = 0 },
		Journal:           c.journalEntries,
		CutJournal: func(keep int) {
			c.steps = append(c.steps, "journal")
			c.journal = c.journal * keep / c.journalEntries
		},
	}
}

func TestFitCarry_CutsInOrderOnlyWhileOver(t *testing.T) {
	for _, tc := range []struct {
		name      string
		c         fakeCarry
		steps     []string
		fits      bool
		dropped   int
		trimmedTo int
	}{
		{name: "within: untouched", c: fakeCarry{records: 50, notes: 20, journal: 20, recordsTrimmedTo: 10, journalEntries: 100}, fits: true, trimmedTo: 90},
		{name: "the records' display fields suffice", c: fakeCarry{records: 100, notes: 10, journal: 10, recordsTrimmedTo: 50, journalEntries: 100},
			steps: []string{"records"}, fits: true, trimmedTo: 70},
		{name: "then the notifications", c: fakeCarry{records: 100, notes: 40, journal: 20, recordsTrimmedTo: 60, journalEntries: 100},
			steps: []string{"records", "notifications"}, fits: true, dropped: 3, trimmedTo: 80},
		{name: "then the journal but its newest", c: fakeCarry{records: 100, notes: 40, journal: 100, recordsTrimmedTo: 60, journalEntries: 100},
			steps: []string{"records", "notifications", "journal"}, fits: true, dropped: 3, trimmedTo: 70},
		{name: "still over: not fit", c: fakeCarry{records: 300, notes: 40, journal: 100, recordsTrimmedTo: 200, journalEntries: 100},
			steps: []string{"records", "notifications", "journal"}, dropped: 3, trimmedTo: 210},
		{name: "a journal at its floor is kept", c: fakeCarry{records: 300, notes: 0, journal: 100, recordsTrimmedTo: 200, journalEntries: CarryJournalFloor},
			steps: []string{"records", "notifications"}, dropped: 3, trimmedTo: 300},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := tc.c
			f := FitCarry(c.trims(), 100)
			require.Equal(t, tc.steps, c.steps)
			require.Equal(t, tc.fits, f.Fits)
			require.Equal(t, tc.dropped, f.NotificationsDropped)
			require.Equal(t, tc.trimmedTo, f.After)
			require.Equal(t, len(tc.steps) > 0, f.Trimmed)
		})
	}
}
