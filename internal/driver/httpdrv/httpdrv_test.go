package httpdrv

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest"

	"github.com/steward-sh/steward/internal/driver"
	"github.com/steward-sh/steward/internal/spec"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// seen is one request a test server received.
type seen struct {
	Method string
	Path   string
	Host   string
	Header http.Header
	Body   string
}

// server is a real local HTTP server whose answer per path the test sets.
type server struct {
	*httptest.Server
	mu     sync.Mutex
	got    []seen
	status map[string]int           // by path; default 200
	delay  map[string]time.Duration // by path: answer after this long (or when the client gives up)
}

func newServer(t *testing.T) *server {
	t.Helper()
	s := &server{status: map[string]int{}, delay: map[string]time.Duration{}}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		s.mu.Lock()
		s.got = append(s.got, seen{Method: r.Method, Path: r.URL.Path, Host: r.Host, Header: r.Header.Clone(), Body: string(b)})
		code, ok := s.status[r.URL.Path]
		delay := s.delay[r.URL.Path]
		s.mu.Unlock()
		if delay > 0 {
			select {
			case <-time.After(delay):
			case <-r.Context().Done():
				return
			}
		}
		if !ok {
			code = http.StatusOK
		}
		w.WriteHeader(code)
		_, _ = io.WriteString(w, "answer from "+r.URL.Path)
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *server) set(path string, code int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.status[path] = code
}

func (s *server) setDelay(path string, d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.delay[path] = d
}

func (s *server) requests() []seen {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]seen(nil), s.got...)
}

func newDriver(t *testing.T) *Driver {
	t.Helper()
	d := New(nil)
	d.Log = zaptest.NewLogger(t)
	t.Cleanup(d.Close)
	return d
}

func req(wfID string, block map[string]any) driver.Request {
	return driver.Request{
		WorkflowID: wfID,
		Path:       wfID,
		Spec:       spec.Node{Name: "svc", Kind: spec.KindHTTP, HTTP: block},
	}
}

// block is an http block with a start and stop request and a health URL on
// s.
func block(s *server) map[string]any {
	return map[string]any{
		"start":  map[string]any{"url": s.URL + "/start"},
		"stop":   map[string]any{"url": s.URL + "/stop"},
		"health": map[string]any{"url": s.URL + "/health"},
	}
}

