package encryption

import (
	"crypto/subtle"
	"net/http"
	"strings"

	"go.temporal.io/sdk/converter"
)

// Handler serves Temporal's remote codec protocol (POST .../encode and
// .../decode, a JSON body of payloads), so that the Web UI and the
// `temporal` CLI (--codec-endpoint) show plain text to those who reach it.
// Payloads the codec did not encrypt pass through unchanged. Browsers get
// CORS answers for uiOrigins (the Web UI's origins, comma-separated; ""
// allows none, "*" any), including the preflight the UI sends with its
// X-Namespace header (and Authorization, when it passes a token).
//
// With a token, every request but a preflight (OPTIONS, which a browser
// sends without credentials) needs `Authorization: Bearer TOKEN`, compared
// in constant time; others get 401, with the CORS headers, so the UI can
// tell.
func Handler(c *Codec, uiOrigins, token string) http.Handler {
	codec := converter.NewPayloadCodecHTTPHandler(c)
	allowed := map[string]bool{}
	for _, o := range strings.Split(uiOrigins, ",") {
		if o = strings.TrimSpace(o); o != "" {
			allowed[o] = true
		}
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if origin := r.Header.Get("Origin"); origin != "" && (allowed["*"] || allowed[origin]) {
			h := w.Header()
			h.Set("Access-Control-Allow-Origin", origin)
			h.Set("Access-Control-Allow-Credentials", "true")
			h.Set("Access-Control-Allow-Methods", "POST, OPTIONS")
			// Authorization-Extras: the UI's ID token, sent beside its
			// access token (codec.passAccessToken).
			h.Set("Access-Control-Allow-Headers", "Content-Type, X-Namespace, Authorization, Authorization-Extras")
			h.Set("Access-Control-Max-Age", "600")
			h.Add("Vary", "Origin")
		}
		if r.Method == http.MethodOptions {
			w.WriteHeader(http.StatusOK)
			return
		}
		if token != "" && !bearer(r, token) {
			w.Header().Set("WWW-Authenticate", `Bearer realm="steward codec server"`)
			http.Error(w, "a valid token is required (Authorization: Bearer TOKEN)", http.StatusUnauthorized)
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, MaxRequestBytes)
		codec.ServeHTTP(w, r)
	})
}

// MaxRequestBytes bounds a request's body: the SDK's handler reads it
// whole, so an unbounded one (a cross-site POST from any web page, where
// no token is set) ran the server out of memory. A page of the Web UI's
// payloads is far below it (a payload is at most Temporal's 2 MiB).
const MaxRequestBytes = 64 << 20

// bearer tells whether r carries `Authorization: Bearer token`.
func bearer(r *http.Request, token string) bool {
	got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	return ok && subtle.ConstantTimeCompare([]byte(strings.TrimSpace(got)), []byte(token)) == 1
}
