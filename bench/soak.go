package main

// The soak (issue 51): a tree of about a thousand workers kept for hours
// under a schedule of operations and faults, sampled every minute, with
// its invariants checked all along. Run only when named:
// `go run ./bench -only soak -duration 2h` (make soak). docs/reliability.md
// says what it promises and shows its plots.

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/steward-sh/steward/internal/telemetry"
	"github.com/steward-sh/steward/internal/treestatus"
	"github.com/steward-sh/steward/workflows"
)

const (
	soakTree = "bench-soak"
	// soakMarker starts the last argument of every process the soak's
	// tree runs: soak:PATH, so that a scan of /proc finds who owns what
	// (duplicates, orphans) without asking steward.
	soakMarker = "soak:"
	// soakAfter is the fleet's reschedule.after: a host frozen longer is
	// failed over.
	soakAfter = 10 * time.Second
	// soakCrashy is the share of the crashing stubs that must be running
	// for the tree to count as recovered: they crash every few minutes by
	// design, so at any moment a few are between a crash and their restart.
	soakCrashy = 0.99
)

// soakHosts are the fleet's hosts, each a worker process of its own.
var soakHosts = []string{"sa", "sb", "sc"}

// soakHelper is the bench binary run as one of the soak's services:
// `bench soak-helper MODE MARKER`. sleep: runs until signalled; leak:
// grows by 128 KiB a second (its restartOnMemory restarts it); fail: exits
// 1 at once (the bad revision).
func soakHelper(args []string) {
	if len(args) < 1 {
		os.Exit(2)
	}
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	var kept [][]byte
	tick := time.NewTicker(time.Second)
	for {
		switch args[0] {
		case "fail":
			os.Exit(1)
		case "leak":
			b := make([]byte, 128<<10)
			for i := range b {
				b[i] = byte(i)
			}
			kept = append(kept, b)
		}
		select {
		case <-sig:
			os.Exit(0)
		case <-tick.C:
		}
	}
}

// soakSpec is the soak's tree at generation gen (a var every process
// service renders into its environment, so that each new generation is a
// rolling update of them); bad makes their command fail (reverted).
//
//   - crashy: 960 stubs in ten groups, each crashing 5 to 9.5 minutes after
//     its start;
//   - procs: 20 process services (the bench binary as a helper): 17 that
//     sleep, one that leaks under restartOnMemory, one whose health probe
//     fails 15 s in every 5 minutes, and probe, killed every minute for
//     the kill-to-running figure;
//   - web: 10 http workers against an HTTP server of the bench's;
//   - fleet: 10 process instances over three hosts, rescheduled after 10 s;
//   - jobs: 5 process jobs every minute.
func soakSpec(self, webURL string, gen int, bad bool) string {
	mode := "sleep"
	if bad {
		mode = "fail"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "name: %s\nintensity: {maxRestarts: 10000, period: 1m}\nvars: {gen: \"%d\"}\nchildren:\n", soakTree, gen)
	b.WriteString("  - name: crashy\n    intensity: {maxRestarts: 10000, period: 1m}\n    children:\n")
	for i := range 10 {
		fmt.Fprintf(&b, "      - {name: s%d, kind: stub, instances: 96, stub: {delay: 0s, crashAfter: %ds}, observe: {interval: 1h}, backoff: {initial: 100ms, max: 1s}}\n",
			i, 300+30*i)
	}
	b.WriteString("  - name: procs\n    intensity: {maxRestarts: 10000, period: 1m}\n" +
		"    update: {maxParallel: 2, minHealthyTime: 2s, healthyDeadline: 30s, autoRevert: true}\n    children:\n")
	proc := func(name, mode, extra string) {
		fmt.Fprintf(&b, "      - name: %s\n        kind: process\n        backoff: {initial: 100ms, max: 1s}\n        observe: {interval: 1h}\n"+
			"        process: {command: %q, args: [soak-helper, %s, \"%s%s/procs/%s\"], env: {SOAK_GEN: \"{{ .Vars.gen }}\"}, startSeconds: 1s%s}\n",
			name, self, mode, soakMarker, soakTree, name, extra)
	}
	for i := range 17 {
		proc(fmt.Sprintf("p%02d", i), mode, "")
	}
	proc("leak", map[bool]string{true: "fail", false: "leak"}[bad], ", restartOnMemory: 40Mi")
	proc("flaky", mode, `, health: {exec: [sh, -c, "test $(( $(date +%s) % 300 )) -ge 15"], interval: 5s, failureThreshold: 2}`)
	proc("probe", mode, "")
	b.WriteString("  - name: web\n    children:\n")
	fmt.Fprintf(&b, "      - {name: w, kind: http, instances: 10, observe: {interval: 30s}, http: {start: {url: %q}, stop: {url: %q}, health: {url: %q}}}\n",
		webURL+"/start", webURL+"/stop", webURL+"/health")
	fmt.Fprintf(&b, "  - name: fleet\n    hosts: [%s]\n    reschedule: {after: %s}\n    intensity: {maxRestarts: 10000, period: 1m}\n    children:\n",
		strings.Join(soakHosts, ", "), soakAfter)
	fmt.Fprintf(&b, "      - {name: f, kind: process, instances: 10, observe: {interval: 1h}, process: {command: %q, args: [soak-helper, sleep, \"%s%s/fleet/f-{{ .Instance }}\"], startSeconds: 1s}}\n",
		self, soakMarker, soakTree)
	b.WriteString("  - name: jobs\n    children:\n")
	for i := range 5 {
		fmt.Fprintf(&b, "      - {name: j%d, kind: process, process: {command: \"true\"}, job: {every: 1m}}\n", i)
	}
	return b.String()
}

