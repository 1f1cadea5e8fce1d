package admission

import (
	"crypto/ed25519"
	"encoding/json"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/steward-sh/steward/internal/spec"
)

func processNode(t testing.TB, yamlProcess string) spec.Node {
	t.Helper()
	n, err := spec.Parse([]byte("name: t\nchildren:\n  - name: web\n    kind: process\n    process: " + yamlProcess + "\n"))
	require.NoError(t, err)
	return n.Children[0]
}

func policy(t testing.TB, yamlText string) *Policy {
	t.Helper()
	p, err := ParsePolicy([]byte(yamlText))
	require.NoError(t, err)
	return p
}

// fakeHost lays out a host's files under a temporary root (its canonical
// path): a merged /usr (bin -> usr/bin), python3 -> python3.11, an
// alternatives chain (usr/bin/editor -> /etc/alternatives/editor ->
// usr/bin/vim.basic), and a deployment (opt/app/current -> releases/v2,
// with a releases/evil beside it). Every program is a script that prints
// its name.
func fakeHost(t testing.TB) string {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	for _, prog := range []string{"usr/bin/sleep", "usr/bin/dash", "usr/bin/python3.11", "usr/bin/python3.12", "usr/bin/vim.basic",
		"opt/shop/bin/api", "opt/app/releases/v2/bin/api", "opt/app/releases/v3/bin/api", "opt/app/releases/evil", "opt/app/allowed/ok"} {
		file := filepath.Join(root, prog)
		require.NoError(t, os.MkdirAll(filepath.Dir(file), 0o755))
		require.NoError(t, os.WriteFile(file, []byte("#!/bin/sh\necho "+prog+"\n"), 0o755))
	}
	for link, target := range map[string]string{
		"bin":                     "usr/bin",
		"usr/bin/sh":              "dash",
		"usr/bin/python3":         "python3.11",
		"usr/bin/editor":          filepath.Join(root, "etc/alternatives/editor"),
		"etc/alternatives/editor": "../../usr/bin/vim.basic",
		"opt/app/current":         "releases/v2",
		"opt/app/allowed/current": "../releases/v2",
	} {
		require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(root, link)), 0o755))
		require.NoError(t, os.Symlink(target, filepath.Join(root, link)))
	}
	return root
}

// relink points the link at path (under root) to target.
func relink(t testing.TB, root, path, target string) {
	t.Helper()
	tmp := filepath.Join(root, path+".new")
	require.NoError(t, os.Symlink(target, tmp))
	require.NoError(t, os.Rename(tmp, filepath.Join(root, path)))
}

func TestPolicy_CommandsAreMatchedAsTheHostResolvesThem(t *testing.T) {
	root := fakeHost(t)
	p := policy(t, "commands: ["+root+"/usr/bin/sleep, "+root+"/opt/shop/bin/*]\n")
	for _, ok := range []string{
		`{command: ` + root + `/usr/bin/sleep, args: ["1"]}`,
		`{command: ` + root + `/opt/shop/bin/api}`,
		`{command: ` + root + `/opt/shop/bin/../bin/api}`,
		`{command: bin/api, dir: ` + root + `/opt/shop}`, // relative: from dir
	} {
		require.NoError(t, p.Check(processNode(t, ok)), ok)
	}
	for cmd, why := range map[string]string{
		`{command: ` + root + `/usr/bin/dash, args: ["-c", "id"]}`:  "command " + root + "/usr/bin/dash is not allowed",
		`{command: ` + root + `/opt/shop/bin/../../../usr/bin/sh}`:  "command " + root + "/opt/shop/bin/../../../usr/bin/sh (resolved to " + root + "/usr/bin/dash) is not allowed",
		`{command: ` + root + `/opt/shop/bin/sub/api}`:              "command " + root + "/opt/shop/bin/sub/api: no such file on this host",
		`{command: ../../usr/bin/dash, dir: ` + root + `/opt/shop}`: "command " + root + "/opt/shop/../../usr/bin/dash (resolved to " + root + "/usr/bin/dash) is not allowed",
		`{command: no-such-program-anywhere-here}`:                  "command no-such-program-anywhere-here: not found in this host's PATH",
	} {
		err := p.Check(processNode(t, cmd))
		require.Error(t, err, cmd)
		require.Equal(t, "policy (inline): "+why, err.Error(), cmd)
		var r *Refusal
		require.ErrorAs(t, err, &r)
	}
	// * does not cross /.
	require.NoError(t, os.MkdirAll(filepath.Join(root, "opt/shop/bin/sub"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(root, "opt/shop/bin/sub/api"), []byte("#!/bin/sh\n"), 0o755))
	require.EqualError(t, p.Check(processNode(t, `{command: `+root+`/opt/shop/bin/sub/api}`)),
		"policy (inline): command "+root+"/opt/shop/bin/sub/api is not allowed")
}

// Finding 1: on a merged /usr (Debian 12, Ubuntu, Fedora, Arch) /bin is a
// link to /usr/bin. A policy that lists /bin/sleep, /bin/* or
// /usr/bin/sleep allows the program, whichever of its names a spec uses.
func TestMergedUsrBinSleepIsAllowed(t *testing.T) {
	root := fakeHost(t)
	for _, entry := range []string{root + "/bin/sleep", root + "/bin/*", root + "/usr/bin/sleep", root + "/usr/bin/*"} {
		p := policy(t, "commands: ["+entry+"]\n")
		for _, cmd := range []string{root + "/bin/sleep", root + "/usr/bin/sleep", root + "/bin/../bin/sleep"} {
			require.NoError(t, p.Check(processNode(t, "{command: "+cmd+"}")), "%s under %s", cmd, entry)
		}
	}
	for _, entry := range []string{root + "/bin/sleep", root + "/usr/bin/sleep"} {
		require.ErrorContains(t, policy(t, "commands: ["+entry+"]\n").Check(processNode(t, "{command: "+root+"/bin/sh}")), "is not allowed", entry)
	}
	require.Equal(t, []string{root + "/bin/* -> " + root + "/usr/bin/*"}, policy(t, "commands: ["+root+"/bin/*]\n").Resolved())

	// And on this host, when its /bin is a link.
	if fi, err := os.Lstat("/bin"); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Log("this host's /bin is not a link: the fake host's check stands alone")
		return
	}
	p := policy(t, "commands: [/bin/sleep]\n")
	require.NoError(t, p.Check(processNode(t, "{command: /bin/sleep}")))
	require.NoError(t, p.Check(processNode(t, "{command: /usr/bin/sleep}")))
	path, err := p.Program("command", "/bin/sleep", "")
	require.NoError(t, err)
	real, err := filepath.EvalSymlinks("/bin/sleep")
	require.NoError(t, err)
	require.Equal(t, real, path, "the program runs by its canonical path")
}

