package activities

import (
	"context"
	"errors"
	"time"
)

// A succeeded action's report, sent after its slot is free.
//
// The pool (--pool-size) bounds the actions a process runs at once, and the
// SDK holds an action's slot until its activity returns. An action whose
// success the activity reports to the supervisor (ActionRequest.OnSuccess)
// used to hold its slot while the signal was on its way: under a rolling
// update, measured on the dev server, a restart held its slot 104 ms (median)
// where a rollout's, which reports nothing, held it 31 ms, and the next
// action waited for a slot three times as long. Now the activity returns
// activity.ErrResultPending once the driver is done (the SDK frees the slot)
// and completes itself by its task token when the report was sent or given
// up on (ReportWait), heartbeating meanwhile. The workflow sees the same
// result as before, Reported included.
//
// What a crash does is unchanged: a worker process that dies before the
// completion leaves the attempt to its heartbeat timeout and the retry
// policy, as a death during the report did before. A worker that stops
// waits for its reports (WaitReports).

// completesAfterReport says whether this action's success goes out after
// its slot is free: it has a report to send and this process can complete
// an activity by its token.
func (a *Activities) completesAfterReport(req ActionRequest) bool {
	return req.OnSuccess != nil && a.Report != nil && a.Complete != nil && a.Heartbeat != nil
}

// beginReport counts a report about to be sent in the background; false
// once the worker stops (WaitReports has begun): the action then reports
// before it returns, as without a completer.
func (a *Activities) beginReport() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.stopping {
		return false
	}
	a.reporting.Add(1)
	return true
}

// completeAfterReport sends the report in the background and then
// completes the activity with res (Reported set), heartbeating meanwhile
// every third of its heartbeat timeout hb. The action ran for ran.
//
// The first beat is sent at once only if the action ran long enough that
// the server's last heartbeat may be old (heartbeatDue). An action that
// ended within a third of hb has had one heartbeat only, the one sent
// (synchronously: the SDK never holds back the first) as it began; the
// ticker's first beat, a third of hb from now, comes within two thirds of
// hb of it. Under a rolling update of stub workers the beat at once was
// one RPC of every ten the server took, each a write of the worker's
// workflow (docs/benchmarks.md).
//
// gone, when set, is called if the server refuses the completion because it
// no longer knows the attempt (abandoned.go).
func (a *Activities) completeAfterReport(token []byte, hb, ran time.Duration, on *SuccessReport, res ActionResult, gone func()) {
	go func() {
		defer a.reporting.Done()
		ctx, cancel := context.WithTimeout(context.Background(), ReportWait+30*time.Second)
		defer cancel()
		beat := func() { _ = a.Heartbeat(ctx, token, res.Attempt) }
		stop := func() {}
		if hb > 0 {
			if heartbeatDue(hb, ran) {
				beat()
			}
			stop = every(ctx, max(hb/3, 50*time.Millisecond), beat)
		}
		res.Reported = a.reportSuccess(ctx, on, res)
		stop()
		if a.complete(ctx, token, res) == errGone && gone != nil {
			gone()
		}
	}()
}

// heartbeatDue says whether an action that ran for ran, with heartbeat
// timeout hb, must beat at once when it hands its completion to the
// background: its beats after the first may have been held back by the
// SDK (it sends at most one per most of hb), so the server's last may be
// nearly hb old. One that ran less than a third of hb never beat after its
// first.
func heartbeatDue(hb, ran time.Duration) bool {
	return hb > 0 && ran >= hb/3
}

// errGone: the server no longer knows the attempt being completed.
var errGone = errors.New("the attempt is no longer known")

// complete completes the activity, trying again while the server is busy.
// An activity the server no longer knows (timed out meanwhile) is left to
// its workflow, and complete says so (errGone): its caller stops what the
// action started.
func (a *Activities) complete(ctx context.Context, token []byte, res ActionResult) error {
	for attempt := 1; ; attempt++ {
		err := a.Complete(ctx, token, res, nil)
		if err == nil || isNotFound(err) || attempt == 5 || ctx.Err() != nil {
			if err != nil && a.Log != nil {
				a.Log("could not complete a succeeded action", "error", err.Error())
			}
			if isNotFound(err) {
				return errGone
			}
			return err
		}
		select {
		case <-ctx.Done():
		case <-time.After(time.Duration(attempt) * 200 * time.Millisecond):
		}
	}
}

// WaitReports waits until every succeeded action of a's was reported and
// completed (a stopping worker calls it after its workers stop). Not a
// method: every method of Activities is registered as an activity.
func WaitReports(a *Activities) {
	a.mu.Lock()
	a.stopping = true
	a.mu.Unlock()
	a.reporting.Wait()
}