func ctxT(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

func TestStartSuccess(t *testing.T) {
	s := newServer(t)
	d := newDriver(t)
	id, err := d.Start(ctxT(t, 5*time.Second), req("plant/web", block(s)))
	require.NoError(t, err)
	require.Regexp(t, `^http/\d+@plant/web$`, id)
	got := s.requests()
	require.Len(t, got, 1)
	require.Equal(t, "POST", got[0].Method) // the default
	require.Equal(t, "/start", got[0].Path)
}

func TestStartStatusClassification(t *testing.T) {
	for _, tc := range []struct {
		code      int
		ok        bool
		permanent bool
	}{
		{200, true, false},
		{201, true, false},
		{204, true, false},
		{400, false, true},
		{401, false, true},
		{403, false, true},
		{404, false, true},
		{405, false, true},
		{408, false, false},
		{429, false, false},
		{500, false, false},
		{502, false, false},
		{503, false, false},
	} {
		t.Run(http.StatusText(tc.code), func(t *testing.T) {
			s := newServer(t)
			s.set("/start", tc.code)
			d := newDriver(t)
			id, err := d.Start(ctxT(t, 5*time.Second), req("wf", block(s)))
			if tc.ok {
				require.NoError(t, err)
				require.NotEmpty(t, id)
				return
			}
			require.Error(t, err)
			require.Empty(t, id)
			require.Equal(t, tc.permanent, driver.IsPermanent(err), "%v", err)
			require.Contains(t, err.Error(), http.StatusText(tc.code))
			require.Contains(t, err.Error(), "answer from /start") // the body is quoted
		})
	}
}

func TestStartConnectionRefusedIsRetryable(t *testing.T) {
	s := newServer(t)
	b := block(s)
	s.Close() // nothing listens there any more
	d := newDriver(t)
	_, err := d.Start(ctxT(t, 5*time.Second), req("wf", b))
	require.Error(t, err)
	require.False(t, driver.IsPermanent(err), "%v", err)
	require.Contains(t, err.Error(), "refused")
}

func TestStartTimeoutIsRetryable(t *testing.T) {
	s := newServer(t)
	s.setDelay("/start", 10*time.Second)
	d := newDriver(t)
	begin := time.Now()
	_, err := d.Start(ctxT(t, 200*time.Millisecond), req("wf", block(s)))
	require.Error(t, err)
	require.Less(t, time.Since(begin), 5*time.Second, "the context bounds the request")
	require.False(t, driver.IsPermanent(err), "%v", err)
	require.True(t, errors.Is(err, context.DeadlineExceeded), "%v", err)
}

func TestStartSendsMethodHeadersBody(t *testing.T) {
	s := newServer(t)
	d := newDriver(t)
	b := block(s)
	b["start"] = map[string]any{
		"method":  "PUT",
		"url":     s.URL + "/start?x=1",
		"headers": map[string]string{"Authorization": "Bearer t0k", "Content-Type": "application/json", "Host": "svc.example"},
		"body":    `{"replicas":1}`,
	}
	_, err := d.Start(ctxT(t, 5*time.Second), req("wf", b))
	require.NoError(t, err)
	got := s.requests()
	require.Len(t, got, 1)
	require.Equal(t, "PUT", got[0].Method)
	require.Equal(t, "/start", got[0].Path)
	require.Equal(t, "Bearer t0k", got[0].Header.Get("Authorization"))
	require.Equal(t, "application/json", got[0].Header.Get("Content-Type"))
	require.Equal(t, "svc.example", got[0].Host)
	require.Equal(t, `{"replicas":1}`, got[0].Body)
}

// Header values may be secret references, resolved at every request: from
// a file on this host, from the worker's environment; the health check
// takes headers too. A reference that cannot be resolved fails the action
// for good, naming it and no value.
func TestHeadersFromSecretReferences(t *testing.T) {
	s := newServer(t)
	d := newDriver(t)
	token := filepath.Join(t.TempDir(), "token")
	require.NoError(t, os.WriteFile(token, []byte("Bearer from-file\n"), 0o600))
	t.Setenv("STEWARD_TEST_HEADER", "from-env")
	b := block(s)
	b["start"] = map[string]any{"url": s.URL + "/start", "headers": map[string]any{
		"Authorization": map[string]any{"file": token}, "X-Key": map[string]any{"env": "STEWARD_TEST_HEADER"}}}
	b["health"] = map[string]any{"url": s.URL + "/health", "headers": map[string]any{"X-Key": map[string]any{"env": "STEWARD_TEST_HEADER"}}}
	_, err := d.Start(ctxT(t, 5*time.Second), req("wf", b))
	require.NoError(t, err)
	_, err = d.Observe(ctxT(t, 5*time.Second), req("wf", b))
	require.NoError(t, err)
	got := s.requests()
	require.GreaterOrEqual(t, len(got), 2)
	require.Equal(t, "Bearer from-file", got[0].Header.Get("Authorization"))
	require.Equal(t, "from-env", got[0].Header.Get("X-Key"))
	require.Equal(t, "/health", got[1].Path)
	require.Equal(t, "from-env", got[1].Header.Get("X-Key"))

	require.NoError(t, os.Remove(token))
	_, err = d.Start(ctxT(t, 5*time.Second), req("wf", b))
	require.Error(t, err)
	require.True(t, driver.IsPermanent(err), "%v", err)
	require.Contains(t, err.Error(), "http.start.headers.Authorization: secret file "+token+": no such file")
	require.NotContains(t, err.Error(), "from-file")
}

func TestStartWithoutRequestDoesNoIO(t *testing.T) {
	s := newServer(t)
	d := newDriver(t)
	b := map[string]any{"health": map[string]any{"url": s.URL + "/health"}}
	id, err := d.Start(ctxT(t, 5*time.Second), req("wf", b))
	require.NoError(t, err)
	require.Regexp(t, `^http/\d+@wf$`, id)
	require.NoError(t, d.Stop(ctxT(t, 5*time.Second), req("wf", b)))
	require.Empty(t, s.requests())

	// A context already done still fails the start.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = d.Start(ctx, req("wf", b))
	require.ErrorIs(t, err, context.Canceled)
}

func TestBadBlockIsPermanent(t *testing.T) {
	d := newDriver(t)
	ctx := ctxT(t, 5*time.Second)
	for name, b := range map[string]map[string]any{
		"nil":           nil,
		"no health":     {"start": map[string]any{"url": "http://127.0.0.1:1/"}},
		"unknown field": {"health": map[string]any{"url": "http://127.0.0.1:1/"}, "bogus": 1},
		"relative url":  {"start": map[string]any{"url": "/start"}, "health": map[string]any{"url": "http://127.0.0.1:1/"}},
		"bad method":    {"start": map[string]any{"url": "http://127.0.0.1:1/", "method": "GE T"}, "health": map[string]any{"url": "http://127.0.0.1:1/"}},
	} {
		t.Run(name, func(t *testing.T) {
			r := req("wf", b)
			_, err := d.Start(ctx, r)
			require.True(t, driver.IsPermanent(err), "start: %v", err)
			require.True(t, driver.IsPermanent(d.Stop(ctx, r)), "stop")
			_, err = d.Restart(ctx, r)
			require.True(t, driver.IsPermanent(err), "restart: %v", err)
			_, err = d.Observe(ctx, r)
			require.True(t, driver.IsPermanent(err), "observe: %v", err)
		})
	}
}

func TestStop(t *testing.T) {
	s := newServer(t)
	d := newDriver(t)
	b := block(s)
	b["stop"] = map[string]any{"method": "DELETE", "url": s.URL + "/stop", "body": "bye"}
	r := req("wf", b)
	r.Instance = "http/1@wf"
	require.NoError(t, d.Stop(ctxT(t, 5*time.Second), r))
	got := s.requests()
	require.Len(t, got, 1)
	require.Equal(t, "DELETE", got[0].Method)
	require.Equal(t, "/stop", got[0].Path)
	require.Equal(t, "bye", got[0].Body)

	s.set("/stop", http.StatusNotFound)
	err := d.Stop(ctxT(t, 5*time.Second), r)
	require.True(t, driver.IsPermanent(err), "a 404 on stop is permanent: %v", err)

	s.set("/stop", http.StatusServiceUnavailable)
	err = d.Stop(ctxT(t, 5*time.Second), r)
	require.Error(t, err)
	require.False(t, driver.IsPermanent(err), "%v", err)
}

func TestRestart(t *testing.T) {
	s := newServer(t)
	d := newDriver(t)
	r := req("wf", block(s))
	first, err := d.Start(ctxT(t, 5*time.Second), r)
	require.NoError(t, err)

	r.Instance = first
	second, err := d.Restart(ctxT(t, 5*time.Second), r)
	require.NoError(t, err)
	require.NotEqual(t, first, second)
	var paths []string
	for _, g := range s.requests() {
		paths = append(paths, g.Path)
	}
	require.Equal(t, []string{"/start", "/stop", "/start"}, paths)

	// No known instance: nothing to stop.
	r.Instance = ""
	_, err = d.Restart(ctxT(t, 5*time.Second), r)
	require.NoError(t, err)
	require.Len(t, s.requests(), 4)

	// A failed stop fails the restart, classified as the stop was.
	r.Instance = second
	s.set("/stop", http.StatusForbidden)
	_, err = d.Restart(ctxT(t, 5*time.Second), r)
	require.True(t, driver.IsPermanent(err), "%v", err)
	require.Len(t, s.requests(), 5, "no start after a failed stop")
}

func TestObserveHealthy(t *testing.T) {
	s := newServer(t)
	d := newDriver(t)
	obs, err := d.Observe(ctxT(t, 5*time.Second), req("wf", block(s)))
	require.NoError(t, err)
	require.Equal(t, driver.Running, obs)
	got := s.requests()
	require.Len(t, got, 1)
	require.Equal(t, "GET", got[0].Method)
	require.Equal(t, "/health", got[0].Path)
}

func TestObserveFailureThreshold(t *testing.T) {
	s := newServer(t)
	d := newDriver(t)
	b := block(s)
	b["health"] = map[string]any{"url": s.URL + "/health", "failureThreshold": 3}
	r := req("wf", b)
	other := req("other", b) // counted apart
	ctx := ctxT(t, 10*time.Second)
	observe := func(r driver.Request) driver.Observation {
		t.Helper()
		obs, err := d.Observe(ctx, r)
		require.NoError(t, err)
		return obs
	}

	s.set("/health", http.StatusServiceUnavailable)
	require.Equal(t, driver.Running, observe(r))
	require.Equal(t, driver.Running, observe(r))
	require.Equal(t, driver.Running, observe(other))
	require.Equal(t, driver.Crashed, observe(r))
	require.Equal(t, driver.Crashed, observe(r), "stays down while it fails")
	require.Equal(t, 4, d.Failures("wf"))
	require.Equal(t, 1, d.Failures("other"))

	// One healthy check resets the count.
	s.set("/health", http.StatusOK)
	require.Equal(t, driver.Running, observe(r))
	require.Equal(t, 0, d.Failures("wf"))
	s.set("/health", http.StatusInternalServerError)
	require.Equal(t, driver.Running, observe(r))
	require.Equal(t, driver.Running, observe(r))
	require.Equal(t, driver.Crashed, observe(r))

	// A new start begins a fresh count.
	_, err := d.Start(ctx, r)
	require.NoError(t, err)
	require.Equal(t, 0, d.Failures("wf"))
	require.Equal(t, driver.Running, observe(r))
}

func TestObserveDefaultThresholdIsOne(t *testing.T) {
	s := newServer(t)
	d := newDriver(t)
	s.set("/health", http.StatusNotFound)
	obs, err := d.Observe(ctxT(t, 5*time.Second), req("wf", block(s)))
	require.NoError(t, err)
	require.Equal(t, driver.Crashed, obs)
}

func TestObserveHealthTimeoutIsAFailure(t *testing.T) {
	s := newServer(t)
	s.setDelay("/health", 10*time.Second)
	d := newDriver(t)
	b := block(s)
	b["health"] = map[string]any{"url": s.URL + "/health", "timeout": "100ms"}
	begin := time.Now()
	obs, err := d.Observe(ctxT(t, 5*time.Second), req("wf", b))
	require.NoError(t, err)
	require.Equal(t, driver.Crashed, obs)
	require.Less(t, time.Since(begin), 3*time.Second)
}

func TestObserveConnectionRefusedIsAFailure(t *testing.T) {
	s := newServer(t)
	b := block(s)
	s.Close()
	d := newDriver(t)
	obs, err := d.Observe(ctxT(t, 5*time.Second), req("wf", b))
	require.NoError(t, err)
	require.Equal(t, driver.Crashed, obs)
}

func TestObserveOwnDeadlineDoesNotCount(t *testing.T) {
	s := newServer(t)
	s.setDelay("/health", 10*time.Second)
	d := newDriver(t)
	b := block(s)
	b["health"] = map[string]any{"url": s.URL + "/health", "timeout": "5s"}
	_, err := d.Observe(ctxT(t, 100*time.Millisecond), req("wf", b))
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.False(t, driver.IsPermanent(err))
	require.Equal(t, 0, d.Failures("wf"))
}

func TestProvidedClientIsUsed(t *testing.T) {
	s := newServer(t)
	var used bool
	var mu sync.Mutex
	c := &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		mu.Lock()
		used = true
		mu.Unlock()
		return http.DefaultTransport.RoundTrip(r)
	})}
	d := New(c)
	defer d.Close()
	defer http.DefaultTransport.(*http.Transport).CloseIdleConnections()
	_, err := d.Start(ctxT(t, 5*time.Second), req("wf", block(s)))
	require.NoError(t, err)
	mu.Lock()
	require.True(t, used)
	mu.Unlock()
}

