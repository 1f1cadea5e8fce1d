// Package jobcore is the pure decision core of a job (workflows.JobWorkflow;
// docs/jobs.md): what its schedule must say and when it is put or deleted,
// when a once job runs, which spec, desired state and run's end it takes,
// what a run's end changes and which notification it is worth, and the
// job's state. It has no Temporal import; the workflow puts and deletes
// the schedule, runs a once job's child, reports and notifies.
//
// A job is in one of these states (State):
//
//   - stopped: desired stopped (its schedule is paused); or, for a once
//     job, its run for its generation succeeded (completed);
//   - failed: its schedule could not be put or deleted, or its last run did
//     not succeed;
//   - starting: a once job whose run is due or in flight;
//   - running: a periodic job's schedule is as its spec says.
//
// A failed run is not a crash: it never counts against the supervisor's
// intensity. Notifications go out as a job begins to fail (jobFailed) and
// as it succeeds again (jobRecovered), not at every failed run.
package jobcore

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/steward-sh/steward/internal/spec"
	"github.com/steward-sh/steward/internal/treestatus"
	"github.com/steward-sh/steward/internal/versions"
)

// MaxRunIDBytes bounds a run's ID a job takes: its path (spec's limit),
// "/run-" and a time or generation.
const MaxRunIDBytes = spec.MaxPathLength + 64

// Record is what a job keeps of itself across its workflow's runs (the
// workflow's carry holds it, with what only the workflow needs).
type Record struct {
	Desired  string             `json:"desired"`
	Since    time.Time          `json:"since,omitzero"`
	LastRun  *treestatus.JobRun `json:"lastRun,omitempty"`
	Runs     int                `json:"runs,omitempty"`
	Failures int                `json:"failures,omitempty"`
	// Ran is the generation a once job last ran for (its run ended), and
	// RanDigest the digest of the spec it ran (OnceExact).
	Ran       int64  `json:"ran,omitempty"`
	RanDigest string `json:"ranDigest,omitempty"`
	// Troubled: its last run did not succeed (jobRecovered is due at the
	// next that does).
	Troubled bool `json:"troubled,omitempty"`
	// Began is when the job began; LastSuccess when its last run that
	// succeeded ended (its metrics).
	Began       time.Time `json:"began,omitzero"`
	LastSuccess time.Time `json:"lastSuccess,omitzero"`
	// ScheduleError says why its schedule could not be put ("" when it
	// is as the spec says).
	ScheduleError string `json:"scheduleError,omitempty"`
	// PutFor is the generation and desired state its schedule was last
	// put for (it is put again only when they change, or at `starter
	// start`: a schedule paused by pauseOnFailure stays paused across
	// continue-as-new); Scheduled: a schedule may exist (put, not
	// deleted since).
	PutFor    string `json:"putFor,omitempty"`
	Scheduled bool   `json:"scheduled,omitempty"`
	// OnceRun is a once job's last run as its own child's result told it
	// (OnceByResult): what its state and completion follow, whatever run
	// ends are signalled to it meanwhile (a run started by hand, or a
	// forged one).
	OnceRun *treestatus.JobRun `json:"onceRun,omitempty"`
}

// Job is a job's decision state: its record, its node, and what its
// workflow has in flight.
type Job struct {
	Path       string
	Spec       spec.Node
	Generation int64
	// Version is its workflow's code version (what its runs run);
	// OnceExact: a once job runs for a generation that is not the one it
	// last ran for (versions.JobOnceExact; before: one above it).
	Version   int
	OnceExact bool
	// GenerationBounded: a spec's generation is held to a worker's bounds
	// (spec.CheckGeneration; versions.JobGenerationBounded).
	GenerationBounded bool
	// OnceByResult: a once job's run counts by its child workflow's result
	// only; a jobRun signal naming one is dropped
	// (versions.JobOnceRunByResult).
	OnceByResult bool
	Rec          *Record
	// Putting: a put or delete of its schedule is in flight (Deleting: a
	// delete); OnceRunning: a once job's run is in flight, for OnceGen.
	Putting, Deleting bool
	OnceRunning       bool
	OnceGen           int64
	onceDigest        string // the spec the run in flight runs
}

