package integration

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/steward-sh/steward/internal/admission"
	"github.com/steward-sh/steward/internal/spec"
	"github.com/steward-sh/steward/workflows"
)

// guardedWorker runs a worker for a host of its own with admission flags.
func guardedWorker(t *testing.T, host string, flags ...string) *workerProc {
	t.Helper()
	w, err := startWorker(host, append([]string{"--host", host}, flags...)...)
	require.NoError(t, err)
	t.Cleanup(w.stop)
	return w
}

// rawSpec sends a worker a spec with the temporal CLI, around the starter,
// as anyone with write access to the namespace can.
func rawSpec(t *testing.T, path string, node spec.Node) {
	t.Helper()
	payload, err := json.Marshal(map[string]any{"spec": node})
	require.NoError(t, err)
	r := temporalCLI(t, "workflow", "signal", "--workflow-id", path, "--name", workflows.SignalSpec, "--input", string(payload))
	require.Equal(t, 0, r.code, r.stdout+r.stderr)
}

// refusedRunningAsBefore waits until path's host has refused its new spec
// and checks that the service that ran before runs on, untouched.
func refusedRunningAsBefore(t *testing.T, path string, before workflows.Status, reason string) workflows.Status {
	t.Helper()
	var st workflows.Status
	eventually(t, time.Minute, func() (bool, string) {
		st = status(t, path)
		return st.LastAction.Status == "refused" && st.Generation > before.Generation, fmt.Sprintf("%+v", st)
	})
	require.Equal(t, "running", st.State, "%+v", st)
	require.Contains(t, st.Reason, reason)
	require.Equal(t, before.Instance, st.Instance, "the instance that ran is the one that runs")
	require.True(t, alive(pidOf(t, st.Instance)))
	require.Equal(t, before.Restarts, st.Restarts)
	return st
}

func metricsOf(t *testing.T, w *workerProc) string {
	t.Helper()
	resp, err := http.Get(w.metrics)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return string(body)
}

// A host under a command policy refuses a spec sent around the starter
// that swaps the service's command for a shell: nothing runs, and the
// service that ran keeps its PID. A start outside the policy fails the
// worker with the policy's reason; the next valid spec goes on.
func TestPolicyRefusesARawSpecAndTheServiceRunsOn(t *testing.T) {
	needServer(t)
	sleep, err := exec.LookPath("sleep")
	require.NoError(t, err)
	sleep, err = filepath.Abs(sleep)
	require.NoError(t, err)
	dir := t.TempDir()
	policy := filepath.Join(dir, "policy.yaml")
	require.NoError(t, os.WriteFile(policy, []byte("commands: ["+sleep+"]\n"), 0o644))
	w := guardedWorker(t, "it-policy", "--policy", policy)
	t.Cleanup(func() { dumpOnFailure(t, "it-policy", "steward-host-it-policy", "it-policy", "it-policy/svc") })

	tree := func(args string) string {
		return writeSpec(t, `
name: it-policy
children:
  - name: svc
    kind: process
    process: {command: sleep, args: [`+args+`], host: it-policy, startSeconds: 200ms}
    observe: {interval: 2s}
`)
	}
	r := starter(t, "apply", "-f", tree(`"300"`), "--wait")
	require.Equal(t, 0, r.code, r.stdout+r.stderr)
	t.Cleanup(func() { deleteTree(t, "it-policy") })
	before := status(t, "it-policy/svc")
	require.Equal(t, "running", before.State)

	proof := filepath.Join(dir, "ran")
	rawSpec(t, "it-policy/svc", spec.Node{Name: "svc", Kind: spec.KindProcess, Process: map[string]any{
		"command": "/bin/sh", "args": []string{"-c", "id > " + proof}, "host": "it-policy"}})
	want := "policy " + policy + ": command /bin/sh is not allowed"
	if sh, err := filepath.EvalSymlinks("/bin/sh"); err == nil && sh != "/bin/sh" {
		// Judged by the file it runs (a merged /usr: /bin/sh is /usr/bin/dash).
		want = "policy " + policy + ": command /bin/sh (resolved to " + sh + ") is not allowed"
	}
	st := refusedRunningAsBefore(t, "it-policy/svc", before, want)
	require.Equal(t, "restart", st.LastAction.Name)
	require.Equal(t, want, st.LastAction.Error)
	_, err = os.Stat(proof)
	require.ErrorIs(t, err, os.ErrNotExist, "the shell never ran")
	eventually(t, 30*time.Second, func() (bool, string) {
		return strings.Contains(metricsOf(t, w), `steward_refused_actions_total{action="restart",rule="policy"} 1`), "the refusal counted in the host's metrics"
	})

	// apply --wait reports a refusal as a failure: the tree is not what was applied.
	r = starter(t, "apply", "-f", writeSpec(t, `
name: it-policy
children:
  - name: svc
    kind: process
    process: {command: /bin/sh, args: ["-c", "sleep 300"], host: it-policy, startSeconds: 200ms}
    observe: {interval: 2s}
`), "--wait", "--timeout", "1m")
	require.Equal(t, 1, r.code, r.stdout+r.stderr)
	require.Contains(t, r.stderr, "restart refused, running as before: "+want)
	require.True(t, alive(pidOf(t, before.Instance)))

	// The next valid spec goes on from there: a restart with it.
	r = starter(t, "apply", "-f", tree(`"301"`), "--wait")
	require.Equal(t, 0, r.code, r.stdout+r.stderr)
	st = status(t, "it-policy/svc")
	require.Equal(t, "running", st.State)
	require.NotEqual(t, before.Instance, st.Instance)
	require.Equal(t, "succeeded", st.LastAction.Status)
	eventually(t, 30*time.Second, func() (bool, string) {
		return !alive(pidOf(t, before.Instance)), "the old instance is stopped by the valid restart"
	})

	// A start outside the policy fails the worker and names the rule.
	r = starter(t, "apply", "-f", writeSpec(t, `
name: it-policy-start
children:
  - {name: sh, kind: process, process: {command: /bin/sh, args: ["-c", "id > `+proof+`"], host: it-policy}}
`), "--wait", "--timeout", "1m")
	t.Cleanup(func() { deleteTree(t, "it-policy-start") })
	require.Equal(t, 1, r.code, r.stdout+r.stderr)
	st = status(t, "it-policy-start/sh")
	require.Equal(t, "failed", st.State)
	require.Equal(t, "start refused: "+want, st.Reason)
	_, err = os.Stat(proof)
	require.ErrorIs(t, err, os.ErrNotExist, "the shell never ran")
}

