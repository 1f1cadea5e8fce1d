package workflows

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	sdklog "go.temporal.io/sdk/log"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/steward-sh/steward/activities"
	"github.com/steward-sh/steward/internal/hostcore"
	"github.com/steward-sh/steward/internal/spec"
	"github.com/steward-sh/steward/internal/tick"
	"github.com/steward-sh/steward/internal/treestatus"
)

// Fuzzing the workflows (`make fuzz`; the seeds below run in `go test`).
//
// Each execution runs one workflow in the SDK's time-skipping test
// environment, every activity mocked (nothing real runs), and sends it a
// script of signals and Updates whose payloads come from the fuzzer. After
// each step it asks the workflow's query and checks what must hold
// whatever was sent: no panic and no failed workflow (the testsuite turns a
// panic or a deadlock of workflow code into the workflow's error), the
// status answers, a worker has at most one action in flight and a desired
// state of running or stopped, a bad payload is counted in rejectedSignals
// (and a good one is not), a supervisor's children are its last accepted
// spec's, a host still takes signals, a rollout accounts for every target.
//
// A script is text, one step a line (readable seeds, and the fuzzer's
// mutations keep most lines whole):
//
//	NAME PAYLOAD      the signal NAME; PAYLOAD's bytes are its json/plain payload
//	NAME              the signal with a null payload
//	@NAME PAYLOAD     the Update NAME (a worker's spec or rollout)
//	>CHILD NAME ...   a signal to the child CHILD of the supervisor under test
//	wait DURATION     let workflow time pass before the next step
//	act VERB MODE     how the mocked actions answer from now on (VERB: start,
//	                  stop, restart, reload, observe; MODE: ok, fail,
//	                  permanent, refused, slow, crashed, exited)
//
// Steps are fuzzStepGap apart unless a wait says otherwise, so that many
// arrive while an action (fuzzActionTime) is in flight.
//
// The targets: FuzzWorkerSignals and FuzzSupervisorSignals run scripts;
// FuzzWorkerSpec and FuzzSupervisorSpec send a valid spec with fuzzed
// fields (names, command templates, vars, intervals, instances, depth);
// FuzzHostSignals runs a host's workflow through a script of its signals;
// FuzzRollout fuzzes a rollout's input, its chunks' answers and its
// signals. Their seeds include specs that once wedged a workflow (a
// runaway template, an observe every nanosecond, a name that makes a
// workflow ID over the server's limit). An input the fuzzer finds failing
// is kept in testdata/fuzz/FuzzXxx/ and runs as a seed from then on.

const (
	fuzzMaxSteps = 40
	fuzzStepGap  = 700 * time.Millisecond
	// fuzzActionTime is how long a mocked start, stop, restart or reload
	// takes (under the actions' 5 s heartbeat timeout, which a mock cannot
	// feed); slow ones take fuzzSlowActionTime.
	fuzzActionTime     = 1500 * time.Millisecond
	fuzzSlowActionTime = 4 * time.Second
	// fuzzMaxActivities bounds the activities of one execution: more is a
	// runaway loop (an observe every nanosecond, a retry storm).
	// An observe every second (the minimum) of a dozen instances over a
	// script's few minutes is legitimately about 2,000: the bound is well
	// above that, and far below what a loop makes.
	fuzzMaxActivities = 20000
	// fuzzWallBudget bounds one execution's wall time (checked as
	// activities start); past fuzzHangAfter the execution is hung: the
	// watchdog crashes the process with every goroutine's stack, and the
	// fuzzer keeps the input (it has no timeout of its own).
	fuzzWallBudget      = 20 * time.Second
	fuzzDeadlockTimeout = 3 * time.Second
	fuzzHangAfter       = 30 * time.Second
	// fuzzMaxWorkflowID is the server's limit on a workflow ID
	// (limit.maxIDLength): the test environment does not enforce it.
	fuzzMaxWorkflowID = 1000
)

// STEWARD_FUZZ_DEBUG=1 logs each action activity's start and end (to read
// a reproducer: go test -run 'FuzzXxx/NAME' -v ./workflows).
var fuzzDebug = os.Getenv("STEWARD_FUZZ_DEBUG") != ""

// ---- scripts ----

type fuzzStep struct {
	at     time.Duration // workflow time from the start
	to     string        // "": the workflow under test; else a child's name
	name   string
	update bool
	null   bool // no payload given: a null one
	data   []byte
}

func (s fuzzStep) payload() any {
	if s.null {
		return nil
	}
	return converter.NewRawValue(&commonpb.Payload{
		Metadata: map[string][]byte{converter.MetadataEncoding: []byte(converter.MetadataEncodingJSON)},
		Data:     s.data,
	})
}

// raw is the payload as a handler receives it.
func (s fuzzStep) raw() converter.RawValue {
	p, err := converter.GetDefaultDataConverter().ToPayload(s.payload())
	if err != nil {
		panic(err)
	}
	return converter.NewRawValue(p)
}

// parseScript reads a script (see above); steps start at start.
func parseScript(script []byte, start time.Duration) ([]fuzzStep, time.Duration) {
	var steps []fuzzStep
	at := start
	wait := time.Duration(0)
	for _, line := range bytes.Split(script, []byte("\n")) {
		if len(steps) >= fuzzMaxSteps {
			break
		}
		line = bytes.TrimSuffix(line, []byte("\r"))
		if len(line) == 0 || line[0] == '#' {
			continue
		}
		var st fuzzStep
		if line[0] == '>' {
			to, rest, _ := bytes.Cut(line[1:], []byte(" "))
			st.to, line = string(to), rest
		}
		name, data, has := bytes.Cut(line, []byte(" "))
		st.name = string(name)
		if st.name == "wait" {
			d, err := time.ParseDuration(strings.TrimSpace(string(data)))
			if err == nil && d > 0 {
				wait += min(d, 30*time.Minute)
			}
			continue
		}
		if strings.HasPrefix(st.name, "@") {
			st.update, st.name = true, st.name[1:]
		}
		if len(st.name) > 200 {
			st.name = st.name[:200]
		}
		st.null, st.data = !has, data
		at += fuzzStepGap + wait
		wait = 0
		st.at = at
		steps = append(steps, st)
	}
	return steps, at + wait
}

// ---- the harness ----

// fuzzHarness is one execution's test environment and what it watched.
type fuzzHarness struct {
	t     *testing.T
	env   *testsuite.TestWorkflowEnvironment
	began time.Time

	mu         sync.Mutex
	activities int
	stopped    bool // a failure cancelled the run
	// open are each worker's action activities in flight, by workflow ID
	// and activity ID. The activities of one action have its seq (a move
	// stops the instance on its old host and starts it on its new one at
	// once).
	open map[string]map[string]fuzzOpenAction
	// ended are the activities whose result or cancellation reached their
	// workflow (an attempt's start may be heard after its cancellation).
	ended map[string]bool
	modes map[string]string // by verb
	// children are the child workflows running.
	children map[string]bool
}