// A listed link is followed at load: listing python3 allows the program it
// points to then (by either name), and an alternatives chain allows its
// end. A link that points elsewhere later does not move the policy: the
// refusal says what the entry stood for at load.
func TestAListedLinkIsFollowedAtLoad(t *testing.T) {
	root := fakeHost(t)
	p := policy(t, "commands: ["+root+"/usr/bin/python3, "+root+"/usr/bin/editor]\n")
	for _, cmd := range []string{"/usr/bin/python3", "/usr/bin/python3.11", "/bin/python3", "/usr/bin/editor", "/etc/alternatives/editor", "/usr/bin/vim.basic"} {
		require.NoError(t, p.Check(processNode(t, "{command: "+root+cmd+"}")), cmd)
	}
	require.ErrorContains(t, p.Check(processNode(t, "{command: "+root+"/usr/bin/python3.12}")), "is not allowed")
	require.ElementsMatch(t, []string{
		root + "/usr/bin/python3 -> " + root + "/usr/bin/python3.11",
		root + "/usr/bin/editor -> " + root + "/usr/bin/vim.basic",
	}, p.Resolved())

	relink(t, root, "usr/bin/python3", "python3.12")
	require.EqualError(t, p.Check(processNode(t, "{command: "+root+"/usr/bin/python3}")),
		"policy (inline): command "+root+"/usr/bin/python3 (resolved to "+root+"/usr/bin/python3.12) is not allowed"+
			" (the policy's "+root+"/usr/bin/python3 stands for "+root+"/usr/bin/python3.11: its links as they were when the worker loaded the policy)")
	require.NoError(t, p.Check(processNode(t, "{command: "+root+"/usr/bin/python3.11}")))

	// An entry that is not there yet keeps its name after its parent's
	// canonical path: /bin/later is matched as /usr/bin/later.
	later := policy(t, "commands: ["+root+"/bin/later, "+root+"/opt/none/bin/*]\n")
	require.ElementsMatch(t, []string{root + "/bin/later -> " + root + "/usr/bin/later"}, later.Resolved())
	require.NoError(t, os.WriteFile(filepath.Join(root, "usr/bin/later"), []byte("#!/bin/sh\n"), 0o755))
	require.NoError(t, later.Check(processNode(t, "{command: "+root+"/bin/later}")))
}

// Finding 2: allowed/current is a link to ../releases/v2, so the kernel
// runs allowed/current/../evil as releases/evil (".." of the link's
// target), not as allowed/evil (the cleaned path, which allowed/* would
// match). The policy judges the path the kernel runs.
func TestDotDotAfterASymlinkedDirIsJudgedAsTheKernelRunsIt(t *testing.T) {
	root := fakeHost(t)
	// What the kernel runs: the script prints its own name.
	trick := root + "/opt/app/allowed/current/../evil"
	out, err := exec.Command(trick).Output()
	require.NoError(t, err)
	require.Equal(t, "opt/app/releases/evil\n", string(out), "the kernel takes .. from the link's target")
	path, err := Resolve(trick, "")
	require.NoError(t, err)
	require.Equal(t, root+"/opt/app/releases/evil", path, "filepath.EvalSymlinks resolves components in order, as the kernel does")

	p := policy(t, "commands: ["+root+"/opt/app/allowed/*]\n")
	require.NoError(t, p.Check(processNode(t, "{command: "+root+"/opt/app/allowed/ok}")))
	require.EqualError(t, p.Check(processNode(t, "{command: "+trick+"}")),
		"policy (inline): command "+trick+" (resolved to "+root+"/opt/app/releases/evil) is not allowed")
	require.EqualError(t, p.Check(processNode(t, "{command: current/../evil, dir: "+root+"/opt/app/allowed}")),
		"policy (inline): command "+trick+" (resolved to "+root+"/opt/app/releases/evil) is not allowed", "relative, from dir")
	require.ErrorContains(t, p.Check(processNode(t, "{command: "+root+"/opt/app/allowed/ok, health: {exec: ["+trick+"]}}")),
		"probe command (process.health.exec) "+trick+" (resolved to")

	// An entry is resolved the same way at load.
	q := policy(t, "commands: ["+root+"/opt/app/allowed/current/../bin/*]\n")
	require.Equal(t, []string{root + "/opt/app/allowed/current/../bin/* -> " + root + "/opt/app/releases/bin/*"}, q.Resolved())
	_, err = ParsePolicy([]byte("commands: [" + root + "/opt/*/../bin/x]\n"))
	require.ErrorContains(t, err, "has .. after a wildcard")
}

// Finding 3: Program returns the file it checked, and the caller runs
// that file: a link changed after the check does not change what runs,
// and the next check judges the link as it is then.
func TestTheCheckedPathIsTheOneThatRuns(t *testing.T) {
	root := fakeHost(t)
	p := policy(t, "commands: ["+root+"/opt/app/current/bin/*]\n")
	path, err := p.Program("command", root+"/opt/app/current/bin/api", "")
	require.NoError(t, err)
	require.Equal(t, root+"/opt/app/releases/v2/bin/api", path)

	relink(t, root, "opt/app/current", "releases/v3")
	out, err := exec.Command(path).Output()
	require.NoError(t, err)
	require.Equal(t, "opt/app/releases/v2/bin/api\n", string(out), "the checked file runs, not what the link names now")
	_, err = p.Program("command", root+"/opt/app/current/bin/api", "")
	require.EqualError(t, err, "policy (inline): command "+root+"/opt/app/current/bin/api (resolved to "+root+"/opt/app/releases/v3/bin/api) is not allowed"+
		" (the policy's "+root+"/opt/app/current/bin/* stands for "+root+"/opt/app/releases/v2/bin/*: its links as they were when the worker loaded the policy)")

	// Without a policy, Program is Resolve: the canonical path, any program.
	var open *Policy
	path, err = open.Program("command", root+"/opt/app/current/bin/api", "")
	require.NoError(t, err)
	require.Equal(t, root+"/opt/app/releases/v3/bin/api", path)
	_, err = open.Program("command", root+"/opt/app/none", "")
	require.EqualError(t, err, "no such file on this host")
	require.NoError(t, open.Env("LD_PRELOAD", "envFile /x"), "no policy, no refusal")
}

func TestPolicy_BareNamesAreLookedUpInPATH(t *testing.T) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	prog := filepath.Join(dir, "myservice")
	require.NoError(t, os.WriteFile(prog, []byte("#!/bin/true\n"), 0o755))
	t.Setenv("PATH", dir)
	require.NoError(t, policy(t, "commands: ["+dir+"/*]\n").Check(processNode(t, "{command: myservice}")))
	require.EqualError(t, policy(t, "commands: [/usr/bin/*]\n").Check(processNode(t, "{command: myservice}")),
		"policy (inline): command "+prog+" is not allowed")
}

// Templates are rendered before the policy sees a spec (the host receives
// it rendered): a command hidden in a variable is refused all the same.
func TestPolicy_TemplatesAreRenderedFirst(t *testing.T) {
	root := fakeHost(t)
	tree, err := spec.Parse([]byte(`name: t
vars: {bin: sh}
children:
  - name: web
    kind: process
    process: {command: "` + root + `/bin/{{ .Vars.bin }}"}
`))
	require.NoError(t, err)
	eff := spec.Effective(tree).Children[0]
	rendered, ps := spec.Render(eff, "")
	require.Empty(t, ps)
	require.EqualError(t, policy(t, "commands: ["+root+"/usr/bin/sleep]\n").Check(rendered),
		"policy (inline): command "+root+"/bin/sh (resolved to "+root+"/usr/bin/dash) is not allowed")
	require.NoError(t, policy(t, "commands: ["+root+"/bin/sh]\n").Check(rendered))
}

