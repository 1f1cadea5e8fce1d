package admission

import (
	"crypto/ed25519"
	"encoding/json"
	"os"
	"os/user"
	"path/filepath"
	"testing"

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

func TestPolicy_CommandsAreMatchedAsTheHostResolvesThem(t *testing.T) {
	p := policy(t, "commands: [/usr/bin/sleep, /opt/shop/bin/*]\n")
	for _, ok := range []string{
		`{command: /usr/bin/sleep, args: ["1"]}`,
		`{command: /opt/shop/bin/api}`,
		`{command: /opt/shop/bin/../bin/api}`, // cleaned first
		`{command: bin/api, dir: /opt/shop}`,  // relative: from dir
	} {
		require.NoError(t, p.Check(processNode(t, ok)), ok)
	}
	for cmd, why := range map[string]string{
		`{command: /bin/sh, args: ["-c", "id"]}`:   "command /bin/sh is not allowed",
		`{command: /opt/shop/bin/../../../bin/sh}`: "command /bin/sh is not allowed",
		`{command: /opt/shop/bin/sub/api}`:         "command /opt/shop/bin/sub/api is not allowed", // * does not cross /
		`{command: ../../bin/sh, dir: /opt/shop}`:  "command /bin/sh is not allowed",
		`{command: no-such-program-anywhere-here}`: "command no-such-program-anywhere-here: not found in this host's PATH",
	} {
		err := p.Check(processNode(t, cmd))
		require.Error(t, err, cmd)
		require.Equal(t, "policy (inline): "+why, err.Error(), cmd)
		var r *Refusal
		require.ErrorAs(t, err, &r)
	}
}

func TestPolicy_BareNamesAreLookedUpInPATH(t *testing.T) {
	dir := t.TempDir()
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
	tree, err := spec.Parse([]byte(`name: t
vars: {bin: sh}
children:
  - name: web
    kind: process
    process: {command: "/bin/{{ .Vars.bin }}"}
`))
	require.NoError(t, err)
	eff := spec.Effective(tree).Children[0]
	rendered, ps := spec.Render(eff, "")
	require.Empty(t, ps)
	require.EqualError(t, policy(t, "commands: [/usr/bin/*]\n").Check(rendered), "policy (inline): command /bin/sh is not allowed")
	sh, err := filepath.EvalSymlinks("/bin/sh")
	require.NoError(t, err)
	require.NoError(t, policy(t, "commands: [/bin/sh, "+sh+"]\n").Check(rendered))
}

func TestPolicy_ProbeExecIsAProgramToo(t *testing.T) {
	p := policy(t, "commands: [/usr/bin/sleep, /usr/bin/true]\n")
	require.NoError(t, p.Check(processNode(t, `{command: /usr/bin/sleep, health: {exec: [/usr/bin/true]}}`)))
	require.EqualError(t, p.Check(processNode(t, `{command: /usr/bin/sleep, health: {exec: [/bin/sh, -c, "id"]}}`)),
		"policy (inline): probe command (process.health.exec) /bin/sh is not allowed")
	require.EqualError(t, p.Check(processNode(t, `{command: /usr/bin/sleep, ready: {exec: [/bin/sh]}}`)),
		"policy (inline): probe command (process.ready.exec) /bin/sh is not allowed")
	require.NoError(t, p.Check(processNode(t, `{command: /usr/bin/sleep, reload: {exec: [/usr/bin/true]}}`)))
	require.EqualError(t, p.Check(processNode(t, `{command: /usr/bin/sleep, reload: {exec: [/bin/sh, -c, "id"]}}`)),
		"policy (inline): reload command (process.reload.exec) /bin/sh is not allowed")
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

func TestPolicy_OtherKindsAreNotItsBusiness(t *testing.T) {
	p := policy(t, "commands: []\n")
	require.NoError(t, p.Check(spec.Node{Name: "s", Kind: spec.KindStub}))
	require.NoError(t, p.Check(spec.Node{Name: "h", Kind: spec.KindHTTP, HTTP: map[string]any{"start": "http://x"}}))
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
	require.EqualError(t, p.Check(processNode(t, "{command: /bin/sh}")), "policy "+file+": command /bin/sh is not allowed")
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
	require.NoError(t, Verify(trusted, "t/web", n))
	// What a workflow decodes (a JSON round trip, numbers as float64,
	// defaults filled in) verifies the same.
	require.NoError(t, Verify(trusted, "t/web", roundTrip(t, n).Resolved()))

	tampered := roundTrip(t, n)
	tampered.Process["command"] = "/bin/sh"
	require.ErrorContains(t, Verify(trusted, "t/web", tampered), "does not match its signature")
	tampered = roundTrip(t, n)
	tampered.Process["args"] = []any{"1"}
	require.ErrorContains(t, Verify(trusted, "t/web", tampered), "was changed after it was signed")
	tampered = roundTrip(t, n)
	tampered.Process["env"].(map[string]any)["LD_PRELOAD"] = "/tmp/x.so"
	require.ErrorContains(t, Verify(trusted, "t/web", tampered), "does not match")
	tampered = roundTrip(t, n)
	tampered.Kind = spec.KindStub
	require.ErrorContains(t, Verify(trusted, "t/web", tampered), "does not match")
	require.ErrorContains(t, Verify(trusted, "t/other", n), "does not match", "a signature does not move to another path")

	unsigned := roundTrip(t, n)
	unsigned.Signature = ""
	require.EqualError(t, Verify(trusted, "t/web", unsigned), "signature: the spec of t/web is not signed, and this host runs only signed specs (--trusted-keys)")
	for _, bad := range []string{"x", "rsa:1:2", "ed25519:" + KeyID(pub) + ":!!!"} {
		m := roundTrip(t, n)
		m.Signature = bad
		require.ErrorContains(t, Verify(trusted, "t/web", m), "malformed", bad)
	}

	wrong, err := Sign(otherPriv, "t/web", n)
	require.NoError(t, err)
	byOther := roundTrip(t, n)
	byOther.Signature = wrong
	require.EqualError(t, Verify(trusted, "t/web", byOther), "signature: the spec of t/web is signed by key "+KeyID(otherPub)+", which this host does not trust")

	// Rotation: a host trusting both keys takes specs signed by either.
	both := []ed25519.PublicKey{pub, otherPub}
	require.NoError(t, Verify(both, "t/web", n))
	require.NoError(t, Verify(both, "t/web", byOther))
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
	require.NoError(t, open.Admit("t/web", processNode(t, "{command: /bin/sh}"), nil))
	g := &Guard{Policy: policy(t, "commands: [/usr/bin/sleep]\n"), Trusted: []ed25519.PublicKey{pub}}
	require.False(t, g.Open())
	sh := processNode(t, "{command: /bin/sh}")
	require.ErrorContains(t, g.Admit("t/web", sh, nil), "signature: the spec of t/web is not signed")
	sig, err := Sign(priv, "t/web", sh)
	require.NoError(t, err)
	sh.Signature = sig
	require.EqualError(t, g.Admit("t/web", sh, nil), "policy (inline): command /bin/sh is not allowed", "signed by the operator, and still outside the policy")
	sleep := processNode(t, "{command: /usr/bin/sleep}")
	sleep.Signature, err = Sign(priv, "t/web", sleep)
	require.NoError(t, err)
	require.NoError(t, g.Admit("t/web", sleep, nil))
	require.NoError(t, g.Admit("t/stub", spec.Node{Name: "stub", Kind: spec.KindStub}, nil), "a stub runs nothing")
	h := spec.Node{Name: "h", Kind: spec.KindHTTP, HTTP: map[string]any{"start": map[string]any{"url": "http://x", "headers": map[string]any{"X": map[string]any{"file": "/etc/shadow"}}}}}
	require.ErrorContains(t, g.Admit("t/h", h, nil), "not signed", "an http worker's secret references are read where its action runs")
	h.Signature, err = Sign(priv, "t/h", h)
	require.NoError(t, err)
	require.NoError(t, g.Admit("t/h", h, nil), "the policy is a process's business")
}

// The goal: policy and signature checks cost a start <= 1 ms on the host.
func BenchmarkGuard_Admit(b *testing.B) {
	_, priv, pub := keys(b)
	p, err := ParsePolicy([]byte("commands: [/usr/local/bin/*, /opt/*/bin/*, /usr/bin/sleep]\nusers: [www-data]\n"))
	require.NoError(b, err)
	n := processNode(b, `{command: /usr/bin/sleep, args: ["100"], env: {A: b, B: c}, health: {exec: [/usr/bin/sleep, "0"]}}`)
	n.Signature, err = Sign(priv, "t/web", n)
	require.NoError(b, err)
	n = roundTrip(b, n)
	g := &Guard{Policy: p, Trusted: []ed25519.PublicKey{pub}}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if err := g.Admit("t/web", n, nil); err != nil {
			b.Fatal(err)
		}
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
	signed, err := SignTree(priv, tree)
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
	require.NoError(t, Verify(trusted, "shop/api", api))
	back := spec.Inherit(signed, signed.Children[1])
	db := host("shop/back/db", []spec.Node{back}, signed.Children[1].Children[0])
	require.Equal(t, []any{"9090", "db"}, db.Process["args"])
	require.NoError(t, Verify(trusted, "shop/back/db", db))
	require.NotEmpty(t, signed.Children[1].Children[1].Signature, "every worker is signed")

	// The same file signed again gives the same signatures (Ed25519 is
	// deterministic): a re-apply with the same key changes nothing.
	again, err := SignTree(priv, tree)
	require.NoError(t, err)
	require.Equal(t, signed, again)
}

// A link under an allowed glob runs what it points to, which must be
// allowed too; loader variables and a probe's relative path (a probe runs
// in the worker's directory) cannot smuggle in another program.
func TestPolicy_LinksLoaderVariablesAndProbeDirectories(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.Symlink("/usr/bin/id", filepath.Join(dir, "innocent")))
	p := policy(t, "commands: ["+dir+"/*, /usr/bin/sleep]\n")
	require.EqualError(t, p.Check(processNode(t, "{command: "+dir+"/innocent}")),
		"policy (inline): command "+dir+"/innocent (a link to /usr/bin/id) is not allowed")
	require.EqualError(t, p.Check(processNode(t, "{command: /usr/bin/sleep, env: {LD_PRELOAD: /tmp/x.so}}")),
		"policy (inline): env LD_PRELOAD is not allowed (it makes an allowed program load other code)")
	require.ErrorContains(t, p.Check(processNode(t, "{command: /usr/bin/sleep, env: {BASH_ENV: /tmp/x}}")), "env BASH_ENV is not allowed")
	require.NoError(t, p.Check(processNode(t, "{command: /usr/bin/sleep, env: {LANG: C}}")))
	wd, err := os.Getwd()
	require.NoError(t, err)
	require.EqualError(t, p.Check(processNode(t, "{command: /usr/bin/sleep, dir: "+dir+", health: {exec: [innocent-x/../sleep]}}")),
		"policy (inline): probe command (process.health.exec) "+filepath.Join(wd, "sleep")+" is not allowed")
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
	signed, err := SignTree(priv, tree)
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
	require.NoError(t, VerifyFleet(trusted, "shop/web-2", got, &web2))
	require.NoError(t, g.Admit("shop/web-2", got, &web2))
	one := handed(3, "a")
	require.NoError(t, g.Admit("shop/one", received(one), &one), "hosts alone make a fleet's worker too")

	require.ErrorContains(t, g.Admit("shop/web-2", got, nil), "came without its signed template")
	require.ErrorContains(t, VerifyFleet(trusted, "shop/web-1", got, &web2), "names instance 2, which is not its path's")
	changed := got
	changed.Process = map[string]any{"command": "/usr/bin/id"}
	require.ErrorContains(t, VerifyFleet(trusted, "shop/web-2", changed, &web2), "not its signed template's rendering")
	evilVars := web2
	evilVars.Vars = map[string]string{"port": "22"}
	require.ErrorContains(t, VerifyFleet(trusted, "shop/web-2", received(evilVars), &evilVars), "does not match its signature")
	elsewhere := handed(2, "c")
	require.ErrorContains(t, VerifyFleet(trusted, "shop/web-2", received(elsewhere), &elsewhere), `placed on host "c", which its signed hosts do not list`)
	moved := handed(2, "a")
	require.ErrorContains(t, VerifyFleet(trusted, "shop/web-2", received(moved), &web2), "not placed as its template is")
	require.ErrorContains(t, Verify(trusted, "shop/web-2", got), "does not match its signature", "a template's signature is not a worker's")
}
