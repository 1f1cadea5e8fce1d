package spec

import (
	"hash/fnv"
	"regexp"
	"strings"
	"time"

	"github.com/robfig/cron/v3"
)

// Job makes a worker a job: a command run to completion, on a schedule
// (Schedule, a cron expression, or Every, an interval: a Temporal Schedule
// whose ID is the job's path) or once per generation of its spec (Once),
// instead of a service kept up. docs/jobs.md states the contract; every
// default is written here.
//
// A run succeeds when its process exits with a success code (0 unless
// process.successExitCodes), an http job's when its start request is
// answered 2xx, a stub's when it exits normally (exitAfter);
// it fails otherwise, and ends as timed out after Timeout. Retry applies
// to the start of a run; restart and backoff do not apply (a failing job
// is not a crashing service and does not count against its supervisor's
// intensity).
type Job struct {
	// Schedule is a cron expression: five fields (minute hour
	// day-of-month month day-of-week) or a descriptor (@hourly, @daily,
	// @weekly, @monthly, @yearly).
	Schedule string `yaml:"schedule,omitempty" json:"schedule,omitempty"`
	// Every is an interval between runs.
	Every *Duration `yaml:"every,omitempty" json:"every,omitempty"`
	// Once: one run per new generation of the spec (on apply and on
	// every change); siblings that dependsOn it start once it succeeded.
	Once bool `yaml:"once,omitempty" json:"once,omitempty"`
	// Timezone of Schedule (an IANA name; default UTC).
	Timezone string `yaml:"timezone,omitempty" json:"timezone,omitempty"`
	// Jitter delays each run by a random time up to it (default 0).
	Jitter *Duration `yaml:"jitter,omitempty" json:"jitter,omitempty"`
	// Overlap is what a run due while another runs does (default skip).
	Overlap string `yaml:"overlap,omitempty" json:"overlap,omitempty"`
	// CatchupWindow: runs missed while the server was down are made up if
	// they are at most this late (default 1m).
	CatchupWindow *Duration `yaml:"catchupWindow,omitempty" json:"catchupWindow,omitempty"`
	// PauseOnFailure pauses the schedule after a failed run (default
	// false).
	PauseOnFailure bool `yaml:"pauseOnFailure,omitempty" json:"pauseOnFailure,omitempty"`
	// Timeout bounds a run (default 1h): past it the process is stopped
	// and the run ends as timed out.
	Timeout *Duration `yaml:"timeout,omitempty" json:"timeout,omitempty"`
}

// Overlap policies (Temporal's ScheduleOverlapPolicy).
const (
	OverlapSkip           = "skip"
	OverlapBufferOne      = "bufferOne"
	OverlapBufferAll      = "bufferAll"
	OverlapCancelOther    = "cancelOther"
	OverlapTerminateOther = "terminateOther"
	OverlapAllowAll       = "allowAll"
)

// Job defaults.
const (
	DefaultJobTimezone      = "UTC"
	DefaultJobOverlap       = OverlapSkip
	DefaultJobCatchupWindow = time.Minute
	DefaultJobTimeout       = time.Hour
	// MinJobEvery is the shortest interval between runs.
	MinJobEvery = time.Second
	// MaxJobTimeout bounds a run (a run is one workflow: a week of it is
	// not a job).
	MaxJobTimeout = 7 * 24 * time.Hour
)

// JobRunPrefix is how the IDs of the runs of the job at path begin: the
// path and "/run-" (a Schedule adds the time a run is due; a once job's
// run, "g" and its generation; `starter run`, "now-" and its time). A job
// has no children, so no node's path begins so.
func JobRunPrefix(path string) string { return path + "/run-" }

// IsJobRun reports whether the workflow ID names a run of the job at path.
func IsJobRun(workflowID, path string) bool {
	return len(workflowID) > len(JobRunPrefix(path)) && workflowID[:len(JobRunPrefix(path))] == JobRunPrefix(path)
}

// IsJob reports whether the node is a job.
func (n *Node) IsJob() bool { return n.Job != nil }

// Periodic reports whether the job runs on a schedule (a Temporal
// Schedule), not once per generation.
func (j *Job) Periodic() bool { return j != nil && !j.Once }

// Resolved returns the job with every default filled in.
func (j Job) Resolved() Job {
	if j.Timezone == "" {
		j.Timezone = DefaultJobTimezone
	}
	if j.Overlap == "" {
		j.Overlap = DefaultJobOverlap
	}
	if j.CatchupWindow == nil {
		d := Duration(DefaultJobCatchupWindow)
		j.CatchupWindow = &d
	}
	if j.Timeout == nil {
		d := Duration(DefaultJobTimeout)
		j.Timeout = &d
	}
	if j.Jitter == nil {
		d := Duration(0)
		j.Jitter = &d
	}
	return j
}

// What it runs: the schedule as `starter jobs` shows it.
func (j Job) What() string {
	switch {
	case j.Once:
		return "once"
	case j.Every != nil:
		return "every " + j.Every.D().String()
	}
	return j.Schedule
}