func TestPolicy_ProbeExecIsAProgramToo(t *testing.T) {
	root := fakeHost(t)
	sleep, sh := root+"/usr/bin/sleep", root+"/bin/sh"
	notAllowed := " " + sh + " (resolved to " + root + "/usr/bin/dash) is not allowed"
	p := policy(t, "commands: ["+sleep+", "+root+"/usr/bin/python3.11]\n")
	require.NoError(t, p.Check(processNode(t, `{command: `+sleep+`, health: {exec: [`+root+`/usr/bin/python3]}}`)))
	require.EqualError(t, p.Check(processNode(t, `{command: `+sleep+`, health: {exec: [`+sh+`, -c, "id"]}}`)),
		"policy (inline): probe command (process.health.exec)"+notAllowed)
	require.EqualError(t, p.Check(processNode(t, `{command: `+sleep+`, ready: {exec: [`+sh+`]}}`)),
		"policy (inline): probe command (process.ready.exec)"+notAllowed)
	require.NoError(t, p.Check(processNode(t, `{command: `+sleep+`, reload: {exec: [`+root+`/bin/python3]}}`)))
	require.EqualError(t, p.Check(processNode(t, `{command: `+sleep+`, reload: {exec: [`+sh+`, -c, "id"]}}`)),
		"policy (inline): reload command (process.reload.exec)"+notAllowed)
}

func TestPolicy_UsersAndGroups(t *testing.T) {
	me, err := user.Current()
	require.NoError(t, err)
	strict := policy(t, "commands: [/usr/bin/*]\n")
	require.NoError(t, strict.Check(processNode(t, "{command: /usr/bin/sleep}")), "no user: the worker's own")
	require.NoError(t, strict.Check(processNode(t, "{command: /usr/bin/sleep, user: "+me.Username+"}")), "the worker's own user, named")
	require.EqualError(t, strict.Check(processNode(t, "{command: /usr/bin/sleep, user: nobody}")), "policy (inline): user nobody is not allowed")
	require.EqualError(t, strict.Check(processNode(t, "{command: /usr/bin/sleep, user: nobody, group: nogroup}")), "policy (inline): user nobody is not allowed")
	open := policy(t, "commands: [/usr/bin/*]\nusers: [nobody]\n")
	require.NoError(t, open.Check(processNode(t, "{command: /usr/bin/sleep, user: nobody}")))
	require.EqualError(t, open.Check(processNode(t, "{command: /usr/bin/sleep, user: nobody, group: docker}")), "policy (inline): group docker is not allowed")
	require.NoError(t, policy(t, "commands: [/usr/bin/*]\nusers: [nobody]\ngroups: [docker]\n").Check(processNode(t, "{command: /usr/bin/sleep, user: nobody, group: docker}")))
}

func TestPolicy_StubsAreNotItsBusiness(t *testing.T) {
	p := policy(t, "commands: []\n")
	require.NoError(t, p.Check(spec.Node{Name: "s", Kind: spec.KindStub}))
}

func TestPolicy_BadFilesNameTheirProblem(t *testing.T) {
	for text, want := range map[string]string{
		"commands: [sh]\n":              `commands[0]: "sh" must be an absolute path or glob`,
		"commands: [\"/bin/[\"]\n":      `commands[0]: "/bin/[" is not a valid glob`,
		"commands: [/bin/x]\nuser: [a]": "unknown field",
		"users: ['']\n":                 "users[0]: empty",
	} {
		_, err := ParsePolicy([]byte(text))
		require.ErrorContains(t, err, want, text)
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "policy.yaml")
	require.NoError(t, os.WriteFile(file, []byte("commands: [/usr/bin/sleep]\n"), 0o644))
	p, err := LoadPolicy(file)
	require.NoError(t, err)
	require.EqualError(t, p.Check(processNode(t, "{command: /usr/bin/id}")), "policy "+file+": command /usr/bin/id is not allowed")
	_, err = LoadPolicy(filepath.Join(dir, "missing.yaml"))
	require.ErrorContains(t, err, "no such file")
}

func keys(t testing.TB) (string, ed25519.PrivateKey, ed25519.PublicKey) {
	t.Helper()
	prefix := filepath.Join(t.TempDir(), "ops")
	_, err := GenerateKey(prefix)
	require.NoError(t, err)
	priv, err := LoadPrivateKey(prefix)
	require.NoError(t, err)
	pubs, err := LoadPublicKeys([]string{prefix + ".pub"})
	require.NoError(t, err)
	return prefix, priv, pubs[0]
}

func TestSignature_KeyFiles(t *testing.T) {
	prefix, priv, pub := keys(t)
	st, err := os.Stat(prefix)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), st.Mode().Perm())
	require.Equal(t, priv.Public(), pub)
	_, err = GenerateKey(prefix)
	require.ErrorIs(t, err, os.ErrExist, "never overwrites a key")
	require.NoError(t, os.Chmod(prefix, 0o644))
	_, err = LoadPrivateKey(prefix)
	require.ErrorContains(t, err, "readable by others")
	_, err = LoadPublicKeys([]string{prefix})
	require.ErrorContains(t, err, `no PEM "PUBLIC KEY" block`)
}

func TestSignature_SignedSpecsVerifyAndNothingElseDoes(t *testing.T) {
	_, priv, pub := keys(t)
	_, otherPriv, otherPub := keys(t)
	n := processNode(t, `{command: /usr/bin/sleep, args: ["100"], env: {A: b, TOKEN: {file: /etc/token}}, limits: {nofile: 1048576}}`)
	sig, err := Sign(priv, "t/web", n)
	require.NoError(t, err)
	n.Signature = sig
	trusted := []ed25519.PublicKey{pub}
	require.NoError(t, verifyErr(trusted, "t/web", n))
	// What a workflow decodes (a JSON round trip, numbers as float64,
	// defaults filled in) verifies the same.
	require.NoError(t, verifyErr(trusted, "t/web", roundTrip(t, n).Resolved()))

	tampered := roundTrip(t, n)
	tampered.Process["command"] = "/bin/sh"
	require.ErrorContains(t, verifyErr(trusted, "t/web", tampered), "does not match its signature")
	tampered = roundTrip(t, n)
	tampered.Process["args"] = []any{"1"}
	require.ErrorContains(t, verifyErr(trusted, "t/web", tampered), "was changed after it was signed")
	tampered = roundTrip(t, n)
	tampered.Process["env"].(map[string]any)["LD_PRELOAD"] = "/tmp/x.so"
	require.ErrorContains(t, verifyErr(trusted, "t/web", tampered), "does not match")
	tampered = roundTrip(t, n)
	tampered.Kind = spec.KindStub
	require.ErrorContains(t, verifyErr(trusted, "t/web", tampered), "does not match")
	require.ErrorContains(t, verifyErr(trusted, "t/other", n), "does not match", "a signature does not move to another path")

	unsigned := roundTrip(t, n)
	unsigned.Signature = ""
	require.EqualError(t, verifyErr(trusted, "t/web", unsigned), "signature: the spec of t/web is not signed, and this host runs only signed specs (--trusted-keys)")
	for _, bad := range []string{"x", "rsa:1:2", "ed25519:" + KeyID(pub) + ":!!!"} {
		m := roundTrip(t, n)
		m.Signature = bad
		require.ErrorContains(t, verifyErr(trusted, "t/web", m), "malformed", bad)
	}

	wrong, err := Sign(otherPriv, "t/web", n)
	require.NoError(t, err)
	byOther := roundTrip(t, n)
	byOther.Signature = wrong
	require.EqualError(t, verifyErr(trusted, "t/web", byOther), "signature: the spec of t/web is signed by key "+KeyID(otherPub)+", which this host does not trust")

	// Rotation: a host trusting both keys takes specs signed by either.
	both := []ed25519.PublicKey{pub, otherPub}
	require.NoError(t, verifyErr(both, "t/web", n))
	require.NoError(t, verifyErr(both, "t/web", byOther))
}