// On a merged /usr (/bin a link to /usr/bin: Debian 12, Ubuntu, Fedora,
// Arch), a policy that lists /bin/sleep runs a spec's /bin/sleep: both are
// judged by the file they run, /usr/bin/sleep, which the worker runs with
// argv[0] as the spec writes it.
func TestPolicyWithBinSleepRunsBinSleepOnAMergedUsr(t *testing.T) {
	needServer(t)
	if fi, err := os.Lstat("/bin"); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Skip("this host's /bin is not a link to /usr/bin")
	}
	real, err := filepath.EvalSymlinks("/bin/sleep")
	require.NoError(t, err)
	policy := filepath.Join(t.TempDir(), "policy.yaml")
	require.NoError(t, os.WriteFile(policy, []byte("commands: [/bin/sleep]\n"), 0o644))
	guardedWorker(t, "it-merged", "--policy", policy)
	t.Cleanup(func() { dumpOnFailure(t, "it-merged", "steward-host-it-merged", "it-merged", "it-merged/svc") })

	r := starter(t, "apply", "-f", writeSpec(t, `
name: it-merged
children:
  - name: svc
    kind: process
    process: {command: /bin/sleep, args: ["300"], host: it-merged, startSeconds: 200ms}
    observe: {interval: 2s}
`), "--wait", "--timeout", "1m")
	t.Cleanup(func() { deleteTree(t, "it-merged") })
	require.Equal(t, 0, r.code, r.stdout+r.stderr)
	st := status(t, "it-merged/svc")
	require.Equal(t, "running", st.State, "%+v", st)
	pid := pidOf(t, st.Instance)
	cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	require.NoError(t, err)
	require.Equal(t, "/bin/sleep\x00300\x00", string(cmdline), "argv[0] as the spec writes it")
	exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid))
	require.NoError(t, err)
	require.Equal(t, real, exe)
}

