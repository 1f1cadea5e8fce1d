package supervise

import "time"

// Which report of a child a supervisor takes, and what it learns from it:
// decided here, the record updated by the supervisor workflow.
//
// A child's reports come by signal, from its workflow and from the
// activities that carry out its actions, and may arrive late or out of
// order: each is numbered (Seq), and names the run of the child's
// workflow that sent it. A report is the child's when it comes from the
// run the supervisor knows (or the first run it hears of, for a child it
// adopted), the child is not closed, and it is newer than the last taken
// (an end report is taken whatever its number: the child says it ends).
// Terminations are counted from the difference with the last seen: more is
// ends to weigh against the restart intensity; fewer is a new run of the
// child (its count began again).

// UnseenTerminations: a child's terminations are not known yet (a child
// found running, adopted): its first report sets them, counting none.
const UnseenTerminations = -1

// Intake is what a supervisor's record of a child keeps of its reports.
type Intake struct {
	// Run is the child's workflow run the reports come from ("": not
	// known yet).
	Run string
	// Seq is the number of the last report taken.
	Seq int64
	// SeenTerminations are the terminations the child reported last
	// (UnseenTerminations: none yet).
	SeenTerminations int
}

// Report is what the intake reads of a child's report.
type Report struct {
	Run          string
	Seq          int64
	Ended        bool
	Terminations int
}

// SeqSkew is how far past the supervisor's time a child's report may be
// numbered (Guard.NotAfter): a child numbers its reports by its own time,
// which the server's clock gives both; the rest is room for its nodes'
// clocks to differ.
const SeqSkew = 10 * time.Minute

// Guard is what a supervisor of versions.SupReportSeqBounded on holds a
// child's reports to; its zero value holds them to nothing (version 10).
// A report comes by signal, and anyone who may signal the supervisor can
// send one: each rule keeps a forged report from taking the child's record
// for good.
type Guard struct {
	// NotAfter is the highest number taken (the supervisor's time in ns
	// plus SeqSkew): children number their reports by time, so a report
	// numbered past it was sent by hand, and taken it would hold the
	// record against every real report after it.
	NotAfter int64
	// Strict: once the record knows the child's run, a report must name
	// it; and an end report is taken only while EndAsked (the supervisor
	// asked the child to end: its shutdown). A forged end report, naming
	// no run, made a live child's record Ended, and nothing made it live
	// again: its supervisor no longer restarted, stopped or started it.
	Strict, EndAsked bool
}

// Take decides on report r of a child in lifecycle l whose record holds
// in: whether the report is the child's to take, the record's intake after
// it, and how many new terminations it tells (to count against the
// intensity; an end report's are not: the child ends on purpose). g holds
// the report to the supervisor's guard.
func Take(l Lifecycle, in Intake, r Report, g Guard) (take bool, out Intake, terminated int) {
	switch {
	case r.Run != "" && in.Run != "" && r.Run != in.Run:
		return false, in, 0 // another run of this path
	case l == Closed:
		return false, in, 0
	case g.NotAfter != 0 && r.Seq > g.NotAfter:
		return false, in, 0 // numbered past the supervisor's time: not a child's
	case g.Strict && in.Run != "" && r.Run == "":
		return false, in, 0 // names no run: not the child's
	case g.Strict && r.Ended && !g.EndAsked:
		return false, in, 0 // an end nobody asked for: not the child's
	case r.Seq > 0 && r.Seq <= in.Seq && !r.Ended:
		return false, in, 0 // overtaken by a newer report
	}
	out = in
	if out.Run == "" {
		out.Run = r.Run // adopted: its run is known from its first report
	}
	out.Seq = max(out.Seq, r.Seq)
	if out.SeenTerminations == UnseenTerminations {
		out.SeenTerminations = r.Terminations
	}
	if n := r.Terminations - out.SeenTerminations; n > 0 && !r.Ended {
		out.SeenTerminations, terminated = r.Terminations, n
	} else if n < 0 {
		out.SeenTerminations = r.Terminations // a new run of the child
	}
	return true, out, terminated
}
