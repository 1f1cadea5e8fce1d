// Package driver defines what an action does to a service. A Driver is the
// side-effecting half of steward: activities call it, workflows never do.
//
// Drivers classify their errors: Permanent(err) marks a failure that retrying
// cannot fix (a bad command path, a 4xx on a control URL); any other error is
// retried under the worker's RetryPolicy. A driver that blocks must honour its
// context: that is how action timeouts and cancellation reach it.
package driver

import (
	"context"
	"errors"

	"github.com/steward-sh/steward/internal/spec"
)

// Request is one action on one worker.
type Request struct {
	// WorkflowID of the worker workflow (its path), where exits are reported.
	WorkflowID string
	// Path of the worker in the tree.
	Path string
	// Spec of the worker, with defaults resolved.
	Spec spec.Node
	// Instance is the running instance the action is about (stop, restart,
	// observe); empty when none is known.
	Instance string
	// Seq numbers the actions of a worker: with Attempt, it makes every
	// simulated outcome repeatable.
	Seq int64
	// Attempt is the activity attempt (1 = first try).
	Attempt int32
}

// Runner is a driver that can wait for the end of a job's run itself
// (JobRunWorkflow's one activity, RunJob): the end it waits for is its
// answer, and is not pushed to the workflow as well. A driver without it
// has its job runs' ends pushed (Notifier), as a service's.
type Runner interface {
	// Run starts the job's run r, as Start does (a run started again is
	// the same process, running or ended), or with adopt only finds it (a
	// process this host's worker started or adopted: an earlier attempt
	// may have started it), and waits for its end until ctx ends. A run
	// that adopt does not find ended unknown to this worker: ErrRunUnknown.
	Run(ctx context.Context, r Request, adopt bool) (Exit, error)
}

// ErrRunUnknown: the job run to adopt is neither running nor remembered
// ended on this host (it never started, or ended as its worker died).
var ErrRunUnknown = errors.New("its process is neither running nor known to have ended on this host")

// Observation is what an observe found.
type Observation string

// Observations.
const (
	Running Observation = "running"
	Exited  Observation = "exited"  // ended normally
	Crashed Observation = "crashed" // ended abnormally, or gone
)

// Exit reports that an instance ended.
type Exit struct {
	Instance string `json:"instance"`
	Normal   bool   `json:"normal"`
	Reason   string `json:"reason,omitempty"`
	// Code is the process's exit code, when it is known (the worker's own
	// child that exited; not an adopted one, not one a signal ended).
	Code *int `json:"code,omitempty"`
}

// Notifier pushes exits to the worker workflow (a signal in production).
type Notifier interface {
	NotifyExit(ctx context.Context, workflowID string, e Exit) error
}

// NotifierFunc adapts a function to Notifier.
type NotifierFunc func(ctx context.Context, workflowID string, e Exit) error

// NotifyExit calls f.
func (f NotifierFunc) NotifyExit(ctx context.Context, workflowID string, e Exit) error {
	return f(ctx, workflowID, e)
}

// Driver runs actions on one kind of service.
type Driver interface {
	// Start starts the service and returns the new instance's identifier.
	Start(ctx context.Context, r Request) (instance string, err error)
	// Stop stops the instance; stopping a service that is not running succeeds.
	Stop(ctx context.Context, r Request) error
	// Restart stops the instance (if any) and starts a new one.
	Restart(ctx context.Context, r Request) (instance string, err error)
	// Observe reports whether the instance is still running.
	Observe(ctx context.Context, r Request) (Observation, error)
	// Close releases what the driver holds (timers, watchers).
	Close()
}

// Reloader is a driver that can ask a running instance to re-read its
// configuration without a restart (process.reload, http.reload).
type Reloader interface {
	// Reload asks the instance r names to reload; the instance goes on.
	Reload(ctx context.Context, r Request) error
}

// PermanentError marks a failure that retrying cannot fix.
type PermanentError struct{ Err error }

func (e *PermanentError) Error() string { return e.Err.Error() }
func (e *PermanentError) Unwrap() error { return e.Err }

// Permanent marks err as not retryable.
func Permanent(err error) error {
	if err == nil {
		return nil
	}
	return &PermanentError{Err: err}
}

// IsPermanent reports whether err was marked Permanent.
func IsPermanent(err error) bool {
	var p *PermanentError
	return errors.As(err, &p)
}
