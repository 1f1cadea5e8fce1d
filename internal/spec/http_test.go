package spec

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestParseHTTP(t *testing.T) {
	h, err := ParseHTTP(map[string]any{
		"start": map[string]any{
			"method":  "PUT",
			"url":     "http://127.0.0.1:8080/start",
			"headers": map[string]any{"Authorization": "Bearer x"},
			"body":    `{"a":1}`,
		},
		"stop":   map[string]any{"url": "http://127.0.0.1:8080/stop"},
		"health": map[string]any{"url": "https://svc/healthz", "timeout": "500ms", "failureThreshold": uint64(3)},
	})
	require.NoError(t, err)
	require.Equal(t, &HTTPRequest{Method: "PUT", URL: "http://127.0.0.1:8080/start",
		Headers: map[string]Value{"Authorization": Literal("Bearer x")}, Body: `{"a":1}`}, h.Start)
	require.Equal(t, &HTTPRequest{URL: "http://127.0.0.1:8080/stop"}, h.Stop)
	require.Equal(t, "https://svc/healthz", h.Health.URL)
	require.Equal(t, 500*time.Millisecond, h.Health.Timeout.D())
	require.Equal(t, 3, *h.Health.FailureThreshold)

	h, err = ParseHTTP(map[string]any{"health": map[string]any{"url": "http://x/"}})
	require.NoError(t, err)
	require.Nil(t, h.Start)
	require.Nil(t, h.Stop)
	require.Nil(t, h.Health.Timeout)
	require.Nil(t, h.Health.FailureThreshold)

	for name, tc := range map[string]struct {
		m   map[string]any
		err string
	}{
		"nil":                {nil, "no http block"},
		"unknown top field":  {map[string]any{"healthz": map[string]any{}}, `unknown field "healthz"`},
		"unknown deep field": {map[string]any{"start": map[string]any{"url": "http://x/", "verb": "GET"}}, `unknown field "verb"`},
		"bad duration":       {map[string]any{"health": map[string]any{"url": "http://x/", "timeout": "soon"}}, "invalid duration"},
		"number duration":    {map[string]any{"health": map[string]any{"url": "http://x/", "timeout": 2}}, "invalid http block"},
		"float threshold":    {map[string]any{"health": map[string]any{"url": "http://x/", "failureThreshold": 1.5}}, "invalid http block"},
		"string threshold":   {map[string]any{"health": map[string]any{"url": "http://x/", "failureThreshold": "3"}}, "invalid http block"},
		"headers not a map":  {map[string]any{"start": map[string]any{"url": "http://x/", "headers": []string{"a"}}}, "invalid http block"},
		"header not string":  {map[string]any{"start": map[string]any{"url": "http://x/", "headers": map[string]any{"X-N": 1}}}, "invalid http block"},
		"start not a map":    {map[string]any{"start": "http://x/"}, "invalid http block"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := ParseHTTP(tc.m)
			require.ErrorContains(t, err, tc.err)
		})
	}
}

func TestValidateHTTP(t *testing.T) {
	health := map[string]any{"url": "http://127.0.0.1:8080/healthz"}
	for name, tc := range map[string]struct {
		m    map[string]any
		want Problems
	}{
		"minimal": {m: map[string]any{"health": health}},
		"full": {m: map[string]any{
			"start":  map[string]any{"method": "POST", "url": "https://svc.example/start", "headers": map[string]any{"X-Token": "t"}, "body": "go"},
			"stop":   map[string]any{"method": "DELETE", "url": "http://svc.example:9000/stop?now=1"},
			"health": map[string]any{"url": "http://[::1]:8080/h", "timeout": "1s", "failureThreshold": 3},
		}},
		"no block": {m: nil, want: Problems{{"http", "required for kind http (at least health.url)"}}},
		"no health": {
			m:    map[string]any{"start": map[string]any{"url": "http://x/"}},
			want: Problems{{"http.health.url", "required"}},
		},
		"health url empty": {
			m:    map[string]any{"health": map[string]any{"timeout": "1s"}},
			want: Problems{{"http.health.url", "required"}},
		},
		"relative urls": {
			m: map[string]any{
				"start":  map[string]any{"url": "/start"},
				"stop":   map[string]any{"url": "ftp://host/stop"},
				"health": map[string]any{"url": "localhost:8080/h"},
			},
			want: Problems{
				{"http.start.url", `"/start" is not an absolute http(s) URL`},
				{"http.stop.url", `"ftp://host/stop" is not an absolute http(s) URL`},
				{"http.health.url", `"localhost:8080/h" is not an absolute http(s) URL`},
			},
		},
		"no host": {
			m:    map[string]any{"health": map[string]any{"url": "http:///h"}},
			want: Problems{{"http.health.url", `"http:///h" is not an absolute http(s) URL`}},
		},
		"unparsable url": {
			m:    map[string]any{"health": map[string]any{"url": "http://x/%zz"}},
			want: Problems{{"http.health.url", `"http://x/%zz" is not an absolute http(s) URL`}},
		},
		"start url missing": {
			m:    map[string]any{"start": map[string]any{"method": "POST"}, "health": health},
			want: Problems{{"http.start.url", "required"}},
		},
		"bad method and headers": {
			m: map[string]any{
				"start":  map[string]any{"method": "GO AWAY", "url": "http://x/", "headers": map[string]any{"Bad Name": "v", "X-Ok": "a\r\nInjected: 1"}},
				"health": health,
			},
			want: Problems{
				{"http.start.method", `"GO AWAY" is not a valid HTTP method`},
				{"http.start.headers.Bad Name", `"Bad Name" is not a valid header name`},
				{"http.start.headers.X-Ok", "a header value cannot contain CR, LF or NUL"},
			},
		},
		"zero timeout and threshold": {
			m: map[string]any{"health": map[string]any{"url": "http://x/", "timeout": "0s", "failureThreshold": 0}},
			want: Problems{
				{"http.health.timeout", "must be > 0"},
				{"http.health.failureThreshold", "must be >= 1"},
			},
		},
		"negative timeout and threshold": {
			m: map[string]any{"health": map[string]any{"url": "http://x/", "timeout": "-1s", "failureThreshold": -2}},
			want: Problems{
				{"http.health.timeout", "must be > 0"},
				{"http.health.failureThreshold", "must be >= 1"},
			},
		},
	} {
		t.Run(name, func(t *testing.T) {
			v := &validator{}
			v.http("http", tc.m)
			require.Equal(t, tc.want, v.ps)
		})
	}

	// A decode error is one problem on the block.
	v := &validator{}
	v.http("children[0].http", map[string]any{"health": health, "retries": 3})
	require.Len(t, v.ps, 1)
	require.Equal(t, "children[0].http", v.ps[0].Path)
	require.Contains(t, v.ps[0].Msg, `unknown field "retries"`)
}

func TestIsHTTPToken(t *testing.T) {
	for _, s := range []string{"GET", "POST", "M-SEARCH", "X-Custom_Header", "a!#$%&'*+-.^_`|~9"} {
		require.True(t, IsHTTPToken(s), s)
	}
	for _, s := range []string{"", "GE T", "X:Y", "é", "a\tb", "(x)"} {
		require.False(t, IsHTTPToken(s), s)
	}
}
