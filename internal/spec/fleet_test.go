package spec

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestFleetValidation(t *testing.T) {
	for _, tc := range []struct {
		name, yml, want string
	}{
		{"hosts and process.host", `
name: t
children:
  - {name: web, kind: process, hosts: [a, b], process: {command: /bin/true, host: a}}
`, `children[0].hosts: give hosts or process.host ("a"), not both`},
		{"instances on a supervisor", `
name: t
children:
  - {name: g, instances: 2, children: [{name: w, kind: stub}]}
`, "children[0].instances: only workers (nodes with a kind) take instances"},
		{"negative instances", `
name: t
children: [{name: w, kind: stub, instances: -1}]
`, "children[0].instances: must be 1 .. 1000"},
		{"an instance named as a sibling", `
name: t
children: [{name: w, kind: stub, instances: 2}, {name: w-1, kind: stub}]
`, `children[0].instances: instance "w-1" has the name of children[1]`},
		{"empty hosts", `
name: t
children: [{name: w, kind: stub, hosts: []}]
`, "children[0].hosts: an empty list places nothing"},
		{"a host twice", `
name: t
children: [{name: w, kind: stub, hosts: [a, a]}]
`, `children[0].hosts[1]: "a" is named twice`},
		{"a bad host name", `
name: t
hosts: ["a b"]
children: [{name: w, kind: stub}]
`, `hosts[0]: "a b" is not a valid host name`},
		{"reschedule without a delay", `
name: t
children: [{name: w, kind: stub, hosts: [a, b], reschedule: {after: 0s}}]
`, "children[0].reschedule.after: must be > 0"},
		{"a move that is not one", `
name: t
move: later
children: [{name: w, kind: stub, hosts: [a, b]}]
`, `move: "later" is not a way to move: overlap (the default) or stopFirst`},
		{"instances on the root", `
name: t
kind: stub
instances: 2
`, "instances: the root is one workflow"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(tc.yml))
			require.Error(t, err)
			require.Contains(t, err.Error(), tc.want)
		})
	}
}

func TestExpand(t *testing.T) {
	root := mustParse(t, `
name: t
hosts: [a, b]
reschedule: {after: 1m}
move: stopFirst
children:
  - name: web
    kind: process
    instances: 3
    process: {command: /bin/web, args: ["--port", "{{ add 8080 .Instance }}", "--host", "{{ .Host }}"]}
  - {name: lb, kind: stub, dependsOn: [web]}
  - {name: db, kind: process, process: {command: /bin/db, host: c}}
  - {name: cache, kind: stub, hosts: [c], move: overlap}
`)
	kids := Expand(root)
	var names []string
	for _, k := range kids {
		names = append(names, k.Name)
	}
	require.Equal(t, []string{"web-0", "web-1", "web-2", "lb", "db", "cache"}, names)
	require.Equal(t, []string{"web-0", "web-1", "web-2"}, kids[3].DependsOn, "a dependant of web depends on every instance")
	require.Equal(t, []string{"a", "b"}, kids[1].Hosts, "hosts are inherited")
	require.Equal(t, "1m0s", kids[1].Reschedule.After.D().String())
	require.Equal(t, MoveStopFirst, kids[1].Move, "move is inherited")
	require.Equal(t, MoveOverlap, kids[5].Move, "its own move wins")
	require.Nil(t, kids[4].Hosts, "a process that names its host keeps it")
	require.Equal(t, "c", kids[4].RunsOn())
	require.Equal(t, []string{"c"}, kids[5].Hosts, "its own hosts win")
	require.Equal(t, "", kids[5].RunsOn(), "not placed yet")

	again := root
	again.Children = kids
	require.Equal(t, kids, Expand(again), "an expanded spec expands to itself")

	web1 := kids[1]
	web1.PlacedOn = "b"
	r, ps := Render(web1, "")
	require.Empty(t, ps)
	p, err := ParseProcess(r.Process)
	require.NoError(t, err)
	require.Equal(t, []string{"--port", "8081", "--host", "b"}, p.Args)
	require.Equal(t, "b", web1.RunsOn())
	require.Equal(t, DefaultUnreachableAfter, web1.UnreachableAfter())
}

func TestDiffComparesInstancesAsTheyRun(t *testing.T) {
	three := mustParse(t, "name: t\nchildren:\n  - {name: w, kind: stub, instances: 3, hosts: [a, b]}\n")
	running := Expanded(three)
	for i := range running.Children {
		running.Children[i].PlacedOn = []string{"a", "b", "a"}[i]
	}
	p := Diff(&running, three)
	require.Empty(t, p.Added)
	require.Empty(t, p.Removed)
	require.Empty(t, p.Changed, "where a worker was placed is no change")
	two := mustParse(t, "name: t\nchildren:\n  - {name: w, kind: stub, instances: 2, hosts: [a, b]}\n")
	p = Diff(&running, two)
	require.Equal(t, []string{"t/w-2"}, p.Removed)
	require.True(t, strings.HasPrefix(p.Removed[0], "t/w-"))
}

// CheckExpansion bounds what Expand would make, before it is made.
func TestCheckExpansion_BoundsInstancesAndDependencies(t *testing.T) {
	sup := func(children ...Node) Node { return Node{Name: "s", Children: children} }
	w := func(name string, instances int, deps ...string) Node {
		return Node{Name: name, Kind: KindStub, Instances: instances, DependsOn: deps}
	}
	require.NoError(t, CheckExpansion(sup(w("a", 1000), w("b", 999), w("c", 0))))
	require.ErrorContains(t, CheckExpansion(sup(w("a", 1000), w("b", 1000), w("c", 0))), "more than 2000")
	require.ErrorContains(t, CheckExpansion(sup(w("a", 1<<62), w("b", 1<<62))), "more than 2000", "no overflow")
	// A supervisor's instances are not expanded here (its own children are, by it).
	require.NoError(t, CheckExpansion(sup(Node{Name: "g", Instances: 5000, Children: []Node{w("x", 1)}})))
	deps := make([]string, 1001)
	for i := range deps {
		deps[i] = "a"
	}
	require.ErrorContains(t, CheckExpansion(sup(w("a", 1000), w("b", 1, deps...))), "dependsOn expand to more than 1000000")
	require.NoError(t, CheckExpansion(sup(w("a", 1000), w("b", 1, deps[:1000]...))))
	// What the starter's limits allow (the reviewer's): 300 instances and
	// 334 siblings depending on them all.
	kids := []Node{w("web", 300)}
	for i := range 334 {
		kids = append(kids, w(fmt.Sprintf("s%d", i), 0, "web"))
	}
	require.NoError(t, CheckExpansion(sup(kids...)))
}
