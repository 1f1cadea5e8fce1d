// Package httpdrv is the http driver of docs/contract.md: a service that runs on
// its own and is controlled over HTTP. The worker's `http:` block
// (spec.HTTP) gives optional start and stop requests and a health URL.
//
// Start sends the start request, if one is configured, and the service is
// then "started": the instance identifier is
// "http/<unix nanos>@<workflowID>". No start request means no I/O at all:
// starting is bookkeeping for a service that runs anyway, and observe is
// what finds out whether it is up. Stop sends the stop request, if one is
// configured. Restart stops the instance (when the request names one) and
// starts a new one.
//
// Error classification of the control requests (start and stop):
//   - 2xx is success;
//   - 408 Request Timeout and 429 Too Many Requests are retryable: the
//     server itself says "later";
//   - any other 4xx, and 3xx (a redirect the client did not follow), is
//     driver.Permanent: a control URL that refuses is not fixed by
//     retrying. This includes a 404 on stop: the stop URL is then
//     misconfigured, and reporting it beats pretending the service stopped;
//   - 5xx, and transport errors (connection refused, reset, DNS, timeouts)
//     are retryable;
//   - a block that does not parse or a request that cannot be built (a bad
//     URL or method) is driver.Permanent.
//
// Redirects are followed as the http.Client does by default.
//
// Observe GETs the health URL with the health timeout (default 2s);
// 2xx is healthy. Consecutive failed checks (any other status, a transport
// error, the health timeout) are counted per workflow ID in the driver,
// and Observe reports driver.Crashed only when the count reaches
// failureThreshold (default 1); below it, driver.Running. A healthy check
// resets the count, and so do Start and Stop. The count lives in memory
// in the worker process that observes: after a worker restart (or when
// observes of one workflow land on different worker processes) it starts
// from zero, so a flapping service may take up to failureThreshold more
// checks to be declared down. When the observe's own context ends (the
// activity timed out or was cancelled) Observe returns its error and the
// check does not count.
package httpdrv

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"go.uber.org/zap"

	"github.com/steward-sh/steward/internal/driver"
	"github.com/steward-sh/steward/internal/spec"
)

// Timeouts of the client New makes when given none. Each request is
// bounded by its context: the action's timeout for start and stop, the
// health timeout for observe; a control request whose context has no
// deadline gets DefaultRequestTimeout.
const (
	DialTimeout           = 5 * time.Second
	TLSHandshakeTimeout   = 5 * time.Second
	IdleConnTimeout       = 90 * time.Second
	DefaultRequestTimeout = 60 * time.Second
)

// bodySnippet is how much of a failed response's body an error quotes;
// drainLimit is how much is read to let the connection be reused.
const (
	bodySnippet = 256
	drainLimit  = 64 << 10
)

// Request is a control request with its defaults filled in; secret
// references in its headers are resolved at every send.
type Request struct {
	Method  string
	URL     string
	Headers map[string]spec.Value
	Body    string
}

// Config is a worker's `http` block with defaults filled in.
type Config struct {
	Start            *Request // nil: none
	Stop             *Request // nil: none
	Reload           *Request // nil: none
	HealthURL        string
	HealthHeaders    map[string]spec.Value
	HealthTimeout    time.Duration
	FailureThreshold int
}

// ParseConfig decodes an http block strictly (spec.ParseHTTP), fills in
// defaults, and checks what the driver needs (a health URL, absolute URLs,
// a positive timeout and threshold).
func ParseConfig(m map[string]any) (Config, error) { return parseConfig(m, true) }

