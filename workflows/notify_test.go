package workflows

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/steward-sh/steward/activities"
	"github.com/steward-sh/steward/internal/spec"
)

// notifyLog records what the mocked Notify activity was asked, failing the
// first failFirst attempts of every notification (a receiver that is down).
type notifyLog struct {
	mu        sync.Mutex
	failFirst int
	attempts  map[string]int
	delivered []activities.NotificationTask
}

func (l *notifyLog) notify(_ context.Context, t activities.NotificationTask) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.attempts == nil {
		l.attempts = map[string]int{}
	}
	l.attempts[t.Key]++
	if l.attempts[t.Key] <= l.failFirst {
		return errors.New("connection refused")
	}
	l.delivered = append(l.delivered, t)
	return nil
}

// events are the delivered notifications' events in the order the workflow
// sent them (the number in their idempotency key): two notifications sent
// close together are two activities that may complete in either order.
func (l *notifyLog) events() []string {
	var out []string
	for _, t := range l.sent() {
		out = append(out, t.Notification.Event)
	}
	return out
}

// sent are the delivered notifications in the order the workflow sent them.
func (l *notifyLog) sent() []activities.NotificationTask {
	l.mu.Lock()
	defer l.mu.Unlock()
	sent := slices.Clone(l.delivered)
	slices.SortStableFunc(sent, func(a, b activities.NotificationTask) int { return cmp.Compare(sentSeq(a.Key), sentSeq(b.Key)) })
	return sent
}

// sentSeq is the sequence number in an idempotency key "path/seq/event".
func sentSeq(key string) int {
	parts := strings.Split(key, "/")
	if len(parts) < 3 {
		return -1
	}
	n, err := strconv.Atoi(parts[len(parts)-2])
	if err != nil {
		return -1
	}
	return n
}

// A worker that fails notifies "failed"; once running again, "recovered".
// A receiver that is down at first gets each one when it is back, with the
// same idempotency key on every attempt.
func TestNotify_FailedThenRecoveredRetriedUntilDelivered(t *testing.T) {
	env := newEnv(t)
	log := &notifyLog{failFirst: 2}
	env.OnActivity(activities.NotifyName, mock.Anything, mock.Anything).Return(log.notify)
	failing := stubNode("w", &spec.Stub{Outcomes: map[string][]string{"start": {spec.OutcomePermanent}}})
	failing.Notify = &spec.Notify{Webhook: spec.Literal("http://127.0.0.1:1/hook"), Headers: map[string]spec.Value{"Authorization": spec.FileRef("/etc/token")}}
	fixed := stubNode("w", nil)
	fixed.Notify = failing.Notify
	at(env, time.Minute, func() {
		require.Equal(t, "failed", queryOwn(t, env).State)
		env.SignalWorkflow(SignalSpec, spec.Update{Spec: fixed})
	})
	endAt(env, 5*time.Minute)
	env.ExecuteWorkflow(WorkerWorkflow, WorkerInput{Path: "plant/w", Spec: failing, Generation: 1})
	require.True(t, temporal.IsCanceledError(env.GetWorkflowError()))

	require.Equal(t, []string{spec.EventFailed, spec.EventRecovered}, log.events())
	failed := log.delivered[0]
	require.Equal(t, "plant/w", failed.Notification.Path)
	require.Equal(t, "failed", failed.Notification.State)
	require.Contains(t, failed.Notification.Reason, "start failed")
	require.EqualValues(t, 1, failed.Notification.Generation)
	require.Equal(t, spec.Literal("http://127.0.0.1:1/hook"), failed.Webhook)
	require.Equal(t, spec.FileRef("/etc/token"), failed.Headers["Authorization"], "the reference travels, never a value")
	require.Equal(t, 3, log.attempts[failed.Key], "two refused attempts, then delivered, under one key")
	require.NotEqual(t, failed.Key, log.delivered[1].Key)
	require.EqualValues(t, 2, log.delivered[1].Notification.Generation)
}