func newFuzzHarness(t *testing.T) *fuzzHarness {
	t.Helper()
	var s testsuite.WorkflowTestSuite
	s.SetLogger(sdklog.NewStructuredLogger(slog.New(slog.DiscardHandler)))
	env := s.NewTestWorkflowEnvironment()
	env.SetTestTimeout(10 * time.Second)
	// Workflow code that runs past fuzzDeadlockTimeout without yielding
	// fails its task (the SDK's deadlock detector; a worker's is 1 s): longer
	// here, where two fuzz workers share the machine with whatever else runs.
	env.SetWorkerOptions(worker.Options{DeadlockDetectionTimeout: fuzzDeadlockTimeout})
	watchdog := time.AfterFunc(fuzzHangAfter, func() {
		buf := make([]byte, 1<<20)
		buf = buf[:runtime.Stack(buf, true)]
		panic(fmt.Sprintf("fuzz: %s hung for %s; the goroutines:\n%s", t.Name(), fuzzHangAfter, buf))
	})
	t.Cleanup(func() { watchdog.Stop() })
	h := &fuzzHarness{t: t, env: env, began: time.Now(), open: map[string]map[string]fuzzOpenAction{}, ended: map[string]bool{}, children: map[string]bool{}, modes: map[string]string{}}
	env.RegisterWorkflow(WorkerWorkflow)
	env.RegisterWorkflow(SupervisorWorkflow)
	env.RegisterWorkflow(HostWorkflow)
	env.RegisterWorkflow(RolloutWorkflow)
	// The real hand-out (a supervisor's specs reach its children as
	// signals on the environment's loop); every other activity is mocked.
	env.RegisterActivityWithOptions(&activities.Activities{Signal: testSignal(env)}, activity.RegisterOptions{Name: activities.Prefix})
	env.RegisterActivityWithOptions(&activities.Control{}, activity.RegisterOptions{Name: activities.Prefix})
	env.RegisterActivityWithOptions(&activities.Host{}, activity.RegisterOptions{Name: activities.Prefix})
	for _, verb := range []string{"start", "stop", "restart", "reload", "observe"} {
		h.mockAction(verb)
	}
	env.OnActivity(activities.NotifyName, mock.Anything, mock.Anything).Return(nil).Maybe()
	env.OnActivity(activities.HostSubscribeName, mock.Anything, mock.Anything).Return(nil).Maybe()
	env.OnActivity(activities.ClosedChildrenName, mock.Anything, mock.Anything).Return([]activities.ClosedChild(nil), nil).Maybe()
	env.OnActivity(activities.SubtreeSpecName, mock.Anything, mock.Anything).Return(spec.Node{}, errors.New("fuzz: no read-back")).Maybe()
	env.SetOnChildWorkflowStartedListener(func(info *workflow.Info, _ workflow.Context, _ converter.EncodedValues) {
		h.mu.Lock()
		defer h.mu.Unlock()
		h.children[info.WorkflowExecution.ID] = true
	})
	env.SetOnChildWorkflowCompletedListener(func(info *workflow.Info, _ converter.EncodedValue, err error) {
		h.mu.Lock()
		delete(h.children, info.WorkflowExecution.ID)
		h.mu.Unlock()
		// A child that fails (a panic, an error) fails the run.
		var can *workflow.ContinueAsNewError
		if err != nil && !temporal.IsCanceledError(err) && !errors.As(err, &can) && !h.isStopped() {
			h.fail("child %s failed: %v", info.WorkflowExecution.ID, err)
		}
	})
	env.SetOnActivityStartedListener(h.activityStarted)
	env.SetOnActivityCompletedListener(func(info *activity.Info, _ converter.EncodedValue, _ error) { h.activityEnded(info) })
	env.SetOnActivityCanceledListener(h.activityEnded)
	return h
}

var fuzzActionNames = map[string]string{
	"start": activities.StartName, "stop": activities.StopName, "restart": activities.RestartName,
	"reload": activities.ReloadName, "observe": activities.ObserveName,
}

func (h *fuzzHarness) mode(verb string) string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.modes[verb]
}

// setMode takes an `act VERB MODE` step.
func (h *fuzzHarness) setMode(data []byte) {
	verb, mode, _ := strings.Cut(strings.TrimSpace(string(data)), " ")
	h.mu.Lock()
	defer h.mu.Unlock()
	h.modes[verb] = mode
}

// mockAction answers an action by its verb's mode.
func (h *fuzzHarness) mockAction(verb string) {
	h.env.OnActivity(fuzzActionNames[verb], mock.Anything, mock.Anything).AfterFn(func() time.Duration {
		switch {
		case h.mode(verb) == "slow":
			return fuzzSlowActionTime
		case verb == "observe":
			return 0
		case verb == "stop" || verb == "reload":
			return fuzzActionTime / 3
		}
		return fuzzActionTime
	}).Return(func(_ context.Context, r activities.ActionRequest) (activities.ActionResult, error) {
		res := activities.ActionResult{Attempt: 1, Instance: r.Instance}
		if verb == "start" || verb == "restart" {
			res.Instance = fmt.Sprintf("i%d", r.Seq)
		}
		switch h.mode(verb) {
		case "fail":
			return activities.ActionResult{}, errors.New("fuzz: the action failed")
		case "permanent":
			return activities.ActionResult{}, temporal.NewNonRetryableApplicationError("fuzz: permanent", activities.ErrPermanent, nil)
		case "refused":
			return activities.ActionResult{}, temporal.NewNonRetryableApplicationError("fuzz: refused", activities.ErrRefused, nil)
		case "crashed":
			res.Observed = string(tick.ObservedCrashed)
		case "exited":
			res.Observed = string(tick.ObservedExited)
		default:
			if verb == "observe" {
				res.Observed = string(tick.ObservedRunning)
			}
		}
		return res, nil
	}).Maybe()
}

// fail records a failure and ends the run (at most once).
func (h *fuzzHarness) fail(format string, args ...any) {
	h.t.Helper()
	h.t.Errorf(format, args...)
	h.mu.Lock()
	defer h.mu.Unlock()
	h.stopLocked()
}

func (h *fuzzHarness) stopLocked() {
	if !h.stopped {
		h.stopped = true
		h.env.RegisterDelayedCallback(h.end, 0) // posted to the environment's loop
	}
}

// end cancels the workflow under test; after it closed (continued as
// new), the children it left running, which the environment waits for.
func (h *fuzzHarness) end() {
	if !h.env.IsWorkflowCompleted() {
		h.env.CancelWorkflow()
		return
	}
	h.mu.Lock()
	kids := slices.Sorted(maps.Keys(h.children))
	h.mu.Unlock()
	for _, id := range kids {
		if strings.Count(id, "/") == 1 { // a child supervisor ends its own
			h.env.CancelWorkflowByID(id, "")
		}
	}
}

func (h *fuzzHarness) isStopped() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.stopped
}

// activityStarted runs on the activity's goroutine, once per attempt.
func (h *fuzzHarness) activityStarted(info *activity.Info, _ context.Context, args converter.EncodedValues) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.activities++
	if h.activities == fuzzMaxActivities+1 && !h.stopped {
		h.t.Errorf("runaway: more than %d activities in one execution (the last: %s)", fuzzMaxActivities, info.ActivityType.Name)
		h.stopLocked()
	}
	if d := time.Since(h.began); d > fuzzWallBudget && !h.stopped {
		h.t.Errorf("runaway: the execution took more than %s of wall time (%d activities)", fuzzWallBudget, h.activities)
		h.stopLocked()
	}
	verb := ""
	for v, name := range fuzzActionNames {
		if name == info.ActivityType.Name {
			verb = v
		}
	}
	var req activities.ActionRequest
	if verb == "" || args.Get(&req) != nil || req.Seq == 0 {
		return // not a worker's action (a stale copy's stop has no seq)
	}
	wf := info.WorkflowExecution.ID
	if fuzzDebug {
		h.t.Logf("%s started %s %s attempt %d seq %d", h.env.Now().Format("15:04:05.000"), info.ActivityID, info.ActivityType.Name, info.Attempt, req.Seq)
	}
	if h.ended[wf+"/"+info.WorkflowExecution.RunID+"/"+info.ActivityID] {
		return
	}
	open := h.open[wf]
	if open == nil {
		open = map[string]fuzzOpenAction{}
		h.open[wf] = open
	}
	for id, other := range open {
		if other.seq != req.Seq && !h.stopped {
			h.t.Errorf("%s: two actions in flight: %s (seq %d, activity %s) while %s (seq %d, activity %s) runs", wf, info.ActivityType.Name, req.Seq, info.ActivityID, other.name, other.seq, id)
			h.stopLocked()
		}
	}
	open[info.ActivityID] = fuzzOpenAction{name: info.ActivityType.Name, seq: req.Seq}
}

type fuzzOpenAction struct {
	name string
	seq  int64
}

// activityEnded runs on the environment's loop when an activity's result
// (after its retries) or its cancellation reaches the workflow.
func (h *fuzzHarness) activityEnded(info *activity.Info) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if fuzzDebug {
		h.t.Logf("%s ended %s %s", h.env.Now().Format("15:04:05.000"), info.ActivityID, info.ActivityType.Name)
	}
	delete(h.open[info.WorkflowExecution.ID], info.ActivityID)
	h.ended[info.WorkflowExecution.ID+"/"+info.WorkflowExecution.RunID+"/"+info.ActivityID] = true
}

