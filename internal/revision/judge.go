package revision

import (
	"fmt"
	"strings"
)

// Update is one supervisor's rolling update of a revision, as its status
// shows it (treestatus.UpdateStatus, with the supervisor's path).
type Update struct {
	Path   string
	State  string
	Reason string
	// Failed names the worker whose failure failed it.
	Failed string
}

// Judge says how revision rev's rollout stands from what the tree shows:
// the root's revision now, whether every node has taken the spec its
// supervisor sent it (settled: no row applying; a child supervisor
// begins its own update only once it has), and the updates of rev in the
// tree, each supervisor's last. The updates of one revision end apart; the
// revision's outcome is the worst of them: failed (one failed or was
// cancelled, not reverted: final at once), rolling (one still runs, or the
// tree has not settled), reverted, replaced, complete (every one
// completed, or the revision restarted no worker).
//
// Only the newest revision is judged, and only while the root has not
// counted a newer one: once it has, the updates of rev may be overwritten,
// and the log itself marks rev replaced if it still rolled (Log.Take).
func Judge(rootRevision, rev int64, settled bool, ups []Update) (Outcome, string) {
	switch {
	case rootRevision < rev:
		return Rolling, "the tree has not taken it yet"
	case rootRevision > rev:
		return Rolling, "a newer revision was taken"
	}
	var failed, reverted, replaced []string
	rolling := false
	for _, u := range ups {
		what := fmt.Sprintf("%s: %s", u.Path, u.Reason)
		if u.Failed != "" {
			what += fmt.Sprintf(" (worker %s/%s)", u.Path, u.Failed)
		}
		switch u.State {
		case "failed":
			failed = append(failed, what)
		case "cancelled":
			failed = append(failed, fmt.Sprintf("%s: cancelled by the operator", u.Path))
		case "reverted":
			reverted = append(reverted, what)
		case "replaced":
			replaced = append(replaced, u.Path)
		case "rolling", "paused", "awaitingPromotion", "reverting":
			rolling = true
		}
	}
	switch {
	case len(failed) > 0:
		return Failed, strings.Join(failed, "; ")
	case rolling:
		return Rolling, ""
	case len(reverted) > 0:
		return Reverted, strings.Join(reverted, "; ")
	case len(replaced) > 0:
		return Replaced, "a newer apply came while it rolled under " + strings.Join(replaced, ", ")
	case !settled:
		return Rolling, "a supervisor has not taken its spec yet"
	}
	return Complete, ""
}