// `on` filters the events, and a node without notify schedules nothing.
func TestNotify_OnFiltersAndNoneWithoutNotify(t *testing.T) {
	for _, tc := range []struct {
		name   string
		notify *spec.Notify
		want   []string
	}{
		{"recovered only", &spec.Notify{Webhook: spec.Literal("http://h/x"), On: []string{spec.EventRecovered}}, []string{spec.EventRecovered}},
		{"no notify", nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := newEnv(t)
			log := &notifyLog{}
			env.OnActivity(activities.NotifyName, mock.Anything, mock.Anything).Return(log.notify).Maybe()
			failing := stubNode("w", &spec.Stub{Outcomes: map[string][]string{"start": {spec.OutcomePermanent}}})
			failing.Notify = tc.notify
			fixed := stubNode("w", nil)
			fixed.Notify = tc.notify
			at(env, time.Minute, func() { env.SignalWorkflow(SignalSpec, spec.Update{Spec: fixed}) })
			endAt(env, 5*time.Minute)
			env.ExecuteWorkflow(WorkerWorkflow, WorkerInput{Path: "w", Spec: failing, Generation: 1})
			require.True(t, temporal.IsCanceledError(env.GetWorkflowError()))
			require.Equal(t, tc.want, log.events())
		})
	}
}

// A notification not delivered when the worker continues as new is carried
// to the next run (which sends it again).
func TestNotify_UndeliveredIsCarriedOverContinueAsNew(t *testing.T) {
	env := newEnv(t)
	log := &notifyLog{failFirst: 1000}
	env.OnActivity(activities.NotifyName, mock.Anything, mock.Anything).Return(log.notify)
	failing := stubNode("w", &spec.Stub{Outcomes: map[string][]string{"start": {spec.OutcomePermanent}}})
	failing.Notify = &spec.Notify{Webhook: spec.Literal("http://h/x")}
	at(env, time.Minute, func() {
		env.SetContinueAsNewSuggested(true)
		env.SignalWorkflow(SignalDesired, "sideways") // an event (rejected), for the loop to see the suggestion
	})
	env.ExecuteWorkflow(WorkerWorkflow, WorkerInput{Path: "w", Spec: failing, Generation: 1})
	next, continued := continuedAs[WorkerInput](t, env.GetWorkflowError())
	require.True(t, continued, "got %v", env.GetWorkflowError())
	require.Len(t, next.Carry.Notifications, 1)
	require.Equal(t, spec.EventFailed, next.Carry.Notifications[0].Notification.Event)
	require.True(t, next.Carry.Troubled)
}

// A supervisor that gives up notifies "gaveUp" (with its reason); after its
// cooldown, running again, "recovered". Its workers inherit its webhook.
func TestNotify_SupervisorGaveUpThenRecovered(t *testing.T) {
	env := newEnv(t)
	mockActions(env)
	log := &notifyLog{}
	env.OnActivity(activities.NotifyName, mock.Anything, mock.Anything).Return(log.notify)
	root := tree("root", stubNode("a", nil))
	root.Intensity = &spec.Intensity{MaxRestarts: 1, Period: spec.Dur(time.Hour), Cooldown: spec.Dur(10 * time.Minute)}
	root.Notify = &spec.Notify{Webhook: spec.Literal("http://h/x"), On: []string{spec.EventGaveUp, spec.EventRecovered}}
	at(env, time.Minute, func() { crashChild(env, "root/a") })
	at(env, 2*time.Minute, func() { crashChild(env, "root/a") })
	var gaveUp Status
	var journal []JournalEntry
	at(env, 5*time.Minute, func() {
		gaveUp = queryOwn(t, env)
		v, err := env.QueryWorkflow(QueryHistory)
		require.NoError(t, err)
		require.NoError(t, v.Get(&journal))
	})
	endAt(env, 20*time.Minute)
	env.ExecuteWorkflow(SupervisorWorkflow, SupervisorInput{Path: "root", Spec: root, Generation: 1})

	require.Equal(t, "failed", gaveUp.State)
	// The supervisor's journal: its own transitions, with reasons.
	require.Equal(t, "created", journal[0].Reason)
	last := journal[len(journal)-1]
	require.Equal(t, "failed", last.State)
	require.Contains(t, last.Reason, "gave up: more than 1 restarts")
	for i := 1; i < len(journal); i++ {
		require.Equal(t, journal[i-1].State, journal[i].From, "a chain of transitions: %+v", journal)
	}
	require.Equal(t, []string{spec.EventGaveUp, spec.EventRecovered}, log.events())
	n := log.delivered[0].Notification
	require.Equal(t, "root", n.Path)
	require.Contains(t, n.Reason, "gave up: more than 1 restarts")
	require.Equal(t, "root", log.delivered[1].Notification.Path)
	require.Equal(t, "running", log.delivered[1].Notification.State)
}

