package activities

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"

	"github.com/steward-sh/steward/internal/admission"
	"github.com/steward-sh/steward/internal/spec"
)

// Regression (attack review): a host's policy checked a notification's
// webhook, but the request followed any redirect it was answered, to a
// host the policy does not list, with every header but Authorization and
// Cookie (a secret header among them). Each hop must be a URL the policy
// lists; a redirect elsewhere fails the notification for good, and the
// unlisted host is never reached.
func TestNotify_ARedirectOffThePolicysURLsIsRefused(t *testing.T) {
	var reached atomic.Int32
	elsewhere := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reached.Add(1)
	}))
	defer elsewhere.Close()
	listed := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/hooks/moved" {
			http.Redirect(w, r, "/hooks/here", http.StatusTemporaryRedirect) // within the listed prefix: followed
			return
		}
		if r.URL.Path == "/hooks/here" {
			return
		}
		http.Redirect(w, r, elsewhere.URL+"/steal", http.StatusTemporaryRedirect)
	}))
	defer listed.Close()
	policy, err := admission.ParsePolicy([]byte("urls: [" + listed.URL + "/hooks/]\nsecretEnv: [STEWARD_TEST_KEY]\n"))
	require.NoError(t, err)
	t.Setenv("STEWARD_TEST_KEY", "k3y")
	c := &Control{Guard: &admission.Guard{Policy: policy}}
	task := func(url string) NotificationTask {
		return NotificationTask{Notification: Notification{Path: "t/web", Event: spec.EventFailed}, Webhook: spec.Literal(url),
			Headers: map[string]spec.Value{"X-Api-Key": spec.EnvRef("STEWARD_TEST_KEY")}, Key: "k"}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	require.NoError(t, c.Notify(ctx, task(listed.URL+"/hooks/moved")), "a redirect within the listed URLs is followed")
	err = c.Notify(ctx, task(listed.URL+"/hooks/a"))
	require.Error(t, err)
	var app *temporal.ApplicationError
	require.ErrorAs(t, err, &app)
	require.True(t, app.NonRetryable(), "%v", err)
	require.Equal(t, ErrRefused, app.Type())
	require.Contains(t, err.Error(), "a redirect to "+elsewhere.URL+" is not allowed")
	require.Zero(t, reached.Load(), "the host the policy does not list was never reached")

	open := &Control{} // no policy: an open host follows as net/http does
	require.NoError(t, open.Notify(ctx, task(listed.URL+"/hooks/a")))
	require.EqualValues(t, 1, reached.Load())
}