// execute runs the workflow under test; a panic of the environment (its
// test timeout: a workflow that neither ends nor waits on a timer) is a
// failure.
func (h *fuzzHarness) execute(wf any, in any) {
	h.t.Helper()
	defer func() {
		if r := recover(); r != nil {
			msg := fmt.Sprint(r)
			if len(msg) > 2000 {
				msg = msg[:2000] + "..."
			}
			h.t.Fatalf("the test environment panicked: %s\n%s", msg, firstLines(string(debug.Stack()), 40))
		}
	}()
	h.env.ExecuteWorkflow(wf, in)
}

// checkEnd checks how the workflow under test ended: cancelled by the
// script's end, continued as new (an upgrade, its history), or ok.
func (h *fuzzHarness) checkEnd(also ...func(error) bool) {
	h.t.Helper()
	err := h.env.GetWorkflowError()
	var can *workflow.ContinueAsNewError
	switch {
	case err == nil, temporal.IsCanceledError(err), errors.As(err, &can):
		return
	}
	for _, ok := range also {
		if ok(err) {
			return
		}
	}
	msg := err.Error()
	var pe *temporal.PanicError
	var te *temporal.TimeoutError
	switch {
	case errors.As(err, &pe):
		msg = "panic: " + pe.Error() + "\n" + firstLines(pe.StackTrace(), 12)
	case errors.As(err, &te):
		msg = "it did not end when cancelled (its loop is stuck), and timed out: " + msg
	}
	if !h.isStopped() {
		h.t.Errorf("the workflow failed: %s", msg)
	} else {
		h.t.Logf("the workflow ended with: %s", msg)
	}
}

func firstLines(s string, n int) string {
	lines := strings.SplitN(s, "\n", n+1)
	if len(lines) > n {
		lines = lines[:n]
	}
	return strings.Join(lines, "\n")
}

// live reports whether the workflow under test still runs and the run is
// not being stopped: steps and checks after its end are skipped.
func (h *fuzzHarness) live() bool {
	return !h.env.IsWorkflowCompleted() && !h.isStopped()
}

func (h *fuzzHarness) queryStatus(id string) (Status, bool) {
	h.t.Helper()
	var v converter.EncodedValue
	var err error
	if id == "" {
		v, err = h.env.QueryWorkflow(QueryStatus)
	} else {
		v, err = h.queryByID(id)
	}
	var st Status
	if err == nil {
		err = v.Get(&st)
	}
	if err != nil {
		if id != "" {
			return st, false // a child that is gone
		}
		h.fail("status query: %v", err)
		return st, false
	}
	return st, true
}

// queryByID asks a child's workflow its status. The test environment
// panics on a child whose workflow has not started yet (a deferred one):
// that is no answer.
func (h *fuzzHarness) queryByID(id string) (v converter.EncodedValue, err error) {
	defer func() {
		if r := recover(); r != nil {
			v, err = nil, fmt.Errorf("no workflow %s: %v", id, r)
		}
	}()
	return h.env.QueryWorkflowByID(id, QueryStatus)
}

func (h *fuzzHarness) querySpec() (spec.Node, bool) {
	v, err := h.env.QueryWorkflow(QuerySpec)
	var n spec.Node
	if err == nil {
		err = v.Get(&n)
	}
	if err != nil {
		h.fail("spec query: %v", err)
		return n, false
	}
	return n, true
}

// rejections is what the script expects of a workflow's rejectedSignals:
// every bad payload of a known signal counts at once, a signal of an
// unknown name at the workflow's next wake-up (an unknown name wakes
// nothing), so by the next known signal at the latest.
type rejections struct {
	expected  int // by known signals
	unknown   int // signals of unknown names sent
	unknownBy int // of which sent before the last known signal
	last      int // the last count seen
}

func (r *rejections) known(n int) { r.expected += n; r.unknownBy = r.unknown }

func (r *rejections) check(h *fuzzHarness, who string, got int) {
	h.t.Helper()
	lo, hi := r.expected+r.unknownBy, r.expected+r.unknown
	if got < lo || got > hi {
		h.fail("%s: rejectedSignals %d, want %d (bad payloads of known signals) + %d..%d (unknown names)", who, got, r.expected, r.unknownBy, r.unknown)
	}
	if got < r.last {
		h.fail("%s: rejectedSignals went down from %d to %d", who, r.last, got)
	}
	r.last = got
}

func validDesired(d string) bool { return d == spec.DesiredRunning || d == spec.DesiredStopped }

func validWorkerState(s string) bool { return slices.Contains(tick.AllStates, tick.State(s)) }

// ---- workers ----

// fuzzUpdate is an Update the script sent, and what it expects.
type fuzzUpdate struct {
	name       string
	expect     func() // sets wantAccept and why (see fuzzWorkerRun.expect)
	wantAccept bool
	why        string
	accepted   bool
	rejected   error
	completed  bool
	outcome    any
	err        error
}

func (u *fuzzUpdate) callbacks() *testsuite.TestUpdateCallback {
	return &testsuite.TestUpdateCallback{
		OnAccept: func() { u.accepted = true },
		OnReject: func(err error) { u.rejected = err },
		OnComplete: func(v any, err error) {
			u.completed, u.outcome, u.err = true, v, err
		},
	}
}

// fuzzWorker is the worker under test: root/w, of a supervisor (mocked) it
// reports to.
func fuzzWorker() WorkerInput {
	n := stubNode("w", nil)
	return WorkerInput{Path: fuzzWorkerPath, Parent: "root", Spec: n, Generation: 1, Version: WorkerVersion}
}

const fuzzWorkerPath = "root/w"

type fuzzWorkerRun struct {
	h       *fuzzHarness
	rej     rejections
	updates []*fuzzUpdate
	// expect accounts for the last step, once the workflow has taken it:
	// the oracle validates as the workflow does, and a spec that hangs
	// the validator must hang the workflow first, not the harness.
	expect func()
}

// workerRejects says whether the worker must reject (count) a signal's
// payload given its spec, and whether the signal's name is one it knows.
func workerRejects(name string, raw converter.RawValue, cur spec.Node) (bad, known bool) {
	switch name {
	case SignalDesired:
		var d string
		return decodeRaw(raw, &d) != nil || !validDesired(d), true
	case SignalRestart, SignalUpgrade:
		return false, true
	case SignalReload:
		r := spec.Rendered(cur)
		return !r.ReloadConfigured(), true
	case SignalSpec:
		u, err := decodeUpdate(raw)
		return err != nil || u.Spec.Name != cur.Name || len(spec.ValidateSentWorker(true, fuzzWorkerPath, u.Spec)) > 0, true
	case SignalExit:
		var e tick.Exit
		return decodeRaw(raw, &e) != nil || e.Instance == "" || len(e.Instance)+len(e.Reason) > maxExitBytes, true
	case SignalSlow:
		var seq int64
		return decodeRaw(raw, &seq) != nil, true
	case SignalSupervise:
		_, err := decodeSupervise(raw)
		return err != nil, true
	}
	return false, false
}

// workerUpdateAccepted says whether the worker must accept an Update.
func workerUpdateAccepted(name string, raw converter.RawValue, cur spec.Node) (bool, string) {
	switch name {
	case UpdateSpec:
		var u spec.Update
		if err := decodeRaw(raw, &u); err != nil {
			return false, "does not decode: " + err.Error()
		}
		if u.Spec.Name != cur.Name {
			return false, "another worker's"
		}
		if ps := spec.ValidateSentWorker(true, fuzzWorkerPath, u.Spec); len(ps) > 0 {
			return false, "invalid: " + ps.Error()
		}
		return true, "valid"
	case activities.UpdateRollout:
		var op activities.RolloutOp
		if err := decodeRaw(raw, &op); err != nil {
			return false, "does not decode: " + err.Error()
		}
		switch op.Op {
		case RolloutRestart, RolloutStop, RolloutStart:
			return true, "op " + op.Op
		case RolloutReload:
			r := spec.Rendered(cur)
			return r.ReloadConfigured(), "reload"
		}
		return false, fmt.Sprintf("op %q", op.Op)
	}
	return false, "no such Update"
}