// soakRow is one minute's sample (a row of the CSV).
type soakRow struct {
	minute                              float64
	workerRSS, workerHeapObjects        float64
	workerGoroutines, workerFDs         float64
	hostsRSS, hostsGoroutines, hostsFDs float64
	hostsCached                         float64
	// hostsHeapMiB: the host workers' Go heap in use (what RSS holds
	// beside it is the runtime's: freed memory not yet returned).
	hostsHeapMiB float64
	// hostsSysMiB, hostsReleasedMiB: what the Go runtime holds from the
	// system and what of it it has given back (RSS is about their
	// difference): a heap that is flat under a growing RSS is the
	// runtime's keeping, not a leak.
	hostsSysMiB, hostsReleasedMiB float64
	// hostsLiveMiB: the heap the last collection found alive (what a
	// leak grows; steward_go_heap_live_bytes).
	hostsLiveMiB                         float64
	serverRSS                            float64
	maxHistory                           float64
	dbMiB, stateMiB, logsMiB             float64
	statusMs, killToRunningMs            float64
	notAtDesired, duplicates, orphans    float64
	taskFailures, workerAgeMin, faultsAt float64
}

var soakColumns = []string{"minute", "worker_rss_mib", "worker_heap_objects", "worker_goroutines", "worker_fds",
	"hosts_rss_mib", "hosts_goroutines", "hosts_fds", "server_rss_mib", "max_history_events", "db_mib", "state_mib", "logs_mib",
	"status_ms", "kill_to_running_ms", "not_at_desired", "duplicates", "orphans", "task_failures", "worker_age_min", "faults", "hosts_cached_workflows",
	"hosts_heap_inuse_mib", "hosts_go_sys_mib", "hosts_heap_released_mib", "hosts_heap_live_mib"}

func (r soakRow) values() []float64 {
	var out []float64
	for _, p := range r.fields() {
		out = append(out, *p)
	}
	return out
}

// soakFault is one operation or fault and how long the tree took to be
// back at its desired state after it.
type soakFault struct {
	At        float64 `json:"minute"`
	Kind      string  `json:"kind"`
	Recovered float64 `json:"recoveredSeconds"` // -1: not within the bound's wait
	Note      string  `json:"note,omitempty"`
}

// isOperation says whether a soakFault's kind is an operator's change (an
// apply or a rollout) rather than a fault.
func isOperation(kind string) bool { return kind == "apply" || kind == "rollout" }

// soaker holds a soak's processes and what it has seen.
type soaker struct {
	ctx              context.Context
	c                client.Client
	o                options
	self, web        string
	restartWorker    func() error
	restartServer    func() error
	workerPid        func() int
	workerMetrics    string
	stateDir, logDir string
	dbPath           string
	hosts            map[string]*hostWorker
	hostMetrics      map[string]string
	hostPprof        map[string]string // each host worker's --pprof base URL
	out, stamp       string            // where and under what name the soak writes
	began            time.Time

	mu           sync.Mutex
	faults       []soakFault
	overlapUntil time.Time // a move's documented overlap: two copies allowed
	busy         bool      // an operation runs: the probe is not killed
	gen          int
	applied      []string // the messages of the applies made
	workerBorn   time.Time
	failedBefore float64 // task failures counted by workers since gone
	lastFailed   float64 // the current worker's count at its last read
	duplicates   int
	orphans      int
	suspects     map[int]time.Time // pid -> first seen unowned
	dupSuspects  map[string]time.Time
	dupPaths     map[string]bool
	orphanPids   map[int]bool
	taskFailing  map[string]bool
	checks       int
}

func soakStep(ctx context.Context, c client.Client, o options, res Result, restartWorker, restartServer func() error, workerPid func() int, workerMetrics, stateDir string) error {
	if restartServer == nil {
		return errors.New("soak: the server is restarted: it must be the bench's own, or -restart-cmd must say how (with -address)")
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	web := httptest(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusOK) })
	defer web.Close()
	s := &soaker{ctx: ctx, c: c, o: o, self: self, web: "http://" + web.Addr().String(), restartWorker: restartWorker,
		restartServer: restartServer, workerPid: workerPid, workerMetrics: workerMetrics, stateDir: stateDir,
		logDir: o.logDir, dbPath: o.dbPath, began: time.Now(), workerBorn: time.Now(),
		suspects: map[int]time.Time{}, dupSuspects: map[string]time.Time{}, dupPaths: map[string]bool{},
		orphanPids: map[int]bool{}, taskFailing: map[string]bool{}, hostMetrics: map[string]string{}, hostPprof: map[string]string{}}
	dir, err := os.MkdirTemp("", "steward-soak-hosts-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	s.hosts = map[string]*hostWorker{}
	for _, h := range soakHosts {
		addr, err := freePort()
		if err != nil {
			return err
		}
		// Its metrics and logs of its own, from its first start (a start
		// and a stop at once lost the stop: a worker that inherited SIGINT
		// ignored, as under nohup, ignores it until it listens for it).
		// Its heap profiles too: taken at minute 15, 60 and at the end, so
		// that what grows between them is named (go tool pprof -diff_base).
		pprofAddr, err := freePort()
		if err != nil {
			return err
		}
		args := []string{"--metrics", addr, "--pprof", pprofAddr, "--log-dir", filepath.Join(dir, "logs-"+h)}
		if o.soakHostCache > 0 {
			args = append(args, "--workflow-cache", strconv.Itoa(o.soakHostCache))
		}
		w := hostWorkerOf(o, o.addr, h, dir, args...)
		if err := w.start(); err != nil {
			return err
		}
		s.hosts[h], s.hostMetrics[h], s.hostPprof[h] = w, "http://"+addr+"/metrics", "http://"+pprofAddr
	}
	defer func() {
		for _, w := range s.hosts {
			_ = w.cmd.Process.Signal(syscall.SIGCONT)
			w.stop()
		}
	}()
	for _, h := range soakHosts {
		if err := waitUntil(ctx, time.Minute, func() bool { return hostUp(ctx, c, h) }); err != nil {
			return fmt.Errorf("soak: host %s never up: %w", h, err)
		}
	}
	if err := s.apply(false); err != nil {
		return fmt.Errorf("soak: first apply: %w", err)
	}
	defer func() {
		_, _ = starterRun(o, 10*time.Minute, "delete", soakTree)
		// What the delete could not stop (a server that no longer answers,
		// as at the end of the 70-minute soak) is not left running.
		for _, pids := range soakProcs() {
			for _, pid := range pids {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	}()
	if _, ok := s.recover("apply"); !ok {
		return errors.New("soak: the tree never reached its desired state after its first apply")
	}
	s.began = time.Now()
	stamp := s.began.UTC().Format("20060102T150405Z")
	s.out, s.stamp = o.out, stamp
	if err := os.MkdirAll(o.out, 0o755); err != nil {
		return err
	}
	csvPath := filepath.Join(o.out, stamp+"-soak.csv")
	f, err := os.Create(csvPath)
	if err != nil {
		return err
	}
	defer f.Close()
	cw := csv.NewWriter(f)
	_ = cw.Write(soakColumns)
	cw.Flush()

	end := s.began.Add(o.soakDuration)
	var wg sync.WaitGroup
	checkDone := make(chan struct{})
	everyUntilDone := func(d time.Duration, f func()) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			t := time.NewTicker(d)
			defer t.Stop()
			for {
				select {
				case <-checkDone:
					return
				case <-t.C:
					f()
				}
			}
		}()
	}
	everyUntilDone(20*time.Second, s.check) // the invariants, all along
	var rows []soakRow
	profiled := map[string]bool{}
	everyUntilDone(o.soakSample, func() { // a sample every minute
		r := s.sample()
		rows = append(rows, r)
		for _, at := range []float64{15, 60} {
			if name := fmt.Sprintf("%.0fm", at); r.minute >= at && !profiled[name] {
				profiled[name] = true
				s.heapProfiles(name)
			}
		}
		rec := make([]string, 0, len(soakColumns))
		for _, v := range r.values() {
			rec = append(rec, strconv.FormatFloat(v, 'f', -1, 64))
		}
		_ = cw.Write(rec)
		cw.Flush()
		fmt.Fprintf(os.Stderr, "bench: soak %.0f min: worker %.0f MiB, %v goroutines; hosts %.0f MiB; not at desired %v; duplicates %v, orphans %v, task failures %v\n",
			r.minute, r.workerRSS, r.workerGoroutines, r.hostsRSS, r.notAtDesired, r.duplicates, r.orphans, r.taskFailures)
	})
	s.operate(end)
	close(checkDone)
	wg.Wait()
	s.check()
	s.heapProfiles("end")
	return s.results(res, rows, stamp, csvPath)
}

