package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	ossignal "os/signal"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"golang.org/x/sync/errgroup"

	"github.com/steward-sh/steward/activities"
	"github.com/steward-sh/steward/internal/admission"
	"github.com/steward-sh/steward/internal/console"
	"github.com/steward-sh/steward/internal/driver/process"
	"github.com/steward-sh/steward/internal/spec"
	"github.com/steward-sh/steward/internal/treestatus"
	"github.com/steward-sh/steward/workflows"
)

func consoleCmd(g *globals) *cobra.Command {
	var listen, tokenFile, readTokenFileName, allowedHosts, webUI, grafana, signKey string
	var allowActions bool
	var interval time.Duration
	var compression string
	cmd := &cobra.Command{
		Use:   "console",
		Short: "Serve a live web console of the namespace's trees (read-only unless --allow-actions)",
		Long: `Serve a web console of every tree of the namespace: the trees with roll-ups,
a panel per node (status, history, last action, log of a process service,
links to the Temporal Web UI), kept live by one watch of the supervisors'
records (it follows each supervisor's history and asks it again only
after an event), pushed to open pages as Server-Sent Events.

Read-only by default. With --allow-actions, start, stop, restart and a
rollout restart of a subtree are served too, each needing the token: one
generated at start and printed, or the content of --token-file (trimmed of
white space, never printed or logged). With --read-token-file, reading
needs a token too (open the page with ?token=TOKEN). It listens on
loopback by default; another address shows the trees to whoever reaches it
(docs/console.md). It answers only requests for its own names (the Host
header): the host it listens on, localhost (and 127.0.0.1, ::1 on
loopback; the machine's addresses when it listens on all of them), and
--allowed-hosts; others get 421, so a web page cannot read it through a
name of its own (DNS rebinding).`,
		Args: args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if interval < 100*time.Millisecond {
				return badInput("--interval must be at least 100ms, not %s", interval)
			}
			token := ""
			fromFile := tokenFile != ""
			if fromFile {
				var err error
				if token, err = readTokenFile("--token-file", tokenFile); err != nil {
					return err
				}
			} else if allowActions {
				var b [16]byte
				if _, err := rand.Read(b[:]); err != nil {
					return failure("token: %v", err)
				}
				token = hex.EncodeToString(b[:])
			}
			readToken := ""
			if readTokenFileName != "" {
				var err error
				if readToken, err = readTokenFile("--read-token-file", readTokenFileName); err != nil {
					return err
				}
			}
			reads, err := readSigner(signKey)
			if err != nil {
				return err
			}
			if reads != nil && readToken == "" {
				// Loopback is not private: every local user reaches it,
				// and the console would sign their reads of logs the
				// hosts answer only when signed.
				return badInput("--sign-key (or STEWARD_SIGN_KEY) signs log and usage reads for whoever reaches --listen, every local user included: give --read-token-file too")
			}
			if compression != "gzip" && compression != "none" {
				return badInput("--grpc-compression must be gzip or none, not %q", compression)
			}
			g.conn.Compression = compression
			ln, err := net.Listen("tcp", listen)
			if err != nil {
				return badInput("--listen %s: %v", listen, err)
			}
			defer ln.Close()
			check, err := hostChecker(listen, ln, allowedHosts)
			if err != nil {
				return err
			}
			c, err := g.dial()
			if err != nil {
				return err
			}
			defer c.Close()
			ctx, stop := ossignal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()

			src := &consoleSource{c: c, namespace: g.namespace, reads: reads}
			watch := console.NewWatch(src, interval)
			src.follow = &followers{c: c, namespace: g.namespace, ctx: ctx, poke: watch.Poke, by: map[string]*follower{}}
			go watch.Run(ctx)
			errOut := cmd.ErrOrStderr()
			handler := console.New(src, watch, console.Options{
				AllowActions: allowActions, Token: token, ReadToken: readToken,
				Namespace: g.namespace, WebUI: strings.TrimSuffix(webUI, "/"), Grafana: grafana,
				Log: func(format string, args ...any) { linef(errOut, format, args...) },
			})
			out := cmd.OutOrStdout()
			mode := "read-only"
			if allowActions {
				mode = "actions allowed with the token"
			}
			if readToken != "" {
				mode += "; reading needs the read token: open the page with ?token=READ-TOKEN"
			}
			fmt.Fprintf(out, "steward console on http://%s/ (%s; namespace %s)\n", ln.Addr(), mode, g.namespace)
			if allowActions && !fromFile {
				fmt.Fprintf(out, "token: %s\n", token)
			}
			if host, _, err := net.SplitHostPort(ln.Addr().String()); err == nil {
				if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
					fmt.Fprintf(errOut, "warning: listening on %s: whoever reaches it sees every tree of the namespace (paths, states, reasons, logs of process services)%s%s\n",
						ln.Addr(), map[bool]string{true: " if they have the read token"}[readToken != ""],
						map[bool]string{true: ", and whoever also has the token can act"}[allowActions])
				}
			}
			return serveHTTP(ctx, ln, check, handler, "console")
		},
	}
	cmd.Flags().StringVar(&listen, "listen", "127.0.0.1:8090", "address to serve the console on (loopback by default)")
	cmd.Flags().StringVar(&allowedHosts, "allowed-hosts", "", "more names (NAME or NAME:PORT, comma-separated) that requests may give as Host, beside the listen address's host and localhost (others get 421)")
	cmd.Flags().BoolVar(&allowActions, "allow-actions", false, "serve start, stop, restart and rollout restart (each needs the token)")
	cmd.Flags().StringVar(&tokenFile, "token-file", "", "the actions' token: this file's content, trimmed (default: one generated and printed at start)")
	cmd.Flags().StringVar(&readTokenFileName, "read-token-file", "", "require a read token for the API (the tree, status, panels, logs, events): this file's content, trimmed; the page takes it as ?token= (never printed or logged)")
	cmd.Flags().StringVar(&webUI, "web-ui", "http://localhost:8233", "the Temporal Web UI, for the panel's links (empty: none)")
	cmd.Flags().StringVar(&grafana, "grafana", "", "a Grafana dashboard URL for the panel's links (empty: none)")
	cmd.Flags().DurationVar(&interval, "interval", time.Second, "how often the watch asks the supervisors whose histories it does not follow (each followed one is asked when an event is written to it, and all every 5 minutes)")
	signKeyFlag(cmd, &signKey, "sign the hosts' log and usage reads with this private key: a host with --trusted-keys answers only signed reads, sealed to this console")
	cmd.Flags().StringVar(&compression, "grpc-compression", "none", "compression of the console's requests to Temporal: none (its many small queries cost less CPU without) or gzip")
	return cmd
}