func (w *fuzzWorkerRun) step(st fuzzStep, i int) {
	h := w.h
	if !h.live() {
		return
	}
	if st.name == "act" {
		h.setMode(st.data)
		return
	}
	cur, ok := h.querySpec()
	if !ok {
		return
	}
	if st.update {
		u := &fuzzUpdate{name: st.name}
		u.expect = func() { u.wantAccept, u.why = workerUpdateAccepted(st.name, st.raw(), cur) }
		w.updates = append(w.updates, u)
		h.env.UpdateWorkflow(st.name, fmt.Sprintf("fuzz-%d", i), u.callbacks(), st.payload())
		return
	}
	w.expect = func() {
		bad, known := workerRejects(st.name, st.raw(), cur)
		switch {
		case !known:
			w.rej.unknown++
		case bad:
			w.rej.known(1)
		default:
			w.rej.known(0)
		}
	}
	h.env.SignalWorkflow(st.name, st.payload())
}

func (w *fuzzWorkerRun) check() {
	h := w.h
	if !h.live() {
		return
	}
	if w.expect != nil {
		w.expect()
		w.expect = nil
	}
	st, ok := h.queryStatus("")
	if !ok {
		return
	}
	if !validWorkerState(st.State) {
		h.fail("worker state %q", st.State)
	}
	if !validDesired(st.Desired) {
		h.fail("worker desired %q", st.Desired)
	}
	w.rej.check(h, "worker", st.RejectedSignals)
	for _, u := range w.updates {
		w.checkUpdate(u)
	}
}

// checkUpdate: an Update is accepted or rejected as expected, once
// decided; a rollout's answer is one of its outcomes.
func (w *fuzzWorkerRun) checkUpdate(u *fuzzUpdate) {
	h := w.h
	decided := u.accepted || u.rejected != nil
	if decided && u.expect != nil {
		u.expect()
		u.expect = nil
	}
	switch {
	case u.accepted && u.rejected != nil:
		h.fail("update %s both accepted and rejected (%v)", u.name, u.rejected)
	case decided && u.accepted != u.wantAccept:
		h.fail("update %s: accepted %v, want %v (%s; rejection: %v)", u.name, u.accepted, u.wantAccept, u.why, u.rejected)
	}
	if u.completed && u.err == nil && u.name == activities.UpdateRollout {
		out, _ := u.outcome.(activities.RolloutOutcome)
		if out.Status != TargetSucceeded && out.Status != TargetFailed && out.Status != TargetTimeout {
			h.fail("rollout update answered %+v", out)
		}
	}
}

// runWorkerScript runs the worker under test through a script.
func runWorkerScript(t *testing.T, script []byte) *fuzzHarness {
	h := newFuzzHarness(t)
	// Its reports to its supervisor go nowhere.
	h.env.OnSignalExternalWorkflow(mock.Anything, "root", mock.Anything, mock.Anything, mock.Anything).Return(nil).Maybe()
	w := &fuzzWorkerRun{h: h}
	steps, end := parseScript(script, 5*time.Second) // started and running by then
	h.env.RegisterDelayedCallback(w.check, 4*time.Second)
	for i, st := range steps {
		h.env.RegisterDelayedCallback(func() { w.step(st, i) }, st.at)
		h.env.RegisterDelayedCallback(w.check, st.at+time.Millisecond)
	}
	h.env.RegisterDelayedCallback(func() {
		w.check()
		h.end()
	}, end+2*time.Minute)
	h.execute(WorkerWorkflow, fuzzWorker())
	h.checkEnd()
	if !h.t.Failed() {
		for _, u := range w.updates {
			w.checkUpdate(u)
		}
	}
	return h
}

// FuzzWorkerSignals sends a worker every signal it takes (and some it does
// not), and its spec and rollout Updates, with fuzzed payloads.
func FuzzWorkerSignals(f *testing.F) {
	for _, s := range []string{
		// Every signal, well formed.
		`desired "stopped"
desired "running"
restart
reload
slow 3
exit {"instance":"i1","reason":"crash"}
supervise {"seq":1,"op":"stop"}
supervise {"seq":2,"op":"restart"}
spec {"generation":5,"spec":{"name":"w","kind":"stub","stub":{"delay":"1ms"}}}
@spec {"generation":6,"spec":{"name":"w","kind":"stub"}}
@rollout {"op":"restart"}
wait 1m
@rollout {"op":"stop"}
wait 1m
@rollout {"op":"start"}
upgrade`,
		// Bad payloads of every signal, and unknown names.
		`desired "maybe"
desired 42
desired {"x":
spec {"spec":{"name":"other","kind":"stub"}}
spec {"name":"w","kind":"nosuch"}
spec []
spec
exit {}
exit "x"
slow "x"
supervise {"op":"explode"}
reload
child {"status":{"path":"root/w"}}
host {"host":"h1","live":"up"}
drain {"drain":true}
update "promote"
nosuchsignal 1
@spec {"spec":{"name":"other","kind":"stub"}}
@spec 7
@rollout {"op":"dance"}
@rollout [1]
@nosuchupdate {}
desired "stopped"`,
		// Signals while actions are in flight, failing and slow.
		`act start slow
restart
desired "stopped"
desired "running"
restart
act restart fail
restart
wait 10s
act restart permanent
restart
wait 30s
act restart ok
restart
act observe crashed
spec {"spec":{"name":"w","kind":"stub","observe":{"interval":"2s"}}}
wait 10s
act observe exited
wait 10s
act stop refused
desired "stopped"
wait 20s
desired "running"`,
		// A process worker with a reload; exits of old and current instances.
		`spec {"spec":{"name":"w","kind":"process","process":{"command":"/usr/bin/sleep","args":["{{ .Vars.n }}"],"reload":{}},"vars":{"n":"100"}}}
wait 5s
reload
@rollout {"op":"reload"}
exit {"instance":"i1","normal":true}
exit {"instance":"nosuch"}
wait 5s
spec {"generation":1,"spec":{"name":"w","kind":"stub"}}
reload`,
		// Known defects: a runaway template; an observe every nanosecond.
		`spec {"spec":{"name":"w","kind":"process","process":{"command":"{{range 100000000}}{{end}}/usr/bin/sleep"}}}`,
		`spec {"spec":{"name":"w","kind":"stub","observe":{"interval":"1ns"}}}`,
		// Negative and zero durations, odd numbers.
		`spec {"spec":{"name":"w","kind":"stub","observe":{"interval":"-1s"},"backoff":{"initial":"-5m","multiplier":-2},"retry":{"maxAttempts":-1,"initialInterval":"0s"},"timeouts":{"start":"-1s"}}}
exit {"instance":"i1"}
wait 1m
spec {"generation":-9223372036854775808,"spec":{"name":"w","kind":"stub","stub":{"delay":"-1h","failureRate":2}}}
slow 9223372036854775807`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, script []byte) {
		runWorkerScript(t, script)
	})
}

