package activities

import (
	"context"
	"errors"
	"time"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/activity"

	"github.com/steward-sh/steward/internal/driver"
	"github.com/steward-sh/steward/internal/spec"
)

// A start whose attempt the server gave up on stops what it started.
//
// A start or restart runs on its host while the server times its attempt
// (heartbeat and start-to-close timeouts). A host frozen (SIGSTOP, a swap
// storm) in the last moments of a start comes back with
// the process started and its attempt timed out: the server refuses the
// completion (NotFound), so the workflow never hears of the instance. It
// has moved on meanwhile (a retry, or a move to another host), and the
// process it never heard of ran beside the one it started, owned by no
// workflow: found by TestFault_HostFrozenDuringAnUpdate, a restart of
// web-1 in flight on host b as b froze.
//
// Now an action that ran at least its heartbeat timeout (a freeze looks
// like that: the monotonic clock runs on while a process is stopped; not
// while the machine is suspended, which this does not cover) asks
// the server, by a heartbeat of its own, whether its attempt is still
// known before it reports; one the server no longer knows stops the
// instance it started and fails. An action that completes after its
// report (report_async.go) does the same when its completion is refused.
// The stop names that instance only: a newer attempt of the same workflow
// on this host has stopped it already (process: one process per
// service), and whatever that attempt started is not touched.

// abandons says whether the action named name, of node n, stops what it
// started when the server gave its attempt up: a process service's start
// or restart (its instance names that process alone). Not an http
// worker's (its stop is the service's own stop request, whatever the
// instance: a retry on another worker process may have started the
// service the workflow now owns), nor a job's run (a later attempt of a
// version 1 run takes the same process).
func abandons(name string, n spec.Node) bool {
	return (name == StartName || name == RestartName) && n.Kind == spec.KindProcess && !n.IsJob()
}

// attemptGone says whether the server no longer knows this attempt: asked
// only of an action that ran at least its heartbeat timeout hb (before
// that, the server cannot have timed it out on heartbeats; a start-to-
// close timeout is longer still).
func (a *Activities) attemptGone(ctx context.Context, ran time.Duration) bool {
	info := activity.GetInfo(ctx)
	hb := info.HeartbeatTimeout
	if a.Heartbeat == nil || hb <= 0 || ran < hb {
		return false
	}
	hctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return isNotFound(a.Heartbeat(hctx, info.TaskToken, info.Attempt))
}

func isNotFound(err error) bool {
	return errors.As(err, new(*serviceerror.NotFound))
}

// abandon stops instance, which r's action started for an attempt the
// server no longer knows, within the service's stop timeout.
func (a *Activities) abandon(d driver.Driver, r driver.Request, instance string) {
	r.Instance = instance
	ctx, cancel := context.WithTimeout(context.Background(), r.Spec.Resolved().Timeouts.Stop.D()+5*time.Second)
	defer cancel()
	err := d.Stop(ctx, r)
	if a.Log != nil {
		fields := []any{"workflow", r.WorkflowID, "instance", instance}
		if err != nil {
			fields = append(fields, "error", err.Error())
		}
		a.Log("stopped an instance its attempt's timeout left owned by no workflow", fields...)
	}
}