// A host that requires signatures runs only specs signed by a key it
// trusts: an unsigned apply fails, a signed one runs, and a spec changed
// after it was signed (a copied signature on a swapped command, sent around
// the starter) is refused while the service keeps its PID.
func TestSignedSpecsAreRequiredByAHostThatTrustsKeys(t *testing.T) {
	needServer(t)
	dir := t.TempDir()
	key := filepath.Join(dir, "ops")
	r := starter(t, "keygen", key)
	require.Equal(t, 0, r.code, r.stdout+r.stderr)
	require.Contains(t, r.stdout, "key id ")
	fi, err := os.Stat(key)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
	r = starter(t, "keygen", key)
	require.Equal(t, 2, r.code, "a key is never overwritten: "+r.stderr)
	guardedWorker(t, "it-signed", "--trusted-keys", key+".pub")

	file := writeSpec(t, `
name: it-signed
vars: {secs: "300"}
children:
  - name: svc
    kind: process
    process: {command: sleep, args: ["{{ .Vars.secs }}"], host: it-signed, startSeconds: 200ms}
    observe: {interval: 2s}
`)
	r = starter(t, "apply", "-f", file, "--wait", "--timeout", "1m")
	t.Cleanup(func() { deleteTree(t, "it-signed") })
	require.Equal(t, 1, r.code, r.stdout+r.stderr)
	require.Contains(t, r.stderr, "signature: the spec of it-signed/svc is not signed, and this host runs only signed specs (--trusted-keys)")
	require.Equal(t, "failed", status(t, "it-signed/svc").State)

	r = starter(t, "apply", "-f", file, "--sign-key", key, "--wait")
	require.Equal(t, 0, r.code, r.stdout+r.stderr)
	before := status(t, "it-signed/svc")
	require.Equal(t, "running", before.State)

	// The operator's signature of the service, copied onto a shell.
	priv, err := admission.LoadPrivateKey(key)
	require.NoError(t, err)
	node := spec.Node{Name: "svc", Kind: spec.KindProcess, Process: map[string]any{"command": "sleep", "args": []string{"300"}, "host": "it-signed", "startSeconds": "200ms"}}
	node.Signature, err = admission.Sign(priv, "it-signed/svc", node)
	require.NoError(t, err)
	node.Process["command"] = "/bin/sh"
	node.Process["args"] = []string{"-c", "sleep 300"}
	rawSpec(t, "it-signed/svc", node)
	refused := refusedRunningAsBefore(t, "it-signed/svc", before, "it was changed after it was signed")
	// The next apply replaces a spec sent around the supervisor once the
	// supervisor has heard of it (the child's report of its generation).
	eventually(t, time.Minute, func() (bool, string) {
		r := starter(t, "status", "it-signed", "--exact", "false", "-o", "json")
		var st workflows.Status
		if err := json.Unmarshal([]byte(r.stdout), &st); err != nil || len(st.Children) == 0 {
			return false, r.stdout + r.stderr
		}
		return st.Children[0].Generation == refused.Generation, r.stdout
	})

	// Re-signing the same file changes no service (same signature, same
	// instance), and a signed change runs.
	r = starter(t, "apply", "-f", file, "--sign-key", key, "--wait")
	require.Equal(t, 0, r.code, r.stdout+r.stderr)
	st := status(t, "it-signed/svc")
	require.Equal(t, "running", st.State)
	require.Equal(t, "succeeded", st.LastAction.Status, "the valid spec restarted the service: %+v", st)
	require.False(t, strings.Contains(st.Reason, "refused"), st.Reason)
}

// keygen writes a key pair with the starter and returns its prefix.
func keygen(t *testing.T) string {
	t.Helper()
	key := filepath.Join(t.TempDir(), "ops")
	r := starter(t, "keygen", key)
	require.Equal(t, 0, r.code, r.stdout+r.stderr)
	return key
}

// A signed fleet: each instance, rendered by its supervisor for its number
// and host, runs on a host that trusts the key; an instance's spec changed
// around the supervisor, its signature kept, is refused.
func TestSignedFleetInstancesRunAndAChangedOneIsRefused(t *testing.T) {
	needServer(t)
	key := keygen(t)
	guardedWorker(t, "it-sf", "--trusted-keys", key+".pub")
	yml := `
name: it-sfleet
hosts: [it-sf]
children:
  - name: web
    kind: process
    instances: 2
    process: {command: sleep, args: ["{{ add 300 .Instance }}"], startSeconds: 200ms}
    observe: {interval: 2s}
`
	file := writeSpec(t, yml)
	r := starter(t, "apply", "-f", file, "--sign-key", key, "--wait", "--timeout", "2m")
	t.Cleanup(func() { deleteTree(t, "it-sfleet") })
	require.Equal(t, 0, r.code, r.stdout+r.stderr)
	web1 := status(t, "it-sfleet/web-1")
	require.Equal(t, "running", web1.State)
	require.Equal(t, "it-sf", web1.Host)
	cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pidOf(t, web1.Instance)))
	require.NoError(t, err)
	require.Equal(t, "sleep\x00301\x00", string(cmdline), "instance 1 rendered for itself")

	// web-1's template as its supervisor hands it down, signature kept,
	// its command changed.
	tree, err := spec.Parse([]byte(yml))
	require.NoError(t, err)
	priv, err := admission.LoadPrivateKey(key)
	require.NoError(t, err)
	signed, err := admission.SignTree(priv, tree, 1, nil)
	require.NoError(t, err)
	node := spec.Inherit(signed, spec.Expand(signed)[1])
	node.PlacedOn = "it-sf"
	node.Process = map[string]any{"command": "/bin/sh", "args": []string{"-c", "sleep 300"}, "startSeconds": "200ms"}
	rawSpec(t, "it-sfleet/web-1", node)
	refusedRunningAsBefore(t, "it-sfleet/web-1", web1, "does not match its signature")
	require.Equal(t, "running", status(t, "it-sfleet/web-0").State)
}

// dumpOnFailure logs, when t failed, what says why: the worker log named
// logName, the task queue, and the workflows' histories.
func dumpOnFailure(t *testing.T, logName, queue string, ids ...string) {
	if !t.Failed() {
		return
	}
	if b, err := os.ReadFile(filepath.Join(workDir, logName+".log")); err == nil {
		t.Logf("---- last of %s.log ----\n%s", logName, tail(string(b), 8000))
	}
	out, _ := exec.Command(temporal, "task-queue", "describe", "--address", address, "--task-queue", queue).CombinedOutput()
	t.Logf("---- task queue %s ----\n%s", queue, out)
	for _, id := range ids {
		out, _ := exec.Command(temporal, "workflow", "show", "--address", address, "-w", id).CombinedOutput()
		t.Logf("---- history of %s ----\n%s", id, tail(string(out), 6000))
	}
}
