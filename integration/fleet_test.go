package integration

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/steward-sh/steward/workflows"
)

// A fleet on three hosts with their own addresses (network namespaces):
// six instances of an HTTP service spread two per host, and one service
// pinned to f1. Then, in turn:
//
//   - f3's link is cut: its two instances run on f1 and f2 once f3 has
//     been unknown past reschedule.after; the copies on f3 (cut off, still
//     running) are stale. The link comes back: they are stopped, and
//     exactly six instances run.
//   - f1 is drained under a budget of two: every instance leaves it, never
//     more than two down at once; the pinned service stays. Undrained,
//     nothing moves back.
//   - f2's worker and its services are killed outright: its instances run
//     on the others.
//
// At every look, never more than six instances are counted running.
func TestFleetFailoverAndDrainOnHostsWithTheirOwnAddresses(t *testing.T) {
	needServer(t)
	if reason := netnsSkipReason(); reason != "" {
		t.Skip(reason)
	}
	hosts := []string{"f1", "f2", "f3"}
	net := newNetHosts(t, hosts...)
	net.logLevel = "info"
	began := time.Now()
	phase := func(what string) { t.Logf("%6.1fs %s", time.Since(began).Seconds(), what) }
	serverAddr := relay(t, net.serverIP()+":0", address)
	on := func(args ...string) result {
		t.Helper()
		return cli(t, starterBin, append([]string{"--address", serverAddr}, args...)...)
	}
	hello := filepath.Join(workDir, "hello")
	out, err := exec.Command("go", "build", "-o", hello, "../examples/hello").CombinedOutput()
	require.NoError(t, err, string(out))
	workers := map[string]*workerProc{}
	for _, h := range hosts {
		workers[h] = net.startWorkerIn(h, serverAddr)
	}

	spec := fmt.Sprintf(`name: it-fleet
hosts: [f1, f2, f3]
reschedule: {after: 5s}
update: {maxParallel: 2}
children:
  - name: web
    kind: process
    instances: 6
    process: {command: %s, args: ["--addr", ":{{ add 18100 .Instance }}"], startSeconds: 300ms, unreachableAfter: 2s}
    observe: {interval: 2s}
    backoff: {initial: 100ms, max: 1s}
  - name: db
    kind: process
    process: {command: %s, args: ["--addr", ":18200"], startSeconds: 300ms, host: f1, unreachableAfter: 2s}
`, hello, hello)
	r := on("apply", "-f", writeSpec(t, spec), "--wait", "--timeout", "2m")
	require.Equal(t, 0, r.code, r.stdout+r.stderr)
	t.Cleanup(func() { on("delete", "it-fleet") })
	t.Cleanup(func() {
		if !t.Failed() {
			return
		}
		t.Logf("status at the failure:\n%s", on("status", "it-fleet", "-o", "json", "--usage=false").stdout)
		for _, q := range hosts {
			out, _ := exec.Command(temporal, "task-queue", "describe", "--address", address, "--task-queue", "steward-host-"+q).CombinedOutput()
			t.Logf("---- task queue of %s ----\n%s", q, out)
		}
		for _, id := range []string{"it-fleet", "host:f1", "host:f2"} {
			out, _ := exec.Command(temporal, "workflow", "show", "--address", address, "-w", id).CombinedOutput()
			t.Logf("---- history of %s ----\n%s", id, tail(string(out), 6000))
		}
		for _, h := range hosts {
			if b, err := os.ReadFile(filepath.Join(workDir, "worker-"+net.ns(h)+".log")); err == nil {
				var keep []string
				for _, l := range strings.Split(string(b), "\n") {
					if !strings.Contains(l, "Failed to poll") && !strings.Contains(l, "RecordActivityHeartbeat") {
						keep = append(keep, l)
					}
				}
				t.Logf("---- last of %s's worker log ----\n%s", h, tail(strings.Join(keep, "\n"), 20000))
			}
		}
	})

	// look is the tree's children as status shows them; it fails the test
	// at once if more than six instances are counted running.
	var overcount sync.Once
	look := func() []workflows.Status {
		t.Helper()
		var st workflows.Status
		eventually(t, 20*time.Second, func() (bool, string) {
			r := on("status", "it-fleet", "-o", "json", "--usage=false")
			return r.code == 0 && json.Unmarshal([]byte(r.stdout), &st) == nil, r.stderr
		})
		running := 0
		for _, c := range st.Children {
			if strings.HasPrefix(c.Path, "it-fleet/web-") && c.State == "running" {
				running++
			}
		}
		if running > 6 {
			overcount.Do(func() { t.Errorf("%d instances counted running: %+v", running, st.Children) })
		}
		return st.Children
	}
	web := func(kids []workflows.Status) []workflows.Status {
		return slices.DeleteFunc(slices.Clone(kids), func(c workflows.Status) bool { return !strings.HasPrefix(c.Path, "it-fleet/web-") })
	}
	perHost := func(kids []workflows.Status) map[string]int {
		m := map[string]int{}
		for _, c := range web(kids) {
			if c.State == "running" {
				m[c.Host]++
			}
		}
		return m
	}
	kids := look()
	require.Len(t, web(kids), 6)
	require.Equal(t, map[string]int{"f1": 2, "f2": 2, "f3": 2}, perHost(kids), "spread over the hosts: %+v", kids)
	hostsUp := func() map[string]workflows.HostView {
		t.Helper()
		var rows []workflows.HostView
		// A host that does not answer is listed as unanswered, and the
		// others are listed all the same: `starter hosts` never fails for
		// it. Wait for every host's own answer: a worker cut off with
		// its connection left open (f3, whose link is down) holds the
		// polls it had in flight until the server gives up on that
		// connection (frontend.keepAliveTime 1m + keepAliveTimeout 10s),
		// and a host's workflow whose task or query one of them took
		// answers only after that task times out (a CI run: host f1
		// unanswered 40-70 s after the cut). A worker just killed closes
		// its connection: its polls end at once.
		asked := time.Now()
		unanswered := ""
		defer func() {
			if unanswered != "" {
				t.Logf("starter hosts listed %s unanswered for %s", unanswered, time.Since(asked).Round(100*time.Millisecond))
			}
		}()
		eventually(t, 100*time.Second, func() (bool, string) {
			r := on("hosts", "-o", "json")
			require.Equal(t, 0, r.code, "starter hosts fails: %s", r.stdout+r.stderr)
			rows = nil
			require.NoError(t, json.Unmarshal([]byte(r.stdout), &rows), r.stdout)
			for _, h := range rows {
				if h.State == "unanswered" {
					unanswered = h.Name
					return false, r.stderr
				}
			}
			return true, ""
		})
		m := map[string]workflows.HostView{}
		for _, h := range rows {
			m[h.Name] = h
		}
		return m
	}
	var hv map[string]workflows.HostView
	eventually(t, time.Minute, func() (bool, string) { // each host's hello goes through
		hv = hostsUp()
		for _, h := range hosts {
			if hv[h].State != workflows.HostUp {
				return false, fmt.Sprintf("%s: %+v", h, hv[h])
			}
		}
		return true, ""
	})
	for _, h := range hosts {
		require.NotEmpty(t, hv[h].Build)
		require.Equal(t, net.addr(h), hv[h].Address, "the host's own address")
	}
	require.Equal(t, 3, hv["f1"].Services, "two instances and db")

	// f3's link is cut.
	onF3 := map[string]int{}
	for _, c := range web(kids) {
		if c.Host == "f3" {
			onF3[c.Path] = pidOf(t, c.Instance)
		}
	}
	phase("cut f3")
	net.cut("f3")
	cutAt := time.Now()
	eventually(t, 2*time.Minute, func() (bool, string) {
		kids := look()
		m := perHost(kids)
		return m["f3"] == 0 && m["f1"]+m["f2"] == 6, fmt.Sprintf("%v", m)
	})
	t.Logf("f3 cut off: its instances run elsewhere after %s (reschedule.after 5s)", time.Since(cutAt).Round(100*time.Millisecond))
	for path, pid := range onF3 {
		require.True(t, alive(pid), "%s: the copy on the cut-off host runs on", path)
	}
	// Each moved instance's own answer names its copy on f3 as stale. A
	// row from the supervisor's record (the worker's query timed out, its
	// workflow cached by f3's cut-off process until the sticky queue gives
	// up on it) carries no stale copies: wait for the worker's own. Its
	// task or query can also be taken by a poll the cut-off worker had
	// in flight, until the server drops f3's connection about 70 s after
	// the cut (see hostsUp): wait past that.
	eventually(t, 100*time.Second, func() (bool, string) {
		for _, c := range web(look()) {
			if _, moved := onF3[c.Path]; !moved {
				continue
			}
			if c.Stale != "" {
				return false, c.Path + ": " + c.Stale
			}
			if len(c.StaleCopies) != 1 {
				return false, fmt.Sprintf("%s: its copy on f3 is not marked stale: %+v", c.Path, c)
			}
		}
		return true, ""
	})
	require.Equal(t, workflows.HostUnknown, hostsUp()["f3"].State)

	phase("mend f3")
	net.mend("f3")
	eventually(t, 2*time.Minute, func() (bool, string) {
		for _, c := range web(look()) {
			if len(c.StaleCopies) > 0 {
				return false, fmt.Sprintf("%s: %v", c.Path, c.StaleCopies)
			}
		}
		for path, pid := range onF3 {
			if alive(pid) {
				return false, path + "'s stale copy still runs"
			}
		}
		return true, ""
	})
	kids = look()
	require.Equal(t, 6, perHost(kids)["f1"]+perHost(kids)["f2"], "exactly six, and nothing moved back: %v", perHost(kids))
	eventually(t, 30*time.Second, func() (bool, string) { return hostsUp()["f3"].State == workflows.HostUp, "f3 not up" })

	// f1 drained under a budget of two.
	onF1 := perHost(look())["f1"]
	require.Positive(t, onF1)
	stop := make(chan struct{})
	maxDown := 0
	var watch sync.WaitGroup
	watch.Add(1)
	go func() {
		defer watch.Done()
		for {
			select {
			case <-stop:
				return
			case <-time.After(200 * time.Millisecond):
			}
			r := on("status", "it-fleet", "-o", "json", "--usage=false")
			var st workflows.Status
			if r.code != 0 || json.Unmarshal([]byte(r.stdout), &st) != nil {
				continue
			}
			down := 0
			for _, c := range st.Children {
				if strings.HasPrefix(c.Path, "it-fleet/web-") && c.State != "running" {
					down++
				}
			}
			maxDown = max(maxDown, down)
		}
	}()
	phase("drain f1")
	r = on("drain", "f1", "--wait", "--timeout", "100s")
	phase("drained")
	close(stop)
	watch.Wait()
	require.Equal(t, 0, r.code, r.stdout+r.stderr)
	require.Contains(t, r.stdout, "it-fleet/db", "the pinned service is listed")
	kids = look()
	require.Zero(t, perHost(kids)["f1"], "%v", perHost(kids))
	require.Equal(t, 6, perHost(kids)["f2"]+perHost(kids)["f3"], "%v", perHost(kids))
	require.LessOrEqual(t, maxDown, 2, "never more than maxParallel down")
	t.Logf("drain of %d instances: at most %d down at once", onF1, maxDown)
	for _, c := range kids {
		if c.Path == "it-fleet/db" {
			require.Equal(t, "running", c.State, "db runs on on f1")
			require.Equal(t, "f1", c.Host)
		}
	}
	// drain --wait ends on the supervisors' word; the host's own record
	// says drained once their next subscriptions reach it, a few tasks
	// later (a CI run read "draining" right after the command).
	eventually(t, 30*time.Second, func() (bool, string) {
		st := hostsUp()["f1"].State
		return st == workflows.HostDrained, "f1 is " + st
	})
	r = on("undrain", "f1")
	require.Equal(t, 0, r.code, r.stderr)
	require.Equal(t, workflows.HostUp, hostsUp()["f1"].State)
	require.Zero(t, perHost(look())["f1"], "nothing moves back by itself")

	// f2's worker and its services are killed outright.
	var onF2 []int
	for _, c := range web(kids) {
		if c.Host == "f2" {
			onF2 = append(onF2, pidOf(t, c.Instance))
		}
	}
	require.NotEmpty(t, onF2)
	phase("kill f2")
	workers["f2"].kill()
	for _, pid := range onF2 {
		_ = exec.Command("kill", "-9", fmt.Sprint(pid)).Run()
	}
	killedAt := time.Now()
	eventually(t, 2*time.Minute, func() (bool, string) {
		m := perHost(look())
		return m["f2"] == 0 && m["f1"]+m["f3"] == 6, fmt.Sprintf("%v", m)
	})
	t.Logf("f2 killed: its instances run elsewhere after %s", time.Since(killedAt).Round(100*time.Millisecond))

}
