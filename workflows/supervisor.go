package workflows

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/steward-sh/steward/internal/spec"
	"github.com/steward-sh/steward/internal/tick"
)

// SupervisorInput starts (or continues) a supervisor workflow.
type SupervisorInput struct {
	Path         string           `json:"path"`
	Parent       string           `json:"parent,omitempty"`
	Spec         spec.Node        `json:"spec"`
	Generation   int64            `json:"generation"`
	HistoryLimit int              `json:"historyLimit,omitempty"`
	Carry        *SupervisorCarry `json:"carry,omitempty"`
}

// SupervisorCarry is the state of a supervisor that survives continue-as-new.
type SupervisorCarry struct {
	Children        []ChildRecord `json:"children"`
	Desired         string        `json:"desired"`
	RejectedSignals int           `json:"rejectedSignals"`
	// Removing lists the paths of removed children whose workflows have not
	// reported their end yet; a child re-added meanwhile waits for it.
	Removing []string `json:"removing,omitempty"`

	// Supervision (strategy.go).
	Reason         string `json:"reason,omitempty"`
	Restarts       int    `json:"restarts,omitempty"`
	ManualRestarts int    `json:"manualRestarts,omitempty"`
	// Terminations counts give-ups (what the parent's intensity counts).
	Terminations int `json:"terminations,omitempty"`
	// RestartTimes are the restarts within the intensity period.
	RestartTimes []time.Time `json:"restartTimes,omitempty"`
	// Plan is the restart or stop of children in progress.
	Plan *Plan `json:"plan,omitempty"`
	// Failed: the supervisor gave up; CooldownUntil is when it tries again
	// (zero for a temporary supervisor: it stays down).
	Failed        bool      `json:"failed,omitempty"`
	CooldownUntil time.Time `json:"cooldownUntil,omitempty"`
	// Held: its own supervisor stopped it (a group restart).
	Held bool `json:"held,omitempty"`
	// SuperviseSeq is the last supervise request handled from the parent;
	// SentSeq numbers the ones this supervisor sends its children.
	SuperviseSeq int64 `json:"superviseSeq,omitempty"`
	SentSeq      int64 `json:"sentSeq,omitempty"`
	// ReportSeq numbers the reports to the parent.
	ReportSeq int64 `json:"reportSeq,omitempty"`
}

// ChildRecord is what a supervisor knows of one child.
type ChildRecord struct {
	Name   string `json:"name"`
	Path   string `json:"path"`
	Spec   string `json:"spec"` // canonical JSON of the child's node, to see changes
	Status Status `json:"status"`
	// Ended: the child reported that its workflow ended.
	Ended bool `json:"ended,omitempty"`
	// WantGeneration is the generation last sent to the child; until it
	// reports it, the child counts as not yet at its desired state.
	WantGeneration int64 `json:"wantGeneration,omitempty"`
	// Deferred: the child waits for a removed run of the same path to end
	// before it starts.
	Deferred bool `json:"deferred,omitempty"`
	// SeenTerminations is the child's Terminations already answered.
	SeenTerminations int `json:"seenTerminations,omitempty"`
	// Adopted: the child's workflow was running already; its first report
	// sets SeenTerminations (its past ends are not new).
	Adopted bool `json:"adopted,omitempty"`
	// ReportSeq is the newest report applied; older ones are stale.
	ReportSeq int64 `json:"reportSeq,omitempty"`
}

// childStopWait bounds how long a deleted supervisor waits for each child to
// report that it has stopped before going on to the next.
const childStopWait = 5 * time.Minute

