package workflows

// Its children's reports: which a supervisor takes, and what it learns from
// them.

import (
	"fmt"
	"slices"
	"time"

	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/workflow"

	"github.com/steward-sh/steward/activities"
	"github.com/steward-sh/steward/internal/spec"
	"github.com/steward-sh/steward/internal/supervise"
	"github.com/steward-sh/steward/internal/treestatus"
	"github.com/steward-sh/steward/internal/versions"
)

func (s *supervisorRun) onChild(raw converter.RawValue) {
	var r ChildReport
	if err := decodeRaw(raw, &r); err != nil {
		s.reject(SignalChild, err)
		return
	}
	if len(r.More) >= activities.MaxReportsPerSignal {
		// A worker process sends at most that many in one signal.
		s.reject(SignalChild, fmt.Errorf("a batch of %d reports (at most %d)", len(r.More)+1, activities.MaxReportsPerSignal))
		return
	}
	more := r.More
	r.More = nil
	s.applyBounded(r)
	for _, m := range more { // a worker process's batch (activities.Reporter)
		m.More = nil
		s.applyBounded(m)
	}
}

// maxReportBytes bounds a child's report as its record keeps it (narrowed:
// its texts cut to treestatus.MaxRecordText). A child's own report is a few hundred
// bytes; a larger one was sent by someone else (the temporal CLI), and
// kept, it would grow this supervisor's carried state past what a
// continue-as-new may carry (Temporal's 2 MiB payload limit) and wedge it.
const maxReportBytes = 8 << 10

// applyBounded records a report, or rejects (and counts) one too large.
func (s *supervisorRun) applyBounded(r ChildReport) {
	if d := r.Status.Desired; d != "" && d != spec.DesiredRunning && d != spec.DesiredStopped {
		s.reject(SignalChild, fmt.Errorf("the report of %.100q says desired %.20q (running or stopped)", r.Status.Path, d))
		return
	}
	if err := spec.GenerationInRange(r.Status.Generation); err != nil && versions.SupGenerationBounded.In(s.in.Version) {
		s.reject(SignalChild, fmt.Errorf("the report of %.100q: %w", r.Status.Path, err))
		return
	}
	if n := spec.EncodedSize(treestatus.Narrow(r.Status)); n > maxReportBytes {
		s.reject(SignalChild, fmt.Errorf("the report of %.100q is %d bytes (a child's is at most %d)", r.Status.Path, n, maxReportBytes))
		return
	}
	s.apply(r)
}

// reportGuard is what this run holds its children's reports to
// (supervise.Guard; versions.SupReportSeqBounded).
func (s *supervisorRun) reportGuard() supervise.Guard {
	if !versions.SupReportSeqBounded.In(s.in.Version) {
		return supervise.Guard{}
	}
	return supervise.Guard{NotAfter: workflow.Now(s.ctx).Add(supervise.SeqSkew).UnixNano(), Strict: true, EndAsked: s.shuttingDown}
}

// apply records a child's report. A report of another run of the path (a
// removed one still stopping, a closed one) is not the child's; the end of
// a removed run releases a re-added child of the same path.
func (s *supervisorRun) apply(r ChildReport) {
	path := r.Status.Path
	if slices.Contains(s.carry.Removing, path) {
		// Its end report comes before its workflow closes: with a future,
		// the future says when the path is free for a re-added child.
		if _, watched := s.futures[path]; r.Ended && !watched {
			s.released(path)
		}
		return
	}
	for i := range s.carry.Children {
		rec := &s.carry.Children[i]
		if rec.Path != path || rec.Lifecycle == supervise.Deferred {
			continue
		}
		take, intake, terminated := supervise.Take(rec.Lifecycle,
			supervise.Intake{Run: rec.Run, Seq: rec.ReportSeq, SeenTerminations: rec.SeenTerminations},
			supervise.Report{Run: r.Run, Seq: r.Seq, Ended: r.Ended, Terminations: r.Status.Terminations}, s.reportGuard())
		if !take {
			return
		}
		rec.Run, rec.ReportSeq, rec.SeenTerminations = intake.Run, intake.Seq, intake.SeenTerminations
		if startedBy(*rec, r.Status) {
			rec.StartedAt = time.Time{} // started: its slot of the window is free
		}
		rec.Status = treestatus.Narrow(r.Status)
		if r.Ended {
			rec.Step(supervise.ReportedEnd)
		}
		if terminated > 0 {
			s.onTerminated(i, terminated)
		}
		return
	}
}
