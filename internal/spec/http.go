package spec

import (
	"bytes"
	"encoding/json"
	"net/url"
	"strings"
	"time"
)

// Defaults of an http block.
const (
	// DefaultHTTPMethod is the method of a start or stop request that names
	// none.
	DefaultHTTPMethod = "POST"
	// DefaultHealthTimeout bounds one health check.
	DefaultHealthTimeout = 2 * time.Second
	// DefaultFailureThreshold is how many consecutive failed health checks
	// make the service count as down.
	DefaultFailureThreshold = 1
)

// HTTP is a worker's `http:` block (kind http): a service controlled over
// HTTP.
type HTTP struct {
	// Start is sent by the start action (none: starting is only bookkeeping,
	// for a service that runs anyway).
	Start *HTTPRequest `json:"start,omitempty"`
	// Stop is sent by the stop action (none: stopping does no I/O).
	Stop *HTTPRequest `json:"stop,omitempty"`
	// Health is checked by observe; required.
	Health *HTTPHealth `json:"health,omitempty"`
	// Reload is sent by `starter reload` (none: a reload is refused). A
	// URL alone is a POST of it; 2xx is success.
	Reload *HTTPReload `json:"reload,omitempty"`
}

// HTTPReload is an http service's reload request: written as a URL alone,
// or as a control request (method, url, headers, body).
type HTTPReload HTTPRequest

// UnmarshalJSON takes a URL string or a request object.
func (r *HTTPReload) UnmarshalJSON(b []byte) error {
	var url string
	if json.Unmarshal(b, &url) == nil {
		*r = HTTPReload{URL: url}
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var req HTTPRequest
	if err := dec.Decode(&req); err != nil {
		return err
	}
	*r = HTTPReload(req)
	return nil
}

// HTTPRequest is a control request (start or stop).
type HTTPRequest struct {
	// Method (default POST).
	Method string `json:"method,omitempty"`
	// URL, absolute, http or https.
	URL string `json:"url"`
	// Headers added to the request ("Host" sets the request's host), each
	// a literal or a secret reference ({file: PATH} or {env: NAME})
	// resolved on the host at every request.
	Headers map[string]Value `json:"headers,omitempty"`
	// Body sent as is (empty: none).
	Body string `json:"body,omitempty"`
}

// HTTPHealth is the health check of an http service: a GET of URL, healthy
// on 2xx.
type HTTPHealth struct {
	// URL, absolute, http or https.
	URL string `json:"url"`
	// Headers of the check, as a control request's.
	Headers map[string]Value `json:"headers,omitempty"`
	// Timeout of one check (a Go duration; default 2s).
	Timeout *Duration `json:"timeout,omitempty"`
	// FailureThreshold is how many consecutive failed checks make the
	// service count as down (default 1).
	FailureThreshold *int `json:"failureThreshold,omitempty"`
}

// ParseHTTP decodes an http block strictly: unknown fields (at any depth)
// and wrong types are errors. It does not fill in defaults or check values.
func ParseHTTP(m map[string]any) (HTTP, error) {
	return decodeBlock[HTTP](m, "http")
}

func (v *validator) http(path string, m map[string]any) { v.httpBlock(path, m, false) }

// httpBlock checks an http worker's block; a job's (job) is one request,
// its start, and needs no health.
func (v *validator) httpBlock(path string, m map[string]any, job bool) {
	if m == nil {
		if job {
			v.add(path, "required for an http job (its start: the request a run sends)")
			return
		}
		v.add(path, "required for kind http (at least health.url)")
		return
	}
	h, err := ParseHTTP(m)
	if err != nil {
		v.add(path, "%v", err)
		return
	}
	v.httpRequest(join(path, "start"), h.Start)
	v.httpRequest(join(path, "stop"), h.Stop)
	if h.Reload != nil {
		v.httpRequest(join(path, "reload"), (*HTTPRequest)(h.Reload))
	}
	hp := join(path, "health")
	if job {
		if h.Start == nil {
			v.add(join(path, "start"), "required for an http job (the request a run sends; a 2xx answer is its success)")
		}
		if h.Health == nil {
			return
		}
	}
	if h.Health == nil {
		v.add(join(hp, "url"), "required")
		return
	}
	v.httpURL(join(hp, "url"), h.Health.URL)
	if h.Health.Timeout != nil && h.Health.Timeout.D() <= 0 {
		v.add(join(hp, "timeout"), "must be > 0")
	}
	if h.Health.FailureThreshold != nil && *h.Health.FailureThreshold < 1 {
		v.add(join(hp, "failureThreshold"), "must be >= 1")
	}
	v.headers(join(hp, "headers"), h.Health.Headers)
}

func (v *validator) httpRequest(path string, r *HTTPRequest) {
	if r == nil {
		return
	}
	if r.Method != "" && !IsHTTPToken(r.Method) {
		v.add(join(path, "method"), "%q is not a valid HTTP method", r.Method)
	}
	v.httpURL(join(path, "url"), r.URL)
	v.headers(join(path, "headers"), r.Headers)
}

func (v *validator) headers(path string, hs map[string]Value) {
	for _, k := range sortedKeys(hs) {
		hp := join(path, k)
		switch h := hs[k]; {
		case !IsHTTPToken(k):
			v.add(hp, "%q is not a valid header name", k)
		case h.IsRef():
			h.check(v, hp)
		case strings.ContainsAny(h.Literal, "\r\n\x00"):
			v.add(hp, "a header value cannot contain CR, LF or NUL")
		}
	}
}

func (v *validator) httpURL(path, raw string) {
	if raw == "" {
		v.add(path, "required")
		return
	}
	if !IsHTTPURL(raw) {
		v.add(path, "%q is not an absolute http(s) URL", raw)
	}
}

// IsHTTPURL reports whether raw is an absolute http or https URL with a
// host.
func IsHTTPURL(raw string) bool {
	u, err := url.Parse(raw)
	if err != nil {
		return false
	}
	return (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
}

// IsHTTPToken reports whether s is an RFC 9110 token: a valid method or
// header name.
func IsHTTPToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0:
		default:
			return false
		}
	}
	return true
}