// consoleSource is what the console reads and does, through this client.
type consoleSource struct {
	c         client.Client
	namespace string
	// reads signs the reads of hosts' logs and usage (nil: unsigned).
	reads *admission.Reader
	// shared makes one read of a host serve every page that asks the same
	// thing at once or within a second (sharedReads).
	shared sharedReads

	// The roots, listed at most every rootsEvery (a new tree shows within
	// that, a deleted one at the next look; the supervisors are asked every
	// look). A listing reads visibility, which costs more than the looks.
	roots   []string
	rootsAt time.Time
	fullAt  time.Time // the last look that asked every supervisor

	// follow tells which supervisors had an event since their last answer
	// (console_follow.go); a look asks only those, and all of them every
	// fullEvery, in case a follow missed something.
	follow *followers
	full   bool // this look asks every supervisor (every fullEvery)

	// The supervisors' last answers by path, with their digests: a look
	// asks a supervisor for its digest (a few bytes) and for its answer
	// only when that changed.
	mu    sync.Mutex
	cache map[string]cachedAnswer
	asked map[string]bool
	// fetched: a look fetched an answer (a digest changed, or a node is
	// new), so its trees may differ from the look before (last).
	fetched bool
	last    []treestatus.Status
	// unanswered are the roots that did not answer at the last look: they
	// are asked after the others (rootsFirst).
	unanswered map[string]bool
}