// parseConfig is ParseConfig; a job's block (needHealth false) is its
// start request alone.
func parseConfig(m map[string]any, needHealth bool) (Config, error) {
	raw, err := spec.ParseHTTP(m)
	if err != nil {
		return Config{}, fmt.Errorf("http: %w", err)
	}
	c := Config{HealthTimeout: spec.DefaultHealthTimeout, FailureThreshold: spec.DefaultFailureThreshold}
	if c.Start, err = resolve("start", raw.Start); err != nil {
		return Config{}, err
	}
	if c.Stop, err = resolve("stop", raw.Stop); err != nil {
		return Config{}, err
	}
	if c.Reload, err = resolve("reload", (*spec.HTTPRequest)(raw.Reload)); err != nil {
		return Config{}, err
	}
	if !needHealth && raw.Health == nil {
		if c.Start == nil {
			return Config{}, errors.New("http: an http job needs its start request")
		}
		return c, nil
	}
	if raw.Health == nil || raw.Health.URL == "" {
		return Config{}, errors.New("http: health.url is required")
	}
	if !spec.IsHTTPURL(raw.Health.URL) {
		return Config{}, fmt.Errorf("http: health.url %q is not an absolute http(s) URL", raw.Health.URL)
	}
	c.HealthURL, c.HealthHeaders = raw.Health.URL, raw.Health.Headers
	for k := range c.HealthHeaders {
		if !spec.IsHTTPToken(k) {
			return Config{}, fmt.Errorf("http: health.headers: %q is not a valid header name", k)
		}
	}
	if raw.Health.Timeout != nil {
		c.HealthTimeout = raw.Health.Timeout.D()
	}
	if c.HealthTimeout <= 0 {
		return Config{}, fmt.Errorf("http: health.timeout %s must be > 0", c.HealthTimeout)
	}
	if raw.Health.FailureThreshold != nil {
		c.FailureThreshold = *raw.Health.FailureThreshold
	}
	if c.FailureThreshold < 1 {
		return Config{}, fmt.Errorf("http: health.failureThreshold %d must be >= 1", c.FailureThreshold)
	}
	return c, nil
}

func resolve(name string, r *spec.HTTPRequest) (*Request, error) {
	if r == nil {
		return nil, nil
	}
	if r.URL == "" {
		return nil, fmt.Errorf("http: %s.url is required", name)
	}
	if !spec.IsHTTPURL(r.URL) {
		return nil, fmt.Errorf("http: %s.url %q is not an absolute http(s) URL", name, r.URL)
	}
	m := r.Method
	if m == "" {
		m = spec.DefaultHTTPMethod
	}
	if !spec.IsHTTPToken(m) {
		return nil, fmt.Errorf("http: %s.method %q is not a valid HTTP method", name, m)
	}
	for k := range r.Headers {
		if !spec.IsHTTPToken(k) {
			return nil, fmt.Errorf("http: %s.headers: %q is not a valid header name", name, k)
		}
	}
	return &Request{Method: m, URL: r.URL, Headers: r.Headers, Body: r.Body}, nil
}

// Driver is the http driver. Its zero value is not usable: call New.
type Driver struct {
	// Log receives a line per failed health check (default: none). Set it
	// before the first action.
	Log *zap.Logger

	// CheckRedirect, when set, is asked of each redirect a request of the
	// driver's own client would follow (a host's policy: each hop must be
	// a URL it lists, as the first was); its error fails the action for
	// good. Set it before the first action.
	CheckRedirect func(req *http.Request, via []*http.Request) error

	// ReadFile reads the secret files its headers name (a host's policy:
	// only those it lists, by the path it checked; nil: any). Set it
	// before the first action.
	ReadFile driver.FileReader

	client *http.Client

	mu       sync.Mutex
	failures map[string]int // consecutive failed health checks, by workflow ID
}

// New returns an http driver that sends its requests with client; nil
// gives a client of its own, with the timeouts above.
func New(client *http.Client) *Driver {
	d := &Driver{Log: zap.NewNop(), failures: map[string]int{}}
	if client == nil {
		client = defaultClient()
		client.CheckRedirect = d.checkRedirect
	}
	d.client = client
	return d
}

// redirectRefused is a redirect CheckRedirect refused.
type redirectRefused struct{ err error }

func (r *redirectRefused) Error() string { return r.err.Error() }
func (r *redirectRefused) Unwrap() error { return r.err }

// checkRedirect follows as net/http does (up to 10 redirects) what
// CheckRedirect allows.
func (d *Driver) checkRedirect(req *http.Request, via []*http.Request) error {
	if len(via) >= 10 {
		return errors.New("stopped after 10 redirects")
	}
	if d.CheckRedirect != nil {
		if err := d.CheckRedirect(req, via); err != nil {
			return &redirectRefused{err}
		}
	}
	return nil
}

