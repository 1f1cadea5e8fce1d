package httpdrv

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/steward-sh/steward/internal/admission"
	"github.com/steward-sh/steward/internal/driver"
)

// Regression (attack review): an http worker's request followed any
// redirect its URL answered, so a host's policy ("urls") held the first
// hop only; a redirect reached an unlisted host with the request's
// headers. With CheckRedirect set (the worker sets its policy's), a hop
// off the listed URLs fails the action for good and is never sent.
func TestStart_ARedirectThePolicyRefusesIsNotFollowed(t *testing.T) {
	elsewhere := newServer(t)
	listed := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, elsewhere.URL+"/steal", http.StatusTemporaryRedirect)
	}))
	t.Cleanup(listed.Close)
	policy, err := admission.ParsePolicy([]byte("urls: [" + listed.URL + "/]\n"))
	require.NoError(t, err)
	d := newDriver(t)
	d.CheckRedirect = policy.Redirect
	_, err = d.Start(ctxT(t, 5*time.Second), req("plant/web", map[string]any{"start": map[string]any{"url": listed.URL + "/start"}, "health": map[string]any{"url": listed.URL + "/health"}}))
	require.Error(t, err)
	require.True(t, driver.IsPermanent(err), "refused for good: %v", err)
	var refusal *admission.Refusal
	require.True(t, errors.As(err, &refusal), "%v", err)
	require.Empty(t, elsewhere.requests(), "the unlisted host was never reached")

	open := newDriver(t) // no policy: followed as net/http does
	_, err = open.Start(ctxT(t, 5*time.Second), req("plant/web", map[string]any{"start": map[string]any{"url": listed.URL + "/start"}, "health": map[string]any{"url": listed.URL + "/health"}}))
	require.NoError(t, err)
	require.Len(t, elsewhere.requests(), 1)
}