// New is the record of a job that begins now.
func New(n spec.Node, now time.Time) Record {
	return Record{Desired: n.Resolved().Desired, Since: now, Began: now}
}

// Check says why a node is not a job's (nil: it is one).
func Check(path string, n spec.Node) error {
	if !n.IsJob() {
		return fmt.Errorf("%s has no job block: a service cannot become a job in place (remove it, apply, then add it back as a job)", path)
	}
	if ps := spec.ValidateWorker(path, n); len(ps) > 0 {
		return ps
	}
	return nil
}

// Command is what Next asks the workflow to do.
type Command int

const (
	// None: nothing to do.
	None Command = iota
	// PutSchedule: put the schedule as the spec and desired state say
	// (Paused).
	PutSchedule
	// DeleteSchedule: a periodic job made a once job: its schedule goes.
	DeleteSchedule
	// RunOnce: start a once job's run for its generation.
	RunOnce
)

// WantPut is what the schedule must say: the generation and desired state
// it was last put for (and, from versions.JobRunsAwait, the code version
// its runs run).
func (j *Job) WantPut() string {
	if versions.JobRunsAwait.In(j.Version) {
		return fmt.Sprintf("%d/%s/v%d", j.Generation, j.Rec.Desired, j.Version)
	}
	return fmt.Sprintf("%d/%s", j.Generation, j.Rec.Desired)
}

// Paused says whether its schedule is to be paused.
func (j *Job) Paused() bool { return j.Rec.Desired == spec.DesiredStopped }

// Next decides what the job does now: a periodic job's schedule is put
// when its spec or desired state changed since its last put; a once job's
// run starts for a generation it has not run. One put or delete at a
// time; the command is taken as done (the record says it is in flight):
// its end comes back through PutDone.
func (j *Job) Next() Command {
	if j.Putting {
		return None
	}
	if j.Spec.Job.Periodic() {
		if j.Rec.PutFor != j.WantPut() {
			j.Rec.PutFor, j.Rec.Scheduled = j.WantPut(), true
			j.Putting = true
			return PutSchedule
		}
		return None
	}
	if j.Rec.Scheduled {
		j.Rec.PutFor = ""
		j.Putting, j.Deleting = true, true
		return DeleteSchedule
	}
	if !j.OnceRunning && j.Rec.Desired == spec.DesiredRunning && !j.ranFor(j.Generation) {
		j.OnceRunning, j.OnceGen, j.onceDigest = true, j.Generation, spec.Digest(j.Spec)
		return RunOnce
	}
	return None
}

// ranFor says whether a once job has run for generation g. Before
// OnceExact: any generation up to the one it last ran for. With it: that
// one, or one below it only while its spec is the one it ran. A spec sent
// by hand with a huge generation and the job's own spec ran once and left
// it completed for every real generation after it (all below): now the
// next real one whose spec changed runs; and a supervisor that adopts the
// job with a lower generation and the same spec (a closed child supervisor
// started anew) does not run it again.
func (j *Job) ranFor(g int64) bool {
	if !j.OnceExact {
		return j.Rec.Ran >= g
	}
	// (A run recorded before OnceExact kept no digest: taken as the same
	// spec, so that no once job, a migration say, runs again by surprise.)
	return j.Rec.Ran == g || (j.Rec.Ran > g && (j.Rec.RanDigest == "" || j.Rec.RanDigest == spec.Digest(j.Spec)))
}

// PutDone takes the end of the put or delete in flight: errText is its
// error's ("" when it succeeded).
func (j *Job) PutDone(errText string) {
	deleting := j.Deleting
	j.Putting, j.Deleting = false, false
	switch {
	case deleting && errText != "":
		j.Rec.ScheduleError = "its schedule could not be deleted: " + errText
	case deleting:
		j.Rec.Scheduled, j.Rec.ScheduleError = false, ""
	case errText != "":
		j.Rec.ScheduleError = "its schedule could not be put: " + errText
	default:
		j.Rec.ScheduleError = ""
	}
}

