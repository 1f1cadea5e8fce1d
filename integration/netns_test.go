package integration

import (
	"encoding/json"
	"fmt"
	"io"
	stdnet "net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/steward-sh/steward/workflows"
)

// netHosts is a small network on this machine: a bridge in the test's own
// network namespace with the server's address, and one network namespace per
// host, each with its own address on the bridge through a veth pair. What
// runs in a host's namespace (its steward worker and the services that
// worker starts) reaches the server only over its link, and only its link.
type netHosts struct {
	t      *testing.T
	prefix string // of every namespace and link name, unique to the run
	bridge string
	subnet string // "10.213.N"
	hosts  []string
	// logLevel of the hosts' workers (default warn).
	logLevel string
}

// netnsSkipReason says why this machine cannot run the network-namespace
// test, or "" when it can: it needs root, iproute2, and a kernel that lets
// it add a namespace (a container may not).
func netnsSkipReason() string {
	if os.Geteuid() != 0 {
		return "needs root (ip netns)"
	}
	if _, err := exec.LookPath("ip"); err != nil {
		return "needs iproute2 (the ip command): apt-get install iproute2"
	}
	probe := fmt.Sprintf("stwprobe%d", os.Getpid())
	if out, err := exec.Command("ip", "netns", "add", probe).CombinedOutput(); err != nil {
		return "ip netns add is not allowed here: " + strings.TrimSpace(string(out))
	}
	_ = exec.Command("ip", "netns", "del", probe).Run()
	return ""
}

func newNetHosts(t *testing.T, names ...string) *netHosts {
	t.Helper()
	pid := os.Getpid()
	n := &netHosts{t: t, prefix: fmt.Sprintf("st%d", pid%100000), subnet: fmt.Sprintf("10.213.%d", pid%250)}
	n.bridge = n.prefix + "br"
	t.Cleanup(n.teardown)
	n.ip("link", "add", n.bridge, "type", "bridge")
	n.ip("addr", "add", n.subnet+".1/24", "dev", n.bridge)
	n.ip("link", "set", n.bridge, "up")
	for i, h := range names {
		ns, veth := n.ns(h), n.veth(h)
		n.ip("netns", "add", ns)
		n.hosts = append(n.hosts, h)
		n.ip("link", "add", veth, "type", "veth", "peer", "name", "eth0", "netns", ns)
		n.ip("link", "set", veth, "master", n.bridge)
		n.ip("link", "set", veth, "up")
		n.ip("-n", ns, "addr", "add", fmt.Sprintf("%s.%d/24", n.subnet, 11+i), "dev", "eth0")
		n.ip("-n", ns, "link", "set", "eth0", "up")
		n.ip("-n", ns, "link", "set", "lo", "up")
	}
	return n
}

func (n *netHosts) ns(host string) string   { return n.prefix + host }
func (n *netHosts) veth(host string) string { return n.prefix + "v" + host }

// serverIP is the bridge's address, where the test's server listens.
func (n *netHosts) serverIP() string { return n.subnet + ".1" }

// addr is host's own address.
func (n *netHosts) addr(host string) string {
	for i, h := range n.hosts {
		if h == host {
			return fmt.Sprintf("%s.%d", n.subnet, 11+i)
		}
	}
	n.t.Fatalf("no host %s", host)
	return ""
}

// cut takes host's link down (the host and all on it are cut off, and keep
// running); mend brings it back.
func (n *netHosts) cut(host string)  { n.ip("link", "set", n.veth(host), "down") }
func (n *netHosts) mend(host string) { n.ip("link", "set", n.veth(host), "up") }

func (n *netHosts) ip(args ...string) {
	n.t.Helper()
	out, err := exec.Command("ip", args...).CombinedOutput()
	require.NoError(n.t, err, "ip %s: %s", strings.Join(args, " "), out)
}

func (n *netHosts) teardown() {
	for _, h := range n.hosts {
		_ = exec.Command("ip", "netns", "del", n.ns(h)).Run() // takes its veth pair with it
	}
	_ = exec.Command("ip", "link", "del", n.bridge).Run()
}

