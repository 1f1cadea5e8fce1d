package spec

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func mustParse(t *testing.T, yml string) Node {
	t.Helper()
	n, err := Parse([]byte(yml))
	require.NoError(t, err)
	return n
}

func TestDiffOfNothingRunningAddsEverything(t *testing.T) {
	p := Diff(nil, mustParse(t, "name: a\nchildren:\n  - {name: b, kind: stub}\n  - name: g\n    children: [{name: c, kind: stub}]\n"))
	require.Equal(t, []string{"a", "a/b", "a/g", "a/g/c"}, p.Added)
	require.Empty(t, p.Removed)
	require.Empty(t, p.Changed)
	require.Zero(t, p.Unchanged)
}

func TestDiffNamesEachChangedField(t *testing.T) {
	running := mustParse(t, `
name: shop
children:
  - name: web
    kind: process
    process: {command: web, args: ["--port", "80"], env: {A: "1", S: {file: /etc/s}}}
  - {name: old, kind: stub}
  - name: g
    strategy: one_for_one
    children:
      - {name: x, kind: stub, timeouts: {start: 5s}}
      - {name: y, kind: stub}
`)
	wanted := mustParse(t, `
name: shop
children:
  - name: web
    kind: process
    process: {command: web, args: ["--port", "8080"], env: {A: "1", S: {file: /etc/s2}}}
  - {name: new, kind: stub}
  - name: g
    strategy: one_for_all
    children:
      - {name: x, kind: stub, timeouts: {start: 5s}}
      - {name: y, kind: stub, desired: stopped}
`)
	p := Diff(&running, wanted)
	require.Equal(t, []string{"shop/new"}, p.Added)
	require.Equal(t, []string{"shop/old"}, p.Removed)
	require.Equal(t, 2, p.Unchanged, "shop and shop/g/x")
	var got []string
	for _, c := range p.Changed {
		for _, f := range c.Fields {
			got = append(got, c.Path+": "+f.String())
		}
	}
	require.Equal(t, []string{
		`shop/web: process.args: ["--port","80"] -> ["--port","8080"]`,
		`shop/web: process.env.S.file: "/etc/s" -> "/etc/s2"`,
		`shop/g: strategy: "one_for_one" -> "one_for_all"`,
		`shop/g/y: desired: - -> "stopped"`,
	}, got)
}

func TestDiffOfAnotherRootReplacesIt(t *testing.T) {
	old := mustParse(t, "name: a\nkind: stub\n")
	p := Diff(&old, mustParse(t, "name: b\nkind: stub\n"))
	require.Equal(t, []string{"b"}, p.Added)
	require.Equal(t, []string{"a"}, p.Removed)
}

// What a child inherits is compared as handed down: the running side holds
// a child's effective vars and notify (its own query answers them), the
// file holds them once at the parent; both mean the same tree.
func TestDiffComparesInheritedFieldsAsHandedDown(t *testing.T) {
	file := Node{Name: "plant", Vars: map[string]string{"port": "80"}, Notify: &Notify{Webhook: Literal("http://h/x")},
		Children: []Node{{Name: "g", Children: []Node{{Name: "w", Kind: KindStub}}}}}
	running := Effective(file)
	require.Equal(t, "80", running.Children[0].Children[0].Vars["port"])
	require.Equal(t, "http://h/x", running.Children[0].Children[0].Notify.Webhook.Literal)
	p := Diff(&running, file)
	require.Empty(t, p.Changed)
	require.Equal(t, 3, p.Unchanged)

	file.Vars = map[string]string{"port": "81"}
	p = Diff(&running, file)
	require.Len(t, p.Changed, 3, "a var of the root changes every node that inherits it")
	require.Nil(t, file.Children[0].Vars, "its input is left alone")
}
