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
