package activities

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/steward-sh/steward/internal/admission"

	"go.temporal.io/sdk/temporal"

	"github.com/steward-sh/steward/internal/driver"
	"github.com/steward-sh/steward/internal/driver/httpdrv"
	"github.com/steward-sh/steward/internal/spec"
)

// NotifyName is the activity that POSTs one notification to a node's
// webhook (spec.Notify). It runs on the control task queue, never in the
// action pool, and its workflow does not wait for it: a receiver that is
// down delays nothing. Temporal retries it (workflows.NotifyRetry) until
// the receiver answers 2xx, so delivery is at least once; the receiver
// dedupes on the IdempotencyHeader.
const NotifyName = Prefix + "Notify"

// IdempotencyHeader carries a key that is the same on every delivery of one
// notification (retries and re-sends after continue-as-new) and different
// for every other.
const IdempotencyHeader = "Idempotency-Key"

// Notification is one event of a node, the body POSTed (Event is
// spec.EventFailed etc.).
type Notification struct {
	Path       string    `json:"path"`
	Event      string    `json:"event"`
	State      string    `json:"state"`
	Reason     string    `json:"reason"`
	Time       time.Time `json:"time"`
	Generation int64     `json:"generation"`
}

// NotificationTask is the activity's input: the body and where to send it.
type NotificationTask struct {
	Notification Notification          `json:"notification"`
	Webhook      spec.Value            `json:"webhook"`
	Headers      map[string]spec.Value `json:"headers,omitempty"`
	Key          string                `json:"key"`
}

// notifyTimeout bounds one delivery attempt.
const notifyTimeout = 10 * time.Second

var notifyClient = &http.Client{Timeout: notifyTimeout}

// Notify POSTs the notification as JSON. A 2xx answer delivers it; a 4xx
// (but 408 and 429) is a permanent failure, as for the http driver;
// anything else (refused, timed out, 5xx) is an error Temporal retries. A
// webhook or header whose secret cannot be resolved on this worker is an
// error too (permanent, as a process's missing secret).
//
// Its errors go to the workflow's history and the worker's log: they name
// a webhook that is a secret reference by the reference ({file: PATH},
// {env: NAME}), never by the URL it resolves to, and quote no error that
// quotes that URL (net/url's and net/http's do) nor, in what they quote,
// its host or a header's resolved value.
func (c *Control) Notify(ctx context.Context, t NotificationTask) error {
	body, err := json.Marshal(t.Notification)
	if err != nil {
		return temporal.NewNonRetryableApplicationError("encode notification", ErrPermanent, err)
	}
	read := c.readFile()
	// The webhook is read once: the URL the policy judged is the URL sent
	// to (a file read again could say another).
	webhook, resolved := "", false
	resolve := func(v spec.Value) (string, error) {
		s, err := driver.Resolve("notify.webhook", v, read)
		if err == nil {
			webhook, resolved = s, true
		}
		return s, err
	}
	if err := c.notifyAllowed(t, resolve); err != nil {
		return temporal.NewNonRetryableApplicationError(err.Error(), ErrRefused, nil)
	}
	if !resolved {
		if _, err := resolve(t.Webhook); err != nil {
			return temporal.NewNonRetryableApplicationError(err.Error(), ErrPermanent, nil)
		}
	}
	headers, err := driver.ResolveAll("notify.headers", t.Headers, read)
	if err != nil {
		return temporal.NewNonRetryableApplicationError(err.Error(), ErrPermanent, nil)
	}
	name := webhookName(t.Webhook)
	u, err := url.Parse(webhook)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		// Not err: it quotes the URL.
		return temporal.NewNonRetryableApplicationError("notify: "+name+": not a valid http(s) URL", ErrPermanent, nil)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, webhook, bytes.NewReader(body))
	if err != nil {
		return temporal.NewNonRetryableApplicationError("notify: "+name+": not a valid http(s) URL", ErrPermanent, nil)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "steward")
	req.Header.Set(IdempotencyHeader, t.Key)
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	var secrets []driver.Secret
	if t.Webhook.IsRef() {
		secrets = append(secrets, driver.Secret{Value: webhook, Name: "(" + name + ")"},
			driver.Secret{Value: u.Redacted(), Name: "(" + name + ")"},
			driver.Secret{Value: u.Host, Name: "(the host of " + name + ")"},
			driver.Secret{Value: u.Hostname(), Name: "(the host of " + name + ")"})
	}
	for k, v := range t.Headers {
		if v.IsRef() {
			secrets = append(secrets, driver.Secret{Value: headers[k], Name: "(header " + k + ")"})
		}
	}
	client := notifyClient
	if g := c.Guard; g != nil && g.Policy != nil {
		// Each redirect's hop must be a URL the policy lists, as the
		// webhook was: followed unchecked, it reached any host, with every
		// header but Authorization and Cookie (a secret one among them).
		cl := *notifyClient
		cl.CheckRedirect = g.Policy.Redirect
		client = &cl
	}
	resp, err := client.Do(req)
	if err != nil {
		if refusal := new(admission.Refusal); errors.As(err, &refusal) {
			return temporal.NewNonRetryableApplicationError(fmt.Sprintf("notify %s: %s: %s", t.Notification.Event, name, refusal.Error()), ErrRefused, nil)
		}
		if ctx.Err() != nil {
			return fmt.Errorf("notify %s: %s: %w", t.Notification.Event, name, ctx.Err())
		}
		// A new error, not a wrapped one: Temporal keeps an error's
		// causes, and net/http's quotes the URL.
		return fmt.Errorf("notify %s: %s: %s", t.Notification.Event, name, driver.Redact(driver.TransportReason(err), secrets))
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16))
	switch {
	case resp.StatusCode/100 == 2:
		return nil
	case resp.StatusCode/100 == 4 && !httpdrv.Retryable(resp.StatusCode):
		// The receiver refuses this request: sending it again will not help.
		return temporal.NewNonRetryableApplicationError(
			fmt.Sprintf("notify %s: %s answered %s", t.Notification.Event, name, driver.Redact(resp.Status, secrets)), ErrPermanent, nil)
	}
	return fmt.Errorf("notify %s: %s answered %s", t.Notification.Event, name, driver.Redact(resp.Status, secrets))
}