// FuzzWorkerSpec sends a worker a valid spec with fuzzed fields: its
// name, the template of its command and an argument, its vars (huge by
// repetition), its observe interval and its backoff; by signal or by the
// spec Update.
func FuzzWorkerSpec(f *testing.F) {
	f.Add("w", uint16(1), "/usr/bin/sleep", "{{ .Vars.v }}", "100", uint16(1), "30s", "1s", false)
	f.Add("w", uint16(1), "/usr/bin/{{ .Name }}", "{{ .Instance }}{{ .Host }}", "x", uint16(1), "", "", true)
	f.Add("w", uint16(1), "{{range 100000000}}{{end}}/usr/bin/sleep", "1", "", uint16(0), "", "", false)
	f.Add("w", uint16(1), "{{range 100000000}}{{end}}/usr/bin/sleep", "1", "", uint16(0), "", "", true)
	f.Add("w", uint16(1), "/usr/bin/sleep", "1", "", uint16(0), "1ns", "", false)
	f.Add("w", uint16(1), "/usr/bin/sleep", "1", "", uint16(0), "1ns", "", true)
	f.Add("w", uint16(1), "/usr/bin/sleep", "{{ .Vars.v }}", "0123456789abcdef", uint16(20000), "", "", false)
	f.Add("w", uint16(3000), "/usr/bin/sleep", "1", "", uint16(0), "-1s", "-1s", false)
	f.Add("w", uint16(1), "sleep", "{{ .Vars.nosuch }}", "", uint16(0), "1s", "1ns", false)
	f.Add("", uint16(1), "{{ printf \"%0999999d\" 1 }}", "{{ .Vars.v | printf \"%s%s%s%s\" }}", "v", uint16(1), "1h", "10ms", true)
	f.Fuzz(func(t *testing.T, name string, nameRep uint16, command, arg, vars string, varsRep uint16, observe, backoff string, byUpdate bool) {
		if name == "" {
			name = "w"
		}
		node := map[string]any{
			"name":    strings.Repeat(name, int(nameRep%4096)),
			"kind":    spec.KindProcess,
			"process": map[string]any{"command": command, "args": []any{arg}},
		}
		if vars != "" {
			node["vars"] = map[string]any{"v": strings.Repeat(vars, int(varsRep%32768))}
		}
		if observe != "" {
			node["observe"] = map[string]any{"interval": observe}
		}
		if backoff != "" {
			node["backoff"] = map[string]any{"initial": backoff}
			node["retry"] = map[string]any{"initialInterval": backoff}
		}
		payload, err := json.Marshal(map[string]any{"spec": node})
		if err != nil {
			t.Skip(err)
		}
		step := "spec "
		if byUpdate {
			step = "@spec "
		}
		script := step + string(payload) + "\nwait 1m\nrestart\ndesired \"stopped\"\nwait 10s\ndesired \"running\"\nwait 1m\nexit {\"instance\":\"i1\"}"
		runWorkerScript(t, []byte(script))
	})
}

// ---- supervisors ----

// fuzzSupervisor is the supervisor under test: root, of two stub workers.
func fuzzSupervisor() SupervisorInput {
	return SupervisorInput{Path: fuzzSupervisorPath, Spec: tree("root", stubNode("a", nil), stubNode("b", nil)), Generation: 1, Version: SupervisorVersion}
}

const fuzzSupervisorPath = "root"

type fuzzSupervisorRun struct {
	h      *fuzzHarness
	rej    rejections
	expect func() // as fuzzWorkerRun's
	name   string
	// children are the names the last accepted spec gives it, sorted.
	children []string
	hosts    map[string]bool
	// spec is the last accepted spec.
	spec spec.Node
}

// subscribedHosts are the hosts a supervisor running n subscribes to: each
// worker's hosts (it is placed on one of them), or the host it runs on.
func subscribedHosts(n spec.Node) map[string]bool {
	out := map[string]bool{}
	for _, c := range spec.Expand(n) {
		if c.IsSupervisor() || c.Kind == "" {
			continue
		}
		for _, h := range c.Hosts {
			out[h] = true
		}
		if on := c.RunsOn(); len(c.Hosts) == 0 && on != "" {
			out[on] = true
		}
	}
	return out
}

func expandedNames(n spec.Node) []string {
	var names []string
	for _, c := range spec.Expand(n) {
		names = append(names, c.Name)
	}
	slices.Sort(names)
	return names
}

// supervisorRejects says how many rejections a signal to the supervisor
// must count (a batch of child reports may have several bad ones),
// whether it knows the signal's name, and the spec it takes (if one).
//
// hosts are the hosts whose state the supervisor keeps (a host signal
// adds its own); subscribed those it subscribed to (subscribedHosts), the
// only ones whose notes it takes.
func supervisorRejects(name string, raw converter.RawValue, root string, hosts, subscribed map[string]bool) (bad int, known bool, took *spec.Node) {
	one := func(b bool) int {
		if b {
			return 1
		}
		return 0
	}
	switch name {
	case SignalSpec:
		u, err := decodeUpdate(raw)
		if err != nil || u.Spec.Name != root || len(spec.ValidateSent(true, fuzzSupervisorPath, u.Spec)) > 0 || !u.Spec.IsSupervisor() {
			return 1, true, nil
		}
		return 0, true, &u.Spec
	case SignalDesired:
		var d string
		return one(decodeRaw(raw, &d) != nil || !validDesired(d)), true, nil
	case SignalRestart, SignalUpgrade:
		return 0, true, nil
	case SignalChild:
		var r ChildReport
		if decodeRaw(raw, &r) != nil || len(r.More) >= activities.MaxReportsPerSignal {
			return 1, true, nil
		}
		for _, m := range append([]ChildReport{r}, r.More...) {
			d := m.Status.Desired
			bad += one((d != "" && !validDesired(d)) || spec.EncodedSize(treestatus.Narrow(m.Status)) > maxReportBytes)
		}
		return bad, true, nil
	case SignalSupervise:
		_, err := decodeSupervise(raw)
		return one(err != nil), true, nil
	case SignalUpdate:
		var op string
		err := decodeRaw(raw, &op)
		return one(err != nil || !slices.Contains([]string{"promote", "pause", "resume", "cancel"}, op)), true, nil
	case SignalHost:
		var st HostState
		if decodeRaw(raw, &st) != nil || st.Host == "" || (st.Live != HostUp && st.Live != HostUnknown) {
			return 1, true, nil
		}
		if !subscribed[st.Host] { // supervisor 13 (SupHostNotesSubscribed)
			return 1, true, nil
		}
		if !hosts[st.Host] && (len(st.Host) > spec.MaxNameLength || len(hosts) >= hostcore.MaxHostStates) {
			return 1, true, nil
		}
		hosts[st.Host] = true
		return 0, true, nil
	}
	return 0, false, nil
}

func (s *fuzzSupervisorRun) step(st fuzzStep) {
	h := s.h
	if !h.live() {
		return
	}
	switch {
	case st.name == "act":
		h.setMode(st.data)
		return
	case st.to != "":
		// To a child: its own business (a crash, a bad payload).
		if st.update {
			_ = h.env.UpdateWorkflowByID("root/"+st.to, st.name, fmt.Sprint("fuzz-", st.at), &testsuite.TestUpdateCallback{OnAccept: func() {}, OnReject: func(error) {}, OnComplete: func(any, error) {}}, st.payload())
		} else {
			_ = h.env.SignalWorkflowByID("root/"+st.to, st.name, st.payload())
		}
		return
	case st.update:
		// A supervisor takes no Update: refused by the SDK.
		h.env.UpdateWorkflow(st.name, fmt.Sprint("fuzz-", st.at), &testsuite.TestUpdateCallback{OnAccept: func() { h.fail("supervisor accepted the Update %q", st.name) }, OnReject: func(error) {}, OnComplete: func(any, error) {}}, st.payload())
		return
	}
	s.expect = func() {
		bad, known, took := supervisorRejects(st.name, st.raw(), s.name, s.hosts, subscribedHosts(s.spec))
		if known {
			s.rej.known(bad)
		} else {
			s.rej.unknown++
		}
		if took != nil {
			s.children, s.spec = expandedNames(*took), *took
		}
	}
	h.env.SignalWorkflow(st.name, st.payload())
}

func (s *fuzzSupervisorRun) check() {
	h := s.h
	if !h.live() {
		return
	}
	if s.expect != nil {
		s.expect()
		s.expect = nil
	}
	st, ok := h.queryStatus("")
	if !ok {
		return
	}
	if !validDesired(st.Desired) {
		h.fail("supervisor desired %q", st.Desired)
	}
	s.rej.check(h, "supervisor", st.RejectedSignals)
	var names []string
	for _, c := range st.Children {
		name, ok := strings.CutPrefix(c.Path, "root/")
		if !ok || strings.Contains(name, "/") {
			h.fail("child path %q is not root's child", c.Path)
		}
		if len(c.Path) > fuzzMaxWorkflowID {
			h.fail("child workflow ID of %d characters: the server refuses IDs over %d (%.40q...)", len(c.Path), fuzzMaxWorkflowID, c.Path)
		}
		if !validDesired(c.Desired) {
			h.fail("child %s: desired %q", c.Path, c.Desired)
		}
		names = append(names, name)
		// The child's own answer, if it runs.
		if own, ok := h.queryStatus(c.Path); ok && c.Kind != spec.KindSupervisor {
			if !validWorkerState(own.State) || !validDesired(own.Desired) {
				h.fail("child %s: state %q, desired %q", c.Path, own.State, own.Desired)
			}
		}
	}
	slices.Sort(names)
	if !slices.Equal(names, s.children) {
		h.fail("supervisor's children %q, want the last accepted spec's %q", names, s.children)
	}
}