func defaultClient() *http.Client {
	return &http.Client{
		Transport: &http.Transport{
			Proxy:                 http.ProxyFromEnvironment,
			DialContext:           (&net.Dialer{Timeout: DialTimeout, KeepAlive: 30 * time.Second}).DialContext,
			ForceAttemptHTTP2:     true,
			MaxIdleConns:          100,
			MaxIdleConnsPerHost:   4,
			IdleConnTimeout:       IdleConnTimeout,
			TLSHandshakeTimeout:   TLSHandshakeTimeout,
			ExpectContinueTimeout: time.Second,
		},
	}
}

// Start sends the start request (if any) and returns a new instance.
func (d *Driver) Start(ctx context.Context, r driver.Request) (string, error) {
	c, err := parseConfig(r.Spec.HTTP, !r.Spec.IsJob()) // a job's run: its start request alone
	if err != nil {
		return "", driver.Permanent(err)
	}
	return d.start(ctx, r.WorkflowID, c)
}

// Stop sends the stop request (if any).
func (d *Driver) Stop(ctx context.Context, r driver.Request) error {
	c, err := ParseConfig(r.Spec.HTTP)
	if err != nil {
		return driver.Permanent(err)
	}
	return d.stop(ctx, r.WorkflowID, c)
}

// Restart stops the instance (when r names one) and starts a new one.
func (d *Driver) Restart(ctx context.Context, r driver.Request) (string, error) {
	c, err := ParseConfig(r.Spec.HTTP)
	if err != nil {
		return "", driver.Permanent(err)
	}
	if r.Instance != "" {
		if err := d.stop(ctx, r.WorkflowID, c); err != nil {
			return "", err
		}
	}
	return d.start(ctx, r.WorkflowID, c)
}

// Reload sends the reload request; a 2xx answer is success.
func (d *Driver) Reload(ctx context.Context, r driver.Request) error {
	c, err := ParseConfig(r.Spec.HTTP)
	if err != nil {
		return driver.Permanent(err)
	}
	if c.Reload == nil {
		return driver.Permanent(errors.New("http: no reload configured (http.reload)"))
	}
	return d.send(ctx, "reload", c.Reload)
}

// Observe checks the health URL; see the package comment for how failed
// checks are counted.
func (d *Driver) Observe(ctx context.Context, r driver.Request) (driver.Observation, error) {
	c, err := ParseConfig(r.Spec.HTTP)
	if err != nil {
		return "", driver.Permanent(err)
	}
	herr := d.check(ctx, c)
	if herr == nil {
		d.reset(r.WorkflowID)
		return driver.Running, nil
	}
	if err := ctx.Err(); err != nil {
		// Our own deadline or cancellation, not the service's health.
		return "", fmt.Errorf("http: observe abandoned: %w", err)
	}
	d.mu.Lock()
	if _, counted := d.failures[r.WorkflowID]; !counted && len(d.failures) >= maxCounted {
		for id := range d.failures { // one other's count goes (any)
			delete(d.failures, id)
			break
		}
	}
	d.failures[r.WorkflowID]++
	n := d.failures[r.WorkflowID]
	d.mu.Unlock()
	d.Log.Info("http: health check failed", zap.String("workflow", r.WorkflowID),
		zap.Int("consecutive", n), zap.Int("threshold", c.FailureThreshold), zap.Error(herr))
	if n >= c.FailureThreshold {
		return driver.Crashed, nil
	}
	return driver.Running, nil
}

// maxCounted bounds the workflows whose failed checks a driver counts.
// An http action runs on whichever worker process of the pool takes it,
// so each process counts the services whose checks it ran; a service
// deleted while failing (or a workflow started by hand naming made-up
// services) had its count kept for as long as the process ran. Past the
// bound one count is forgotten: that service's next failed check counts
// from one again.
var maxCounted = 10_000

// Failures returns the count of consecutive failed health checks of a
// workflow.
func (d *Driver) Failures(workflowID string) int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.failures[workflowID]
}

// Close closes the client's idle connections. The driver stays usable.
func (d *Driver) Close() {
	d.client.CloseIdleConnections()
}

