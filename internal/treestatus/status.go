// Package treestatus is the status of a supervision tree as operators see
// it: one Status per node, nested down to the leaves, and how that nested
// view is assembled.
//
// No workflow carries the whole tree. A worker answers its `status` query
// for itself; a supervisor answers with its own record and one small record
// per direct child (what the child last reported to it). Assemble builds the
// nested view of a subtree by querying the subtree's supervisors in
// parallel, with bounded concurrency, and putting each child supervisor's
// own answer in place of its record. A leaf's row is therefore what the leaf
// last reported to its supervisor: a worker reports a transient state
// (starting, stopping) only once its action has run for a second, and every
// settled state at once, so a row lags the worker by at most about a
// second plus a query round trip. Supervisors are asked one after another
// level by level, so two rows may come from moments up to the assembly's
// duration apart; nothing is cached between calls.
//
// The package imports nothing from Temporal: the starter passes a query
// function, the workflow tests another.
package treestatus

import (
	"fmt"
	"strings"
	"time"

	"github.com/steward-sh/steward/internal/spec"
)

// Status is the answer of the `status` query (docs/contract.md): a worker answers
// for itself, a supervisor for itself and its direct children (Children
// holds their records, never theirs in turn); an assembled Status nests the
// whole subtree.
type Status struct {
	Path           string `json:"path"`
	Kind           string `json:"kind"`
	State          string `json:"state"`
	Desired        string `json:"desired"`
	Reason         string `json:"reason"`
	Restarts       int    `json:"restarts"`
	ManualRestarts int    `json:"manualRestarts"`
	// Reloads counts the reloads asked of the running service (`starter
	// reload`; its configuration re-read, no restart).
	Reloads    int          `json:"reloads"`
	Generation int64        `json:"generation"`
	LastAction ActionStatus `json:"lastAction"`
	Children   []Status     `json:"children"`
	// Since is when the node entered its state (workflow time).
	Since time.Time `json:"since,omitzero"`
	// BackoffUntil is when a pending automatic restart fires (for a
	// supervisor that gave up: when its cooldown ends).
	BackoffUntil time.Time `json:"backoffUntil,omitzero"`
	// Instance identifies the running instance (driver-defined; for a
	// process "proc/<pid>/<start>@<workflow>").
	Instance string `json:"instance,omitempty"`
	// Host is the host a worker runs on (a process's, or where its
	// supervisor placed it from its hosts; docs/fleet.md).
	Host string `json:"host,omitempty"`
	// StaleCopies are the copies a worker left on hosts it moved off
	// while they were lost (HOST/INSTANCE): each is stopped when its host
	// is back.
	StaleCopies []string `json:"staleCopies,omitempty"`
	// RejectedSignals counts signals refused for a bad payload.
	RejectedSignals int `json:"rejectedSignals"`
	// Completed: the service exited normally and its restart type
	// (transient, temporary) does not start it again; it counts as settled.
	Completed bool `json:"completed,omitempty"`
	// Applying: the supervisor has sent this node a new spec (or holds its
	// start until a removed run ends) and has not heard back yet. In an
	// assembled tree it marks the node's whole subtree as not yet applied.
	Applying bool `json:"applying,omitempty"`
	// Terminations counts ends that called for an automatic restart (a
	// crash, a failed start, a normal exit of a permanent service, a
	// workflow closed by hand; for a supervisor, giving up): what its
	// supervisor's intensity counts.
	Terminations int `json:"terminations"`
	// AwaitingRestart: the node ended and waits for its supervisor to
	// restart it (one_for_all, rest_for_one).
	AwaitingRestart bool `json:"awaitingRestart,omitempty"`
	// SuperviseSeq is the last supervise request the node handled.
	SuperviseSeq int64 `json:"superviseSeq,omitempty"`
	// CodeVersion is the code version a worker's run answers with
	// (workflows.WorkerVersion when it began; 0: code older than version 3,
	// which did not say).
	CodeVersion int `json:"codeVersion,omitempty"`
	// Strategy describes a supervisor.
	Strategy string `json:"strategy,omitempty"`
	// Subtree, in the record of a supervisor a sibling depends on (or that
	// depends on one), says whether its whole subtree is "running" (every
	// worker up or completed), "stopped" (every worker down) or
	// "changing"; empty for other supervisors.
	Subtree string `json:"subtree,omitempty"`
	// SubtreeStarted, in a supervisor's record (code version 7 on): its
	// whole subtree has started once (every worker below it up or
	// completed). Its parent's start window holds a slot for it until then.
	SubtreeStarted bool `json:"subtreeStarted,omitempty"`
	// RecentRestarts is how many restarts a supervisor counts in its
	// current intensity period.
	RecentRestarts int `json:"recentRestarts,omitempty"`
	// WorkflowClosed, on a supervisor's record of a child: the child's
	// workflow closed without reporting its end (terminated by hand, timed
	// out). Its own answer would be its last state, replayed: the record is
	// the truth.
	WorkflowClosed bool `json:"workflowClosed,omitempty"`
	// Job is a job's schedule and last run (a job's status only).
	Job *JobStatus `json:"job,omitempty"`
	// Stale, in an assembled tree, says why this row is not the node's own
	// answer: its query failed or timed out, and the row is its
	// supervisor's record of it (or, for a root or a node below a stale
	// supervisor, what visibility knows: path, kind and state). Empty: the
	// node answered, or its row is its supervisor's record by design (a
	// worker without --exact).
	Stale string `json:"stale,omitempty"`
	// TaskFailing, in an assembled tree, of a node that did not answer
	// (Stale set): its workflow task keeps failing (a panic, a deadlock
	// detected, a nondeterminism error, a completion too large), so no
	// query can be answered and nothing of the node moves until a worker
	// can run the task. `starter status` reads it from the server (the
	// pending task and the history's last failure) for the nodes whose
	// query failed only; no workflow carries it.
	TaskFailing *TaskFailure `json:"taskFailing,omitempty"`
	// Usage, of a running process service in an assembled tree: what it
	// uses, as its host last sampled it (`starter status` reads it from
	// the host; no workflow carries it).
	Usage *Usage `json:"usage,omitempty"`
	// NotifyStatus, of a running process service that speaks systemd's
	// notification protocol: the last STATUS= it sent (read from its host,
	// as Usage).
	NotifyStatus string `json:"notifyStatus,omitempty"`
	// Revision, of a supervisor: the tree's revision of the spec it runs
	// (the apply that created the tree is 1).
	Revision int64 `json:"revision,omitempty"`
	// Update, of a supervisor: its rolling update of workers (one in
	// progress, or the last one).
	Update *UpdateStatus `json:"update,omitempty"`
}