// runSupervisorScript runs the supervisor under test through a script.
func runSupervisorScript(t *testing.T, script []byte) *fuzzHarness {
	h := newFuzzHarness(t)
	in := fuzzSupervisor()
	s := &fuzzSupervisorRun{h: h, name: in.Spec.Name, children: expandedNames(in.Spec), hosts: map[string]bool{}, spec: in.Spec}
	steps, end := parseScript(script, 5*time.Second)
	h.env.RegisterDelayedCallback(s.check, 4*time.Second)
	for _, st := range steps {
		h.env.RegisterDelayedCallback(func() { s.step(st) }, st.at)
		h.env.RegisterDelayedCallback(s.check, st.at+time.Millisecond)
	}
	h.env.RegisterDelayedCallback(func() {
		s.check()
		h.end()
	}, end+2*time.Minute)
	h.execute(SupervisorWorkflow, in)
	h.checkEnd()
	return h
}

// FuzzSupervisorSignals sends a supervisor every signal it takes (and some
// it does not), and its children some, with fuzzed payloads.
func FuzzSupervisorSignals(f *testing.F) {
	long := strings.Repeat("x", 1100)
	for _, s := range []string{
		// Every signal, well formed.
		`desired "stopped"
wait 30s
desired "running"
wait 30s
restart
spec {"spec":{"name":"root","strategy":"one_for_all","children":[{"name":"a","kind":"stub"},{"name":"c","kind":"stub","dependsOn":["a"]}]}}
wait 30s
update "pause"
update "resume"
update "promote"
update "cancel"
supervise {"seq":1,"op":"stop"}
supervise {"seq":2,"op":"restart"}
child {"seq":99,"status":{"path":"root/a","kind":"stub","state":"running","desired":"running","terminations":3}}
host {"host":"h1","live":"unknown","since":"2026-01-01T00:00:00Z","draining":true,"force":true}
host {"host":"h1","live":"up"}
>a exit {"instance":"i1","reason":"crash"}
>c desired "stopped"
wait 1m
upgrade`,
		// Bad payloads of every signal, and unknown names.
		`spec {"spec":{"name":"other","children":[{"name":"a","kind":"stub"}]}}
spec {"spec":{"name":"root","kind":"stub"}}
spec {"spec":{"name":"root","children":[{"name":"a","kind":"stub"},{"name":"a","kind":"stub"}]}}
spec {"spec":{"name":"root","children":[{"name":"a/b","kind":"stub"}]}}
spec "root"
spec
desired "maybe"
desired
child []
child "x"
supervise {"op":"explode"}
update "explode"
update 1
host {}
host "h1"
host {"host":"` + strings.Repeat("h", 101) + `","live":"up"}
exit {"instance":"i1"}
nosuchsignal
@spec {"spec":{"name":"root"}}
restart`,
		// A tree of workers, instances, a child supervisor; reconciles.
		`spec {"spec":{"name":"root","strategy":"rest_for_one","intensity":{"maxRestarts":1,"period":"1m","cooldown":"1m"},"children":[{"name":"a","kind":"stub","stub":{"crashAfter":"5s"}},{"name":"g","children":[{"name":"x","kind":"stub"}]},{"name":"f","kind":"stub","instances":3}]}}
wait 1m
>a restart
spec {"generation":9,"spec":{"name":"root","children":[{"name":"b","kind":"stub"}]}}
spec {"spec":{"name":"root","children":[{"name":"a","kind":"stub"},{"name":"b","kind":"stub"}]}}
act start fail
restart
wait 1m
act start ok
desired "running"`,
		// Known defect: a child's name of 1,100 characters.
		`spec {"spec":{"name":"root","children":[{"name":"a","kind":"stub"},{"name":"` + long + `","kind":"stub"}]}}`,
		// An observe every nanosecond in a child's spec.
		`spec {"spec":{"name":"root","children":[{"name":"a","kind":"stub","observe":{"interval":"1ns"}},{"name":"b","kind":"stub"}]}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, script []byte) {
		runSupervisorScript(t, script)
	})
}

// FuzzSupervisorSpec sends a supervisor a spec with fuzzed parts: a
// child's name (huge by repetition), its instances, its observe interval
// and command template, the strategy, and a chain of child supervisors
// depth levels deep.
func FuzzSupervisorSpec(f *testing.F) {
	f.Add("c", uint16(1), uint8(1), int16(0), "30s", "/usr/bin/sleep", "one_for_one")
	f.Add("x", uint16(1100), uint8(0), int16(0), "", "/usr/bin/sleep", "")
	f.Add("c", uint16(1), uint8(0), int16(0), "1ns", "/usr/bin/sleep", "")
	f.Add("c", uint16(1), uint8(0), int16(0), "", "{{range 100000000}}{{end}}/usr/bin/sleep", "")
	f.Add("c", uint16(1), uint8(40), int16(0), "", "/usr/bin/sleep", "one_for_all")
	f.Add("c", uint16(1), uint8(3), int16(4), "-1s", "/usr/bin/sleep", "rest_for_one")
	f.Add("c", uint16(1), uint8(0), int16(-3), "1h", "{{ .Instance }}", "nosuch")
	f.Fuzz(func(t *testing.T, name string, nameRep uint16, depth uint8, instances int16, observe, command, strategy string) {
		child := map[string]any{
			"name": strings.Repeat(name, int(nameRep%4096)),
			"kind": spec.KindProcess, "process": map[string]any{"command": command},
		}
		if instances != 0 {
			child["instances"] = instances
		}
		if observe != "" {
			child["observe"] = map[string]any{"interval": observe}
		}
		var chain any = map[string]any{"name": "leaf", "kind": spec.KindStub}
		for i := range int(depth % 48) {
			chain = map[string]any{"name": fmt.Sprintf("g%d", i), "children": []any{chain}}
		}
		children := []any{map[string]any{"name": "a", "kind": spec.KindStub}, child}
		if depth%48 > 0 {
			children = append(children, chain)
		}
		root := map[string]any{"name": "root", "children": children}
		if strategy != "" {
			root["strategy"] = strategy
		}
		payload, err := json.Marshal(map[string]any{"spec": root})
		if err != nil {
			t.Skip(err)
		}
		script := "spec " + string(payload) + "\nwait 1m\nrestart\ndesired \"stopped\"\nwait 30s\ndesired \"running\"\nwait 30s"
		runSupervisorScript(t, []byte(script))
	})
}

// ---- hosts ----

// hostModel is what a host's view must say after the signals it took.
type hostModel struct {
	drain HostDrain
	subs  map[string]HostSubscription
}

// subscribe is hostcore's rule, written again; a subscription its Check
// refuses changes nothing.
func (m *hostModel) subscribe(s HostSubscription) {
	if s.Supervisor == "" {
		return
	}
	old, has := m.subs[s.Supervisor]
	held := &HostCarry{}
	for _, name := range sortedKeys(m.subs) {
		held.Subscribers = append(held.Subscribers, m.subs[name])
	}
	if held.Check(s) != nil {
		return
	}
	switch {
	case has && s.Seq != 0 && s.Seq <= old.Seq:
	case has && s.Gone:
		delete(m.subs, s.Supervisor)
	case has, !s.Gone:
		m.subs[s.Supervisor] = s
	}
}

type fuzzHostRun struct {
	h *fuzzHarness
	m hostModel
}

func (r *fuzzHostRun) step(st fuzzStep) {
	h := r.h
	if !h.live() {
		return
	}
	if st.update {
		h.env.UpdateWorkflow(st.name, fmt.Sprint("fuzz-", st.at), &testsuite.TestUpdateCallback{OnAccept: func() { h.fail("host accepted the Update %q", st.name) }, OnReject: func(error) {}, OnComplete: func(any, error) {}}, st.payload())
		return
	}
	// A payload that does not decode is dropped by the SDK (a host's
	// signals are typed): the model ignores it too.
	raw := st.raw()
	switch st.name {
	case SignalHostSubscribe:
		var s HostSubscription
		if decodeRaw(raw, &s) == nil {
			r.m.subscribe(s)
		}
	case SignalHostDrain:
		var d HostDrain
		if decodeRaw(raw, &d) == nil {
			r.m.drain = d
		}
	}
	h.env.SignalWorkflow(st.name, st.payload())
}

func (r *fuzzHostRun) check() {
	h := r.h
	if !h.live() {
		return
	}
	v, err := h.env.QueryWorkflow(QueryHost)
	var view HostView
	if err == nil {
		err = v.Get(&view)
	}
	if err != nil {
		h.fail("host query: %v", err)
		return
	}
	if !slices.Contains([]string{HostUp, HostUnknown, HostDraining, HostDrained}, view.State) {
		h.fail("host state %q", view.State)
	}
	services, pinned, subscribers := 0, []string{}, []string{}
	movable := false
	for _, name := range sortedKeys(r.m.subs) {
		s := r.m.subs[name]
		movable = movable || s.Movable > 0
		if s.Movable == 0 && len(s.Pinned) == 0 {
			continue
		}
		services += s.Movable + len(s.Pinned)
		pinned = append(pinned, s.Pinned...)
		subscribers = append(subscribers, s.Supervisor)
	}
	slices.Sort(pinned)
	want := ""
	if r.m.drain.Drain {
		want = HostDrained
		if movable {
			want = HostDraining
		}
	}
	switch {
	case want != "" && view.State != want:
		h.fail("host state %q after the drain %+v, want %q (a signal not taken?)", view.State, r.m.drain, want)
	case want == "" && (view.State == HostDraining || view.State == HostDrained):
		h.fail("host state %q after the undrain %+v (a signal not taken?)", view.State, r.m.drain)
	}
	if view.Services != services || !slices.Equal(append([]string{}, view.Pinned...), pinned) || !slices.Equal(append([]string{}, view.Subscribers...), subscribers) {
		h.fail("host view: services %d, pinned %q, subscribers %q; want %d, %q, %q (a signal not taken?)", view.Services, view.Pinned, view.Subscribers, services, pinned, subscribers)
	}
}

// runHostScript runs a host's workflow through a script; its host is up
// (its hello answers at once, its lease holds).
func runHostScript(t *testing.T, script []byte) *fuzzHarness {
	h := newFuzzHarness(t)
	h.env.OnActivity(activities.HostHelloName, mock.Anything).Return(activities.HostInfo{Name: "h1", Build: "fuzz", PID: 1}, nil).Maybe()
	h.env.OnActivity(activities.HostLeaseName, mock.Anything).After(time.Hour).Return(nil).Maybe()
	h.env.OnSignalExternalWorkflow(mock.Anything, mock.Anything, mock.Anything, SignalHost, mock.Anything).Return(nil).Maybe()
	r := &fuzzHostRun{h: h, m: hostModel{subs: map[string]HostSubscription{}}}
	steps, end := parseScript(script, 5*time.Second)
	h.env.RegisterDelayedCallback(r.check, 4*time.Second)
	for _, st := range steps {
		h.env.RegisterDelayedCallback(func() { r.step(st) }, st.at)
		h.env.RegisterDelayedCallback(r.check, st.at+time.Millisecond)
	}
	h.env.RegisterDelayedCallback(func() {
		r.check()
		h.end()
	}, end+time.Minute)
	h.env.SetStartWorkflowOptions(client.StartWorkflowOptions{ID: HostID("h1")})
	h.execute(HostWorkflow, HostInput{Name: "h1"})
	h.checkEnd()
	return h
}

// FuzzHostSignals sends a host's workflow its signals (subscribe, drain,
// wake) and others, with fuzzed payloads.
func FuzzHostSignals(f *testing.F) {
	for _, s := range []string{
		`subscribe {"supervisor":"root/g","movable":2,"pinned":["root/g/db"],"seq":5}
subscribe {"supervisor":"root/g","seq":4}
subscribe {"supervisor":"other","movable":1}
drain {"drain":true}
subscribe {"supervisor":"root/g","pinned":["root/g/db"],"seq":6}
subscribe {"supervisor":"other","gone":true}
drain {"drain":true,"force":true}
drain {"drain":false}
subscribe {"supervisor":"root/g","gone":true,"seq":7}
wake`,
		`subscribe
drain
subscribe {}
nosuch {"drain":true}
drain {"drain":true}
subscribe {"supervisor":"s","movable":-5,"pinned":[]}
subscribe {"supervisor":"a//b","movable":1}
subscribe {"supervisor":"root/g","pinned":["` + strings.Repeat("p", 500) + `"]}
drain {"drain":false}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, script []byte) {
		runHostScript(t, script)
	})
}

