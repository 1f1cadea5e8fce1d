package workflows

import (
	"github.com/steward-sh/steward/internal/spec"
	"github.com/steward-sh/steward/internal/supervise"
)

// maxCarryBytes is what a supervisor's continue-as-new may carry: Temporal
// refuses an input over 2 MiB (limit.blobSize.error) and ends the
// workflow (BAD_CONTINUE_AS_NEW_ATTRIBUTES), so a root that carried more
// left its tree headless. The rest of 2 MiB is the envelope's.
const maxCarryBytes = 1900 << 10

// fitCarry brings next (a continue-as-new's input) under maxCarryBytes
// when it is over: first each child's record loses what it holds for
// display only (supervise.TrimForCarry), then the undelivered
// notifications go (counted as dropped), then the journal but its newest
// entries. Each piece is bounded, not their sum: a large spec, a thousand
// children's reports padded by hand and twenty notifications with large
// headers together were past it. A continue-as-new's input is not part of
// what a replay compares, so this changes no history.
//
// It reports whether next fits now; one that does not (a rolling update's
// previous nodes, which it cannot cut, beside a large level) is not
// continued (SupCarryFits): the run goes on until it fits.
func (s *supervisorRun) fitCarry(next *SupervisorInput) bool {
	size := spec.EncodedSize(*next)
	if size <= maxCarryBytes {
		return true
	}
	c := next.Carry
	c.Children = supervise.TrimForCarry(c.Children)
	trimmed := spec.EncodedSize(*next)
	dropped := 0
	if trimmed > maxCarryBytes && len(c.Notifications) > 0 {
		dropped = len(c.Notifications)
		for range dropped {
			count(s.ctx, MetricNotificationsDropped, nil)
		}
		c.Notifications = nil
		trimmed = spec.EncodedSize(*next)
	}
	if trimmed > maxCarryBytes && len(c.Journal) > carryJournalFloor {
		c.Journal = c.Journal[len(c.Journal)-carryJournalFloor:]
		trimmed = spec.EncodedSize(*next)
	}
	s.log.Warn("continue-as-new: the carried state was past what the server takes, and was trimmed",
		"path", s.in.Path, "bytes", size, "now", trimmed, "limit", maxCarryBytes, "notificationsDropped", dropped)
	return trimmed <= maxCarryBytes
}

// carryJournalFloor: the journal entries a trimmed carry keeps.
const carryJournalFloor = 10