// UpdateStatus is a supervisor's rolling update as status shows it.
type UpdateStatus struct {
	Revision int64 `json:"revision,omitempty"`
	// Generation is the supervisor's generation of the spec it rolls out.
	Generation int64 `json:"generation"`
	// State: rolling, paused, awaitingPromotion, reverting, complete,
	// failed, reverted, cancelled, replaced.
	State   string `json:"state"`
	Updated int    `json:"updated"`
	Total   int    `json:"total"`
	Reason  string `json:"reason,omitempty"`
	// Failed names the worker whose failure failed it.
	Failed string `json:"failed,omitempty"`
	// InFlight names the workers sent their node and not yet updated.
	InFlight []string `json:"inFlight,omitempty"`
}

// TaskFailure is a workflow task that keeps failing, as the server
// records it. The server keeps retrying it (at most every 10 minutes or so
// once it has failed a few times) and writes only the first failure of a
// run of failures to the history: Cause, Message, Identity and Since are
// that failure's, Attempts the attempt pending now.
type TaskFailure struct {
	// Attempts is the attempt of the workflow task pending now (2: it
	// failed once).
	Attempts int `json:"attempts"`
	// Cause is the server's cause of the failure without its
	// WORKFLOW_TASK_FAILED_CAUSE_ prefix: WORKFLOW_WORKER_UNHANDLED_FAILURE
	// (a panic, a deadlock detected, a workflow type this worker does not
	// know), NON_DETERMINISTIC_ERROR, GRPC_MESSAGE_TOO_LARGE, ...; TIMED_OUT
	// when the task timed out instead (its worker died in it, or hung).
	// Empty when the history's last events do not hold the failure.
	Cause string `json:"cause,omitempty"`
	// Message is the failure's message (a panic's value, say; a longer
	// one is cut at MaxTaskFailureMessage bytes, marked " ..."). Its stack trace is in the failing
	// worker's log and in the history's WorkflowTaskFailed event.
	Message string `json:"message,omitempty"`
	// Identity is the worker that reported the failure (a steward
	// worker's: pid@host@machine@build).
	Identity string `json:"identity,omitempty"`
	// Since is when the failure was recorded.
	Since time.Time `json:"since,omitzero"`
}

// MaxTaskFailureMessage bounds TaskFailure.Message.
const MaxTaskFailureMessage = 2000

// Summary is the failure in one line, for a person: attempts, cause and
// message (its first line, at most about 200 characters).
func (f TaskFailure) Summary() string {
	s := fmt.Sprintf("attempt %d", f.Attempts)
	if f.Cause != "" {
		s += ", " + f.Cause
	}
	if msg := strings.TrimSpace(f.Message); msg != "" {
		line, _, more := strings.Cut(msg, "\n")
		if r := []rune(line); len(r) > 200 {
			line, more = string(r[:200]), true
		}
		if more {
			line += " ..."
		}
		s += ": " + line
	}
	return s
}

// HostView is what a host tells of one of its running process services:
// what it uses, and what it last said of itself.
type HostView struct {
	Usage        *Usage `json:"usage,omitempty"`
	NotifyStatus string `json:"notifyStatus,omitempty"`
}