// ---- rollouts ----

// FuzzRollout runs a rollout with a fuzzed op, fleet, chunk and fail-fast,
// whose chunks are answered from outcomes (a byte a target: succeeded,
// failed, timeout, no answer, an answer for another path or seq, a status
// of no meaning, two answers; 0xF0 and up fail the chunk's attempt) after
// 0-3 s, and which is sent cancel and upgrade signals at fuzzed times.
func FuzzRollout(f *testing.F) {
	f.Add("restart", uint8(12), int8(5), false, uint8(255), uint8(255), []byte{0, 0, 0, 0, 0})
	f.Add("stop", uint8(25), int8(10), true, uint8(255), uint8(255), []byte{0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0})
	f.Add("start", uint8(30), int8(3), false, uint8(5), uint8(255), []byte{7, 2, 1, 0})
	f.Add("reload", uint8(4), int8(-1), false, uint8(255), uint8(2), []byte{0xF0, 0xF1, 0xF2, 0xF3, 0})
	f.Add("dance", uint8(3), int8(1), false, uint8(255), uint8(255), []byte{})
	f.Add("restart", uint8(0), int8(0), true, uint8(0), uint8(0), []byte{1})
	f.Fuzz(func(t *testing.T, op string, n uint8, chunk int8, failFast bool, cancelAt, upgradeAt uint8, outcomes []byte) {
		runFuzzRollout(t, op, int(n%64), int(chunk), failFast, cancelAt, upgradeAt, outcomes)
	})
}

