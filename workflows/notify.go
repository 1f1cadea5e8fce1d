package workflows

import (
	"fmt"
	"slices"
	"time"

	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/steward-sh/steward/activities"
	"github.com/steward-sh/steward/internal/spec"
	"github.com/steward-sh/steward/internal/treestatus"
)

// Notifications (spec.Notify): a node's workflow sends an event to its
// webhook as an activity (activities.NotifyName) it does not wait for, so
// a receiver that is down never delays a tick. Temporal retries the
// activity (NotifyRetry) for up to NotifyGiveUpAfter. A notification not
// yet delivered when the workflow continues as new is carried to the next
// run, which sends it again (at least once: the receiver dedupes on its
// idempotency key). A node without notify sends nothing and schedules
// nothing.

// NotifyRetry is the retry policy of a notification: every 1s, 2s, 4s, ...
// up to one attempt a minute.
var NotifyRetry = temporal.RetryPolicy{InitialInterval: time.Second, BackoffCoefficient: 2, MaximumInterval: time.Minute}

// NotifyGiveUpAfter bounds how long a notification is retried.
const NotifyGiveUpAfter = 24 * time.Hour

// MaxPendingNotifications bounds the notifications a workflow retries at
// once (notifier.limit). Each is an activity retried for up to a day: a
// node that flapped (or was sent exits and job runs by hand) while its
// receiver was down piled them up without bound, each attempt a slot of
// the control queue, until Temporal's limit of pending activities (2,000)
// failed the workflow's task for good. Past the bound the oldest is
// cancelled (its receiver misses it; the newest say how things are now).
const MaxPendingNotifications = 20

// notifier holds a workflow run's notifications until they are delivered.
type notifier struct {
	pending []pendingNote
	// limit: at most so many pending at once (MaxPendingNotifications),
	// from the versions that bound them (WorkerNotifyBounded,
	// SupNotifyBounded, JobNotifyBounded); 0 holds any number.
	limit int
}

type pendingNote struct {
	task      activities.NotificationTask
	fut       workflow.Future
	cancel    workflow.CancelFunc
	cancelled bool
}

// transition sends the notification a transition is, if the node's webhook
// takes it. troubled is the node's carried trouble flag (kept up to date
// with or without a webhook: one added later still hears "recovered"), seq
// numbers its notifications (the idempotency key's).
func (n *notifier) transition(ctx workflow.Context, cfg *spec.Notify, troubled *bool, seq *int64, supervisor bool, body activities.Notification, from string) {
	event, after := treestatus.NotifyEvent(from, body.State, *troubled, supervisor)
	*troubled = after
	n.announce(ctx, cfg, seq, event, body)
}

// announce sends event, if the node's webhook takes it.
func (n *notifier) announce(ctx workflow.Context, cfg *spec.Notify, seq *int64, event string, body activities.Notification) {
	if event == "" || !cfg.Wants(event) {
		return
	}
	*seq++
	body.Event = event
	n.send(ctx, activities.NotificationTask{Notification: body, Webhook: cfg.Webhook, Headers: cfg.Headers,
		Key: fmt.Sprintf("%s/%d/%s", body.Path, *seq, event)})
}

func (n *notifier) send(ctx workflow.Context, t activities.NotificationTask) {
	if n.limit > 0 {
		n.keepBound(ctx)
	}
	cancel := func() {}
	if n.limit > 0 {
		ctx, cancel = workflow.WithCancel(ctx)
	}
	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		TaskQueue:              ControlQueue,
		StartToCloseTimeout:    15 * time.Second,
		ScheduleToCloseTimeout: NotifyGiveUpAfter,
		RetryPolicy:            &NotifyRetry,
		Summary:                "notify " + t.Notification.Event + " of " + t.Notification.Path,
	})
	n.pending = append(n.pending, pendingNote{task: t, fut: workflow.ExecuteActivity(actx, activities.NotifyName, t), cancel: cancel})
}

// keepBound cancels the oldest pending notifications until one more fits
// under the limit.
func (n *notifier) keepBound(ctx workflow.Context) {
	live := 0
	for _, p := range n.pending {
		if !p.cancelled {
			live++
		}
	}
	for i := range n.pending {
		if live < n.limit {
			return
		}
		if p := &n.pending[i]; !p.cancelled {
			p.cancelled = true
			p.cancel()
			live--
			count(ctx, MetricNotificationsDropped, nil)
			workflow.GetLogger(ctx).Warn("notification dropped: too many undelivered", "path", p.task.Notification.Path, "event", p.task.Notification.Event, "limit", n.limit)
		}
	}
}

// resend sends again what an earlier run had not delivered (the newest of
// them, past the limit).
func (n *notifier) resend(ctx workflow.Context, tasks []activities.NotificationTask) {
	if n.limit > 0 && len(tasks) > n.limit {
		for range len(tasks) - n.limit {
			count(ctx, MetricNotificationsDropped, nil)
		}
		tasks = tasks[len(tasks)-n.limit:]
	}
	for _, t := range tasks {
		n.send(ctx, t)
	}
}

// watch adds the pending notifications to sel: each is dropped when it is
// delivered or given up, and its cancel context released (its parent held
// every one until the run ended: a run that sent thousands of
// notifications kept thousands of contexts). Cancelling a context whose
// activity is done sends nothing: the SDK drops its cancel callback when
// the activity completes, so replays see the same commands.
func (n *notifier) watch(ctx workflow.Context, logger log.Logger, sel workflow.Selector) {
	for _, p := range n.pending {
		sel.AddFuture(p.fut, func(f workflow.Future) {
			if err := f.Get(ctx, nil); err != nil && !temporal.IsCanceledError(err) {
				logger.Warn("notification not delivered", "path", p.task.Notification.Path, "event", p.task.Notification.Event, "error", err.Error())
			}
			p.cancel()
			n.pending = slices.DeleteFunc(n.pending, func(q pendingNote) bool { return q.fut == f })
		})
	}
}

// undelivered is what the next run must send again.
func (n *notifier) undelivered() []activities.NotificationTask {
	var out []activities.NotificationTask
	for _, p := range n.pending {
		if !p.fut.IsReady() && !p.cancelled {
			out = append(out, p.task)
		}
	}
	return out
}