// SupervisorWorkflow supervises the children of one node of the tree.
//
// Children are child workflows with hierarchical IDs (path/name), started in
// spec order, each under PARENT_CLOSE_POLICY_ABANDON: the supervisor
// continues as new without killing them, and re-adopts them by ID. Stopping a
// child is an explicit act: a cancel request (on removal from the spec or on
// delete, in reverse spec order), after which the child stops its service
// and ends. Children report every change of status by signal, so the
// supervisor answers `status` for its whole subtree without an activity.
//
// How it answers the end of a child (strategies, restart intensity, giving
// up and cooldown) is described in strategy.go.
func SupervisorWorkflow(ctx workflow.Context, in SupervisorInput) error {
	s := &supervisorRun{ctx: ctx, log: workflow.GetLogger(ctx), in: in}
	if ps := spec.Validate(in.Spec); len(ps) > 0 || !in.Spec.IsSupervisor() {
		msg := "a supervisor needs children"
		if len(ps) > 0 {
			msg = ps.Error()
		}
		return temporal.NewNonRetryableApplicationError("invalid supervisor spec:\n"+msg, "InvalidSpec", nil)
	}
	if in.Carry != nil {
		s.carry = *in.Carry
	} else {
		s.carry.Desired = in.Spec.Resolved().Desired
	}
	v := leanReportsVersion(ctx)
	s.lean = v >= leanReportsV1
	if v >= leanReportsV2 {
		if state, kind := searchAttributesSet(ctx, in.Path); kind == spec.KindSupervisor {
			s.searchState = state // upsertState skips what is set
		}
	}
	if err := workflow.SetQueryHandler(ctx, QueryStatus, func() (Status, error) { return s.status(), nil }); err != nil {
		return err
	}
	return s.loop()
}

type supervisorRun struct {
	ctx          workflow.Context
	log          log.Logger
	in           SupervisorInput
	carry        SupervisorCarry
	lastReported []byte // the last report, as JSON
	lastStatus   Status // the last report
	// lean: this run publishes as publish.go describes (changeLeanReports);
	// reportDue is the timer of a subtree-only change's deferred report.
	lean        bool
	reportDue   deadline
	searchState string
	// sent holds the signals and cancel requests this run has sent: they
	// must be delivered before it continues as new, or the server drops
	// them with the closed run.
	sent []workflow.Future

	// The one timer of a plan's backoff or step, or of a cooldown.
	wake deadline
	// The last supervise request of a plan step, to notice one that could
	// not be delivered.
	stepSignal workflow.Future
	stepSeq    int64
	// origin and depth of the spec change being handed down.
	origin time.Time
	depth  int
}

// send records an outgoing signal or cancel request.
func (s *supervisorRun) send(f workflow.Future) {
	s.sent = append(s.sent, f)
}

// delivered reports whether every outgoing request has completed.
func (s *supervisorRun) delivered() bool {
	for _, f := range s.sent {
		if !f.IsReady() {
			return false
		}
	}
	return true
}

func (s *supervisorRun) loop() error {
	ctx := s.ctx
	specCh := workflow.GetSignalChannel(ctx, SignalSpec)
	desiredCh := workflow.GetSignalChannel(ctx, SignalDesired)
	restartCh := workflow.GetSignalChannel(ctx, SignalRestart)
	childCh := workflow.GetSignalChannel(ctx, SignalChild)
	superviseCh := workflow.GetSignalChannel(ctx, SignalSupervise)

	s.upsertSearch()
	if s.in.Carry == nil {
		for _, c := range s.in.Spec.Children {
			s.carry.Children = append(s.carry.Children, s.startChild(c))
		}
	}
	s.advance()
	s.armWake()
	s.publish()

	cancelled := false
	for {
		sel := workflow.NewSelector(ctx)
		sel.AddReceive(ctx.Done(), func(workflow.ReceiveChannel, bool) { cancelled = true })
		sel.AddReceive(specCh, func(c workflow.ReceiveChannel, _ bool) { s.onSpec(receiveRaw(ctx, c)) })
		sel.AddReceive(desiredCh, func(c workflow.ReceiveChannel, _ bool) { s.onDesired(receiveRaw(ctx, c)) })
		sel.AddReceive(restartCh, func(c workflow.ReceiveChannel, _ bool) { receiveRaw(ctx, c); s.onRestart() })
		sel.AddReceive(childCh, func(c workflow.ReceiveChannel, _ bool) { s.onChild(receiveRaw(ctx, c)) })
		sel.AddReceive(superviseCh, func(c workflow.ReceiveChannel, _ bool) { s.onSuperviseSignal(receiveRaw(ctx, c)) })
		if t := s.wake.fut; t != nil {
			sel.AddFuture(t, func(f workflow.Future) {
				if !s.wake.fired(f) {
					return
				}
				if f.Get(ctx, nil) == nil {
					s.onWake()
				}
			})
		}
		if t := s.reportDue.fut; t != nil {
			sel.AddFuture(t, func(f workflow.Future) {
				if s.reportDue.fired(f) && f.Get(ctx, nil) == nil {
					s.reportStatus(s.status(), false, true)
				}
			})
		}
		if f := s.stepSignal; f != nil && !f.IsReady() {
			sel.AddFuture(f, func(workflow.Future) {}) // advance() sees a failed delivery
		}
		sel.Select(ctx)
		if cancelled {
			return s.shutdown(childCh)
		}
		s.carry.RejectedSignals += dropUnknownSignals(ctx, s.log, SignalSpec, SignalDesired, SignalRestart, SignalChild, SignalSupervise)
		s.advance()
		s.armWake()
		s.gauges()
		s.publish()
		if s.shouldContinueAsNew() {
			s.drain(specCh, desiredCh, restartCh, childCh, superviseCh)
			// What this run sent must arrive before it closes.
			if err := workflow.Await(ctx, func() bool { return s.delivered() && workflow.AllHandlersFinished(ctx) }); err != nil {
				return s.shutdown(childCh) // cancelled while waiting
			}
			s.drain(specCh, desiredCh, restartCh, childCh, superviseCh)
			s.advance()
			if ctx.Err() != nil {
				return s.shutdown(childCh)
			}
			if !s.delivered() {
				continue // the drain sent more: deliver it first
			}
			next := s.in
			carry := s.carry
			next.Carry = &carry
			return workflow.NewContinueAsNewError(ctx, SupervisorWorkflow, next)
		}
	}
}