func roundTrip(t testing.TB, n spec.Node) spec.Node {
	t.Helper()
	b, err := json.Marshal(n)
	require.NoError(t, err)
	var out spec.Node
	require.NoError(t, json.Unmarshal(b, &out))
	return out
}

func TestGuard_SignatureFirstThenPolicy(t *testing.T) {
	_, priv, pub := keys(t)
	var open *Guard
	require.True(t, open.Open())
	require.NoError(t, admit(open, "t/web", processNode(t, "{command: /bin/sh}"), nil))
	g := &Guard{Policy: policy(t, "commands: [/usr/bin/sleep]\n"), Trusted: []ed25519.PublicKey{pub}}
	require.False(t, g.Open())
	sh := processNode(t, "{command: /bin/sh}")
	require.ErrorContains(t, admit(g, "t/web", sh, nil), "signature: the spec of t/web is not signed")
	sig, err := Sign(priv, "t/web", sh)
	require.NoError(t, err)
	sh.Signature = sig
	require.ErrorContains(t, admit(g, "t/web", sh, nil), "policy (inline): command /bin/sh", "signed by the operator, and still outside the policy")
	require.ErrorContains(t, admit(g, "t/web", sh, nil), "is not allowed")
	sleep := processNode(t, "{command: /usr/bin/sleep}")
	sleep.Signature, err = Sign(priv, "t/web", sleep)
	require.NoError(t, err)
	require.NoError(t, admit(g, "t/web", sleep, nil))
	require.NoError(t, admit(g, "t/stub", spec.Node{Name: "stub", Kind: spec.KindStub}, nil), "a stub runs nothing")
	h := spec.Node{Name: "h", Kind: spec.KindHTTP, HTTP: map[string]any{"start": map[string]any{"url": "http://x", "headers": map[string]any{"X": map[string]any{"file": "/etc/shadow"}}}}}
	require.ErrorContains(t, admit(g, "t/h", h, nil), "not signed", "an http worker's secret references are read where its action runs")
	h.Signature, err = Sign(priv, "t/h", h)
	require.NoError(t, err)
	require.ErrorContains(t, admit(g, "t/h", h, nil), "http.start.url http://x is not allowed (the policy's urls do not list it)", "signed, and still outside the policy")
	g.Policy = policy(t, "commands: [/usr/bin/*]\nurls: [\"http://x/\"]\nsecrets: [/etc/shadow]\n")
	require.NoError(t, admit(g, "t/h", h, nil), "its URL and its secret listed")
}