// roundTripFunc wraps the real transport to see that the client is used
// (the request still goes over the network to the test server).
type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func TestParseConfigDefaults(t *testing.T) {
	c, err := ParseConfig(map[string]any{
		"start":  map[string]any{"url": "http://x/start"},
		"health": map[string]any{"url": "https://x/health"},
	})
	require.NoError(t, err)
	require.Equal(t, "POST", c.Start.Method)
	require.Nil(t, c.Stop)
	require.Equal(t, 2*time.Second, c.HealthTimeout)
	require.Equal(t, 1, c.FailureThreshold)

	for name, b := range map[string]map[string]any{
		"health url missing": {"health": map[string]any{}},
		"health url bad":     {"health": map[string]any{"url": "ftp://x/"}},
		"stop url missing":   {"stop": map[string]any{}, "health": map[string]any{"url": "http://x/"}},
		"zero timeout":       {"health": map[string]any{"url": "http://x/", "timeout": "0s"}},
		"zero threshold":     {"health": map[string]any{"url": "http://x/", "failureThreshold": 0}},
	} {
		_, err := ParseConfig(b)
		require.Error(t, err, name)
		require.True(t, strings.HasPrefix(err.Error(), "http: "), name)
	}
}

func TestStartWithoutDeadline(t *testing.T) {
	s := newServer(t)
	d := newDriver(t)
	// No deadline: the request gets DefaultRequestTimeout and still goes out.
	_, err := d.Start(context.Background(), req("wf", block(s)))
	require.NoError(t, err)
	require.Len(t, s.requests(), 1)
}