// httptest serves h on a free local port (the soak's http workers' peer).
func httptest(h http.HandlerFunc) net.Listener {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	go func() { _ = http.Serve(l, h) }()
	return l
}

// operate runs the operations and faults on their schedule until end, one
// at a time: every 10 minutes (by -soak-pace) a new revision (every third
// one bad, reverted by its autoRevert), every 5 a rollout restart of the
// fleet, every 15 a kill -9 of the worker, every 20 a host frozen past
// reschedule.after, every 25 a drain and undrain, every 30 a server
// restart. After each, the time until the tree is back at its desired
// state.
func (s *soaker) operate(end time.Time) {
	pace := s.o.soakPace
	type op struct {
		every time.Duration
		next  time.Time
		name  string
		do    func() (string, error)
	}
	applies := 0
	ops := []*op{
		{every: 10 * time.Minute, name: "apply", do: func() (string, error) {
			applies++
			bad := applies%3 == 0
			err := s.apply(bad)
			if bad {
				if err == nil {
					return "", errors.New("a bad revision's apply --wait succeeded")
				}
				return "bad, reverted", nil
			}
			return "", err
		}},
		{every: 5 * time.Minute, name: "rollout", do: func() (string, error) {
			_, err := starterRun(s.o, 10*time.Minute, "rollout", "restart", soakTree+"/fleet", "--chunk", "2")
			return "", err
		}},
		{every: 15 * time.Minute, name: "worker kill -9", do: func() (string, error) {
			s.readFailures()
			if err := s.restartWorker(); err != nil {
				return "", err
			}
			s.mu.Lock()
			s.failedBefore += s.lastFailed
			s.lastFailed = 0
			s.workerBorn = time.Now()
			s.mu.Unlock()
			return "", nil
		}},
		{every: 20 * time.Minute, name: "host frozen", do: s.freeze},
		{every: 25 * time.Minute, name: "drain", do: s.drain},
		{every: 30 * time.Minute, name: "server restart", do: func() (string, error) { return "", s.restartServer() }},
	}
	for _, p := range ops {
		p.every = time.Duration(float64(p.every) * pace)
		p.next = s.began.Add(p.every)
	}
	for {
		next := ops[0]
		for _, p := range ops[1:] {
			if p.next.Before(next.next) {
				next = p
			}
		}
		if next.next.After(end) || time.Now().After(end) {
			time.Sleep(time.Until(end))
			return
		}
		time.Sleep(time.Until(next.next))
		s.mu.Lock()
		s.busy = true
		s.mu.Unlock()
		at := time.Since(s.began).Minutes()
		fmt.Fprintf(os.Stderr, "bench: soak %.0f min: %s\n", at, next.name)
		note, err := next.do()
		if err != nil {
			note = "failed: " + err.Error()
			fmt.Fprintf(os.Stderr, "bench: soak: %s: %v\n", next.name, err)
		}
		took, ok := s.recover(next.name)
		if !ok {
			took = -1
		}
		s.mu.Lock()
		s.faults = append(s.faults, soakFault{At: round(at), Kind: next.name, Recovered: round(took), Note: note})
		s.busy = false
		s.mu.Unlock()
		// The slots missed while it and its recovery took their time are
		// skipped, not made up back to back.
		for !next.next.After(time.Now()) {
			next.next = next.next.Add(next.every)
		}
	}
}

