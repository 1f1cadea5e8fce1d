// Package console is steward's web console (`starter console`): a live
// picture of the trees of a namespace, a panel per node, and, when the
// operator allows them, actions.
//
// The page is plain HTML, CSS and JavaScript embedded in the binary (no
// build step, no library). It reads:
//
//	GET  /api/tree              every root's tree, as the watch last saw it
//	GET  /api/status?path=P     the JSON of `starter status P -o json`
//	GET  /api/node?path=P       a node's panel: its history journal, and a
//	                            supervisor's intensity
//	GET  /api/logs?path=P       the tail of a process service's log (from=
//	                            the position to go on from, for a follow)
//	GET  /api/events            Server-Sent Events: one `data:` line of JSON
//	                            per change ({path, state, ...})
//	POST /api/actions           {action, path} with Authorization: Bearer
//	                            TOKEN (401 without it; 403 without
//	                            --allow-actions)
//
// With a read token (--read-token-file), every GET of /api/ needs it:
// Authorization: Bearer READ-TOKEN, or, for /api/events (a browser's
// EventSource sends no header), ?token=READ-TOKEN. The page takes it from
// its own address (?token=), keeps it in the tab's sessionStorage and
// drops it from the address bar. The page itself (HTML, CSS, JavaScript)
// holds no data and is served to anyone.
//
// The page runs under its own Content-Security-Policy (default-src 'self':
// no inline script and no inline style): it styles by classes of app.css,
// never by a style attribute.
//
// One watch (Watch) asks the trees' supervisors for their records every
// interval and pushes what changed to every open page: the cost is a query
// per supervisor per interval, whatever the number of pages and workers.
//
// It imports nothing from Temporal: the starter hands it a Source.
package console

import (
	"context"
	"crypto/subtle"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/steward-sh/steward/internal/treestatus"
)

//go:embed web
var web embed.FS

// Source is what the console reads and does, through the starter's client.
type Source interface {
	// Trees is every running tree, assembled from its supervisors'
	// records (what the watch shows); changed is false when nothing could
	// differ from the trees of the call before (the watch then skips them).
	Trees(ctx context.Context) (trees []treestatus.Status, changed bool, err error)
	// Status is the subtree at path, as `starter status PATH -o json`.
	Status(ctx context.Context, path string) (treestatus.Status, error)
	// Node is what a node's panel shows beside its status.
	Node(ctx context.Context, path string) (NodeInfo, error)
	// Log reads a process service's log from its host.
	Log(ctx context.Context, path string, from string, follow bool) (LogChunk, error)
	// Act carries out an operator's action on path.
	Act(ctx context.Context, action, path string) error
}

// NodeInfo is a node's panel beside its status.
type NodeInfo struct {
	History json.RawMessage `json:"history"` // the node's journal (the `history` query)
	// MaxRestarts and Period are a supervisor's intensity (0: a worker).
	MaxRestarts int    `json:"maxRestarts,omitempty"`
	Period      string `json:"period,omitempty"`
	// Host is where a process service runs.
	Host string `json:"host,omitempty"`
	// Reload: the worker has a reload configured (the panel offers it).
	Reload bool `json:"reload,omitempty"`
	// Job is a job's schedule, next run and runs (nil: not a job).
	Job *JobInfo `json:"job,omitempty"`
}

// JobInfo is what the panel shows of a job (`starter jobs`' row).
type JobInfo struct {
	Schedule string     `json:"schedule"`
	Paused   bool       `json:"paused"`
	NextRun  *time.Time `json:"nextRun,omitempty"`
	Running  bool       `json:"running"`
	Skipped  int        `json:"skipped"`
	Runs     int        `json:"runs"`
	Failures int        `json:"failures"`
	// LastRun: its outcome, exit code and when it ended.
	LastRun json.RawMessage `json:"lastRun,omitempty"`
}

// LogChunk is output read from a log and where to go on from (opaque).
type LogChunk struct {
	Text string `json:"text"`
	Next string `json:"next"`
}

// Actions the console carries out.
var Actions = []string{"start", "stop", "restart", "reload", "rollout-restart", "rollout-reload"}

// ErrBadInput marks an error that is the request's fault (400).
var ErrBadInput = errors.New("bad input")

// Options are the console's settings.
type Options struct {
	// AllowActions: POST /api/actions is served (with the token).
	AllowActions bool
	// Token authorizes actions (compared in constant time, never logged).
	Token string
	// ReadToken, when set, is needed by every GET of /api/ (compared in
	// constant time, never logged).
	ReadToken string
	// Namespace, WebUI and Grafana make the panel's links (empty: none).
	Namespace, WebUI, Grafana string
	// Log hears of every action asked (never the token).
	Log func(format string, args ...any)
}

// Server is the console's HTTP handler and its watch.
type Server struct {
	src   Source
	opts  Options
	watch *Watch
	mux   *http.ServeMux
}

// New makes a console over src; run its watch with Watch().Run.
func New(src Source, w *Watch, opts Options) *Server {
	if opts.Log == nil {
		opts.Log = func(string, ...any) {}
	}
	s := &Server{src: src, opts: opts, watch: w, mux: http.NewServeMux()}
	static, _ := fs.Sub(web, "web")
	s.mux.Handle("GET /", http.FileServerFS(static))
	s.mux.HandleFunc("GET /api/config", s.config)
	s.mux.HandleFunc("GET /api/tree", s.tree)
	s.mux.HandleFunc("GET /api/status", byPath(s.status))
	s.mux.HandleFunc("GET /api/node", byPath(s.node))
	s.mux.HandleFunc("GET /api/logs", byPath(s.logs))
	s.mux.HandleFunc("GET /api/events", s.events)
	s.mux.HandleFunc("POST /api/actions", s.action)
	return s
}

