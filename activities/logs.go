package activities

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.temporal.io/sdk/temporal"

	"github.com/steward-sh/steward/internal/driver/process"
)

// ReadLogName reads a process service's log on its host (`starter logs`).
const ReadLogName = Prefix + "ReadLog"

// ErrNoLog is the error type of a log that is not on the host.
const ErrNoLog = "NoLog"

// ReadLogRequest asks for the last Lines lines of a workflow's log (Follow
// false), or for what was written from From on (Follow true), waiting up
// to Wait for something new.
type ReadLogRequest struct {
	WorkflowID string              `json:"workflowId"`
	Lines      int                 `json:"lines,omitempty"`
	Follow     bool                `json:"follow,omitempty"`
	From       process.LogPosition `json:"from"`
	Wait       time.Duration       `json:"wait,omitempty"`
}

// ReadLogResult is the output read (bytes as written: a service's output
// need not be UTF-8) and the position to go on from.
type ReadLogResult struct {
	Data []byte              `json:"data"`
	Next process.LogPosition `json:"next"`
}

// Logs reads the logs the host's process driver writes under Dir (a
// service an older worker started: its log under the legacy name, while it
// has none of the new layout; process.TailLog). It runs on the host's task
// queue only: a log is on the host that ran the process.
type Logs struct {
	Dir string
	// Poll is how often a follow read looks for new output (default 100ms).
	Poll time.Duration
}

// ReadLog reads a log (see ReadLogRequest).
func (l *Logs) ReadLog(ctx context.Context, req ReadLogRequest) (ReadLogResult, error) {
	if !req.Follow {
		data, end, err := process.TailLog(l.Dir, req.WorkflowID, req.Lines)
		if errors.Is(err, process.ErrNoLog) {
			return ReadLogResult{}, temporal.NewNonRetryableApplicationError(
				fmt.Sprintf("%v: the service has not run on this host, or its worker's --log-dir changed", err), ErrNoLog, nil)
		}
		return ReadLogResult{Data: data, Next: end}, err
	}
	poll := l.Poll
	if poll <= 0 {
		poll = 100 * time.Millisecond
	}
	deadline := time.Now().Add(req.Wait)
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