// apply applies the next generation (bad: one whose processes fail) with
// --wait, its message soak-N kept to find it among the revisions.
func (s *soaker) apply(bad bool) error {
	s.mu.Lock()
	s.gen++
	gen := s.gen
	msg := fmt.Sprintf("soak-%d", gen)
	s.applied = append(s.applied, msg)
	s.mu.Unlock()
	file := writeTemp(soakTree, soakSpec(s.self, s.web, gen, bad))
	_, err := starterRun(s.o, 15*time.Minute, "apply", "-f", file, "-m", msg, "--wait", "--timeout", "10m")
	return err
}

// busiestHost is the host with the most fleet instances, and the count
// of each host's.
func (s *soaker) busiestHost() (string, map[string]int) {
	per := map[string]int{}
	if kids, err := fleetChildren(s.ctx, s.c, soakTree+"/fleet"); err == nil {
		for _, k := range kids {
			per[k.Host]++
		}
	}
	victim := soakHosts[0]
	for _, h := range soakHosts {
		if per[h] > per[victim] {
			victim = h
		}
	}
	return victim, per
}

// overlap allows two copies of a fleet instance from now until a minute
// after the returned func is called (a move's documented overlap).
func (s *soaker) overlap() (end func()) {
	s.mu.Lock()
	s.overlapUntil = time.Now().Add(24 * time.Hour)
	s.mu.Unlock()
	return func() {
		s.mu.Lock()
		s.overlapUntil = time.Now().Add(time.Minute)
		s.mu.Unlock()
	}
}

// freeze stops a host's worker (SIGSTOP) past reschedule.after, so that
// its instances fail over, then lets it go on. Its processes run on
// meanwhile: two copies of a moved instance are the move's documented
// overlap, until the returning worker has stopped its own.
func (s *soaker) freeze() (string, error) {
	victim, per := s.busiestHost()
	w := s.hosts[victim]
	endOverlap := s.overlap()
	defer endOverlap()
	if err := w.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		return "", err
	}
	time.Sleep(soakAfter + 20*time.Second)
	err := w.cmd.Process.Signal(syscall.SIGCONT)
	return fmt.Sprintf("%s (%d instances)", victim, per[victim]), err
}

// drain drains the host with the most fleet instances and undrains it.
func (s *soaker) drain() (string, error) {
	victim, per := s.busiestHost()
	defer s.overlap()()
	if _, err := starterRun(s.o, 10*time.Minute, "drain", victim, "--wait", "--timeout", "5m"); err != nil {
		return victim, err
	}
	_, err := starterRun(s.o, time.Minute, "undrain", victim)
	return fmt.Sprintf("%s (%d instances)", victim, per[victim]), err
}

// tree assembles the soak's tree from its supervisors' reports.
func (s *soaker) tree(within time.Duration) (treestatus.Status, error) {
	ctx, cancel := context.WithTimeout(s.ctx, within)
	defer cancel()
	return treestatus.Assemble(ctx, soakTree, func(ctx context.Context, id string) (workflows.Status, error) {
		return query(ctx, s.c, id)
	}, treestatus.Options{})
}

// notAtDesired counts the workers not at their desired state, the
// crashing stubs beyond the share allowed to be between a crash and its
// restart (soakCrashy), and says whether the tree's every node answered.
func notAtDesired(st treestatus.Status) (n int, answered bool) {
	crashy, crashyDown := 0, 0
	var walk func(s treestatus.Status)
	walk = func(s treestatus.Status) {
		if s.IsSupervisor() {
			if s.Applying {
				n++
			}
			for _, ch := range s.Children {
				walk(ch)
			}
			return
		}
		ok := s.Settled() || s.Job != nil
		if strings.HasPrefix(s.Path, soakTree+"/crashy/") {
			crashy++
			if !ok {
				crashyDown++
			}
			return
		}
		if !ok {
			n++
		}
	}
	walk(st)
	if float64(crashyDown) > float64(crashy)*(1-soakCrashy) {
		n += crashyDown
	}
	return n, len(st.Unanswered()) == 0
}

// offDesired names the nodes off their desired state (the crashing stubs
// left out), with their state, desired state and reason, and the nodes
// that did not answer: what an unrecovered fault left.
func (s *soaker) offDesired() string {
	st, err := s.tree(30 * time.Second)
	if err != nil {
		return err.Error()
	}
	var off []string
	var walk func(n treestatus.Status)
	walk = func(n treestatus.Status) {
		switch {
		case n.IsSupervisor():
			if n.Applying {
				off = append(off, n.Path+" applying")
			}
			for _, ch := range n.Children {
				walk(ch)
			}
		case strings.HasPrefix(n.Path, soakTree+"/crashy/"):
		case !n.Settled() && n.Job == nil:
			off = append(off, fmt.Sprintf("%s %s (desired %s, applying %t, host %q): %s", n.Path, n.State, n.Desired, n.Applying, n.Host, n.Reason))
		}
	}
	walk(st)
	off = append(off, st.Unanswered()...)
	if len(off) > 20 {
		off = append(off[:20], fmt.Sprintf("and %d more", len(off)-20))
	}
	return strings.Join(off, "; ")
}

// recover waits until the tree is back at its desired state (at most 10
// minutes), and says how long it took from the end of the operation. A
// fault takes a moment to show (a supervisor hears of a worker's loss
// through a heartbeat timeout, 5 s): the tree must first be seen off its
// desired state within 15 s; one never seen so took 0 s.
func (s *soaker) recover(after string) (float64, bool) {
	began := time.Now()
	disturbed := false
	for time.Since(began) < 10*time.Minute {
		if st, err := s.tree(30 * time.Second); err == nil {
			n, answered := notAtDesired(st)
			back := n == 0 && answered
			switch {
			case back && disturbed:
				return time.Since(began).Seconds(), true
			case back && time.Since(began) >= 15*time.Second:
				return 0, true
			case !back:
				disturbed = true
			}
		} else {
			disturbed = true
		}
		time.Sleep(time.Second)
	}
	fmt.Fprintf(os.Stderr, "bench: soak: not back at its desired state 10 minutes after %s: %s\n", after, s.offDesired())
	return time.Since(began).Seconds(), false
}