func runFuzzRollout(t *testing.T, op string, n, chunk int, failFast bool, cancelAt, upgradeAt uint8, outcomes []byte) {
	h := newFuzzHarness(t)
	env := h.env
	var mu sync.Mutex
	next := 0
	draw := func() byte {
		mu.Lock()
		defer mu.Unlock()
		if len(outcomes) == 0 {
			return 0
		}
		b := outcomes[next%len(outcomes)]
		next++
		return b
	}
	handed := map[string]int{}
	env.OnActivity(activities.RolloutChunkName, mock.Anything, mock.Anything).AfterFn(func() time.Duration {
		return time.Duration(draw()%4) * time.Second
	}).Return(func(_ context.Context, req activities.RolloutChunkRequest) ([]activities.ChunkResult, error) {
		mu.Lock()
		for _, tg := range req.Targets {
			handed[tg.Path]++
		}
		mu.Unlock()
		if draw() >= 0xF0 {
			return nil, errors.New("fuzz: the chunk's attempt failed")
		}
		var out []activities.ChunkResult
		for _, tg := range req.Targets {
			res := activities.ChunkResult{Seq: tg.Seq, Path: tg.Path, RolloutOutcome: activities.RolloutOutcome{Status: TargetSucceeded}}
			switch draw() % 8 {
			case 1:
				res.Status, res.Error = TargetFailed, "fuzz: failed"
			case 2:
				res.Status = TargetTimeout
			case 3:
				continue
			case 4:
				res.Path = tg.Path + "/other"
			case 5:
				res.Seq += 100
			case 6:
				res.Status = "weird"
			case 7:
				out = append(out, res)
				res.Status = TargetFailed
			}
			out = append(out, res)
		}
		return out, nil
	})
	in := RolloutInput{Path: "fleet", Op: op, Targets: fleetTargets(n), Chunk: chunk, FailFast: failFast, Version: RolloutVersion}
	effChunk := chunk
	if effChunk <= 0 {
		effChunk = DefaultRolloutChunk
	}
	check := func() {
		if !h.live() {
			return
		}
		v, err := env.QueryWorkflow(QueryStatus)
		var st RolloutStatus
		if err == nil {
			err = v.Get(&st)
		}
		if err != nil {
			h.fail("rollout status query: %v", err)
			return
		}
		checkRolloutCounts(h, st, n)
		if st.Counts[TargetRunning] > effChunk {
			h.fail("%d targets in flight, chunk %d", st.Counts[TargetRunning], effChunk)
		}
	}
	if cancelAt != 255 {
		env.RegisterDelayedCallback(func() {
			if h.live() {
				env.SignalWorkflow(SignalCancel, nil)
			}
		}, time.Duration(cancelAt)*time.Second/2)
	}
	if upgradeAt != 255 {
		env.RegisterDelayedCallback(func() {
			if h.live() {
				env.SignalWorkflow(SignalUpgrade, nil)
			}
		}, time.Duration(upgradeAt)*time.Second/2)
	}
	for d := 500 * time.Millisecond; d < 2*time.Minute; d += 1700 * time.Millisecond {
		env.RegisterDelayedCallback(check, d)
	}
	h.execute(RolloutWorkflow, in)
	known := op == RolloutRestart || op == RolloutStop || op == RolloutStart || op == RolloutReload
	h.checkEnd(func(err error) bool {
		var app *temporal.ApplicationError
		return !known && errors.As(err, &app) && app.Type() == "InvalidRollout"
	})
	if !env.IsWorkflowCompleted() || env.GetWorkflowError() != nil {
		return
	}
	if !known {
		t.Errorf("rollout of the unknown op %q ran", op)
	}
	var st RolloutStatus
	if err := env.GetWorkflowResult(&st); err != nil {
		t.Fatalf("rollout result: %v", err)
	}
	checkRolloutCounts(h, st, n)
	if st.State != "completed" && st.State != "cancelled" {
		t.Errorf("rollout ended %q", st.State)
	}
	if st.Succeeded+st.Failed+st.Skipped+st.Counts[TargetCancelled] != st.Total {
		t.Errorf("rollout ended with targets unaccounted for: %+v", st.Counts)
	}
	mu.Lock()
	defer mu.Unlock()
	failedChunk := -1 // the first chunk with a failure
	for i, tg := range st.Targets {
		if c := handed[tg.Path]; c > 3 { // a chunk is tried 3 times at most
			t.Errorf("target %s handed out %d times", tg.Path, c)
		}
		if (tg.Status == TargetSkipped || tg.Status == TargetCancelled) != (handed[tg.Path] == 0) {
			t.Errorf("target %d %s: %s, handed out %d times", i, tg.Path, tg.Status, handed[tg.Path])
		}
		c := i / effChunk
		if failFast && failedChunk >= 0 && c > failedChunk && handed[tg.Path] > 0 {
			t.Errorf("fail-fast: target %d %s of chunk %d was handed out after a failure in chunk %d", i, tg.Path, c, failedChunk)
		}
		if (tg.Status == TargetFailed || tg.Status == TargetTimeout) && failedChunk < 0 {
			failedChunk = c
		}
	}
}

// checkRolloutCounts: every target is counted once, under a status it
// can have.
func checkRolloutCounts(h *fuzzHarness, st RolloutStatus, n int) {
	sum := 0
	for status, c := range st.Counts {
		if !slices.Contains([]string{TargetPending, TargetRunning, TargetSucceeded, TargetFailed, TargetTimeout, TargetCancelled, TargetSkipped}, status) && c > 0 {
			h.fail("rollout: %d targets with status %q", c, status)
		}
		sum += c
	}
	if st.Total != n || sum != n || len(st.Targets) != n {
		h.fail("rollout: total %d, counted %d, %d targets; want %d", st.Total, sum, len(st.Targets), n)
	}
}

// ---- jobs ----

// FuzzJobSignals sends a job's workflow (a periodic one, or a once one
// whose runs end as the script says) its signals and others, with fuzzed
// payloads: it neither panics nor fails a task, answers its status with
// its job block at every step, and counts what it refuses.
func FuzzJobSignals(f *testing.F) {
	for _, s := range []string{
		`jobRun {"id":"root/j/run-1","outcome":"succeeded","exitCode":0}
jobRun {"id":"root/j/run-2","outcome":"failed","exitCode":3,"reason":"exit status 3"}
jobRun {"id":"root/j/run-2","outcome":"failed"}
desired "stopped"
desired "running"
spec {"generation":2,"spec":{"name":"j","kind":"stub","stub":{"exitAfter":"1s"},"job":{"every":"1m"}}}
spec {"generation":3,"spec":{"name":"j","kind":"stub","stub":{"exitAfter":"1s"},"job":{"once":true}}}
supervise {"seq":1,"op":"stop"}
supervise {"seq":2,"op":"restart"}
upgrade`,
		`jobRun {"id":"other/run-1","outcome":"succeeded"}
jobRun {"id":"root/j/run-x","outcome":"` + strings.Repeat("o", 300) + `","reason":"` + strings.Repeat("r", 5000) + `"}
jobRun []
jobRun
desired "maybe"
spec {"spec":{"name":"j","kind":"stub"}}
spec {"spec":{"name":"other","kind":"stub","job":{"every":"1m"}}}
spec {"spec":{"name":"j","kind":"stub","stub":{"exitAfter":"1s"},"job":{"every":"1ms"}}}
spec {"spec":{"name":"j","kind":"stub","stub":{"exitAfter":"1s"},"job":{"schedule":"CRON_TZ=Europe/Paris 0 3 * * *"}}}
spec 7
supervise {"op":"explode"}
exit {"instance":"i1"}
@spec {}
@rollout {"op":"restart"}
nosuch 1`,
	} {
		f.Add([]byte(s), false)
		f.Add([]byte(s), true)
	}
	f.Fuzz(func(t *testing.T, script []byte, once bool) {
		h := newFuzzHarness(t)
		h.env.RegisterWorkflow(JobWorkflow)
		h.env.RegisterWorkflow(JobRunWorkflow)
		h.env.OnActivity(activities.PutScheduleName, mock.Anything, mock.Anything).Return(nil).Maybe()
		h.env.OnActivity(activities.DeleteScheduleName, mock.Anything, mock.Anything).Return(nil).Maybe()
		h.env.OnWorkflow(JobRunWorkflow, mock.Anything, mock.Anything).Return(func(_ workflow.Context, in JobRunInput) (JobRun, error) {
			return JobRun{ID: fmt.Sprintf("%sg%d", JobRunPrefix(in.Job), in.Generation), Outcome: treestatus.RunSucceeded}, nil
		}).Maybe()
		n := spec.Node{Name: "j", Kind: spec.KindStub, Stub: &spec.Stub{ExitAfter: spec.Duration(time.Second)}, Job: &spec.Job{Every: spec.Dur(time.Minute)}}
		if once {
			n.Job = &spec.Job{Once: true}
		}
		steps, end := parseScript(script, 5*time.Second)
		check := func() {
			if !h.live() {
				return
			}
			st, ok := h.queryStatus("")
			if ok && st.Job == nil {
				h.fail("a job's status without its job block: %+v", st)
			}
		}
		for _, st := range steps {
			h.env.RegisterDelayedCallback(func() {
				if !h.live() {
					return
				}
				if st.update {
					h.env.UpdateWorkflow(st.name, fmt.Sprint("fuzz-", st.at), &testsuite.TestUpdateCallback{OnAccept: func() { h.fail("a job accepted the Update %q", st.name) }, OnReject: func(error) {}, OnComplete: func(any, error) {}}, st.payload())
					return
				}
				h.env.SignalWorkflow(st.name, st.payload())
			}, st.at)
			h.env.RegisterDelayedCallback(check, st.at+time.Millisecond)
		}
		h.env.RegisterDelayedCallback(func() { check(); h.end() }, end+time.Minute)
		h.env.SetStartWorkflowOptions(client.StartWorkflowOptions{ID: "root/j"}) // a job runs at its path
		h.execute(JobWorkflow, JobInput{Path: "root/j", Parent: "", Spec: n, Generation: 1, Version: JobVersion})
		h.checkEnd()
	})
}
