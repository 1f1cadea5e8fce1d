package activities

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/steward-sh/steward/internal/admission"

	"go.temporal.io/sdk/temporal"

	"github.com/steward-sh/steward/internal/driver/process"
)

// ReadLogName reads a process service's log on its host (`starter logs`).
const ReadLogName = Prefix + "ReadLog"

// ErrNoLog is the error type of a log that is not on the host.
const ErrNoLog = "NoLog"

// ReadLogRequest asks for the last Lines lines of a workflow's log (Follow
// false), or for what was written from From on (Follow true), waiting up
// to Wait for something new; or, with Select (since a time, the previous
// run), for that part of the log across its rotated files, a page at a
// time from From (zero: its first page).
type ReadLogRequest struct {
	WorkflowID string              `json:"workflowId"`
	Lines      int                 `json:"lines,omitempty"`
	Select     *process.LogSelect  `json:"select,omitempty"`
	Follow     bool                `json:"follow,omitempty"`
	From       process.LogPosition `json:"from"`
	Wait       time.Duration       `json:"wait,omitempty"`
	// Auth is the operator's signature of the read (admission.ReadAuth;
	// nil: unsigned). A host with trusted keys answers only a signed read;
	// a signed read's answer is sealed to its reader (Sealed).
	Auth *admission.ReadAuth `json:"auth,omitempty"`
}

// ReadLogResult is the output read (bytes as written: a service's output
// need not be UTF-8) and the position to go on from.
type ReadLogResult struct {
	Data []byte              `json:"data"`
	Next process.LogPosition `json:"next"`
	// Sealed: the answer to a signed read, Data and Next sealed to its
	// reader (admission.Open, then JSON); Data and Next are then empty.
	Sealed *admission.Sealed `json:"sealed,omitempty"`
	// Range: the answer to a Select (a worker older than Select answers
	// with the tail instead, without it); More: a page follows from Next.
	Range bool `json:"range,omitempty"`
	More  bool `json:"more,omitempty"`
}

// Logs reads the logs the host's process driver writes under Dir (a
// service an older worker started: its log under the legacy name, while it
// has none of the new layout; process.TailLog). It runs on the host's task
// queue only: a log is on the host that ran the process.
type Logs struct {
	Dir string
	// Trusted are the host's trusted keys (--trusted-keys): with any, a
	// read must be signed by one of them (admission.VerifyRead).
	Trusted []ed25519.PublicKey
	// Poll is how often a follow read looks for new output (default 100ms).
	Poll time.Duration

	// following counts the follow reads waiting now (at most
	// MaxFollowsAtOnce).
	following atomic.Int32
}

// Follow reads are bounded. A read runs in one of the host's action slots
// (--pool-size), beside the starts, stops and observes of its services,
// and a LogsWorkflow can be started by anyone who may start workflows in
// the namespace: unbounded, ten follow reads of a log that does not exist,
// each waiting ten years, held every slot of a host, and nothing of its
// services was started, stopped or observed again until its worker
// restarted. A read waits MaxFollowWait at most (`starter logs -f` asks
// 500 ms a read), and at most MaxFollowsAtOnce wait at once; one more is
// answered at once, with nothing new.
const (
	MaxFollowWait    = 30 * time.Second
	MaxFollowsAtOnce = 4
)

// ReadLog reads a log (see ReadLogRequest): a signed read is checked and
// its answer sealed (authorizeRead, sealAnswer).
func (l *Logs) ReadLog(ctx context.Context, req ReadLogRequest) (ReadLogResult, error) {
	auth := req.Auth
	req.Auth = nil
	if err := authorizeRead(l.Trusted, "log", req, auth); err != nil {
		return ReadLogResult{}, err
	}
	res, err := l.readLog(ctx, req)
	if err != nil || auth == nil {
		return res, shownLogError(ctx, err)
	}
	sealed, err := sealAnswer(auth, res)
	return ReadLogResult{Sealed: sealed}, err
}

