package main

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"google.golang.org/protobuf/proto"
)

// followers tell the console's watch which supervisors changed, without
// asking them: one long poll of each followed workflow's history (the
// server answers it when an event is written, and every 20 s or so
// without one). A supervisor whose history is followed and has had no
// event since its last answer has the same answer; only the others are
// asked. At rest that is no query at all, where asking every supervisor
// every look cost the console 4-5 % of a core at 10,000 workers (101
// supervisors a second); a change is seen as soon as the report that
// carries it reaches the supervisor's history.
//
// A workflow that is not (yet) followed is asked at every look, as
// before: while its history is read up to its end, after an error (the
// follower tries again after a pause), when it is closed, and past
// maxFollowed (each follow is a request held open on the server).
type followers struct {
	c         client.Client
	namespace string
	ctx       context.Context // the console's: followers end with it
	poke      func()          // a look now: something changed

	mu sync.Mutex
	by map[string]*follower
}

// maxFollowed bounds the long polls the console holds open on the
// server; supervisors beyond it are asked at every look.
const maxFollowed = 1000

type follower struct {
	cancel   context.CancelFunc
	watching atomic.Bool // its history is read to its end and followed
	dirty    atomic.Bool // an event since its last answer was taken
}

// fresh tells whether path's last answer still holds: its history is
// followed and has had no event since that answer was taken; changed,
// that it is followed and had one (its answer is asked at once, without
// its digest first: an event is almost always a change). It takes the
// change (a caller that gets neither asks again), and starts following a
// path not followed yet.
func (f *followers) fresh(path string) (fresh, changed bool) {
	f.mu.Lock()
	fl, ok := f.by[path]
	if !ok && len(f.by) < maxFollowed {
		ctx, cancel := context.WithCancel(f.ctx)
		fl = &follower{cancel: cancel}
		f.by[path] = fl
		go f.follow(ctx, path, fl)
	}
	f.mu.Unlock()
	if fl == nil || !fl.watching.Load() {
		return false, false
	}
	changed = fl.dirty.Swap(false)
	return !changed, changed
}

// retry marks path as changed again: the answer taken after fresh()
// failed, so the next look asks again rather than keep the old one.
func (f *followers) retry(path string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if fl, ok := f.by[path]; ok {
		fl.dirty.Store(true)
	}
}

// pending tells whether a look has anything to ask: a followed workflow
// with an event since its answer, or one not followed.
func (f *followers) pending(paths map[string]bool) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	for p := range paths {
		fl, ok := f.by[p]
		if !ok || !fl.watching.Load() || fl.dirty.Load() {
			return true
		}
	}
	return false
}

// keep stops following the paths a look did not ask about (nodes that
// left the tree).
func (f *followers) keep(paths map[string]bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for p, fl := range f.by {
		if !paths[p] {
			fl.cancel()
			delete(f.by, p)
		}
	}
}

// follow follows path's runs until ctx ends: each run's history to its
// close (a continue-as-new starts the next run), with a pause after an
// error or a closed workflow.
func (f *followers) follow(ctx context.Context, path string, fl *follower) {
	pause := time.Second
	for ctx.Err() == nil {
		err := f.followRun(ctx, path, fl)
		if fl.watching.Swap(false) {
			fl.dirty.Store(true)
			f.poke()
		}
		if err == nil {
			pause = time.Second
			continue // the run continued as new: the next one
		}
		select {
		case <-ctx.Done():
		case <-time.After(pause):
		}
		pause = min(2*pause, 30*time.Second)
	}
}

var errRunClosed = errors.New("the run is closed")

// followRun reads the current run's history to its end, then long-polls
// for its next events until the run closes.
func (f *followers) followRun(ctx context.Context, path string, fl *follower) error {
	d, err := f.c.DescribeWorkflowExecution(ctx, path, "")
	if err != nil {
		return err
	}
	info := d.GetWorkflowExecutionInfo()
	if info.GetStatus() != enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING {
		return errRunClosed
	}
	end := info.GetHistoryLength() // the last event when described
	req := &workflowservice.GetWorkflowExecutionHistoryRequest{
		Namespace:              f.namespace,
		Execution:              &commonpb.WorkflowExecution{WorkflowId: path, RunId: info.GetExecution().GetRunId()},
		WaitNewEvent:           true,
		SkipArchival:           true,
		HistoryEventFilterType: enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT,
	}
	var seen int64
	for {
		pctx, cancel := context.WithTimeout(ctx, 90*time.Second) // past the server's long poll (20 s)
		resp, err := f.c.WorkflowService().GetWorkflowExecutionHistory(pctx, req)
		cancel()
		if err != nil {
			var dl *serviceerror.DeadlineExceeded
			if ctx.Err() == nil && (errors.As(err, &dl) || errors.Is(err, context.DeadlineExceeded)) {
				continue // a long poll the server did not end: ask again
			}
			return err
		}
		last, err := lastEventID(resp)
		if err != nil {
			return err
		}
		if last > 0 {
			seen = last
			if fl.watching.Load() {
				fl.dirty.Store(true)
				f.poke()
			}
		}
		if !fl.watching.Load() && seen >= end {
			// Followed from here on: the answer taken next is current.
			fl.dirty.Store(true)
			fl.watching.Store(true)
			f.poke()
		}
		if len(resp.GetNextPageToken()) == 0 {
			return nil // closed: continued as new, or ended
		}
		req.NextPageToken = resp.GetNextPageToken()
	}
}

// lastEventID is the ID of the last event of a page (0: none), whether
// the server sent events or raw batches of them.
func lastEventID(resp *workflowservice.GetWorkflowExecutionHistoryResponse) (int64, error) {
	if ev := resp.GetHistory().GetEvents(); len(ev) > 0 {
		return ev[len(ev)-1].GetEventId(), nil
	}
	raw := resp.GetRawHistory()
	if len(raw) == 0 {
		return 0, nil
	}
	var h historypb.History
	if err := proto.Unmarshal(raw[len(raw)-1].GetData(), &h); err != nil {
		return 0, err
	}
	if ev := h.GetEvents(); len(ev) > 0 {
		return ev[len(ev)-1].GetEventId(), nil
	}
	return 0, nil
}
