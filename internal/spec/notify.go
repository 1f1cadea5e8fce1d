package spec

import (
	"fmt"
	"slices"

	"github.com/goccy/go-yaml"
)

// Notifications.
//
// `notify: {webhook: URL, on: [events], headers: {...}}` on any node is
// inherited by its descendants; a descendant's own notify replaces it
// whole. The events:
//
//   - failed: a worker entered `failed` (it will not be started again
//     without an operator or a spec change);
//   - gaveUp: a supervisor gave up (more restarts than its intensity
//     allows) and stopped its children;
//   - unknown: a process worker's host became unreachable;
//   - recovered: a node that was failed, gave up or was unknown is running
//     again;
//   - refused: a worker's host refused a changed spec (its command policy,
//     or a signature it requires) and the service runs on as it was (a
//     refused start fails the worker: that is `failed`);
//   - updateFailed: a supervisor's rolling update failed (a worker did not
//     become healthy in time, or no progress), whether it reverts or not;
//   - reverted: a failed update brought the previous spec back
//     (autoRevert);
//   - jobFailed: a job's run did not succeed (its first, or the first
//     after one that did); jobRecovered: the next run that succeeded.
//
// `on` defaults to all nine (an empty list too). Each event is POSTed as
// JSON by an activity with retries (durable, at least once); the webhook
// URL (Slack's and others' carry their secret in it) and the headers may be
// secret references, resolved by the worker process that sends it.

// Notification events.
const (
	EventFailed    = "failed"
	EventGaveUp    = "gaveUp"
	EventUnknown   = "unknown"
	EventRecovered = "recovered"
	EventRefused   = "refused"
	// EventUpdateFailed and EventReverted: a supervisor's rolling update
	// (update.go).
	EventUpdateFailed = "updateFailed"
	EventReverted     = "reverted"
	// EventJobFailed: a job's run did not succeed after one that did (or
	// its first run); EventJobRecovered: its next run that succeeded.
	EventJobFailed    = "jobFailed"
	EventJobRecovered = "jobRecovered"
)

// NotifyEvents are every event, the default of `on`.
var NotifyEvents = []string{EventFailed, EventGaveUp, EventUnknown, EventRecovered, EventRefused, EventUpdateFailed, EventReverted, EventJobFailed, EventJobRecovered}

// Notify is a node's webhook.
type Notify struct {
	Webhook Value            `yaml:"webhook" json:"webhook"`
	On      []string         `yaml:"on,omitempty" json:"on,omitempty"`
	Headers map[string]Value `yaml:"headers,omitempty" json:"headers,omitempty"`
}

// Wants reports whether the webhook takes event.
func (n *Notify) Wants(event string) bool {
	return n != nil && (len(n.On) == 0 || slices.Contains(n.On, event))
}

func (v *validator) notify(p string, n *Notify) {
	if n == nil {
		return
	}
	np := join(p, "notify")
	if n.Webhook.IsRef() {
		n.Webhook.check(v, join(np, "webhook"))
	} else {
		v.httpURL(join(np, "webhook"), n.Webhook.Literal)
	}
	for i, e := range n.On {
		if !slices.Contains(NotifyEvents, e) {
			v.add(fmt.Sprintf("%s.on[%d]", np, i), "unknown event %q (failed, gaveUp, unknown, recovered, refused, updateFailed or reverted)", e)
		}
	}
	v.headers(join(np, "headers"), n.Headers)
}

// UnmarshalYAML reads a value as UnmarshalJSON does (a string, or
// {file: PATH} / {env: NAME}), for fields decoded from YAML directly.
func (v *Value) UnmarshalYAML(b []byte) error {
	j, err := yaml.YAMLToJSON(b)
	if err != nil {
		return err
	}
	return v.UnmarshalJSON(j)
}