// soakProcs scans /proc for the soak's processes: by owner path, their
// pids.
func soakProcs() map[string][]int {
	out := map[string][]int{}
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue
		}
		args := strings.Split(strings.TrimRight(string(b), "\x00"), "\x00")
		if len(args) < 3 || args[1] != "soak-helper" || !strings.HasPrefix(args[len(args)-1], soakMarker) {
			continue
		}
		if st, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat")); err == nil && strings.Contains(string(st), ") Z ") {
			continue // a zombie: ended, not yet reaped
		}
		path := strings.TrimPrefix(args[len(args)-1], soakMarker)
		out[path] = append(out[path], pid)
	}
	return out
}

// check looks at the invariants once: every process of the soak's tree is
// one that a worker's status names (else, still so 30 s later, an orphan),
// and no worker has two (else, still so 30 s later and outside a move's
// overlap, a duplicate); no workflow's task fails.
func (s *soaker) check() {
	st, err := s.tree(30 * time.Second)
	if err != nil {
		return
	}
	procs := soakProcs()
	owned := map[int]bool{}
	var walk func(st treestatus.Status)
	walk = func(st treestatus.Status) {
		if st.TaskFailing != nil {
			s.mu.Lock()
			s.taskFailing[st.Path] = true
			s.mu.Unlock()
		}
		if pid, err := instancePid(st.Instance); err == nil {
			owned[pid] = true
		}
		for _, ch := range st.Children {
			walk(ch)
		}
	}
	walk(st)
	_, answered := notAtDesired(st)
	// A supervisor's record of a worker lags its worker (a manual restart
	// is not reported alone: its count rides along with the next report),
	// so a process the records do not name is asked of its worker itself
	// before it is suspected (the 2-hour soak counted two such as orphans).
	procs = s.ownedByTheirWorker(procs, owned)
	now := time.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.checks++
	overlap := now.Before(s.overlapUntil)
	seen := map[int]bool{}
	for path, pids := range procs {
		if len(pids) > 1 && !overlap {
			if first, ok := s.dupSuspects[path]; !ok {
				s.dupSuspects[path] = now
			} else if now.Sub(first) >= 30*time.Second && !s.dupPaths[path] {
				s.dupPaths[path] = true
				s.duplicates++
				fmt.Fprintf(os.Stderr, "bench: soak: DUPLICATE: %s runs as %v\n", path, pids)
			}
		} else {
			delete(s.dupSuspects, path)
		}
		for _, pid := range pids {
			if owned[pid] || !answered || overlap {
				continue
			}
			seen[pid] = true
			if first, ok := s.suspects[pid]; !ok {
				s.suspects[pid] = now
			} else if now.Sub(first) >= 30*time.Second && !s.orphanPids[pid] {
				s.orphanPids[pid] = true
				s.orphans++
				fmt.Fprintf(os.Stderr, "bench: soak: ORPHAN: pid %d of %s, owned by no worker's status\n", pid, path)
			}
		}
	}
	for pid := range s.suspects {
		if !seen[pid] && (answered && !overlap) {
			delete(s.suspects, pid)
		}
	}
}

// ownedByTheirWorker marks owned each process of procs that the records
// do not name but its worker's own status does (asked of the worker).
func (s *soaker) ownedByTheirWorker(procs map[string][]int, owned map[int]bool) map[string][]int {
	for path, pids := range procs {
		if !slices.ContainsFunc(pids, func(pid int) bool { return !owned[pid] }) {
			continue
		}
		ctx, cancel := context.WithTimeout(s.ctx, 10*time.Second)
		st, err := query(ctx, s.c, path)
		cancel()
		if err != nil {
			continue
		}
		if pid, err := instancePid(st.Instance); err == nil {
			owned[pid] = true
		}
	}
	return procs
}

// readFailures reads the current worker's count of failed workflow tasks.
func (s *soaker) readFailures() {
	v := sumOf(scraper(s.workerMetrics), telemetry.MetricWorkflowTaskFailed, "")
	if math.IsNaN(v) {
		return
	}
	s.mu.Lock()
	s.lastFailed = max(s.lastFailed, v)
	s.mu.Unlock()
}

// sample reads one minute's row.
func (s *soaker) sample() soakRow {
	r := soakRow{minute: round(time.Since(s.began).Minutes())}
	pid := s.workerPid()
	r.workerRSS = rssMiB(pid)
	r.workerFDs = fdCount(pid)
	get := scraper(s.workerMetrics)
	r.workerHeapObjects, _ = gaugeValue(get, "go_memstats_heap_objects", "")
	r.workerGoroutines, _ = gaugeValue(get, "go_goroutines", "")
	for _, h := range soakHosts {
		w := s.hosts[h]
		r.hostsRSS += rssMiB(w.cmd.Process.Pid)
		r.hostsFDs += fdCount(w.cmd.Process.Pid)
		get := scraper(s.hostMetrics[h])
		g, _ := gaugeValue(get, "go_goroutines", "")
		r.hostsGoroutines += g
		// The workflows a host worker keeps in its sticky cache, each with
		// its goroutines: growth there is the cache filling, not a leak.
		r.hostsCached += maxOf(get, "temporal_sticky_cache_size")
		heap, _ := gaugeValue(get, "go_memstats_heap_inuse_bytes", "")
		r.hostsHeapMiB += heap / (1 << 20)
		sys, _ := gaugeValue(get, "go_memstats_sys_bytes", "")
		r.hostsSysMiB += sys / (1 << 20)
		released, _ := gaugeValue(get, "go_memstats_heap_released_bytes", "")
		r.hostsReleasedMiB += released / (1 << 20)
		live, _ := gaugeValue(get, telemetry.MetricHeapLive, "")
		r.hostsLiveMiB += live / (1 << 20)
	}
	serverPid := devServerPid()
	if f := s.o.serverPidFile; f != "" {
		if b, err := os.ReadFile(f); err == nil {
			serverPid, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		}
	}
	r.serverRSS = rssMiB(serverPid)
	r.dbMiB = sizeMiB(s.dbPath) + sizeMiB(s.dbPath+"-wal")
	if s.o.dbDir != "" {
		r.dbMiB = dirMiB(s.o.dbDir)
	}
	r.stateMiB = dirMiB(s.stateDir)
	r.logsMiB = dirMiB(s.logDir)
	began := time.Now()
	if _, err := starterRun(s.o, 2*time.Minute, "status", soakTree, "-o", "json"); err == nil {
		r.statusMs = float64(time.Since(began).Milliseconds())
	} else {
		r.statusMs = math.NaN()
	}
	r.maxHistory = s.maxHistory()
	s.mu.Lock()
	busy := s.busy
	s.mu.Unlock()
	r.killToRunningMs = math.NaN()
	if !busy {
		if ms, err := killToRunning(s.ctx, s.c, soakTree+"/procs/probe"); err == nil {
			r.killToRunningMs = ms
		} else {
			fmt.Fprintln(os.Stderr, "bench: soak: probe:", err)
		}
	}
	if st, err := s.tree(30 * time.Second); err == nil {
		n, _ := notAtDesired(st)
		r.notAtDesired = float64(n)
	} else {
		r.notAtDesired = math.NaN()
	}
	s.readFailures()
	s.mu.Lock()
	r.duplicates, r.orphans = float64(s.duplicates), float64(s.orphans)
	r.taskFailures = s.failedBefore + s.lastFailed
	r.workerAgeMin = round(time.Since(s.workerBorn).Minutes())
	r.faultsAt = float64(len(s.faults))
	s.mu.Unlock()
	return r
}