func (s *supervisorRun) drain(specCh, desiredCh, restartCh, childCh, superviseCh workflow.ReceiveChannel) {
	for {
		var raw converter.RawValue
		switch {
		case specCh.ReceiveAsync(&raw):
			s.onSpec(raw)
		case desiredCh.ReceiveAsync(&raw):
			s.onDesired(raw)
		case restartCh.ReceiveAsync(&raw):
			s.onRestart()
		case childCh.ReceiveAsync(&raw):
			s.onChild(raw)
		case superviseCh.ReceiveAsync(&raw):
			s.onSuperviseSignal(raw)
		default:
			return
		}
	}
}

func (s *supervisorRun) childPath(name string) string { return s.in.Path + "/" + name }

// inherit is a child's node with this supervisor's vars inherited.
func (s *supervisorRun) inherit(c spec.Node) spec.Node { return spec.Inherit(s.in.Spec.Vars, c) }

// childNode is the node handed to a child: with its inherited vars, and
// stopped when this supervisor is (a stopped supervisor stops its subtree).
func (s *supervisorRun) childNode(c spec.Node) spec.Node {
	c = s.inherit(c)
	if s.carry.Desired == spec.DesiredStopped {
		c.Desired = spec.DesiredStopped
	}
	return c
}

func canonical(n spec.Node) string {
	b, _ := json.Marshal(n)
	return string(b)
}