// Usage is what a process service uses: its process group's CPU and
// resident memory, as of At.
type Usage struct {
	// CPUPercent is the group's CPU over the sampling interval before At,
	// in percent of one core (200: two cores busy).
	CPUPercent float64 `json:"cpuPercent"`
	// CPUSeconds is the group's CPU since its host first sampled it (user
	// and system; what a member that ended used stays counted).
	CPUSeconds  float64   `json:"cpuSeconds"`
	MemoryBytes int64     `json:"memoryBytes"`
	At          time.Time `json:"at"`
}

// ActionStatus describes the last start, stop or restart (observes are not
// reported: they are periodic and would drown it).
type ActionStatus struct {
	Name     string `json:"name"`
	Status   string `json:"status"` // running, succeeded, failed, timeout, cancelled
	Attempts int    `json:"attempts"`
	Error    string `json:"error"`
}

// ChildReport is what a child signals its supervisor on a change of its own
// record: never its children's (a supervisor's report has no Children), so
// what a supervisor receives grows with its direct children only.
type ChildReport struct {
	// Seq numbers a child's reports: two sent in one workflow task can
	// arrive in either order, and the supervisor keeps the newest.
	Seq int64 `json:"seq,omitempty"`
	// Run is the first run ID of the child's workflow: a supervisor tells
	// the reports of a removed or closed run from those of its successor.
	Run    string `json:"run,omitempty"`
	Status Status `json:"status"`
	// Ended: the child's workflow is ending (it was deleted).
	Ended bool `json:"ended,omitempty"`
	// More holds further reports sent in the same signal, by other
	// children: a worker process sends the reports of the actions that
	// end together as one signal (activities.Reporter).
	More []ChildReport `json:"more,omitempty"`
}

// IsSupervisor reports whether the node supervises children.
func (s Status) IsSupervisor() bool { return s.Kind == spec.KindSupervisor }

// Settled reports whether a node counts as at its desired state by its own
// record: its state is the desired one (or it completed), and no spec is on
// its way to it. For a supervisor this says nothing of its subtree.
func (s Status) Settled() bool {
	return (s.State == s.Desired || s.Completed) && !s.Applying
}

// AtDesired counts the workers of an assembled subtree at their desired
// state, and the workers in all. A subtree whose supervisor is applying a
// spec counts none of its workers as at their desired state yet.
func (s Status) AtDesired() (at, total int) {
	if !s.IsSupervisor() {
		if s.Settled() {
			return 1, 1
		}
		return 0, 1
	}
	for _, c := range s.Children {
		a, t := c.AtDesired()
		at += a
		total += t
	}
	if s.Applying {
		at = 0
	}
	return at, total
}

// Unanswered lists the paths of the nodes of an assembled subtree that did
// not answer (stale, not merely below one that did not), in tree order.
func (s Status) Unanswered() []string {
	var out []string
	if s.Stale != "" && !strings.HasPrefix(s.Stale, "below a node") {
		out = append(out, s.Path)
	}
	for _, c := range s.Children {
		out = append(out, c.Unanswered()...)
	}
	return out
}

// StaleNodes lists the paths of the rows of an assembled subtree that are
// stale (Stale set), in tree order.
func (s Status) StaleNodes() []string {
	var out []string
	if s.Stale != "" {
		out = append(out, s.Path)
	}
	for _, c := range s.Children {
		out = append(out, c.StaleNodes()...)
	}
	return out
}

// Find returns the node at path in the subtree.
func (s Status) Find(path string) (Status, bool) {
	if s.Path == path {
		return s, true
	}
	for _, c := range s.Children {
		if !strings.HasPrefix(path, c.Path) {
			continue
		}
		if f, ok := c.Find(path); ok {
			return f, true
		}
	}
	return Status{}, false
}

// Leaves lists the paths of the worker nodes of an assembled subtree, in
// spec order.
func (s Status) Leaves() []string {
	if !s.IsSupervisor() {
		return []string{s.Path}
	}
	var out []string
	for _, c := range s.Children {
		out = append(out, c.Leaves()...)
	}
	return out
}

// Summaries in a supervisor's reason. A supervisor's own query counts its
// direct children; an assembled node counts the workers of its subtree.
const (
	childrenAtDesired = "children at desired state"
	workersAtDesired  = "workers at desired state"
)

// WithChildCounts is a supervisor's reason in its own status answer: its
// own reason (empty while it simply runs) and how many of its direct
// children are at their desired state.
func WithChildCounts(own string, at, total int) string {
	return joinReason(own, fmt.Sprintf("%d/%d %s", at, total, childrenAtDesired))
}

// withWorkerCounts is an assembled supervisor's reason: its own reason and
// how many workers of its subtree are at their desired state.
func withWorkerCounts(reason string, at, total int) string {
	return joinReason(OwnReason(reason), fmt.Sprintf("%d/%d %s", at, total, workersAtDesired))
}

// OwnReason is a supervisor's reason without the count its status answer
// adds (WithChildCounts).
func OwnReason(reason string) string {
	if !strings.HasSuffix(reason, childrenAtDesired) {
		return reason
	}
	i := strings.LastIndex(reason, "; ")
	if i < 0 {
		return ""
	}
	return reason[:i]
}

func joinReason(own, counts string) string {
	if own == "" {
		return counts
	}
	return own + "; " + counts
}