func (d *Driver) start(ctx context.Context, wfID string, c Config) (string, error) {
	if c.Start != nil {
		if err := d.send(ctx, "start", c.Start); err != nil {
			return "", err
		}
	} else if err := ctx.Err(); err != nil {
		return "", err
	}
	d.reset(wfID)
	return fmt.Sprintf("http/%d@%s", time.Now().UnixNano(), wfID), nil
}

func (d *Driver) stop(ctx context.Context, wfID string, c Config) error {
	if c.Stop != nil {
		if err := d.send(ctx, "stop", c.Stop); err != nil {
			return err
		}
	}
	d.reset(wfID)
	return nil
}

func (d *Driver) reset(wfID string) {
	d.mu.Lock()
	delete(d.failures, wfID)
	d.mu.Unlock()
}

// send makes a control request and classifies its outcome.
func (d *Driver) send(ctx context.Context, action string, rq *Request) error {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, DefaultRequestTimeout)
		defer cancel()
	}
	var body io.Reader
	if rq.Body != "" {
		body = strings.NewReader(rq.Body)
	}
	req, err := http.NewRequestWithContext(ctx, rq.Method, rq.URL, body)
	if err != nil {
		return driver.Permanent(fmt.Errorf("http: %s request: %w", action, err))
	}
	secrets, err := setHeaders(req, "http."+action+".headers", rq.Headers, d.ReadFile)
	if err != nil {
		return fmt.Errorf("http: %w", err)
	}
	resp, err := d.client.Do(req)
	if err != nil {
		// net/http quotes the URL (the spec's) and never a header's value.
		err = fmt.Errorf("http: %s: %w", action, err)
		if refused := new(redirectRefused); errors.As(err, &refused) {
			return driver.Permanent(err)
		}
		return err
	}
	snippet := finish(resp)
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		return nil
	}
	// The answer is the server's: it may echo a secret the request sent.
	err = fmt.Errorf("http: %s: %s %s: %s", action, rq.Method, rq.URL, driver.Redact(resp.Status+snippet, secrets))
	if Retryable(resp.StatusCode) {
		return err
	}
	return driver.Permanent(err)
}

// setHeaders resolves headers (secret references read now, on this host)
// and sets them on req; "Host" sets the request's host. A reference that
// cannot be resolved is a Permanent error naming it (what.NAME). It
// returns the values that came from references, for driver.Redact. read
// reads the secret files.
func setHeaders(req *http.Request, what string, headers map[string]spec.Value, read driver.FileReader) ([]driver.Secret, error) {
	hs, err := driver.ResolveAll(what, headers, read)
	if err != nil {
		return nil, err
	}
	var secrets []driver.Secret
	for k, v := range hs {
		if headers[k].IsRef() {
			secrets = append(secrets, driver.Secret{Value: v, Name: "(" + what + "." + k + ")"})
		}
		if strings.EqualFold(k, "Host") {
			req.Host = v
			continue
		}
		req.Header.Set(k, v)
	}
	return secrets, nil
}

// Retryable reports whether a non-2xx status of a control request may
// succeed on a later try.
func Retryable(code int) bool {
	switch {
	case code == http.StatusRequestTimeout, code == http.StatusTooManyRequests:
		return true
	case code >= 500:
		return true
	case code < 200: // an informational status as final answer: odd, try again
		return true
	}
	return false
}

// check makes one health check: nil when the service answers 2xx within
// the health timeout.
func (d *Driver) check(ctx context.Context, c Config) error {
	ctx, cancel := context.WithTimeout(ctx, c.HealthTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.HealthURL, nil)
	if err != nil {
		return err
	}
	secrets, err := setHeaders(req, "http.health.headers", c.HealthHeaders, d.ReadFile)
	if err != nil {
		return err
	}
	resp, err := d.client.Do(req)
	if err != nil {
		return err
	}
	snippet := finish(resp)
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		return nil
	}
	return fmt.Errorf("GET %s: %s", c.HealthURL, driver.Redact(resp.Status+snippet, secrets))
}

// finish reads the start of a response's body (quoted in errors as ": ..."
// when not empty), drains a bounded rest so the connection can be reused,
// and closes it.
func finish(resp *http.Response) string {
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, bodySnippet))
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, drainLimit))
	s := strings.TrimSpace(strings.ToValidUTF8(string(b), string(utf8.RuneError)))
	if s == "" {
		return ""
	}
	return ": " + s
}