// startChild starts one child workflow and waits until it has started (so
// children start in spec order). A child already running under this ID (an
// earlier run of this supervisor) is adopted and handed the current spec.
func (s *supervisorRun) startChild(c spec.Node) ChildRecord {
	ctx := s.ctx
	node := s.childNode(c)
	path := s.childPath(c.Name)
	rec := ChildRecord{Name: c.Name, Path: path, Spec: canonical(s.inherit(c)), WantGeneration: s.in.Generation}
	kind := node.Kind
	if node.IsSupervisor() {
		kind = spec.KindSupervisor
	}
	rec.Status = Status{Path: path, Kind: kind, State: "stopped", Desired: node.Resolved().Desired, Reason: "starting workflow", Children: []Status{}}
	if slices.Contains(s.carry.Removing, path) {
		// A removed run of this path is still stopping: start after it ends.
		rec.Deferred = true
		rec.Status.Reason = "waiting for the removed run to end"
		return rec
	}
	// A disconnected context: cancelling this supervisor must not cancel
	// the children all at once (the SDK would); shutdown stops them in
	// reverse order, one after the other.
	dctx, _ := workflow.NewDisconnectedContext(ctx)
	cctx := workflow.WithChildOptions(dctx, workflow.ChildWorkflowOptions{
		WorkflowID:            path,
		TaskQueue:             TaskQueue,
		ParentClosePolicy:     enumspb.PARENT_CLOSE_POLICY_ABANDON,
		WorkflowIDReusePolicy: enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE,
		// A cancelled child stops its service before it ends.
		WaitForCancellation: true,
		StaticSummary:       "steward " + kind + " " + path,
		TypedSearchAttributes: temporal.NewSearchAttributes(
			SearchPath.ValueSet(path), SearchKind.ValueSet(kind), SearchState.ValueSet("stopped")),
	})
	parent := workflow.GetInfo(ctx).WorkflowExecution.ID
	var fut workflow.ChildWorkflowFuture
	if node.IsSupervisor() {
		fut = workflow.ExecuteChildWorkflow(cctx, SupervisorWorkflow, SupervisorInput{Path: path, Parent: parent, Spec: node, Generation: s.in.Generation, HistoryLimit: s.in.HistoryLimit})
	} else {
		fut = workflow.ExecuteChildWorkflow(cctx, WorkerWorkflow, WorkerInput{Path: path, Parent: parent, Spec: node, Generation: s.in.Generation, HistoryLimit: s.in.HistoryLimit,
			Coordinated: coordinated(s.strategy())})
	}
	var exec workflow.Execution
	if err := fut.GetChildWorkflowExecution().Get(dctx, &exec); err != nil {
		if temporal.IsWorkflowExecutionAlreadyStartedError(err) {
			rec.Status.Reason = "adopted"
			rec.Adopted = true
			s.send(workflow.SignalExternalWorkflow(dctx, path, "", SignalSpec, s.specUpdate(node)))
		} else {
			rec.Status.State, rec.Status.Reason = "failed", "could not start workflow: "+err.Error()
			s.log.Error("could not start child", "path", path, "error", err.Error())
		}
	}
	return rec
}

func (s *supervisorRun) reject(signal string, err error) {
	s.carry.RejectedSignals++
	count(s.ctx, MetricRejectedSignals, map[string]string{"signal": signal})
	if signal == SignalSpec && templateProblem(err) {
		count(s.ctx, MetricTemplateErrors, nil)
	}
	s.log.Warn("rejected signal", "signal", signal, "path", s.in.Path, "error", err.Error(), "rejected", s.carry.RejectedSignals)
}

// onSpec reconciles the children with a new spec: new children start,
// removed ones are cancelled (they stop and end), changed ones get their new
// spec; unchanged ones are not touched.
func (s *supervisorRun) onSpec(raw converter.RawValue) {
	u, err := decodeUpdate(raw)
	if err == nil && u.Spec.Name != s.in.Spec.Name {
		err = fmt.Errorf("spec.name %q does not match this supervisor (%q)", u.Spec.Name, s.in.Spec.Name)
	}
	if err == nil {
		if ps := spec.Validate(u.Spec); len(ps) > 0 {
			err = ps
		} else if !u.Spec.IsSupervisor() {
			err = fmt.Errorf("a supervisor's spec needs children")
		}
	}
	if err != nil {
		s.reject(SignalSpec, err)
		return
	}
	if u.Generation > 0 {
		s.in.Generation = u.Generation
	} else {
		s.in.Generation++
	}
	recordPropagation(s.ctx, u)
	// What this supervisor hands down carries where the change began.
	s.origin, s.depth = u.Origin, u.Depth+1
	if s.origin.IsZero() {
		s.origin, s.depth = workflow.Now(s.ctx), 1
	}
	count(s.ctx, MetricReconciliations, map[string]string{"strategy": u.Spec.Resolved().Strategy})
	if d := u.Spec.Resolved().Desired; d != s.in.Spec.Resolved().Desired {
		s.carry.Desired = d
		s.resetSupervision()
	}
	strategyChanged := coordinated(u.Spec.Resolved().Strategy) != coordinated(s.strategy())
	s.in.Spec = u.Spec
	if p := s.carry.Plan; p != nil && p.Phase == phaseBackoff {
		p.Until = workflow.Now(s.ctx) // a spec change replaces a pending restart: now
	}

	wanted := map[string]bool{}
	for _, c := range u.Spec.Children {
		wanted[c.Name] = true
	}
	// Removed children, in reverse order.
	kept := s.carry.Children[:0:0]
	for i := len(s.carry.Children) - 1; i >= 0; i-- {
		rec := s.carry.Children[i]
		if !wanted[rec.Name] {
			if !rec.Deferred && !rec.Ended {
				s.send(workflow.RequestCancelExternalWorkflow(s.ctx, rec.Path, ""))
				s.carry.Removing = append(s.carry.Removing, rec.Path)
			}
			continue
		}
		kept = append([]ChildRecord{rec}, kept...)
	}
	byName := map[string]int{}
	for i, rec := range kept {
		byName[rec.Name] = i
	}
	old := kept
	s.carry.Children = nil
	for _, c := range u.Spec.Children {
		i, ok := byName[c.Name]
		if !ok {
			s.carry.Children = append(s.carry.Children, s.startChild(c))
			continue
		}
		rec := old[i]
		if sp := canonical(s.inherit(c)); sp != rec.Spec || strategyChanged {
			rec.Spec = sp
			rec.WantGeneration = s.in.Generation
			if !rec.Deferred {
				s.send(workflow.SignalExternalWorkflow(s.ctx, rec.Path, "", SignalSpec, s.specUpdate(s.childNode(c))))
			}
		}
		s.carry.Children = append(s.carry.Children, rec)
	}
	s.upsertSearch()
}