// TakeSpec takes a new spec for the job (generation 0: the next one), or
// says why not: another node's name, or not a job's.
func (j *Job) TakeSpec(n spec.Node, generation int64, now time.Time) error {
	if n.Name != j.Spec.Name {
		return fmt.Errorf("spec.name %q does not match this job (%q)", n.Name, j.Spec.Name)
	}
	if err := Check(j.Path, n); err != nil {
		return err
	}
	bounded := j.GenerationBounded
	if err := spec.CheckGeneration(j.Generation, generation); bounded && err != nil {
		return err
	}
	switch {
	case generation > 0:
		j.Generation = generation
	case bounded && j.Generation >= spec.MaxGeneration:
		// (stays at the bound, as a worker's: its supervisor sends no more)
	default:
		j.Generation++
	}
	j.Spec = n
	j.setDesired(n.Resolved().Desired, now)
	return nil
}

// TakeDesired takes `starter start` or `stop`, or says why not. A start
// puts the schedule again even where the job was running already and its
// schedule paused itself (pauseOnFailure).
func (j *Job) TakeDesired(d string, now time.Time) error {
	if d != spec.DesiredRunning && d != spec.DesiredStopped {
		return fmt.Errorf("payload must be \"running\" or \"stopped\" (got %q)", d)
	}
	if d == spec.DesiredRunning {
		j.Rec.PutFor = ""
	}
	j.setDesired(d, now)
	return nil
}

func (j *Job) setDesired(d string, now time.Time) {
	if d != j.Rec.Desired {
		j.Rec.Desired, j.Rec.Since = d, now
	}
}

// TakeRun checks a run's end as a run tells it (SignalJobRun): its own
// runs only, with a known outcome. ok false: told already (nothing to
// note). The run's host is cut to a name's length.
func (j *Job) TakeRun(run treestatus.JobRun) (out treestatus.JobRun, ok bool, err error) {
	if !spec.IsJobRun(run.ID, j.Path) || len(run.ID) > MaxRunIDBytes {
		return run, false, fmt.Errorf("not a run of this job (its ID must begin with %q, at most %d bytes)", spec.JobRunPrefix(j.Path), MaxRunIDBytes)
	}
	switch run.Outcome {
	case treestatus.RunSucceeded, treestatus.RunFailed, treestatus.RunTimedOut, treestatus.RunCanceled:
	default:
		return run, false, fmt.Errorf("a run's end with outcome %.40q (succeeded, failed, timedOut or canceled)", run.Outcome)
	}
	if len(run.Host) > spec.MaxNameLength {
		run.Host = run.Host[:spec.MaxNameLength]
	}
	if l := j.Rec.LastRun; l != nil && l.ID == run.ID {
		return run, false, nil
	}
	if j.OnceByResult && IsOnceRun(run.ID, j.Path) {
		return run, false, nil // its child's result tells it (OnceEnded)
	}
	return run, true, nil
}

// OnceRunID is the workflow ID of a once job's run for generation gen.
func OnceRunID(path string, gen int64) string {
	return fmt.Sprintf("%sg%d", spec.JobRunPrefix(path), gen)
}

// IsOnceRun reports whether id names a once job's run (OnceRunID).
func IsOnceRun(id, path string) bool {
	rest, ok := strings.CutPrefix(id, spec.JobRunPrefix(path)+"g")
	if !ok || rest == "" {
		return false
	}
	_, err := strconv.ParseInt(rest, 10, 64)
	return err == nil
}