// consoleRootTimeout bounds one root's query at a look: a quarter of the
// shortest look's 10 s, so that roots that do not answer (a workflow
// started by hand whose queries hang) cannot hold every slot for the
// whole look.
const consoleRootTimeout = 2500 * time.Millisecond

// rootsFirst orders roots for a look: those that answered at the last one
// first, in their order, then those that did not. Four roots that never
// answer then cost the others nothing: they had held all rootsParallel
// slots for the whole look, and every tree after them missed it.
func rootsFirst(roots []string, unanswered map[string]bool) []string {
	out := make([]string, 0, len(roots))
	for _, r := range roots {
		if !unanswered[r] {
			out = append(out, r)
		}
	}
	for _, r := range roots {
		if unanswered[r] {
			out = append(out, r)
		}
	}
	return out
}

type cachedAnswer struct {
	digest string
	st     workflows.Status
}

// query is a supervisor's answer, fetched only when its digest changed.
func (s *consoleSource) query(ctx context.Context, path string) (workflows.Status, error) {
	s.mu.Lock()
	s.asked[path] = true
	c, ok := s.cache[path]
	full := s.full
	s.mu.Unlock()
	fresh, changed := false, false
	if s.follow != nil {
		fresh, changed = s.follow.fresh(path)
	}
	if fresh && ok && !full {
		c.st.Children = slices.Clone(c.st.Children) // the assembly fills them in
		return c.st, nil                            // no event since this answer
	}
	var d string
	var err error
	if !ok || changed && !full {
		// An event: the answer itself, one round trip instead of two (its
		// digest is asked at the next full look).
		err = errors.New("changed")
	} else {
		var v converter.EncodedValue
		if v, err = s.c.QueryWorkflow(ctx, path, "", workflows.QueryStatusDigest); err == nil {
			err = v.Get(&d)
		}
	}
	if err != nil {
		// Changed, new to the cache, or a worker or a build without the
		// digest: the answer (one round trip, not two).
		st, err := queryOne(ctx, s.c, path)
		if err != nil && s.follow != nil {
			s.follow.retry(path)
		}
		s.mu.Lock()
		s.fetched = true
		if err == nil && (changed || !ok) {
			// Kept with the digest the supervisor would answer
			// (statusDigest is treestatus.Digest of this answer): the next
			// full look asks the digest alone.
			kept := st
			kept.Children = slices.Clone(st.Children)
			s.cache[path] = cachedAnswer{digest: treestatus.Digest(st), st: kept}
		}
		s.mu.Unlock()
		return st, err
	}
	if ok && c.digest == d {
		c.st.Children = slices.Clone(c.st.Children) // the assembly fills them in
		return c.st, nil
	}
	st, err := queryOne(ctx, s.c, path)
	if err != nil && s.follow != nil {
		s.follow.retry(path)
	}
	s.mu.Lock()
	s.fetched = true
	if err == nil {
		kept := st
		kept.Children = slices.Clone(st.Children)
		s.cache[path] = cachedAnswer{digest: d, st: kept}
	}
	s.mu.Unlock()
	return st, err
}

const rootsEvery = 30 * time.Second

// fullEvery is how often a look asks every supervisor, followed or not, in
// case a follow missed an event. Each asks one digest per supervisor of
// every tree of the namespace: at rest, most of the console's CPU.
const fullEvery = 5 * time.Minute

// rootsParallel bounds the trees assembled at once (each with up to
// treestatus.DefaultParallel queries).
const rootsParallel = 4

// plain turns the starter's exit errors into errors the console shows.
func plain(err error) error {
	var ee *exitError
	if errors.As(err, &ee) {
		if ee.code == 2 {
			return fmt.Errorf("%w: %v", console.ErrBadInput, ee.err)
		}
		return ee.err
	}
	return err
}