// Finding 5: a server that echoes the secret a request sent (its token in
// a 401's body, or in a failed health check's) does not put it in the
// action's error nor in the health log line: the error names the header's
// reference instead.
func TestErrorsDoNotQuoteAHeadersSecret(t *testing.T) {
	const secret = "s3cr3t-VALUE-4242"
	echo := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "bad token "+r.Header.Get("Authorization")+" and "+r.Header.Get("X-Key"), http.StatusUnauthorized)
	}))
	defer echo.Close()
	token := filepath.Join(t.TempDir(), "token")
	require.NoError(t, os.WriteFile(token, []byte("Bearer "+secret+"\n"), 0o600))
	t.Setenv("STEWARD_TEST_HEADER", secret+"-env")
	headers := map[string]any{"Authorization": map[string]any{"file": token}, "X-Key": map[string]any{"env": "STEWARD_TEST_HEADER"}}
	b := map[string]any{
		"start":  map[string]any{"url": echo.URL + "/start", "headers": headers},
		"health": map[string]any{"url": echo.URL + "/health", "headers": headers},
	}
	var logged strings.Builder
	d := New(nil)
	d.Log = zap.New(zapcore.NewCore(zapcore.NewJSONEncoder(zap.NewProductionEncoderConfig()), zapcore.AddSync(&logged), zap.DebugLevel))
	t.Cleanup(d.Close)

	_, err := d.Start(ctxT(t, 5*time.Second), req("wf", b))
	require.Error(t, err)
	require.True(t, driver.IsPermanent(err))
	require.NotContains(t, err.Error(), secret)
	require.Equal(t, "http: start: POST "+echo.URL+"/start: 401 Unauthorized: bad token (http.start.headers.Authorization) and (http.start.headers.X-Key)", err.Error())

	obs, err := d.Observe(ctxT(t, 5*time.Second), req("wf", b))
	require.NoError(t, err)
	require.Equal(t, driver.Crashed, obs)
	require.Contains(t, logged.String(), "health check failed")
	require.Contains(t, logged.String(), "(http.health.headers.Authorization)")
	require.NotContains(t, logged.String(), secret)
}

func TestRedact(t *testing.T) {
	secrets := []driver.Secret{{Value: "http://10.0.0.5:8080/hooks/T0KEN-abcdef", Name: "(webhook)"}, {Value: "10.0.0.5:8080", Name: "(host)"}, {Value: "abc", Name: "(short)"}}
	require.Equal(t, "Post (webhook): dial tcp (host): refused; abc stays",
		driver.Redact("Post http://10.0.0.5:8080/hooks/T0KEN-abcdef: dial tcp 10.0.0.5:8080: refused; abc stays", secrets),
		"the longest first; a value under 4 characters is left alone")
	require.Equal(t, "token (h) echoed", driver.Redact("token T0KEN-abcdef echoed", []driver.Secret{{Value: "Bearer T0KEN-abcdef", Name: "(h)"}}),
		"a long word of a value, alone")
}