// webhookName names a webhook in errors: a literal by its URL (the spec
// holds it; a password in it is masked), a secret reference by itself.
func webhookName(v spec.Value) string {
	switch {
	case v.File != "":
		return "webhook {file: " + v.File + "}"
	case v.Env != "":
		return "webhook {env: " + v.Env + "}"
	}
	if u, err := url.Parse(v.Literal); err == nil {
		return "webhook " + u.Redacted()
	}
	return "webhook " + v.Literal
}

// readFile reads a notification's secret files: under a policy only the
// files it lists, by the path it checked (nil: any).
func (c *Control) readFile() driver.FileReader {
	if c.Guard == nil || c.Guard.Policy == nil {
		return nil
	}
	return c.Guard.Policy.ReadFile
}

// notifyAllowed refuses, on a guarded host, a notification that would read
// this host's secrets or reach a URL its operator did not allow: with a
// policy, what its secrets, secretEnv and urls list (Policy.CheckNotify);
// with trusted keys and no policy, any secret reference at all (a
// notification is signed by nobody). An open host sends what it is given.
// resolve resolves the webhook (the policy judges the URL it resolves to).
func (c *Control) notifyAllowed(t NotificationTask, resolve func(spec.Value) (string, error)) error {
	g := c.Guard
	if g.Open() {
		return nil
	}
	if g.Policy != nil {
		return g.Policy.CheckNotify(t.Webhook, t.Headers, resolve)
	}
	refs := []string{}
	if t.Webhook.IsRef() {
		refs = append(refs, "notify.webhook")
	}
	for _, k := range slices.Sorted(maps.Keys(t.Headers)) {
		if t.Headers[k].IsRef() {
			refs = append(refs, "notify.headers."+k)
		}
	}
	if len(refs) > 0 {
		return &admission.Refusal{Rule: "signature", Msg: fmt.Sprintf(
			"%s is a secret reference, and this host resolves none for a notification (nobody signs one; list it in a --policy's secrets to allow it)", strings.Join(refs, ", "))}
	}
	return nil
}
