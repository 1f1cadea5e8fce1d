package treestatus

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// What a node's workflow shows as "Current Details" on its page in the Web
// UI (Temporal markdown; no history event), and which changes of a
// worker's status are worth a report to its supervisor.

// SupervisorDetails is a supervisor's status as a markdown table: its own
// record and a row per direct child.
func SupervisorDetails(st Status) string {
	// Built on every event with a row per child: no fmt in the rows.
	var b strings.Builder
	b.Grow(160 + 100*len(st.Children))
	// (fmt.Sprintf, not Fprintf: workflowcheck counts writing to an
	// io.Writer as I/O.)
	b.WriteString(fmt.Sprintf("**%s** — %s · generation %d\n\n", st.State, st.Reason, st.Generation))
	if u := st.Update; u != nil {
		b.WriteString(fmt.Sprintf("revision %d · update **%s**: %d of %d updated", st.Revision, u.State, u.Updated, u.Total))
		if len(u.InFlight) > 0 {
			b.WriteString(" · in flight: " + strings.Join(u.InFlight, ", "))
		}
		if u.Reason != "" {
			b.WriteString(" — " + strings.ReplaceAll(u.Reason, "|", "/"))
		}
		b.WriteString("\n\n")
	}
	b.WriteString("| child | kind | state | desired | restarts | reason |\n|---|---|---|---|---|---|\n")
	for _, c := range st.Children {
		for _, f := range []string{c.Path, c.Kind, c.State, c.Desired} {
			b.WriteString("| ")
			b.WriteString(f)
			b.WriteString(" ")
		}
		b.WriteString("| ")
		b.WriteString(strconv.Itoa(c.Restarts))
		b.WriteString(" (+")
		b.WriteString(strconv.Itoa(c.ManualRestarts))
		b.WriteString(" manual) | ")
		b.WriteString(strings.ReplaceAll(c.Reason, "|", "/"))
		b.WriteString(" |\n")
	}
	return b.String()
}

// WorkerDetails is a worker's status: its state, counters, last action
// and pending restart.
func WorkerDetails(st Status) string {
	d := fmt.Sprintf("**%s** (desired %s) — %s\n\nrestarts: %d automatic, %d manual · generation %d",
		st.State, st.Desired, st.Reason, st.Restarts, st.ManualRestarts, st.Generation)
	if la := st.LastAction; la.Name != "" {
		d += fmt.Sprintf("\n\nlast action: %s %s (%s)", la.Name, la.Status, attemptsWord(la.Attempts))
		if la.Error != "" {
			d += ": " + la.Error
		}
	}
	if !st.BackoffUntil.IsZero() {
		d += "\n\nrestart at " + st.BackoffUntil.Format(time.RFC3339)
	}
	return d
}

func attemptsWord(n int) string {
	if n == 1 {
		return "1 attempt"
	}
	return fmt.Sprintf("%d attempts", n)
}

// SameReport reports whether two statuses of a worker agree on what its
// supervisor acts on or shows as the worker's state. Counters, the last
// action and the reason of an unchanged state (a manual restart: running,
// then running again) are not reported on their own: they ride along with
// the next report, and `starter status` reads them from the worker itself.
// placement: where the worker runs (host, stale copies) counts too (worker
// code version 5 on: a drain waits on it).
func SameReport(a, b Status, placement bool) bool {
	if placement && (a.Host != b.Host || !slices.Equal(a.StaleCopies, b.StaleCopies)) {
		return false
	}
	return a.State == b.State && a.Desired == b.Desired && a.Completed == b.Completed &&
		a.Generation == b.Generation && a.Terminations == b.Terminations &&
		a.AwaitingRestart == b.AwaitingRestart && a.SuperviseSeq == b.SuperviseSeq
}
