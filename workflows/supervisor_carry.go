package workflows

import (
	"github.com/steward-sh/steward/internal/spec"
	"github.com/steward-sh/steward/internal/supervise"
)

// maxCarryBytes is what a supervisor's continue-as-new may carry
// (supervise.MaxCarryBytes says why).
const maxCarryBytes = supervise.MaxCarryBytes

// fitCarry brings next (a continue-as-new's input) under maxCarryBytes
// when it is over, as supervise.FitCarry decides: the records' display
// fields, then the undelivered notifications (counted as dropped), then
// the journal but its newest entries. It reports whether next fits now;
// one that does not is not continued (SupCarryFits).
func (s *supervisorRun) fitCarry(next *SupervisorInput) bool {
	c := next.Carry
	f := supervise.FitCarry(supervise.CarryTrims{
		Size:              func() int { return spec.EncodedSize(*next) },
		TrimRecords:       func() { c.Children = supervise.TrimForCarry(c.Children) },
		Notifications:     len(c.Notifications),
		DropNotifications: func() { c.Notifications = nil },
		Journal:           len(c.Journal),
		CutJournal:        func(keep int) { c.Journal = c.Journal[len(c.Journal)-keep:] },
	}, maxCarryBytes)
	if !f.Trimmed {
		return f.Fits
	}
	for range f.NotificationsDropped {
		count(s.ctx, MetricNotificationsDropped, nil)
	}
	s.log.Warn("continue-as-new: the carried state was past what the server takes, and was trimmed",
		"path", s.in.Path, "bytes", f.Before, "now", f.After, "limit", maxCarryBytes, "notificationsDropped", f.NotificationsDropped)
	return f.Fits
}
