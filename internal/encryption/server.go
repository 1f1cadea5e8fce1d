package encryption

import (
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
// X-Namespace header.
func Handler(c *Codec, uiOrigins string) http.Handler {
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
			h.Set("Access-Control-Allow-Headers", "Content-Type, X-Namespace, Authorization")
			h.Add("Vary", "Origin")
		}
		if r.Method == http.MethodOptions {
			w.WriteHeader(http.StatusOK)
			return
		}
		codec.ServeHTTP(w, r)
	})
}
