package activities

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/steward-sh/steward/internal/spec"
)

// secretValue is in every secret of these tests: an error that quotes one
// shows it.
const secretValue = "s3cr3t-VALUE-4242"

// requireNoSecret fails t if the secret shows in err, in any error of its chain, or
// in the failure Temporal records of it (what the history and the
// worker's log carry).
func requireNoSecret(t *testing.T, err error, what string) {
	t.Helper()
	require.Error(t, err, what)
	for e := err; e != nil; e = errors.Unwrap(e) {
		require.NotContains(t, e.Error(), secretValue, what)
	}
	f := temporal.GetDefaultFailureConverter().ErrorToFailure(err)
	b, merr := protojson.Marshal(f)
	require.NoError(t, merr)
	require.NotContains(t, string(b), secretValue, what)
}

// Finding 5: a webhook that is a secret reference is named by the
// reference in notify's errors, never by what it resolves to: not a valid
// URL, unreachable, or redirected; a header's secret is not quoted either.
func TestNotifyErrorsNameTheReferenceNotTheSecret(t *testing.T) {
	dir := t.TempDir()
	file := func(name, content string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(content), 0o600))
		return p
	}
	shadow := file("shadow", "root:$6$"+secretValue+":19000:0:99999:7:::\n")
	twoLines := file("two-lines", "http://hooks.example/"+secretValue+"\nsecond line\n")
	refused := file("refused", "http://127.0.0.1:1/hooks/"+secretValue+"\n")
	token := file("token", "Bearer "+secretValue+"\n")
	// A receiver that sends its caller to an address that refuses, with
	// the secret in the path.
	redirector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://127.0.0.1:1/"+secretValue, http.StatusTemporaryRedirect)
	}))
	defer redirector.Close()
	redirected := file("redirected", redirector.URL+"/hooks/"+secretValue)
	// A receiver that refuses and echoes the token it was sent.
	echo := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "bad token "+r.Header.Get("Authorization"), http.StatusUnauthorized)
	}))
	defer echo.Close()
	t.Setenv("STEWARD_TEST_HOOK", "http://"+secretValue+".invalid/hook")

	task := func(webhook spec.Value, headers map[string]spec.Value) NotificationTask {
		return NotificationTask{Notification: Notification{Path: "t/web", Event: spec.EventFailed}, Webhook: webhook, Headers: headers, Key: "k"}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c := &Control{}
	for name, tc := range map[string]struct {
		task NotificationTask
		want string
	}{
		"not a URL":       {task(spec.FileRef(shadow), nil), "notify: webhook {file: " + shadow + "}: not a valid http(s) URL"},
		"two lines":       {task(spec.FileRef(twoLines), nil), "notify: webhook {file: " + twoLines + "}: not a valid http(s) URL"},
		"refused":         {task(spec.FileRef(refused), nil), "notify failed: webhook {file: " + refused + "}: dial tcp (the host of webhook {file: " + refused + "}): connect: connection refused"},
		"redirected":      {task(spec.FileRef(redirected), nil), "notify failed: webhook {file: " + redirected + "}: dial tcp"},
		"unknown host":    {task(spec.EnvRef("STEWARD_TEST_HOOK"), nil), "notify failed: webhook {env: STEWARD_TEST_HOOK}: "},
		"echoed header":   {task(spec.Literal(echo.URL+"/hook"), map[string]spec.Value{"Authorization": spec.FileRef(token)}), "notify failed: webhook " + echo.URL + "/hook answered 401 Unauthorized"},
		"missing secret":  {task(spec.FileRef(filepath.Join(dir, "none")), nil), "notify.webhook: secret file " + filepath.Join(dir, "none") + ": no such file"},
		"literal refused": {task(spec.Literal("http://127.0.0.1:1/hook"), map[string]spec.Value{"Authorization": spec.FileRef(token)}), "notify failed: webhook http://127.0.0.1:1/hook: dial tcp 127.0.0.1:1: connect: connection refused"},
	} {
		err := c.Notify(ctx, tc.task)
		requireNoSecret(t, err, name)
		require.Contains(t, err.Error(), tc.want, name)
	}
}

// The same through Temporal's activity environment, with its log
// captured: neither the failure nor a log line quotes the secret.
func TestNotifyFailureAndLogCarryNoSecret(t *testing.T) {
	hook := filepath.Join(t.TempDir(), "hook")
	require.NoError(t, os.WriteFile(hook, []byte("https://hooks.example/services/"+secretValue+"\x7f\n"), 0o600))
	var logged bytes.Buffer
	var s testsuite.WorkflowTestSuite
	s.SetLogger(log.NewStructuredLogger(slog.New(slog.NewTextHandler(&logged, &slog.HandlerOptions{Level: slog.LevelDebug}))))
	env := s.NewTestActivityEnvironment()
	env.RegisterActivityWithOptions((&Control{}).Notify, activity.RegisterOptions{Name: NotifyName})
	_, err := env.ExecuteActivity(NotifyName, NotificationTask{Notification: Notification{Path: "t/web", Event: spec.EventFailed}, Webhook: spec.FileRef(hook), Key: "k"})
	requireNoSecret(t, err, "through the activity environment")
	require.Contains(t, err.Error(), "webhook {file: "+hook+"}: not a valid http(s) URL")
	require.Contains(t, logged.String(), "Activity error.", "the SDK logs the failure")
	require.Contains(t, logged.String(), "webhook {file: "+hook+"}", "by its reference")
	require.NotContains(t, logged.String(), secretValue)
}