// Phase is when, within each of its intervals, an `every` job at path is
// due: its path's hash in whole seconds in [0, every). Temporal aligns an
// interval to the epoch, so without it every job of one interval would be
// due in the same second, and a server starts a few dozen runs a second;
// with it they are spread over the interval, each at a phase of its own
// that stays across applies (as systemd's FixedRandomDelay, or Jenkins's H).
func Phase(path string, every time.Duration) time.Duration {
	secs := uint64(every / time.Second)
	if secs <= 1 {
		return 0
	}
	h := fnv.New64a()
	h.Write([]byte(path))
	return time.Duration(h.Sum64()%secs) * time.Second
}

// Period is the time between the job's runs around now (an interval's,
// or between a cron expression's next two times, read in UTC); 0 for a
// once job or an expression that does not parse.
func (j Job) Period(now time.Time) time.Duration {
	switch {
	case j.Once:
		return 0
	case j.Every != nil:
		return j.Every.D()
	}
	s, err := cronParser.Parse(j.Schedule)
	if err != nil {
		return 0
	}
	next := s.Next(now.UTC())
	return s.Next(next).Sub(next)
}

var overlaps = []string{OverlapSkip, OverlapBufferOne, OverlapBufferAll, OverlapCancelOther, OverlapTerminateOther, OverlapAllowAll}

// timezonePattern is an IANA zone name's shape (Area/City, UTC, Etc/GMT+1):
// whether the zone exists is the starter's check at apply (it reads the
// zone database, which workflow code must not).
var timezonePattern = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_+\-]*(/[A-Za-z0-9_+\-]+){0,2}$`)

// cronParser takes five fields and the descriptors.
var cronParser = cron.NewParser(cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow | cron.Descriptor)

// job checks a node's job block: p is the node's field path.
func (v *validator) job(p string, n Node) {
	j := n.Job
	if j == nil {
		return
	}
	jp := join(p, "job")
	if n.IsSupervisor() {
		v.add(jp, "only workers (nodes with a kind) can be jobs")
		return
	}
	set := 0
	for _, on := range []bool{j.Schedule != "", j.Every != nil, j.Once} {
		if on {
			set++
		}
	}
	if set != 1 {
		v.add(jp, "give exactly one of schedule (cron), every (an interval) or once: true")
	}
	if s := j.Schedule; s != "" {
		switch {
		case len(s) > 200:
			v.add(join(jp, "schedule"), "%d characters (at most 200)", len(s))
		case strings.HasPrefix(s, "CRON_TZ=") || strings.HasPrefix(s, "TZ="):
			v.add(join(jp, "schedule"), "give the time zone as job.timezone, not in the expression")
		case strings.HasPrefix(s, "@every"):
			v.add(join(jp, "schedule"), "give an interval as job.every, not @every")
		default:
			if _, err := cronParser.Parse(s); err != nil {
				v.add(join(jp, "schedule"), "%q is not a cron expression (five fields, or @hourly, @daily, @weekly, @monthly, @yearly): %v", s, err)
			}
		}
	}
	if j.Every != nil && j.Every.D() < MinJobEvery {
		v.add(join(jp, "every"), "%s is too short (at least %s)", j.Every.D(), MinJobEvery)
	}
	if j.Timezone != "" && (len(j.Timezone) > 64 || !timezonePattern.MatchString(j.Timezone)) {
		v.add(join(jp, "timezone"), "%q is not a time zone name (such as UTC or Europe/Paris)", j.Timezone)
	}
	if j.Once && (j.Timezone != "" || j.Jitter != nil || j.Overlap != "" || j.CatchupWindow != nil || j.PauseOnFailure) {
		v.add(jp, "a once job takes only timeout (timezone, jitter, overlap, catchupWindow and pauseOnFailure are a schedule's)")
	}
	if j.Jitter != nil && j.Jitter.D() < 0 {
		v.add(join(jp, "jitter"), "must be >= 0")
	}
	v.oneOf(join(jp, "overlap"), j.Overlap, overlaps...)
	v.positive(join(jp, "catchupWindow"), j.CatchupWindow)
	v.positive(join(jp, "timeout"), j.Timeout)
	if j.Timeout != nil && j.Timeout.D() > MaxJobTimeout {
		v.add(join(jp, "timeout"), "%s is too long (at most %s)", j.Timeout.D(), MaxJobTimeout)
	}
	switch n.Kind {
	case KindProcess, KindHTTP:
	case KindStub:
		if n.Stub == nil || (n.Stub.ExitAfter <= 0 && n.Stub.CrashAfter <= 0) {
			v.add(join(p, "stub"), "a stub job needs exitAfter (a run that succeeds) or crashAfter (one that fails)")
		}
	default:
		v.add(join(p, "kind"), "a job is a process, an http request or a stub (not %q)", n.Kind)
	}
	if n.Restart != "" {
		v.add(join(p, "restart"), "a job is not restarted (it runs to completion): leave restart out")
	}
	if n.Backoff != nil {
		v.add(join(p, "backoff"), "a job is not restarted (it runs to completion): leave backoff out")
	}
	if n.Instances > 0 {
		v.add(join(p, "instances"), "a job runs on one host: leave instances out")
	}
	if n.Observe != nil {
		v.add(join(p, "observe"), "a job is not observed (its run ends when its process does): leave observe out")
	}
}