// notifyBurst sends n notifications at once through a notifier holding at
// most limit (0: any number), with a receiver that is down, and returns how
// many it would carry to its next run, a minute later.
func notifyBurst(ctx workflow.Context, limit, n int) ([]string, error) {
	notes := notifier{limit: limit}
	for i := range n {
		notes.send(ctx, activities.NotificationTask{Notification: activities.Notification{Path: "t/w", Event: spec.EventFailed}, Key: fmt.Sprintf("t/w/%d/failed", i)})
	}
	sel := workflow.NewSelector(ctx)
	notes.watch(ctx, workflow.GetLogger(ctx), sel)
	timer := workflow.NewTimer(ctx, time.Minute)
	sel.AddFuture(timer, func(workflow.Future) {})
	for !timer.IsReady() {
		sel.Select(ctx)
	}
	var keys []string
	for _, t := range notes.undelivered() {
		keys = append(keys, t.Key)
	}
	return keys, nil
}

// Regression (attack review): a node's notifications were retried for a
// day each, any number at once, so a node that flapped while its receiver
// was down (or was sent job runs and exits by hand) piled them up past
// Temporal's limit of 2,000 pending activities, which failed its task for
// good. From supervisor 12, worker 8 and job 4 at most
// MaxPendingNotifications are retried at once: the oldest are cancelled,
// counted, and not carried.
func TestNotify_ARunRetriesAtMostMaxPendingNotifications(t *testing.T) {
	burst := func(limit int) ([]string, float64) {
		env, rec := newEnvWithMetrics(t)
		env.RegisterWorkflow(notifyBurst)
		log := &notifyLog{failFirst: 1 << 30}
		env.OnActivity(activities.NotifyName, mock.Anything, mock.Anything).Return(log.notify).Maybe()
		env.ExecuteWorkflow(notifyBurst, limit, 50)
		require.NoError(t, env.GetWorkflowError())
		var carried []string
		require.NoError(t, env.GetWorkflowResult(&carried))
		return carried, rec.Sum(MetricNotificationsDropped, nil)
	}
	carried, dropped := burst(MaxPendingNotifications)
	require.Len(t, carried, MaxPendingNotifications)
	require.Equal(t, fmt.Sprintf("t/w/%d/failed", 50-MaxPendingNotifications), carried[0], "the newest, still retried: %v", carried)
	require.Equal(t, "t/w/49/failed", carried[len(carried)-1])
	require.EqualValues(t, 50-MaxPendingNotifications, dropped)
	carried, dropped = burst(0)
	require.Len(t, carried, 50, "the versions before hold any number")
	require.Zero(t, dropped)
}

// notifyDelivered sends n notifications through a bounded notifier to a
// receiver that is up, waits for every one, and returns how many of their
// cancel contexts were released.
func notifyDelivered(ctx workflow.Context, n int) (int, error) {
	notes := notifier{limit: MaxPendingNotifications}
	released := 0
	for i := range n {
		notes.send(ctx, activities.NotificationTask{Notification: activities.Notification{Path: "t/w", Event: spec.EventFailed}, Key: fmt.Sprintf("t/w/%d/failed", i)})
		p := &notes.pending[len(notes.pending)-1]
		cancel := p.cancel
		p.cancel = func() { released++; cancel() }
	}
	for len(notes.pending) > 0 {
		sel := workflow.NewSelector(ctx)
		notes.watch(ctx, workflow.GetLogger(ctx), sel)
		sel.Select(ctx)
	}
	return released, nil
}

// Regression (review): each bounded notification's cancel context stayed
// registered with the workflow's context until the run ended, delivered or
// not. A delivered one now releases it, and no cancel is sent for it.
func TestNotify_ADeliveredNotificationReleasesItsCancelContext(t *testing.T) {
	env := newEnv(t)
	env.RegisterWorkflow(notifyDelivered)
	log := &notifyLog{}
	env.OnActivity(activities.NotifyName, mock.Anything, mock.Anything).Return(log.notify)
	env.ExecuteWorkflow(notifyDelivered, 10)
	require.NoError(t, env.GetWorkflowError())
	var released int
	require.NoError(t, env.GetWorkflowResult(&released))
	require.Equal(t, 10, released)
	require.Len(t, log.sent(), 10, "every notification delivered, none cancelled")
}