// The goal: policy and signature checks cost a start <= 1 ms on the host.
// BenchmarkGuard_Admit is the guard's cost per start with every check on:
// a version 2 signature, the workflow and host bindings, the revision
// store, and a policy with every list (commands, users, env, secrets,
// secretEnv, urls, dirs). "rerun": a start of a revision the host has run
// (a crash restart: no write); "new": a newer revision each time (the
// store's file written).
func BenchmarkGuard_Admit(b *testing.B) {
	_, priv, pub := keys(b)
	dir := b.TempDir()
	secret := filepath.Join(dir, "token")
	require.NoError(b, os.WriteFile(secret, []byte("x"), 0o600))
	p, err := ParsePolicy([]byte("commands: [/usr/local/bin/*, /opt/*/bin/*, /usr/bin/sleep]\nusers: [www-data]\nenv: [A, B, DB_*]\nsecrets: [" + dir + "/*]\nsecretEnv: [TOKEN]\nurls: [\"http://127.0.0.1:8080/\"]\ndirs: [/tmp, /srv/*]\n"))
	require.NoError(b, err)
	n := processNode(b, `{command: /usr/bin/sleep, args: ["100"], dir: /tmp, env: {A: b, B: c, DB_PASS: {file: `+secret+`}}, health: {exec: [/usr/bin/sleep, "0"]}}`)
	sign := func(rev int64) spec.Node {
		t, err := SignTree(priv, spec.Node{Name: "t", Children: []spec.Node{n}}, rev, nil)
		require.NoError(b, err)
		return roundTrip(b, t.Children[0])
	}
	signed := sign(1)
	for _, newRevision := range []bool{false, true} {
		name := "rerun"
		if newRevision {
			name = "new"
		}
		b.Run(name, func(b *testing.B) {
			store, err := OpenRevisions(b.TempDir())
			require.NoError(b, err)
			g := &Guard{Policy: p, Trusted: []ed25519.PublicKey{pub}, Host: "local", Revisions: store}
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				if newRevision {
					store.runs = map[string]revisions{} // as if never run: recorded, the file written
				}
				if err := g.Admit(Action{WorkflowID: "t/web", Path: "t/web", Spec: signed, Starts: true}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// A signed tree verifies worker by worker as the workflows hand each one
// to its host: inherited from its supervisors, rendered, defaults filled
// in, through JSON.
func TestSignTree_EachWorkerVerifiesAsItsHostReceivesIt(t *testing.T) {
	_, priv, pub := keys(t)
	tree, err := spec.Parse([]byte(`name: shop
vars: {port: "8080"}
children:
  - name: api
    kind: process
    process: {command: /usr/bin/sleep, args: ["{{ .Vars.port }}"]}
  - name: back
    vars: {port: "9090"}
    children:
      - name: db
        kind: process
        process: {command: /usr/bin/sleep, args: ["{{ .Vars.port }}", "{{ .Name }}"]}
      - name: cache
        kind: stub
`))
	require.NoError(t, err)
	before, err := json.Marshal(tree)
	require.NoError(t, err)
	signed, err := SignTree(priv, tree, 1, nil)
	require.NoError(t, err)
	after, err := json.Marshal(tree)
	require.NoError(t, err)
	require.Equal(t, string(before), string(after), "the input is left alone")
	require.Empty(t, signed.Signature, "a supervisor runs nothing")

	trusted := []ed25519.PublicKey{pub}
	host := func(path string, parents []spec.Node, n spec.Node) spec.Node {
		for _, p := range parents {
			n = spec.Inherit(p, n)
		}
		r, ps := spec.Render(n, "")
		require.Empty(t, ps)
		return roundTrip(t, r.Resolved())
	}
	api := host("shop/api", []spec.Node{signed}, signed.Children[0])
	require.Equal(t, []any{"8080"}, api.Process["args"])
	require.NoError(t, verifyErr(trusted, "shop/api", api))
	back := spec.Inherit(signed, signed.Children[1])
	db := host("shop/back/db", []spec.Node{back}, signed.Children[1].Children[0])
	require.Equal(t, []any{"9090", "db"}, db.Process["args"])
	require.NoError(t, verifyErr(trusted, "shop/back/db", db))
	require.NotEmpty(t, signed.Children[1].Children[1].Signature, "every worker is signed")

	// The same file signed again gives the same signatures (Ed25519 is
	// deterministic): a re-apply with the same key changes nothing.
	again, err := SignTree(priv, tree, 1, nil)
	require.NoError(t, err)
	require.Equal(t, signed, again)
}

// A link under an allowed glob runs what it points to, which must be
// allowed too; loader variables and a probe's relative path (a probe runs
// in the worker's directory) cannot smuggle in another program.
func TestPolicy_LinksLoaderVariablesAndProbeDirectories(t *testing.T) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	require.NoError(t, os.Symlink("/usr/bin/id", filepath.Join(dir, "innocent")))
	id, err := filepath.EvalSymlinks("/usr/bin/id")
	require.NoError(t, err)
	p := policy(t, "commands: ["+dir+"/*, /usr/bin/sleep]\n")
	require.EqualError(t, p.Check(processNode(t, "{command: "+dir+"/innocent}")),
		"policy (inline): command "+dir+"/innocent (resolved to "+id+") is not allowed")
	require.EqualError(t, p.Check(processNode(t, "{command: /usr/bin/sleep, env: {LD_PRELOAD: /tmp/x.so}}")),
		"policy (inline): env LD_PRELOAD is not allowed (it makes an allowed program load other code): list LD_PRELOAD by name in the policy's env to allow it")
	require.ErrorContains(t, p.Check(processNode(t, "{command: /usr/bin/sleep, env: {BASH_ENV: /tmp/x}}")), "env BASH_ENV is not allowed")
	require.NoError(t, p.Check(processNode(t, "{command: /usr/bin/sleep, env: {LANG: C}}")))
	// The same name in the service's dir (allowed) and in the worker's
	// (not): a probe's is the worker's.
	require.NoError(t, os.WriteFile(filepath.Join(dir, "probe"), []byte("#!/bin/sh\n"), 0o755))
	wd, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(wd, "probe"), []byte("#!/bin/sh\n"), 0o755))
	t.Chdir(wd)
	require.NoError(t, p.Check(processNode(t, "{command: /usr/bin/sleep, dir: "+dir+", reload: {exec: [./probe]}}")), "a reload runs in the service's dir")
	require.EqualError(t, p.Check(processNode(t, "{command: /usr/bin/sleep, dir: "+dir+", health: {exec: [./probe]}}")),
		"policy (inline): probe command (process.health.exec) "+wd+"/./probe (resolved to "+wd+"/probe) is not allowed", "a probe's relative path is from the worker's directory, not the service's")
}

// Finding 4: the variables that make an allowed program load other code
// are refused by name, in the spec's env here and in an envFile where the
// driver reads it (Env).
func TestPolicy_LoaderVariablesAreRefused(t *testing.T) {
	p := policy(t, "commands: [/usr/bin/sleep]\n")
	for _, name := range []string{
		"LD_PRELOAD", "LD_LIBRARY_PATH", "LD_AUDIT", "DYLD_INSERT_LIBRARIES",
		"BASH_ENV", "ENV", "SHELLOPTS", "BASHOPTS", "PS4", "BASH_FUNC_ls",
		"PYTHONSTARTUP", "PYTHONPATH", "PYTHONHOME", "PYTHONUSERBASE", "PYTHONPYCACHEPREFIX",
		"HOME", "PATH", "XDG_CONFIG_HOME", "XDG_CONFIG_DIRS", "XDG_DATA_HOME", "XDG_DATA_DIRS",
		"PERL5LIB", "PERLLIB", "PERL5OPT", "RUBYOPT", "RUBYLIB", "NODE_OPTIONS", "NODE_PATH",
		"JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS", "JDK_JAVA_OPTIONS",
		"GCONV_PATH", "OPENSSL_CONF", "OPENSSL_ENGINES", "OPENSSL_MODULES",
		"PHPRC", "PHP_INI_SCAN_DIR", "LUA_INIT", "LUA_INIT_5_4", "LUA_PATH", "LUA_CPATH_5_4",
		"ERL_FLAGS", "ERL_AFLAGS", "ERL_ZFLAGS", "ERL_LIBS", "DOTNET_STARTUP_HOOKS", "CORECLR_PROFILER_PATH",
	} {
		require.EqualError(t, p.Check(processNode(t, "{command: /usr/bin/sleep, env: {"+name+": x}}")),
			"policy (inline): env "+name+" is not allowed (it makes an allowed program load other code): list "+name+" by name in the policy's env to allow it", name)
		require.EqualError(t, p.Env(name, "envFile /etc/shop/env"),
			"policy (inline): env "+name+" (from envFile /etc/shop/env) is not allowed (it makes an allowed program load other code): list "+name+" by name in the policy's env to allow it", name)
	}
	for _, name := range []string{"LANG", "LC_ALL", "TZ", "PYTHONUNBUFFERED", "PYTHONINSPECT", "JAVA_HOME", "NODE_ENV", "IFS", "GIT_DIR", "CLASSPATH"} {
		require.NoError(t, p.Check(processNode(t, "{command: /usr/bin/sleep, env: {"+name+": x}}")), name)
		require.NoError(t, p.Env(name, "envFile /etc/shop/env"), name)
	}
	// Listed by name, one is allowed.
	listed := policy(t, "commands: [/usr/bin/sleep]\nenv: [PATH, HOME, APP_*]\n")
	require.NoError(t, listed.Check(processNode(t, "{command: /usr/bin/sleep, env: {PATH: /opt/app/bin, HOME: /srv/app}}")))
}

// Regression (attack review): a spec's HOME (a base variable, so allowed
// even under an env allow-list) made an allowed Python service run as root
// load usercustomize.py from a local user's ~/.local; its PATH made an
// allowed "#!/usr/bin/env python3" script run that user's python. Under a
// policy a spec or envFile sets them only where the policy's env lists
// them by name; a service still gets the worker's PATH and its user's
// HOME.
func TestPolicy_ASpecsHOMEOrPATHIsRefusedUnlessListed(t *testing.T) {
	for _, text := range []string{"commands: [/usr/bin/*]\n", "commands: [/usr/bin/*]\nenv: [APP_*]\n"} {
		p := policy(t, text)
		for _, name := range []string{"HOME", "PATH", "PYTHONPYCACHEPREFIX"} {
			require.ErrorContains(t, p.Check(processNode(t, "{command: /usr/bin/sleep, env: {"+name+": /tmp/mal}}")),
				"env "+name+" is not allowed (it makes an allowed program load other code)", text)
		}
	}
}

// A fleet's worker is signed as its template: each instance, rendered by
// its supervisor for its number and host, verifies against it, and nothing
// else does.
func TestSignTree_AFleetVerifiesByItsTemplate(t *testing.T) {
	_, priv, pub := keys(t)
	tree, err := spec.Parse([]byte(`name: shop
vars: {port: "8080"}
hosts: [a, b]
children:
  - name: web
    kind: process
    instances: 3
    process: {command: /usr/bin/sleep, args: ["{{ add 8080 .Instance }}", "{{ .Host }}", "{{ .Vars.port }}"]}
  - name: one
    kind: process
    process: {command: /usr/bin/sleep, args: ["{{ .Host }}"]}
`))
	require.NoError(t, err)
	signed, err := SignTree(priv, tree, 1, nil)
	require.NoError(t, err)
	trusted := []ed25519.PublicKey{pub}
	g := &Guard{Trusted: trusted}

	// As the supervisor hands each worker down, and as its host gets it.
	kids := spec.Expand(signed)
	require.Len(t, kids, 4)
	handed := func(i int, host string) spec.Node {
		n := kids[i]
		n.PlacedOn = host
		return roundTrip(t, spec.Inherit(signed, n))
	}
	received := func(template spec.Node) spec.Node {
		r, ps := spec.Render(template, "")
		require.Empty(t, ps)
		return roundTrip(t, r.Resolved())
	}
	web2 := handed(2, "b")
	got := received(web2)
	require.Equal(t, []any{"8082", "b", "8080"}, got.Process["args"])
	require.NoError(t, verifyFleetErr(trusted, "shop/web-2", got, &web2))
	require.NoError(t, admit(g, "shop/web-2", got, &web2))
	one := handed(3, "a")
	require.NoError(t, admit(g, "shop/one", received(one), &one), "hosts alone make a fleet's worker too")

	require.ErrorContains(t, admit(g, "shop/web-2", got, nil), "came without its signed template")
	require.ErrorContains(t, verifyFleetErr(trusted, "shop/web-1", got, &web2), "names instance 2, which is not its path's")
	changed := got
	changed.Process = map[string]any{"command": "/usr/bin/id"}
	require.ErrorContains(t, verifyFleetErr(trusted, "shop/web-2", changed, &web2), "not its signed template's rendering")
	evilVars := web2
	evilVars.Vars = map[string]string{"port": "22"}
	require.ErrorContains(t, verifyFleetErr(trusted, "shop/web-2", received(evilVars), &evilVars), "does not match its signature")
	elsewhere := handed(2, "c")
	require.ErrorContains(t, verifyFleetErr(trusted, "shop/web-2", received(elsewhere), &elsewhere), `placed on host "c", which its signed hosts do not list`)
	moved := handed(2, "a")
	require.ErrorContains(t, verifyFleetErr(trusted, "shop/web-2", received(moved), &web2), "not placed as its template is")
	require.ErrorContains(t, verifyErr(trusted, "shop/web-2", got), "carries a fleet's signature", "a template's signature is not a worker's")

	// Version 2 signs the count: an instance beyond it is refused, and
	// a count changed in the signature breaks it.
	web57 := web2
	web57.Instance = new(int)
	*web57.Instance = 57
	require.ErrorContains(t, verifyFleetErr(trusted, "shop/web-57", received(web57), &web57), "instance 57, beyond the 3 instances its template is signed as")
	more := web57
	more.Signature = strings.Replace(web57.Signature, ":1:3:", ":1:60:", 1)
	require.ErrorContains(t, verifyFleetErr(trusted, "shop/web-57", received(more), &more), "does not match its signature")
	// A host that is not the one the spec runs on refuses it.
	require.ErrorContains(t, (&Guard{Trusted: trusted, Host: "a"}).Admit(Action{WorkflowID: "shop/web-2", Path: "shop/web-2", Spec: got, Template: &web2}),
		"host a: the spec of shop/web-2 runs on host b, not this one")
}

// Regression (attack review): placedOn is not signed, and for a fleet of
// instances with no hosts no host list was checked: a writer who set
// placedOn: web2 on the spec and its template made host web2 run a spec
// signed for host db1. A template signed with no hosts takes no placedOn.
func TestSignTree_AFleetWithNoHostsCannotBePlacedByHand(t *testing.T) {
	_, priv, pub := keys(t)
	tree, err := spec.Parse([]byte(`name: t
children:
  - name: web
    kind: process
    instances: 2
    process: {command: /usr/bin/sleep, host: db1, args: ["{{ .Instance }}"]}
`))
	require.NoError(t, err)
	signed, err := SignTree(priv, tree, 1, nil)
	require.NoError(t, err)
	trusted := []ed25519.PublicKey{pub}
	template := roundTrip(t, spec.Inherit(signed, spec.Expand(signed)[1]))
	render := func(tm spec.Node) spec.Node {
		r, ps := spec.Render(tm, "")
		require.Empty(t, ps)
		return roundTrip(t, r.Resolved())
	}
	require.NoError(t, admit(&Guard{Trusted: trusted, Host: "db1"}, "t/web-1", render(template), &template))
	forged := template
	forged.PlacedOn = "web2"
	err = (&Guard{Trusted: trusted, Host: "web2"}).Admit(Action{WorkflowID: "t/web-1", Path: "t/web-1", Spec: render(forged), Template: &forged})
	require.ErrorContains(t, err, `placed on host "web2", and its template is signed with no hosts`)
}

func verifyErr(trusted []ed25519.PublicKey, path string, n spec.Node) error {
	_, err := Verify(trusted, path, n)
	return err
}

func verifyFleetErr(trusted []ed25519.PublicKey, path string, n spec.Node, template *spec.Node) error {
	_, err := VerifyFleet(trusted, path, n, template)
	return err
}

// admit asks g for a start of n at path by the workflow of that path.
func admit(g *Guard, path string, n spec.Node, template *spec.Node) error {
	return g.Admit(Action{WorkflowID: path, Path: path, Spec: n, Template: template, Starts: true})
}

// The "rogue-1": a workflow started by hand with a real worker's
// input asks for that worker's signed spec.
func TestGuard_SignatureHoldsForItsOwnWorkflowOnly(t *testing.T) {
	_, priv, pub := keys(t)
	n := processNode(t, "{command: /usr/bin/sleep, args: [\"60\"]}")
	signed, err := SignTree(priv, spec.Node{Name: "t1", Children: []spec.Node{n}}, 1, nil)
	require.NoError(t, err)
	web := signed.Children[0]
	g := &Guard{Trusted: []ed25519.PublicKey{pub}}
	require.NoError(t, g.Admit(Action{WorkflowID: "t1/web", Path: "t1/web", Spec: web, Starts: true}))
	require.EqualError(t, g.Admit(Action{WorkflowID: "rogue-1", Path: "t1/web", Spec: web, Starts: true}),
		"signature: the action names path t1/web, and comes from workflow rogue-1: a signature holds for its own path's workflow only")
	require.ErrorContains(t, g.Admit(Action{WorkflowID: "rogue-1", Path: "rogue-1", Spec: web, Starts: true}), "does not match its signature")
}

// A job's runs are workflows of their own, named after the job: the job's
// signature holds for them, and for nobody else's workflow.
func TestGuard_AJobsSignatureHoldsForItsRuns(t *testing.T) {
	_, priv, pub := keys(t)
	n := processNode(t, "{command: /usr/bin/true}")
	n.Name, n.Job = "backup", &spec.Job{Every: spec.Dur(time.Hour)}
	svc := processNode(t, "{command: /usr/bin/true}")
	signed, err := SignTree(priv, spec.Node{Name: "t1", Children: []spec.Node{n, svc}}, 1, nil)
	require.NoError(t, err)
	job, web := signed.Children[0], signed.Children[1]
	g := &Guard{Trusted: []ed25519.PublicKey{pub}}
	require.NoError(t, g.Admit(Action{WorkflowID: "t1/backup/run-2026-11-27T03:00:00Z", Path: "t1/backup", Spec: job, Starts: true}))
	require.NoError(t, g.Admit(Action{WorkflowID: "t1/backup/run-now-1", Path: "t1/backup", Spec: job, Starts: true}), "the same revision runs again")
	require.ErrorContains(t, g.Admit(Action{WorkflowID: "t1/backupx/run-1", Path: "t1/backup", Spec: job, Starts: true}), "its own path's workflow only")
	require.ErrorContains(t, g.Admit(Action{WorkflowID: "t1/backup/run-", Path: "t1/backup", Spec: job, Starts: true}), "its own path's workflow only")
	require.ErrorContains(t, g.Admit(Action{WorkflowID: "t1/web/run-1", Path: "t1/web", Spec: web, Starts: true}), "its own path's workflow only", "a service has no runs")
	// A service's signed spec made a job by hand: its signature does not
	// cover the job block, so no run of it runs.
	forged := web
	forged.Job = &spec.Job{Once: true}
	require.ErrorContains(t, g.Admit(Action{WorkflowID: "t1/web/run-evil", Path: "t1/web", Spec: forged, Starts: true}), "does not match its signature")
	v1, err := Sign(priv, "t1/web", web)
	require.NoError(t, err)
	forged.Signature = v1
	require.ErrorContains(t, g.Admit(Action{WorkflowID: "t1/web/run-evil", Path: "t1/web", Spec: forged, Starts: true}), "does not cover its job block")
}

// The replay: the first signed spec of a worker sent again after
// the operator signed two newer ones.
func TestRevisionStore_AnOlderSignedSpecIsNotRunAgain(t *testing.T) {
	_, priv, pub := keys(t)
	dir := t.TempDir()
	store, err := OpenRevisions(dir)
	require.NoError(t, err)
	g := &Guard{Trusted: []ed25519.PublicKey{pub}, Revisions: store}
	signAt := func(rev int64, arg string) spec.Node {
		n := processNode(t, "{command: /usr/bin/sleep, args: [\""+arg+"\"]}")
		s, err := SignTree(priv, spec.Node{Name: "t1", Children: []spec.Node{n}}, rev, nil)
		require.NoError(t, err)
		return s.Children[0]
	}
	first, second, third := signAt(100, "1"), signAt(200, "2"), signAt(300, "3")
	start := func(n spec.Node) error {
		return g.Admit(Action{WorkflowID: "t1/web", Path: "t1/web", Spec: n, Starts: true})
	}
	require.NoError(t, start(first))
	require.NoError(t, start(second))
	require.NoError(t, start(first), "the revision before the newest: a rolling update's revert")
	require.NoError(t, start(third))
	require.EqualError(t, start(first), "signature: the spec of t1/web is signed at revision 100, older than revision 300 this host has run (and not 200, the one it ran before): an old signed spec is not run again")
	require.NoError(t, start(second), "the revert target")
	require.NoError(t, g.Admit(Action{WorkflowID: "t1/web", Path: "t1/web", Spec: first}), "a stop or an observe is not a start")

	// The host remembers across a restart of its worker.
	again, err := OpenRevisions(dir)
	require.NoError(t, err)
	g.Revisions = again
	require.ErrorContains(t, start(first), "older than revision 300")
	require.NoError(t, start(third))

	// A signature of the release before (version 1, revision 0) still
	// runs on a host that has run none of version 2.
	v1 := processNode(t, "{command: /usr/bin/sleep}")
	v1.Signature, err = Sign(priv, "t2/web", v1)
	require.NoError(t, err)
	require.NoError(t, g.Admit(Action{WorkflowID: "t2/web", Path: "t2/web", Spec: v1, Starts: true}))
}

func TestSignTree_AReapplyKeepsTheSignaturesOfWhatItDoesNotChange(t *testing.T) {
	_, priv, pub := keys(t)
	tree, err := spec.Parse([]byte(`name: shop
children:
  - {name: api, kind: process, process: {command: /usr/bin/sleep, args: ["1"]}}
  - {name: web, kind: process, instances: 2, process: {command: /usr/bin/sleep, args: ["{{ .Instance }}"]}}
  - {name: db, kind: process, process: {command: /usr/bin/sleep, args: ["2"]}}
`))
	require.NoError(t, err)
	one, err := SignTree(priv, tree, 1, nil)
	require.NoError(t, err)
	changed := tree
	changed.Children = slices.Clone(tree.Children)
	changed.Children[2].Process = map[string]any{"command": "/usr/bin/sleep", "args": []any{"3"}}
	two, err := SignTree(priv, changed, 2, &one)
	require.NoError(t, err)
	require.Equal(t, one.Children[0].Signature, two.Children[0].Signature, "api unchanged: its signature kept")
	require.Equal(t, one.Children[1].Signature, two.Children[1].Signature, "the fleet's template unchanged: kept")
	require.NotEqual(t, one.Children[2].Signature, two.Children[2].Signature)
	sig, err := Verify([]ed25519.PublicKey{pub}, "shop/db", two.Children[2])
	require.NoError(t, err)
	require.Equal(t, int64(2), sig.Revision, "a changed worker is signed at the new revision")
	// Another key's signature is never kept.
	_, otherPriv, _ := keys(t)
	three, err := SignTree(otherPriv, changed, 3, &two)
	require.NoError(t, err)
	require.NotEqual(t, two.Children[0].Signature, three.Children[0].Signature)
}

// A tree read back from the namespace is signed anew by `starter revert`
// only if this key signed each of its workers as they are: one a namespace
// writer wrote (unsigned, changed after signing, or signed by another
// key) is named.
func TestSignedBy_EachWorkerSignedByThisKeyAsItIs(t *testing.T) {
	_, priv, pub := keys(t)
	tree, err := spec.Parse([]byte(`name: shop
children:
  - {name: api, kind: process, process: {command: /usr/bin/sleep, args: ["1"]}}
  - name: g
    children:
      - {name: web, kind: process, instances: 2, process: {command: /usr/bin/sleep, args: ["{{ .Instance }}"]}}
`))
	require.NoError(t, err)
	require.ErrorContains(t, SignedBy(pub, tree), "shop/api carries no signature of key")
	signed, err := SignTree(priv, tree, 4, nil)
	require.NoError(t, err)
	require.NoError(t, SignedBy(pub, signed))

	changed := signed
	changed.Children = slices.Clone(signed.Children)
	changed.Children[0].Process = map[string]any{"command": "/usr/bin/curl", "args": []any{"evil"}}
	require.ErrorContains(t, SignedBy(pub, changed), "shop/api", "changed after it was signed")

	fleet := signed
	fleet.Children = slices.Clone(signed.Children)
	g := fleet.Children[1]
	g.Children = slices.Clone(g.Children)
	g.Children[0].Instances = 5
	fleet.Children[1] = g
	require.ErrorContains(t, SignedBy(pub, fleet), "shop/g/web", "more instances than signed")

	_, otherPriv, _ := keys(t)
	other, err := SignTree(otherPriv, tree, 4, nil)
	require.NoError(t, err)
	require.ErrorContains(t, SignedBy(pub, other), "shop/api", "another key's")
}

func TestPolicy_AllowLists(t *testing.T) {
	root := t.TempDir()
	secrets := filepath.Join(root, "secrets")
	require.NoError(t, os.MkdirAll(secrets, 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(secrets, "token"), []byte("s3cret"), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(root, "shadow"), []byte("root:x"), 0o600))
	require.NoError(t, os.Symlink(filepath.Join(root, "shadow"), filepath.Join(secrets, "link")))
	srv := filepath.Join(root, "srv")
	require.NoError(t, os.MkdirAll(filepath.Join(srv, "app"), 0o755))
	p := policy(t, "commands: [/usr/bin/*]\nsecrets: ["+secrets+"/*]\nsecretEnv: [APP_TOKEN]\nenv: [DB_*, PORT]\ndirs: ["+srv+"/*]\nurls: [\"https://hooks.example.com/steward\", \"http://127.0.0.1:8080\"]\n")
	proc := func(y string) spec.Node { return processNode(t, "{command: /usr/bin/sleep, "+y+"}") }
	for y, want := range map[string]string{
		"env: {DB_HOST: db}":                                "",
		"env: {PORT: \"1\", LC_ALL: C}":                     "",
		"env: {OTHER: x}":                                   "env OTHER is not allowed (the policy's env does not list it)",
		"env: {SHELLOPTS: xtrace, PS4: x}":                  "env PS4 is not allowed (it makes an allowed program load other code)",
		"env: {DB_PASS: {file: " + secrets + "/token}}":     "",
		"env: {DB_PASS: {file: " + root + "/shadow}}":       "process.env.DB_PASS file " + root + "/shadow is not allowed (the policy's secrets do not list it)",
		"env: {DB_PASS: {file: " + secrets + "/link}}":      "(resolved to " + root + "/shadow) is not allowed",
		"env: {DB_PASS: {file: " + secrets + "/../shadow}}": "is not allowed",
		"env: {DB_PASS: {env: APP_TOKEN}}":                  "",
		"env: {DB_PASS: {env: TEMPORAL_API_KEY}}":           "process.env.DB_PASS {env: TEMPORAL_API_KEY} is not allowed",
		"envFile: " + root + "/shadow":                      "process.envFile file " + root + "/shadow is not allowed",
		"inheritEnv: [TEMPORAL_API_KEY]":                    "process.inheritEnv TEMPORAL_API_KEY is not allowed",
		"inheritEnv: [APP_TOKEN, PATH]":                     "",
		"dir: " + srv + "/app":                              "",
		"dir: " + root:                                      "process.dir " + root + " is not allowed (the policy's dirs do not list it)",
	} {
		err := p.Check(proc(y))
		if want == "" {
			require.NoError(t, err, y)
			continue
		}
		require.ErrorContains(t, err, want, y)
		require.NotContains(t, err.Error(), "s3cret", "a refusal never quotes a secret")
		require.NotContains(t, err.Error(), "root:x")
	}
	// Without the lists: env and dirs open, secrets and URLs closed.
	bare := policy(t, "commands: [/usr/bin/*]\n")
	require.NoError(t, bare.Check(proc("env: {ANY: x}, dir: "+root)))
	require.ErrorContains(t, bare.Check(proc("envFile: "+secrets+"/token")), "not allowed (the policy's secrets do not list it)")

	httpNode := func(url string, headers string) spec.Node {
		n, err := spec.Parse([]byte("name: h\nkind: http\nhttp: {health: {url: \"" + url + "\"" + headers + "}}\n"))
		require.NoError(t, err)
		return n
	}
	for url, want := range map[string]string{
		"https://hooks.example.com/steward":          "",
		"https://hooks.example.com/steward/x?y=1":    "",
		"https://hooks.example.com:443/steward/x":    "",
		"https://hooks.example.com/stewardship":      "is not allowed",
		"https://hooks.example.com/steward/../admin": "is not allowed",
		"http://hooks.example.com/steward":           "is not allowed",
		"https://evil.example.com/steward":           "is not allowed",
		"https://hooks.example.com.evil.com/steward": "is not allowed",
		"http://127.0.0.1:8080/anything":             "",
		"http://127.0.0.1:8081/":                     "is not allowed",
		"http://user:pw@127.0.0.1:8080/":             "is not allowed",
		// Regression (attack review): encodings a receiver may decode
		// into a segment that climbs out of the prefix.
		"https://hooks.example.com/steward/..%2fadmin":   "is not allowed",
		"https://hooks.example.com/steward/..%2Fadmin":   "is not allowed",
		"https://hooks.example.com/steward/..;/admin":    "is not allowed",
		"https://hooks.example.com/steward/%252e%252e/x": "is not allowed",
		"https://hooks.example.com/steward/..%5cadmin":   "is not allowed",
		"https://hooks.example.com/steward/a%20b":        "",
	} {
		err := p.Check(httpNode(url, ""))
		if want == "" {
			require.NoError(t, err, url)
		} else {
			require.ErrorContains(t, err, want, url)
		}
	}
	require.ErrorContains(t, p.Check(httpNode("http://127.0.0.1:8080/", ", headers: {X: {file: "+root+"/shadow}}")), "http.health.headers.X file")
	// Regression (attack review): a Host header sent the request, and a
	// listed secret header with it, to another virtual host behind a
	// listed address.
	require.ErrorContains(t, p.Check(httpNode("http://127.0.0.1:8080/", ", headers: {Host: admin.internal}")),
		"http.health.headers.Host is not allowed (the request's host is its URL's")

	// A notification: its secrets and its URL, even when the URL is a reference.
	read := func(v spec.Value) (string, error) { b, err := os.ReadFile(v.File); return string(b), err }
	require.NoError(t, p.CheckNotify(spec.Value{Literal: "https://hooks.example.com/steward"}, map[string]spec.Value{"X": spec.FileRef(secrets + "/token")}, read))
	require.ErrorContains(t, p.CheckNotify(spec.Value{Literal: "http://127.0.0.1:9/hook"}, nil, read), "notify.webhook http://127.0.0.1:9/hook is not allowed")
	require.ErrorContains(t, p.CheckNotify(spec.Value{Literal: "https://hooks.example.com/steward"}, map[string]spec.Value{"X": spec.FileRef(root + "/shadow")}, read), "notify.headers.X file")
	require.NoError(t, os.WriteFile(filepath.Join(secrets, "hook"), []byte("http://127.0.0.1:9/x"), 0o600))
	err := p.CheckNotify(spec.FileRef(secrets+"/hook"), nil, read)
	require.ErrorContains(t, err, "notify.webhook (the webhook its reference names) is not allowed")
	require.NotContains(t, err.Error(), "127.0.0.1:9", "the resolved URL is not quoted")

	for text, want := range map[string]string{
		"secrets: [relative]\n":       `secrets[0]: "relative" must be an absolute path or glob`,
		"dirs: [\"/x/*/..\"]\n":       `dirs[0]: "/x/*/.." has .. after a wildcard`,
		"env: [\"A=B\"]\n":            `env[0]: "A=B" is not a variable name`,
		"urls: [\"ftp://x/\"]\n":      `urls[0]: "ftp://x/" is not an http(s) URL prefix`,
		"urls: [\"http://x/?a=b\"]\n": `urls[0]: "http://x/?a=b" is not an http(s) URL prefix`,
	} {
		_, err := ParsePolicy([]byte(text))
		require.ErrorContains(t, err, want, text)
	}
}

// A policy with flow collections nested deep parsed into gigabytes, as
// root at the worker's start: refused before it is parsed.
func TestParsePolicy_DeepNestingIsRefusedBeforeParsing(t *testing.T) {
	_, err := ParsePolicy([]byte("commands: " + strings.Repeat("[", 40000) + strings.Repeat("]", 40000) + "\n"))
	require.ErrorContains(t, err, "more than 256 deep")
}