// windowMinima is, of each run of n samples in turn, the lowest (with its
// x); a last run shorter than n is dropped.
func windowMinima(x, y []float64, n int) (mx, my []float64) {
	for i := 0; i+n <= len(y); i += n {
		j := i
		for k := i + 1; k < i+n; k++ {
			if y[k] < y[j] {
				j = k
			}
		}
		mx, my = append(mx, x[j]), append(my, y[j])
	}
	return mx, my
}

// heapProfiles writes each host worker's heap and goroutine profiles as
// STAMP-soak-heap-HOST-AT.pb.gz and STAMP-soak-goroutine-HOST-AT.pb.gz
// beside the CSV (a frozen host's are skipped: its server does not
// answer). Compare two with `go tool pprof -diff_base A B`
// (`-sample_index=inuse_space` for the heap's): what grows between them
// is named, objects and the coroutines that hold them alike.
func (s *soaker) heapProfiles(at string) {
	for _, h := range soakHosts {
		for _, kind := range []string{"heap", "goroutine"} {
			if err := s.profile(h, kind, at); err != nil {
				fmt.Fprintf(os.Stderr, "bench: soak: %s profile of %s at %s: %v\n", kind, h, at, err)
			}
		}
	}
}

// profile fetches one pprof profile of host h's worker into the results.
func (s *soaker) profile(h, kind, at string) error {
	ctx, cancel := context.WithTimeout(s.ctx, 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.hostPprof[h]+"/debug/pprof/"+kind, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s", resp.Status)
	}
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(s.out, fmt.Sprintf("%s-soak-%s-%s-%s.pb.gz", s.stamp, kind, h, at)), b, 0o644)
}

// maxHistory is the longest current history among the soak's
// supervisors, a sample of its workers and its jobs' workflows.
func (s *soaker) maxHistory() float64 {
	ids := []string{soakTree, soakTree + "/crashy", soakTree + "/procs", soakTree + "/web", soakTree + "/fleet", soakTree + "/jobs",
		soakTree + "/procs/probe", soakTree + "/procs/leak", soakTree + "/procs/flaky", soakTree + "/procs/p00", soakTree + "/fleet/f-0",
		soakTree + "/web/w-0", soakTree + "/jobs/j0"}
	for i := range 10 {
		ids = append(ids, fmt.Sprintf("%s/crashy/s%d-%d", soakTree, i, i*9))
	}
	longest := 0
	for _, id := range ids {
		ctx, cancel := context.WithTimeout(s.ctx, 10*time.Second)
		d, err := s.c.DescribeWorkflowExecution(ctx, id, "")
		cancel()
		if err == nil {
			longest = max(longest, int(d.GetWorkflowExecutionInfo().GetHistoryLength()))
		}
	}
	return float64(longest)
}

// killToRunning kills the process of worker id with -9 and waits until
// the worker runs again with another one: the delay in ms.
func killToRunning(ctx context.Context, c client.Client, id string) (float64, error) {
	st, err := query(ctx, c, id)
	if err != nil {
		return 0, err
	}
	pid, err := instancePid(st.Instance)
	if err != nil {
		return 0, err
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		return 0, err
	}
	killed := time.Now()
	ok := false
	var last workflows.Status
	var lastErr error
	waitFor(func() bool {
		last, lastErr = query(ctx, c, id)
		ok = lastErr == nil && last.State == "running" && last.Instance != st.Instance
		return ok
	})
	if !ok {
		return 0, fmt.Errorf("%s not running again within a minute of kill -9 of %s: %+v %v", id, st.Instance, last, lastErr)
	}
	return float64(time.Since(killed).Microseconds()) / 1000, nil
}

func fdCount(pid int) float64 {
	ents, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		return math.NaN()
	}
	return float64(len(ents))
}

func sizeMiB(path string) float64 {
	fi, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return round(float64(fi.Size()) / (1 << 20))
}