func (s *consoleSource) Trees(ctx context.Context) ([]treestatus.Status, bool, error) {
	s.mu.Lock()
	s.full = time.Since(s.fullAt) >= fullEvery // the watch's loop is the only caller
	asked := s.asked
	s.mu.Unlock()
	rootsChanged := false
	if s.full || time.Since(s.rootsAt) >= rootsEvery {
		roots, err := listRoots(ctx, s.c, s.namespace)
		if err != nil {
			return nil, false, plain(err)
		}
		rootsChanged = !slices.Equal(roots, s.roots)
		s.roots, s.rootsAt = roots, time.Now()
	}
	if !s.full && !rootsChanged && s.last != nil && s.follow != nil && !s.follow.pending(asked) {
		return s.last, false, nil // at rest: nothing to ask
	}
	if s.full {
		s.fullAt = time.Now()
	}
	if rootsChanged {
		s.fetched = true
	}
	roots := rootsFirst(s.roots, s.unanswered)
	s.mu.Lock()
	if s.cache == nil {
		s.cache = map[string]cachedAnswer{}
	}
	s.asked = map[string]bool{}
	changed := s.fetched || s.last == nil
	s.fetched = false
	s.mu.Unlock()
	before := map[string]treestatus.Status{}
	for _, t := range s.last {
		before[t.Path] = t
	}
	// The trees at once (a few at a time), not one after another: the
	// look's deadline is the slowest tree's, not the sum of them all, and
	// a tree listed late is not dropped because the ones before it were
	// slow (a page opened then would wait for the next look).
	got := make([]*treestatus.Status, len(roots))
	failed := make([]bool, len(roots))
	var g errgroup.Group
	g.SetLimit(rootsParallel)
	for i, r := range roots {
		g.Go(func() error {
			// The supervisors' records: one small query per supervisor.
			st, err := treestatus.Assemble(ctx, r, s.query, treestatus.Options{RootTimeout: consoleRootTimeout})
			if err != nil {
				failed[i] = true
				// A tree seen before stays, its root marked stale, until the
				// roots' listing drops it: a look that timed out must not make
				// a whole tree leave the page and come back at the next one.
				if t, ok := before[r]; ok && !errors.Is(err, treestatus.ErrNotFound) {
					t.Stale = "not answering: " + err.Error()
					got[i] = &t
				}
				return nil
			}
			got[i] = &st
			return nil
		})
	}
	_ = g.Wait()
	out := make([]treestatus.Status, 0, len(roots))
	s.unanswered = map[string]bool{}
	for i, st := range got {
		if failed[i] {
			s.unanswered[roots[i]] = true
		}
		if st != nil {
			out = append(out, *st)
		}
	}
	slices.SortFunc(out, func(a, b treestatus.Status) int { return strings.Compare(a.Path, b.Path) }) // as listed
	s.mu.Lock()
	for p := range s.cache {
		if !s.asked[p] {
			delete(s.cache, p)
		}
	}
	if s.follow != nil {
		s.follow.keep(s.asked)
	}
	changed = changed || s.fetched || len(out) != len(s.last)
	s.fetched = false
	s.mu.Unlock()
	s.last = out
	return out, changed, nil
}

func (s *consoleSource) Status(ctx context.Context, path string) (treestatus.Status, error) {
	st, err := sizedStatus(ctx, s.c, path, "auto", treestatus.Options{})
	if err == nil && st.Kind == spec.KindProcess {
		// A process service's panel shows its usage and notify status.
		// The host's view is shared; the status is this request's own.
		v, err := s.shared.do("usage\x00"+path, func() (any, error) {
			sts := []treestatus.Status{st}
			addHostViews(ctx, s.c, s.namespace, sts, s.reads)
			return treestatus.HostView{Usage: sts[0].Usage, NotifyStatus: sts[0].NotifyStatus}, nil
		})
		if err == nil {
			fillHostViews(&st, map[string]treestatus.HostView{path: v.(treestatus.HostView)})
		}
	}
	return st, plain(err)
}

