package supervise

// MaxCarryBytes is what a supervisor's continue-as-new may carry: Temporal
// refuses an input over 2 MiB (limit.blobSize.error) and ends the workflow
// (BAD_CONTINUE_AS_NEW_ATTRIBUTES), so a root that carried more left its
// tree headless. The rest of 2 MiB is the envelope's.
const MaxCarryBytes = 1900 << 10

// CarryJournalFloor is the journal entries a trimmed carry keeps.
const CarryJournalFloor = 10

// CarryTrims are the ways a continue-as-new's input can be made smaller,
// as the workflow that holds it does them (FitCarry decides which, in what
// order). Size measures the input as it is now.
type CarryTrims struct {
	Size func() int
	// TrimRecords cuts what each child's record holds for display only
	// (TrimForCarry).
	TrimRecords func()
	// Notifications undelivered; DropNotifications drops them all.
	Notifications     int
	DropNotifications func()
	// Journal entries; CutJournal keeps the newest keep of them.
	Journal    int
	CutJournal func(keep int)
}

// CarryFit is what FitCarry did.
type CarryFit struct {
	// Before and After are the input's sizes; Trimmed is whether it was
	// over the limit (and anything was cut).
	Before, After int
	Trimmed       bool
	// NotificationsDropped: undelivered notifications cut (each to be
	// counted as dropped).
	NotificationsDropped int
	// Fits is whether the input is within the limit now. One that is not
	// (a rolling update's previous nodes, which cannot be cut, beside a
	// large level) is not continued: the run goes on until it fits
	// (versions.SupCarryFits).
	Fits bool
}

// FitCarry brings a continue-as-new's input under limit when it is over:
// first each child's record loses what it holds for display only, then
// the undelivered notifications go, then the journal but its newest
// CarryJournalFloor entries, each step only while the input is still over.
// Each piece is bounded, not their sum: a large spec, a thousand children's
// reports padded by hand and twenty notifications with large headers
// together were past it. A continue-as-new's input is not part of what a
// replay compares, so this changes no history.
func FitCarry(t CarryTrims, limit int) CarryFit {
	f := CarryFit{Before: t.Size()}
	f.After = f.Before
	if f.Before <= limit {
		f.Fits = true
		return f
	}
	f.Trimmed = true
	t.TrimRecords()
	f.After = t.Size()
	if f.After > limit && t.Notifications > 0 {
		f.NotificationsDropped = t.Notifications
		t.DropNotifications()
		f.After = t.Size()
	}
	if f.After > limit && t.Journal > CarryJournalFloor {
		t.CutJournal(CarryJournalFloor)
		f.After = t.Size()
	}
	f.Fits = f.After <= limit
	return f
}