// authorizeRead refuses a read that a host with trusted keys must not
// answer (admission.VerifyRead): unsigned, signed by another key, or out of
// its time window. A host without trusted keys answers any read.
func authorizeRead(trusted []ed25519.PublicKey, kind string, req any, auth *admission.ReadAuth) error {
	if len(trusted) == 0 {
		return nil
	}
	if err := admission.VerifyRead(trusted, kind, req, auth, time.Now()); err != nil {
		return temporal.NewNonRetryableApplicationError(err.Error(), ErrRefused, nil)
	}
	return nil
}

// sealAnswer is answer as JSON, sealed to the signed read's reader.
func sealAnswer(auth *admission.ReadAuth, answer any) (*admission.Sealed, error) {
	plain, err := json.Marshal(answer)
	if err != nil {
		return nil, err
	}
	sealed, err := admission.Seal(auth.ReplyKey, plain)
	if err != nil {
		return nil, temporal.NewNonRetryableApplicationError("the read's reply key: "+err.Error(), ErrRefused, nil)
	}
	return sealed, nil
}

func (l *Logs) readLog(ctx context.Context, req ReadLogRequest) (ReadLogResult, error) {
	if req.Select != nil && !req.Follow {
		data, next, more, err := process.ReadLogRange(l.Dir, req.WorkflowID, *req.Select, req.From)
		switch {
		case errors.Is(err, process.ErrNoLog):
			return ReadLogResult{}, noLog(err)
		case errors.Is(err, process.ErrNoPreviousRun):
			return ReadLogResult{}, temporal.NewNonRetryableApplicationError(process.ShowAnchors(err.Error()), ErrNoLog, nil)
		}
		return ReadLogResult{Data: data, Next: next, Range: true, More: more}, err
	}
	if !req.Follow {
		data, end, err := process.TailLog(l.Dir, req.WorkflowID, req.Lines)
		if errors.Is(err, process.ErrNoLog) {
			return ReadLogResult{}, noLog(err)
		}
		return ReadLogResult{Data: data, Next: end}, err
	}
	poll := l.Poll
	if poll <= 0 {
		poll = 100 * time.Millisecond
	}
	wait := min(max(req.Wait, 0), MaxFollowWait)
	if l.following.Add(1) > MaxFollowsAtOnce {
		wait = 0 // one look, no wait: the slots are the services'
	}
	defer l.following.Add(-1)
	deadline := time.Now().Add(wait)
	for {
		data, next, err := process.ReadLogFrom(l.Dir, req.WorkflowID, req.From)
		if err == nil && len(data) > 0 {
			// Output comes in bursts: take what follows within a moment
			// too, for fewer reads.
			if sleepCtx(ctx, min(followLinger, time.Until(deadline))) == nil {
				if more, after, err := process.ReadLogFrom(l.Dir, req.WorkflowID, next); err == nil {
					data, next = append(data, more...), after
				}
			}
			return ReadLogResult{Data: data, Next: next}, nil
		}
		if err != nil || !time.Now().Before(deadline) {
			return ReadLogResult{Data: data, Next: next}, err
		}
		if err := sleepCtx(ctx, poll); err != nil {
			return ReadLogResult{Next: next}, err
		}
	}
}

// noLog is the error of a log that is not on the host.
func noLog(err error) error {
	return temporal.NewNonRetryableApplicationError(
		fmt.Sprintf("%s: the service has not run on this host, or its worker's --log-dir changed", process.ShowAnchors(err.Error())), ErrNoLog, nil)
}

// shownLogError is err as the reader is shown it: a path in the worker's
// anchored log directory written as the directory's name
// (process.ShowAnchors). A cancellation, and an answer already made for
// the reader, are returned as they are.
func shownLogError(ctx context.Context, err error) error {
	var app *temporal.ApplicationError
	if err == nil || errors.As(err, &app) || (ctx.Err() != nil && errors.Is(err, ctx.Err())) {
		return err
	}
	return errors.New(process.ShowAnchors(err.Error()))
}

// followLinger is how long a follow read that found output waits for more.
const followLinger = 200 * time.Millisecond

func sleepCtx(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return nil
	}
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(d):
		return nil
	}
}