func (s *consoleSource) Node(ctx context.Context, path string) (console.NodeInfo, error) {
	var info console.NodeInfo
	v, err := s.c.QueryWorkflow(ctx, path, "", workflows.QueryHistory)
	if err != nil {
		return info, fmt.Errorf("query %s: %w", path, err)
	}
	var entries []workflows.JournalEntry
	if err := v.Get(&entries); err != nil {
		return info, err
	}
	if info.History, err = json.Marshal(entries); err != nil {
		return info, err
	}
	if n, err := querySpec(ctx, s.c, path); err == nil {
		r := n.Resolved()
		if r.IsSupervisor() && r.Intensity != nil {
			info.MaxRestarts, info.Period = r.Intensity.MaxRestarts, r.Intensity.Period.D().String()
		}
		if n.Kind == "process" {
			info.Host, _ = processHost(ctx, s.c, path)
		}
		info.Reload = n.ReloadConfigured()
		if n.IsJob() {
			if row, err := jobOf(ctx, s.c, path); err == nil {
				info.Job = &console.JobInfo{Schedule: row.Schedule, Paused: row.Paused, NextRun: row.NextRun, Running: row.Running,
					Skipped: row.Skipped, Runs: row.Runs, Failures: row.Failures}
				if row.LastRun != nil {
					info.Job.LastRun, _ = json.Marshal(row.LastRun)
				}
			}
		}
	}
	return info, nil
}

func (s *consoleSource) Log(ctx context.Context, path, from string, follow bool) (console.LogChunk, error) {
	host, err := processHost(ctx, s.c, path)
	if err != nil {
		return console.LogChunk{}, plain(err)
	}
	logOf, err := logWorkflow(ctx, s.c, path, "") // a job's: its newest run's
	if err != nil {
		return console.LogChunk{}, plain(err)
	}
	req := activities.ReadLogRequest{WorkflowID: logOf, Lines: 100}
	if follow {
		var pos process.LogPosition
		if err := json.Unmarshal([]byte(from), &pos); err != nil {
			return console.LogChunk{}, fmt.Errorf("%w: from: %v", console.ErrBadInput, err)
		}
		req = activities.ReadLogRequest{WorkflowID: logOf, Follow: true, From: pos, Wait: followWait}
	}
	key, _ := json.Marshal(req)
	v, err := s.shared.do("log\x00"+host+"\x00"+string(key), func() (any, error) {
		return readLog(ctx, s.c, s.namespace, host, req, s.reads)
	})
	if err != nil {
		return console.LogChunk{}, plain(err)
	}
	res := v.(activities.ReadLogResult)
	next, _ := json.Marshal(res.Next)
	return console.LogChunk{Text: strings.ToValidUTF8(string(res.Data), "\uFFFD"), Next: string(next)}, nil
}

func (s *consoleSource) Act(ctx context.Context, action, path string) error {
	switch action {
	case "start":
		return plain(signal(ctx, s.c, path, workflows.SignalDesired, "running"))
	case "stop":
		return plain(signal(ctx, s.c, path, workflows.SignalDesired, "stopped"))
	case "restart":
		return plain(signal(ctx, s.c, path, workflows.SignalRestart, nil))
	case "reload":
		n, err := querySpec(ctx, s.c, path)
		if err != nil {
			return plain(err)
		}
		if !n.ReloadConfigured() {
			return fmt.Errorf("%w: %s has no reload configured (process.reload or http.reload)", console.ErrBadInput, path)
		}
		return plain(signal(ctx, s.c, path, workflows.SignalReload, nil))
	case "rollout-restart", "rollout-reload":
		op := workflows.RolloutRestart
		if action == "rollout-reload" {
			op = workflows.RolloutReload
		}
		_, _, err := startRollout(ctx, s.c, s.namespace, workflows.RolloutInput{Path: path, Op: op, Chunk: workflows.DefaultRolloutChunk}, os.Stderr)
		return plain(err)
	}
	return fmt.Errorf("%w: unknown action %q", console.ErrBadInput, action)
}