func dirMiB(dir string) float64 {
	if dir == "" {
		return 0
	}
	var n int64
	_ = filepath.WalkDir(dir, func(_ string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if fi, err := d.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	return round(float64(n) / (1 << 20))
}

// results fills the soak's figures, plots its rows and keeps its faults.
func (s *soaker) results(res Result, rows []soakRow, stamp, csvPath string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	res["soak_minutes"] = round(time.Since(s.began).Minutes())
	res["soak_pace"] = s.o.soakPace
	res["soak_host_workflow_cache"] = s.o.soakHostCache
	res["soak_csv"] = filepath.Base(csvPath)
	res["soak_duplicates"] = s.duplicates
	res["soak_orphans"] = s.orphans
	res["soak_checks"] = s.checks
	res["soak_task_failures"] = s.failedBefore + s.lastFailed
	res["soak_task_failing_workflows"] = len(s.taskFailing)
	res["soak_faults"] = s.faults
	// The bound (reschedule.after + 10 s) is on faults; an apply
	// or a rollout is an operator's change, whose time is its rolling
	// update's (and a bad one's revert): reported on its own.
	var rec, settle []float64
	unrecovered := 0
	for _, f := range s.faults {
		if f.Recovered < 0 {
			unrecovered++
			continue
		}
		if isOperation(f.Kind) {
			settle = append(settle, f.Recovered)
		} else {
			rec = append(rec, f.Recovered)
		}
	}
	res["soak_recovery_p99_s"] = pct(rec, 99)
	res["soak_recovery_median_s"] = pct(rec, 50)
	res["soak_operation_settle_p99_s"] = pct(settle, 99)
	res["soak_unrecovered"] = unrecovered
	lost, twice, err := s.revisionCount()
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench: soak: revisions:", err)
		res["soak_lost_revisions"] = math.NaN()
	} else {
		res["soak_lost_revisions"], res["soak_doubled_revisions"] = lost, twice
	}
	soakSlopes(res, rows)
	var first, last []float64
	total := time.Since(s.began).Minutes()
	for _, r := range rows {
		if math.IsNaN(r.killToRunningMs) {
			continue
		}
		if r.minute <= 60 {
			first = append(first, r.killToRunningMs)
		}
		if r.minute >= total-60 {
			last = append(last, r.killToRunningMs)
		}
	}
	res["soak_kill_to_running_p99_ms_first_hour"] = pct(first, 99)
	res["soak_kill_to_running_p99_ms_last_hour"] = pct(last, 99)
	res["soak_kill_to_running_ratio"] = ratio(pct(last, 99), pct(first, 99))
	var status []float64
	for _, r := range rows {
		if !math.IsNaN(r.statusMs) {
			status = append(status, r.statusMs)
		}
	}
	res["soak_status_p99_ms"] = pct(status, 99)
	plots, err := plotSoak(rows, filepath.Join(s.o.out, stamp+"-soak"))
	if err != nil {
		return err
	}
	res["soak_plots"] = plots
	b, _ := json.Marshal(s.faults)
	fmt.Fprintf(os.Stderr, "bench: soak faults: %s\n", b)
	return nil
}

// revisionCount compares the applies made with the tree's revisions:
// those missing (lost) and those recorded twice, among the last
// revision.Keep.
func (s *soaker) revisionCount() (lost, twice int, err error) {
	// A server busy with the tree's last recovery may not answer at once.
	var out string
	for try := 0; try < 5; try++ {
		if out, err = starterRun(s.o, time.Minute, "revisions", soakTree, "-o", "json"); err == nil {
			break
		}
		time.Sleep(10 * time.Second)
	}
	if err != nil {
		return 0, 0, err
	}
	var revs []struct {
		Message string `json:"message"`
	}
	if err := json.Unmarshal([]byte(out), &revs); err != nil {
		return 0, 0, err
	}
	count := map[string]int{}
	for _, r := range revs {
		count[r.Message]++
	}
	kept := s.applied[max(0, len(s.applied)-len(revs)):]
	for _, m := range kept {
		switch count[m] {
		case 0:
			lost++
		case 1:
		default:
			twice++
		}
	}
	return lost, twice, nil
}

// slope is the least-squares slope of y over x (NaN with fewer than two
// points).
func slope(x, y []float64) float64 {
	if len(x) < 2 {
		return math.NaN()
	}
	mx, my := mean(x), mean(y)
	var num, den float64
	for i := range x {
		num += (x[i] - mx) * (y[i] - my)
		den += (x[i] - mx) * (x[i] - mx)
	}
	if den == 0 {
		return math.NaN()
	}
	return num / den
}

// soakSlopes puts in res the slopes per hour of the rows after the first
// 15 minutes (the caches filling), each with its 95 % interval
// (slopeHalfWidth): the host workers live through the whole soak; the main
// worker is replaced every 15 minutes, so its slope is of its RSS at the
// same age in each life.
func soakSlopes(res Result, rows []soakRow) {
	steady := slices.DeleteFunc(slices.Clone(rows), func(r soakRow) bool { return r.minute < 15 })
	col := func(f func(r soakRow) float64) (x, y []float64) {
		for _, r := range steady {
			if v := f(r); !math.IsNaN(v) {
				x, y = append(x, r.minute/60), append(y, v)
			}
		}
		return x, y
	}
	x, y := col(func(r soakRow) float64 { return r.hostsRSS })
	res["soak_rss_slope_pct_per_hour"] = round(100 * slope(x, y) / mean(y))
	res["soak_rss_slope_ci95_pct_per_hour"] = round(100 * slopeHalfWidth(x, y) / mean(y))
	// The same of each 10 minutes' lowest RSS: a Go heap's RSS is a saw
	// (it grows to the next collection), and minute samples land anywhere
	// on it; its floor is what the workers keep.
	x, y = windowMinima(x, y, 10)
	res["soak_rss_floor_slope_pct_per_hour"] = round(100 * slope(x, y) / mean(y))
	x, y = col(func(r soakRow) float64 { return r.hostsHeapMiB })
	res["soak_hosts_heap_slope_pct_per_hour"] = round(100 * slope(x, y) / mean(y))
	x, y = col(func(r soakRow) float64 { return r.hostsLiveMiB })
	if len(y) > 1 && mean(y) > 0 {
		res["soak_hosts_heap_live_slope_pct_per_hour"] = round(100 * slope(x, y) / mean(y))
		res["soak_hosts_heap_live_slope_ci95_pct_per_hour"] = round(100 * slopeHalfWidth(x, y) / mean(y))
	}
	x, y = col(func(r soakRow) float64 { return r.hostsSysMiB - r.hostsReleasedMiB })
	res["soak_hosts_go_held_slope_pct_per_hour"] = round(100 * slope(x, y) / mean(y))
	x, y = col(func(r soakRow) float64 { return r.hostsGoroutines })
	res["soak_goroutine_slope_per_hour"] = round(slope(x, y))
	res["soak_goroutine_slope_ci95_per_hour"] = round(slopeHalfWidth(x, y))
	x, y = col(func(r soakRow) float64 { return r.hostsCached })
	res["soak_hosts_cached_slope_per_hour"] = round(slope(x, y))
	// Goroutines per hour beyond what the cached workflows explain: a leak
	// shows here, the cache filling does not.
	var cached []float64
	for _, r := range steady {
		cached = append(cached, r.hostsCached)
	}
	x, y = col(func(r soakRow) float64 { return r.hostsGoroutines })
	if len(cached) == len(x) {
		res["soak_goroutine_beyond_cache_slope_per_hour"] = round(slopeBeyond(x, y, cached))
		res["soak_goroutine_beyond_cache_slope_ci95_per_hour"] = round(slopeHalfWidth(residualsOn(cached, x), residualsOn(cached, y)))
	}
	x, y = col(func(r soakRow) float64 { return r.hostsFDs })
	res["soak_fd_slope_per_hour"] = round(slope(x, y))
	res["soak_fd_slope_ci95_per_hour"] = round(slopeHalfWidth(x, y))
	x, y = col(func(r soakRow) float64 {
		if r.workerAgeMin < 10 || r.workerAgeMin > 14 {
			return math.NaN()
		}
		return r.workerRSS
	})
	res["soak_worker_rss_at_age_slope_pct_per_hour"] = round(100 * slope(x, y) / mean(y))
	x, y = col(func(r soakRow) float64 { return r.dbMiB })
	res["soak_db_slope_mib_per_hour"] = round(slope(x, y))
}

// fields are the row's figures in soakColumns' order.
func (r *soakRow) fields() []*float64 {
	return []*float64{&r.minute, &r.workerRSS, &r.workerHeapObjects, &r.workerGoroutines, &r.workerFDs,
		&r.hostsRSS, &r.hostsGoroutines, &r.hostsFDs, &r.serverRSS, &r.maxHistory, &r.dbMiB, &r.stateMiB, &r.logsMiB,
		&r.statusMs, &r.killToRunningMs, &r.notAtDesired, &r.duplicates, &r.orphans, &r.taskFailures, &r.workerAgeMin, &r.faultsAt, &r.hostsCached,
		&r.hostsHeapMiB, &r.hostsSysMiB, &r.hostsReleasedMiB, &r.hostsLiveMiB}
}

// readSoakCSV reads the rows of a soak's CSV (a column it lacks, from a
// soak before it was sampled, is NaN).
func readSoakCSV(path string) ([]soakRow, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(recs) == 0 {
		return nil, fmt.Errorf("%s: no header", path)
	}
	at := map[string]int{}
	for i, name := range recs[0] {
		at[name] = i
	}
	var rows []soakRow
	for _, rec := range recs[1:] {
		var r soakRow
		for i, p := range r.fields() {
			*p = math.NaN()
			if j, ok := at[soakColumns[i]]; ok && j < len(rec) {
				if v, err := strconv.ParseFloat(rec[j], 64); err == nil {
					*p = v
				}
			}
		}
		rows = append(rows, r)
	}
	return rows, nil
}

// printSoakSlopes prints, as JSON, the slopes of the soak CSV at path:
// those of a soak that ran before a slope (or its interval) was reported.
func printSoakSlopes(path string) error {
	rows, err := readSoakCSV(path)
	if err != nil {
		return err
	}
	res := Result{}
	soakSlopes(res, rows)
	b, err := json.MarshalIndent(res, "", "  ")
	if err != nil {
		return err
	}
	fmt.Println(string(b))
	return nil
}

// slopeHalfWidth is the half-width of the 95 % confidence interval of
// slope(x, y): 1.96 standard errors of the least-squares slope, the
// standard error widened for the residuals' lag-1 autocorrelation (minute
// samples of a saw are not independent: as if there were n(1-r)/(1+r)
// samples). A slope within it of 0 is noise.
func slopeHalfWidth(x, y []float64) float64 {
	n := len(x)
	b := slope(x, y)
	if n < 4 || math.IsNaN(b) {
		return math.NaN()
	}
	mx, my := mean(x), mean(y)
	res := make([]float64, n)
	var ssr, sxx float64
	for i := range x {
		res[i] = y[i] - my - b*(x[i]-mx)
		ssr += res[i] * res[i]
		sxx += (x[i] - mx) * (x[i] - mx)
	}
	var lag float64
	for i := 1; i < n; i++ {
		lag += res[i] * res[i-1]
	}
	r := 0.0
	if ssr > 0 {
		r = max(0, min(lag/ssr, 0.95))
	}
	se := math.Sqrt(ssr / float64(n-2) / sxx * (1 + r) / (1 - r))
	return 1.96 * se
}

// residualsOn is v less its least-squares fit on z.
func residualsOn(z, v []float64) []float64 {
	b := slope(z, v)
	if math.IsNaN(b) {
		b = 0 // z constant: nothing of v is explained by it
	}
	a := mean(v) - b*mean(z)
	out := make([]float64, len(v))
	for i := range v {
		out[i] = v[i] - a - b*z[i]
	}
	return out
}

// slopeBeyond is the slope of y over x with z held still: the
// coefficient of x in the least-squares fit y = a + b x + c z (x and y
// are each fitted on z first; their residuals' slope is b).
func slopeBeyond(x, y, z []float64) float64 {
	return slope(residualsOn(z, x), residualsOn(z, y))
}

// soakExec runs the bench binary's helper when asked to (the soak's
// services are this binary).
func soakExec() bool {
	if len(os.Args) > 1 && os.Args[1] == "soak-helper" {
		soakHelper(os.Args[2:])
		return true
	}
	return false
}
