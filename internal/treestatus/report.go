package treestatus

import (
	"github.com/steward-sh/steward/internal/spec"
	"github.com/steward-sh/steward/internal/tick"
)

// What a node reports to its supervisor, and which transitions are
// notified (workflows/publish.go says why reports are kept small).

// MaxRecordText bounds the free text (reason, last error) of a record sent
// to a supervisor, so that a record stays a few hundred bytes whatever a
// driver says; the worker's own status keeps it whole.
const MaxRecordText = 200

// Narrow is the record of st its supervisor keeps: no children, free text
// bounded.
func Narrow(st Status) Status {
	st.Children = nil
	st.Reason = truncate(st.Reason, MaxRecordText)
	st.LastAction.Error = truncate(st.LastAction.Error, MaxRecordText)
	return st
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// UrgentChange reports whether a child's new status b differs from its
// last report a in something its supervisor acts on.
func UrgentChange(a, b Status) bool {
	return a.Terminations != b.Terminations || a.SuperviseSeq != b.SuperviseSeq || a.Generation != b.Generation ||
		a.Desired != b.Desired || a.AwaitingRestart != b.AwaitingRestart || a.Completed != b.Completed
}

// NotifyEvent is the event a transition of a node's state is, if any
// (spec.Notify's events), and whether the node is in trouble after it (a
// later running is "recovered").
func NotifyEvent(from, to string, troubled, supervisor bool) (event string, troubledAfter bool) {
	switch {
	case from == to:
		return "", troubled
	case to == string(tick.Failed) && supervisor:
		return spec.EventGaveUp, true
	case to == string(tick.Failed):
		return spec.EventFailed, true
	case to == string(tick.Unknown):
		return spec.EventUnknown, true
	case to == string(tick.Running) && troubled:
		return spec.EventRecovered, false
	}
	return "", troubled
}
