package treestatus

import "time"

// Job run outcomes (docs/jobs.md).
const (
	RunRunning   = "running"
	RunSucceeded = "succeeded"
	RunFailed    = "failed"
	RunTimedOut  = "timedOut"
	RunCanceled  = "canceled"
)

// JobRun is one run of a job: what `starter runs` lists, a run workflow's
// result and memo, and a job's last run.
type JobRun struct {
	// ID is the run's workflow ID (the job's path, "/run-", and when it
	// was scheduled or the generation it ran for).
	ID      string `json:"id"`
	Outcome string `json:"outcome"`
	// ExitCode is the process's exit code: absent while it runs, for a
	// stub, and for a process that ended while no worker of its host ran
	// (its exit code is not known).
	ExitCode    *int      `json:"exitCode,omitempty"`
	ScheduledAt time.Time `json:"scheduledAt,omitzero"`
	StartedAt   time.Time `json:"startedAt,omitzero"`
	EndedAt     time.Time `json:"endedAt,omitzero"`
	Host        string    `json:"host,omitempty"`
	// Reason says why a run did not succeed (its exit, a refusal, its
	// timeout).
	Reason string `json:"reason,omitempty"`
	// Generation is the job's spec generation the run ran.
	Generation int64 `json:"generation,omitempty"`
}

// EndedBy notes a process's end as the run's outcome: succeeded when it
// ended normally, else failed with its exit code and reason.
func (r *JobRun) EndedBy(normal bool, code *int, reason string) {
	r.ExitCode, r.Reason, r.Outcome = code, reason, RunFailed
	if normal {
		r.Outcome, r.Reason = RunSucceeded, ""
	}
}

// JobStatus is what a job's status adds to a worker's (Status.Job).
type JobStatus struct {
	// Schedule is what sets its runs: a cron expression, "every D" or
	// "once".
	Schedule string `json:"schedule"`
	// ScheduleID is its Temporal Schedule's ID (its path; "" for a once
	// job, which has none).
	ScheduleID string `json:"scheduleId,omitempty"`
	// Paused: its schedule is paused (desired stopped: `starter stop`).
	Paused bool `json:"paused"`
	// LastRun is the last run that ended; Running the run in progress
	// that the job knows of (a once job's).
	LastRun *JobRun `json:"lastRun,omitempty"`
	// Runs counts the ended runs the job heard of; Failures those that
	// did not succeed.
	Runs     int `json:"runs"`
	Failures int `json:"failures"`
}