// startWorkerIn runs bin/worker as host in its namespace (ip netns exec
// execs the worker: the PID is the worker's).
func (n *netHosts) startWorkerIn(host, serverAddr string) *workerProc {
	n.t.Helper()
	logf, err := os.OpenFile(filepath.Join(workDir, "worker-"+n.ns(host)+".log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	require.NoError(n.t, err)
	level := n.logLevel
	if level == "" {
		level = "warn"
	}
	cmd := exec.Command("ip", "netns", "exec", n.ns(host), workerBin, "--address", serverAddr,
		"--host", host, "--log-level", level, "--metrics", "127.0.0.1:9090",
		"--log-dir", filepath.Join(workDir, "logs-"+host), "--state-dir", filepath.Join(workDir, "state"))
	cmd.Stdout, cmd.Stderr = logf, logf
	require.NoError(n.t, cmd.Start())
	w := &workerProc{cmd: cmd, done: make(chan struct{}), log: logf}
	go func() { _ = cmd.Wait(); close(w.done) }()
	n.t.Cleanup(w.stop)
	return w
}

// Three hosts with their own addresses: each runs its own worker and an
// HTTP service on its own address (the same port on all three). One host's
// link goes down: its service goes unknown, the others are untouched, and a
// rollout over the shared pool goes on without it. The link comes back: the
// service, which ran on all along, is running again, not restarted.
func TestHostsWithTheirOwnAddresses(t *testing.T) {
	needServer(t)
	if reason := netnsSkipReason(); reason != "" {
		t.Skip(reason)
	}
	net := newNetHosts(t, "h1", "h2", "h3")

	// The test server listens on loopback, which a namespace cannot reach
	// (and the dev server bound to another address advertises loopback to
	// its own services): the hosts reach it through a TCP relay on the
	// bridge's address.
	serverAddr := relay(t, net.serverIP()+":0", address)
	on := func(args ...string) result { // the starter, as the hosts see the server
		t.Helper()
		return cli(t, starterBin, append([]string{"--address", serverAddr}, args...)...)
	}

	hello := filepath.Join(workDir, "hello")
	out, err := exec.Command("go", "build", "-o", hello, "../examples/hello").CombinedOutput()
	require.NoError(t, err, string(out))
	for _, h := range []string{"h1", "h2", "h3"} {
		net.startWorkerIn(h, serverAddr)
	}

	var yaml strings.Builder
	yaml.WriteString("name: it-net\nchildren:\n")
	for _, h := range []string{"h1", "h2", "h3"} {
		fmt.Fprintf(&yaml, `  - name: web-%s
    kind: process
    process: {command: %s, args: ["--addr", "%s:18081"], startSeconds: 300ms, host: %s, unreachableAfter: 2s}
    observe: {interval: 1s}
    backoff: {initial: 100ms, max: 1s}
`, h, hello, net.addr(h), h)
	}
	yaml.WriteString(`  - name: pool
    strategy: one_for_one
    children:
`)
	for i := range 6 {
		fmt.Fprintf(&yaml, "      - {name: s%d, kind: stub, stub: {delay: 50ms}, timeouts: {start: 5s, restart: 5s}}\n", i)
	}
	r := on("apply", "-f", writeSpec(t, yaml.String()), "--wait", "--timeout", "2m")
	require.Equal(t, 0, r.code, r.stdout+r.stderr)
	t.Cleanup(func() { on("delete", "it-net") })

	statusOn := func(path string) workflows.Status {
		t.Helper()
		var st workflows.Status
		// The worker's own answer: right after a host is cut off, a query
		// of a workflow its process had cached may time out, and status
		// then shows the row from visibility, marked stale (no instance).
		eventually(t, 45*time.Second, func() (bool, string) {
			r := on("status", path, "-o", "json")
			st = workflows.Status{}
			return r.code == 0 && json.Unmarshal([]byte(r.stdout), &st) == nil && st.Stale == "", r.stderr + st.Stale
		})
		return st
	}
	serves := func(h string) bool {
		c := http.Client{Timeout: 2 * time.Second}
		resp, err := c.Get("http://" + net.addr(h) + ":18081/")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	}
	pids := map[string]int{}
	for _, h := range []string{"h1", "h2", "h3"} {
		st := statusOn("it-net/web-" + h)
		require.Equal(t, "running", st.State, "%+v", st)
		pids[h] = pidOf(t, st.Instance)
		eventually(t, 30*time.Second, func() (bool, string) { return serves(h), "no answer from " + h })
	}

	net.cut("h2")
	cutAt := time.Now()
	eventually(t, 2*time.Minute, func() (bool, string) {
		st := statusOn("it-net/web-h2")
		return st.State == "unknown" && strings.Contains(st.Reason, "host h2 unreachable"), fmt.Sprintf("%+v", st)
	})
	t.Logf("h2 cut off: unknown after %s", time.Since(cutAt).Round(100*time.Millisecond))
	require.False(t, serves("h2"), "h2 is cut off")
	require.True(t, alive(pids["h2"]), "a cut-off host's service runs on")
	for _, h := range []string{"h1", "h3"} {
		st := statusOn("it-net/web-" + h)
		require.Equal(t, "running", st.State, "%s untouched: %+v", h, st)
		require.Equal(t, pids[h], pidOf(t, st.Instance), "%s untouched", h)
		require.Zero(t, st.Restarts, "%s untouched", h)
		require.True(t, serves(h), "%s serves on", h)
	}
	r = on("rollout", "restart", "it-net/pool", "--chunk", "3", "-o", "json")
	require.Equal(t, 0, r.code, "a rollout over the shared pool goes on without h2: %s%s", r.stdout, r.stderr)
	var res workflows.RolloutStatus
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &res), r.stdout)
	require.Equal(t, 6, res.Succeeded, r.stdout)

	net.mend("h2")
	mendedAt := time.Now()
	eventually(t, 3*time.Minute, func() (bool, string) {
		st := statusOn("it-net/web-h2")
		return st.State == "running", fmt.Sprintf("%+v", st)
	})
	t.Logf("h2 back: running again after %s", time.Since(mendedAt).Round(100*time.Millisecond))
	st := statusOn("it-net/web-h2")
	require.Equal(t, pids["h2"], pidOf(t, st.Instance), "reconciled: the same process, found running")
	require.Zero(t, st.Restarts, "an unreachable host is not a failure")
	require.True(t, serves("h2"), "h2 serves again")
}

// relay listens on listen and copies every connection both ways to target,
// until the test ends; it returns the address it listens on.
func relay(t *testing.T, listen, target string) string {
	t.Helper()
	l, err := stdnet.Listen("tcp", listen)
	require.NoError(t, err)
	var conns sync.WaitGroup
	t.Cleanup(func() {
		l.Close()
		conns.Wait()
	})
	go func() {
		for {
			in, err := l.Accept()
			if err != nil {
				return
			}
			out, err := stdnet.Dial("tcp", target)
			if err != nil {
				in.Close()
				continue
			}
			conns.Add(2)
			pipe := func(dst, src stdnet.Conn) {
				defer conns.Done()
				_, _ = io.Copy(dst, src)
				dst.Close()
				src.Close()
			}
			go pipe(out, in)
			go pipe(in, out)
		}
	}()
	return l.Addr().String()
}