// OnceEnded takes the end of a once job's run: run is what it said
// (empty when it did not: it failed to start as a workflow; errText is
// then why). The generation it ran is marked run (a newer one taken
// meanwhile runs next). It returns the run to note.
func (j *Job) OnceEnded(run treestatus.JobRun, errText string, now time.Time) treestatus.JobRun {
	j.OnceRunning = false
	if j.OnceExact {
		j.Rec.Ran, j.Rec.RanDigest = j.OnceGen, j.onceDigest
	} else {
		j.Rec.Ran = max(j.Rec.Ran, j.OnceGen)
	}
	if run.ID == "" {
		run = treestatus.JobRun{ID: OnceRunID(j.Path, j.OnceGen), Outcome: treestatus.RunFailed,
			Generation: j.OnceGen, EndedAt: now, Reason: errText}
	}
	if j.OnceByResult {
		told := run
		j.Rec.OnceRun = &told
	}
	return run
}

// Note counts a run's end (once: told again, it is not counted again),
// and says which notification it is worth ("" none, spec.EventJobFailed
// as the job begins to fail, spec.EventJobRecovered as it succeeds again)
// and the reason to send with it. noted false: counted already.
func (j *Job) Note(run treestatus.JobRun, now time.Time) (event, reason string, noted bool) {
	if l := j.Rec.LastRun; l != nil && l.ID == run.ID {
		return "", "", false
	}
	if len(run.Reason) > treestatus.MaxRecordText { // a run's reason is its process's words
		run.Reason = run.Reason[:treestatus.MaxRecordText] + "…"
	}
	failed := run.Outcome != treestatus.RunSucceeded
	j.Rec.LastRun = &run
	j.Rec.Runs++
	if failed {
		j.Rec.Failures++
	} else {
		j.Rec.LastSuccess = run.EndedAt
	}
	switch {
	case failed && !j.Rec.Troubled:
		event = spec.EventJobFailed
	case !failed && j.Rec.Troubled:
		event = spec.EventJobRecovered
	}
	j.Rec.Troubled = failed
	j.Rec.Since = now
	reason = run.Reason
	if reason == "" {
		reason = "run " + run.ID + " " + run.Outcome
	}
	return event, reason, true
}

// State is the job's state and why (the package comment says which).
func (j *Job) State() (state, reason string, completed bool) {
	last := j.Rec.LastRun
	if j.OnceByResult && !j.Spec.Job.Periodic() && j.Rec.OnceRun != nil {
		// A once job is as its own run ended: a run's end signalled by
		// hand (forged "succeeded" of any ID) does not complete it.
		last = j.Rec.OnceRun
	}
	switch {
	case j.Rec.Desired == spec.DesiredStopped:
		return "stopped", "desired stopped: its schedule is paused", false
	case j.Rec.ScheduleError != "":
		return "failed", j.Rec.ScheduleError, false
	case !j.Spec.Job.Periodic() && j.OnceRunning:
		return "starting", fmt.Sprintf("its run for generation %d runs", j.Generation), false
	case last != nil && last.Outcome != treestatus.RunSucceeded:
		return "failed", fmt.Sprintf("its last run %s: %s", last.Outcome, last.Reason), false
	case !j.Spec.Job.Periodic():
		if last != nil && j.ranFor(j.Generation) {
			return "stopped", "its run succeeded", true
		}
		return "starting", "its run is due", false
	}
	return "running", "scheduled: " + j.Spec.Job.What(), false
}

// Status is the job's own part of its status: its schedule, whether it is
// paused, its last run and its counts.
func (j *Job) Status() *treestatus.JobStatus {
	st := &treestatus.JobStatus{Schedule: j.Spec.Job.What(), Paused: j.Paused(), LastRun: j.Rec.LastRun,
		Runs: j.Rec.Runs, Failures: j.Rec.Failures}
	if j.Spec.Job.Periodic() {
		st.ScheduleID = j.Path
	}
	return st
}

// SameReport: nothing the supervisor keeps of a job changed. A run that
// ends as the one before it did is not reported: a job's runs are its own
// to count (its status query), and a report per run cost its supervisor
// a task each (measured: bench -only jobs).
func SameReport(a, b treestatus.Status) bool {
	return treestatus.SameReport(a, b, true) && a.Reason == b.Reason && a.SuperviseSeq == b.SuperviseSeq
}