// specUpdate is the spec signal for a child: its node, this generation, and
// whether this supervisor restarts it (a worker under a sibling strategy).
func (s *supervisorRun) specUpdate(n spec.Node) spec.Update {
	co := coordinated(s.strategy())
	return spec.Update{Generation: s.in.Generation, Spec: n, Coordinated: &co, Origin: s.origin, Depth: s.depth}
}

func (s *supervisorRun) onSuperviseSignal(raw converter.RawValue) {
	r, err := decodeSupervise(raw)
	if err != nil {
		s.reject(SignalSupervise, err)
		return
	}
	s.onSupervise(r)
}

func (s *supervisorRun) onDesired(raw converter.RawValue) {
	var d string
	if err := decodeRaw(raw, &d); err != nil || (d != spec.DesiredRunning && d != spec.DesiredStopped) {
		if err == nil {
			err = fmt.Errorf("got %q", d)
		}
		s.reject(SignalDesired, fmt.Errorf("payload must be \"running\" or \"stopped\": %w", err))
		return
	}
	s.carry.Desired = d
	s.resetSupervision()
	order := s.carry.Children
	if d == spec.DesiredStopped {
		order = reversed(order)
	}
	for _, rec := range order {
		if !rec.Deferred {
			s.send(workflow.SignalExternalWorkflow(s.ctx, rec.Path, "", SignalDesired, d))
		}
	}
}

func (s *supervisorRun) onRestart() {
	s.carry.Desired = spec.DesiredRunning
	s.resetSupervision()
	s.carry.RestartTimes = nil
	s.carry.ManualRestarts++
	for _, rec := range s.carry.Children {
		if !rec.Deferred {
			s.send(workflow.SignalExternalWorkflow(s.ctx, rec.Path, "", SignalRestart, nil))
		}
	}
}

func (s *supervisorRun) onChild(raw converter.RawValue) {
	var r ChildReport
	if err := decodeRaw(raw, &r); err != nil {
		s.reject(SignalChild, err)
		return
	}
	s.apply(r)
}

// apply records a child's report. Reports of a removed run (still
// stopping) only release a re-added child of the same path once it ended.
func (s *supervisorRun) apply(r ChildReport) {
	path := r.Status.Path
	if i := slices.Index(s.carry.Removing, path); i >= 0 {
		if !r.Ended {
			return
		}
		s.carry.Removing = slices.Delete(s.carry.Removing, i, i+1)
		for j := range s.carry.Children {
			if rec := s.carry.Children[j]; rec.Path == path && rec.Deferred {
				s.carry.Children[j] = s.startChild(s.childSpec(rec.Name))
			}
		}
		return
	}
	for i := range s.carry.Children {
		rec := &s.carry.Children[i]
		if rec.Path != path || rec.Deferred {
			continue
		}
		if r.Seq > 0 && r.Seq <= rec.ReportSeq && !r.Ended {
			return // overtaken by a newer report
		}
		rec.ReportSeq = max(rec.ReportSeq, r.Seq)
		if r.Status.Children == nil {
			r.Status.Children = []Status{}
		}
		rec.Status = r.Status
		rec.Ended = rec.Ended || r.Ended
		if rec.Adopted {
			rec.Adopted = false
			rec.SeenTerminations = r.Status.Terminations
		}
		if n := r.Status.Terminations - rec.SeenTerminations; n > 0 && !r.Ended {
			rec.SeenTerminations = r.Status.Terminations
			s.onTerminated(i, n)
		} else if n < 0 {
			rec.SeenTerminations = r.Status.Terminations // a new run of the child
		}
		return
	}
}

