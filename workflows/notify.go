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

// notifier holds a workflow run's notifications until they are delivered.
type notifier struct {
	pending []pendingNote
}

type pendingNote struct {
	task activities.NotificationTask
	fut  workflow.Future
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
	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		TaskQueue:              ControlQueue,
		StartToCloseTimeout:    15 * time.Second,
		ScheduleToCloseTimeout: NotifyGiveUpAfter,
		RetryPolicy:            &NotifyRetry,
		Summary:                "notify " + t.Notification.Event + " of " + t.Notification.Path,
	})
	n.pending = append(n.pending, pendingNote{task: t, fut: workflow.ExecuteActivity(actx, activities.NotifyName, t)})
}

// resend sends again what an earlier run had not delivered.
func (n *notifier) resend(ctx workflow.Context, tasks []activities.NotificationTask) {
	for _, t := range tasks {
		n.send(ctx, t)
	}
}

// watch adds the pending notifications to sel: each is dropped when it is
// delivered or given up.
func (n *notifier) watch(ctx workflow.Context, logger log.Logger, sel workflow.Selector) {
	for _, p := range n.pending {
		sel.AddFuture(p.fut, func(f workflow.Future) {
			if err := f.Get(ctx, nil); err != nil {
				logger.Warn("notification not delivered", "path", p.task.Notification.Path, "event", p.task.Notification.Event, "error", err.Error())
			}
			n.pending = slices.DeleteFunc(n.pending, func(q pendingNote) bool { return q.fut == f })
		})
	}
}

// undelivered is what the next run must send again.
func (n *notifier) undelivered() []activities.NotificationTask {
	var out []activities.NotificationTask
	for _, p := range n.pending {
		if !p.fut.IsReady() {
			out = append(out, p.task)
		}
	}
	return out
}