// CSP is the page's Content-Security-Policy: its own script and style
// files only (no inline script, no style attribute), its own API.
const CSP = "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'"

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Content-Security-Policy", CSP)
	if s.opts.ReadToken != "" && r.Method != http.MethodPost && strings.HasPrefix(r.URL.Path, "/api/") && !s.readAuthorized(r) {
		w.Header().Set("WWW-Authenticate", `Bearer realm="steward console"`)
		writeJSON(w, http.StatusUnauthorized, map[string]string{"error": "a read token is required: open the console with ?token=READ-TOKEN, or send Authorization: Bearer READ-TOKEN"})
		return
	}
	s.mux.ServeHTTP(w, r)
}

// readAuthorized: r carries the read token (Bearer, or ?token= on the
// event stream, which a browser opens without headers).
func (s *Server) readAuthorized(r *http.Request) bool {
	if tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok && same(tok, s.opts.ReadToken) {
		return true
	}
	return r.URL.Path == "/api/events" && r.URL.Query().Has("token") && same(r.URL.Query().Get("token"), s.opts.ReadToken)
}

// same compares a token given with the expected one in constant time.
func same(given, want string) bool {
	return want != "" && subtle.ConstantTimeCompare([]byte(strings.TrimSpace(given)), []byte(want)) == 1
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

func writeError(w http.ResponseWriter, err error) {
	code := http.StatusBadGateway // Temporal did not answer as asked
	if errors.Is(err, ErrBadInput) {
		code = http.StatusBadRequest
	}
	writeJSON(w, code, map[string]string{"error": err.Error()})
}

func (s *Server) config(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{
		"allowActions": s.opts.AllowActions, "actions": Actions,
		"namespace": s.opts.Namespace, "webUI": s.opts.WebUI, "grafana": s.opts.Grafana,
	})
}

func (s *Server) tree(w http.ResponseWriter, r *http.Request) {
	trees, at, err := s.watch.Last(r.Context())
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"trees": trees, "at": at})
}

func pathParam(r *http.Request) (string, error) {
	p := strings.TrimSpace(r.URL.Query().Get("path"))
	if p == "" {
		return "", fmt.Errorf("%w: path is required", ErrBadInput)
	}
	return p, nil
}

// byPath serves a GET of one node (?path=P) with read's answer as JSON.
func byPath[T any](read func(r *http.Request, path string) (T, error)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		p, err := pathParam(r)
		if err == nil {
			var v T
			if v, err = read(r, p); err == nil {
				writeJSON(w, http.StatusOK, v)
				return
			}
		}
		writeError(w, err)
	}
}

func (s *Server) status(r *http.Request, path string) (treestatus.Status, error) {
	return s.src.Status(r.Context(), path)
}

func (s *Server) node(r *http.Request, path string) (NodeInfo, error) {
	return s.src.Node(r.Context(), path)
}

func (s *Server) logs(r *http.Request, path string) (LogChunk, error) {
	from := r.URL.Query().Get("from")
	return s.src.Log(r.Context(), path, from, from != "")
}

// Action is a POST /api/actions body.
type Action struct {
	Action string `json:"action"`
	Path   string `json:"path"`
}

func (s *Server) action(w http.ResponseWriter, r *http.Request) {
	if !s.opts.AllowActions {
		writeJSON(w, http.StatusForbidden, map[string]string{"error": "actions are off: start the console with --allow-actions"})
		return
	}
	if !s.authorized(r) {
		w.Header().Set("WWW-Authenticate", `Bearer realm="steward console"`)
		writeJSON(w, http.StatusUnauthorized, map[string]string{"error": "a valid token is required (Authorization: Bearer TOKEN)"})
		return
	}
	var a Action
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, 4096))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&a); err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "body must be {\"action\": ..., \"path\": ...}: " + err.Error()})
		return
	}
	if !slices.Contains(Actions, a.Action) {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": fmt.Sprintf("unknown action %q: one of %s", a.Action, strings.Join(Actions, ", "))})
		return
	}
	if strings.TrimSpace(a.Path) == "" {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "path is required"})
		return
	}
	s.opts.Log("console: %s %s (from %s)", a.Action, a.Path, r.RemoteAddr)
	if err := s.src.Act(r.Context(), a.Action, a.Path); err != nil {
		writeError(w, err)
		return
	}
	s.watch.Poke()
	writeJSON(w, http.StatusOK, map[string]string{"done": a.Action + " " + a.Path})
}

func (s *Server) authorized(r *http.Request) bool {
	tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	return ok && same(tok, s.opts.Token)
}

// events streams the watch's changes to one page until it goes away.
func (s *Server) events(w http.ResponseWriter, r *http.Request) {
	flusher, ok := w.(http.Flusher)
	if !ok {
		http.Error(w, "streaming unsupported", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Accel-Buffering", "no")
	ch, cancel := s.watch.Subscribe()
	defer cancel()
	// A comment at once, so the page knows it is connected; then one every
	// 15 s, so proxies keep the stream open.
	fmt.Fprint(w, ": connected\n\n")
	flusher.Flush()
	keep := time.NewTicker(15 * time.Second)
	defer keep.Stop()
	for {
		select {
		case <-r.Context().Done():
			return
		case <-keep.C:
			fmt.Fprint(w, ": keep-alive\n\n")
		case batch, ok := <-ch:
			if !ok {
				// Too slow to keep up: the page reconnects and reloads.
				return
			}
			for _, c := range batch {
				b, _ := json.Marshal(c)
				fmt.Fprintf(w, "data: %s\n\n", b)
			}
		}
		flusher.Flush()
	}
}