// childSpec is the current spec of the child named name.
func (s *supervisorRun) childSpec(name string) spec.Node {
	for _, c := range s.in.Spec.Children {
		if c.Name == name {
			return c
		}
	}
	return spec.Node{Name: name}
}

func reversed(rs []ChildRecord) []ChildRecord {
	out := make([]ChildRecord, len(rs))
	for i, r := range rs {
		out[len(rs)-1-i] = r
	}
	return out
}

func (s *supervisorRun) status() Status {
	st := Status{
		Path: s.in.Path, Kind: spec.KindSupervisor, State: "running", Desired: s.carry.Desired,
		Generation: s.in.Generation, Children: make([]Status, 0, len(s.carry.Children)),
		RejectedSignals: s.carry.RejectedSignals, Restarts: s.carry.Restarts, ManualRestarts: s.carry.ManualRestarts,
		Terminations: s.carry.Terminations, SuperviseSeq: s.carry.SuperviseSeq, Strategy: s.strategy(),
		RecentRestarts: len(s.carry.RestartTimes),
	}
	p := s.carry.Plan
	switch {
	case s.carry.Desired == spec.DesiredStopped:
		st.State = "stopped"
	case p != nil && p.Phase == phaseBackoff:
		st.State, st.BackoffUntil = string(tick.Backoff), p.Until
	case p != nil:
		st.State = p.Phase
	case s.carry.Failed:
		st.State = string(tick.Failed)
		st.BackoffUntil = s.carry.CooldownUntil
		st.AwaitingRestart = s.in.Parent != ""
	case s.carry.Held:
		st.State = "stopped"
	}
	for _, c := range s.carry.Children {
		cs := c.Status
		// A child that has not yet reported the spec it was sent is not at
		// its desired state, whatever it last said.
		cs.Applying = c.Deferred || c.WantGeneration > cs.Generation
		st.Children = append(st.Children, cs)
	}
	at, total := st.AtDesired()
	st.Reason = fmt.Sprintf("%d/%d workers at desired state", at, total)
	switch {
	case st.State == "stopped" || st.State == "running":
		if s.carry.Held {
			st.Reason = s.carry.Reason + "; " + st.Reason
		}
	case p != nil:
		st.Reason = fmt.Sprintf("%s (%s %s); %s", p.Reason, p.Op, p.Phase, st.Reason)
	default:
		st.Reason = s.carry.Reason
		if !s.carry.CooldownUntil.IsZero() {
			st.Reason += "; trying again at " + s.carry.CooldownUntil.UTC().Format(time.RFC3339)
		}
	}
	return st
}

// details is the subtree's status as a Temporal markdown table, shown as
// "Current Details" in the Web UI (no history event).
// Its children only: a child supervisor's row sums up its own subtree
// ("n/m workers at desired state"), and a table of a whole large tree
// would cost every event of the root dearly.
func detailsOf(st Status) string {
	var b strings.Builder
	b.WriteString(fmt.Sprintf("**%s** — %s · generation %d\n\n| child | kind | state | desired | restarts | reason |\n|---|---|---|---|---|---|\n", st.State, st.Reason, st.Generation))
	for _, c := range st.Children {
		b.WriteString(fmt.Sprintf("| %s | %s | %s | %s | %d (+%d manual) | %s |\n", c.Path, c.Kind, c.State, c.Desired, c.Restarts, c.ManualRestarts, strings.ReplaceAll(c.Reason, "|", "/")))
	}
	return b.String()
}

// publish makes the status known after an event: search attributes, the
// report to the parent, and the Web UI's current details (one status
// computed for all three).
func (s *supervisorRun) publish() {
	st := s.status()
	s.upsertState(st.State)
	s.reportStatus(st, false, false)
	workflow.SetCurrentDetails(s.ctx, detailsOf(st))
}

// gauges updates the per-supervisor gauges (no history event).
func (s *supervisorRun) gauges() {
	tags := map[string]string{"path": s.in.Path}
	gauge(s.ctx, MetricChildCount, tags, float64(len(s.carry.Children)))
	open := 0
	for _, c := range s.carry.Children {
		if c.Status.State == "unknown" {
			open++
		}
	}
	gauge(s.ctx, MetricCircuitOpen, tags, float64(open))
}

func (s *supervisorRun) upsertSearch() { s.upsertState(s.status().State) }

func (s *supervisorRun) upsertState(state string) {
	if state == s.searchState {
		return
	}
	err := workflow.UpsertTypedSearchAttributes(s.ctx,
		SearchPath.ValueSet(s.in.Path), SearchKind.ValueSet(spec.KindSupervisor), SearchState.ValueSet(state))
	if err == nil {
		s.searchState = state
	}
}

func (s *supervisorRun) report(ended bool) { s.reportStatus(s.status(), ended, true) }

// reportStatus signals st to the parent when it changed since the last
// report. In a lean run, unless now, a change only in the subtree waits
// for the reportDue timer (publish.go).
func (s *supervisorRun) reportStatus(st Status, ended, now bool) {
	if s.in.Parent == "" {
		return
	}
	if s.lean && !ended && !now && s.lastReported != nil && sameOwnStatus(s.lastStatus, st) {
		// A report is due anyway, or the subtree changed: this change waits.
		// (Comparing the whole subtree costs a marshal: done only when no
		// report is due yet.)
		if s.reportDue.fut == nil {
			if b, _ := json.Marshal(st); string(b) != string(s.lastReported) {
				s.reportDue.set(s.ctx, workflow.Now(s.ctx).Add(publishDelay))
			}
		}
		return
	}
	b, _ := json.Marshal(st)
	if !ended && s.lastReported != nil && string(b) == string(s.lastReported) {
		return
	}
	s.reportDue.stop()
	s.lastReported, s.lastStatus = b, st
	s.carry.ReportSeq++
	f := workflow.SignalExternalWorkflow(s.ctx, s.in.Parent, "", SignalChild, ChildReport{Seq: s.carry.ReportSeq, Status: st, Ended: ended})
	s.send(f)
	if ended {
		_ = f.Get(s.ctx, nil) // see workerRun.report
	}
}

func (s *supervisorRun) shouldContinueAsNew() bool {
	return continueAsNewDue(s.ctx, s.in.HistoryLimit)
}

// shutdown cancels the children in reverse spec order, each after the one
// before it has reported that it ended (or childStopWait passed), then ends.
func (s *supervisorRun) shutdown(childCh workflow.ReceiveChannel) error {
	dctx, _ := workflow.NewDisconnectedContext(s.ctx)
	s.ctx = dctx
	s.carry.Plan = nil
	s.wake.stop()
	s.reportDue.stop()
	for i := len(s.carry.Children) - 1; i >= 0; i-- {
		rec := &s.carry.Children[i]
		if rec.Ended || rec.Deferred {
			continue
		}
		// The request fails when the child is not running (never started,
		// or already closed): then there is nothing to wait for.
		if err := workflow.RequestCancelExternalWorkflow(dctx, rec.Path, "").Get(dctx, nil); err != nil {
			rec.Ended = true
			continue
		}
		tctx, cancel := workflow.WithCancel(dctx)
		timer := workflow.NewTimer(tctx, childStopWait)
		timedOut := false
		for !rec.Ended && !timedOut {
			sel := workflow.NewSelector(dctx)
			sel.AddReceive(childCh, func(c workflow.ReceiveChannel, _ bool) {
				var r ChildReport
				if err := decodeRaw(receiveRaw(dctx, c), &r); err == nil {
					s.apply(r)
				}
			})
			sel.AddFuture(timer, func(workflow.Future) { timedOut = true })
			sel.Select(dctx)
		}
		cancel()
		if timedOut {
			s.log.Warn("child did not report its end in time", "path", rec.Path)
		}
	}
	s.carry.Desired = spec.DesiredStopped
	s.report(true)
	return temporal.NewCanceledError("deleted")
}
