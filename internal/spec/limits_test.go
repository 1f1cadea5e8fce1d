package spec

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Regression tests of the issue "No input wedges a tree": each finding is
// named, and fails on the code before it.

func procWorker(name, command string) Node {
	return Node{Name: name, Kind: KindProcess, Process: map[string]any{"command": command}}
}

// TestRunawayTemplateRangeIsRefusedAtOnce: `{{range 100000000}}{{end}}`
// ran for seconds inside a worker's signal handler (TMPRL1101, a worker
// wedged for good). It is refused by its parse tree, without running.
func TestRunawayTemplateRangeIsRefusedAtOnce(t *testing.T) {
	start := time.Now()
	ps := ValidateWorker("", procWorker("w", "{{range 100000000}}{{end}}/usr/bin/sleep"))
	require.Len(t, ps, 1)
	require.Contains(t, ps[0].String(), "process.command: template")
	require.Contains(t, ps[0].String(), "{{range}} is not allowed")
	require.Less(t, time.Since(start), 5*time.Second, "refused without running the loop (a loose bound: it takes microseconds)")
}

// TestTemplateLanguage: what a field template may use, and what it may not.
func TestTemplateLanguage(t *testing.T) {
	one := 3
	data := TemplateData{Vars: map[string]string{"port": "80", "my-var": "v", "n": "5"}, Name: "web", Instance: one, Host: "h1"}
	for _, c := range []struct{ in, out string }{
		{"plain", "plain"},
		{"{{ .Vars.port }}", "80"},
		{`{{ index .Vars "my-var" }}`, "v"},
		{"{{ .Name }}-{{ .Instance }}@{{ .Host }}", "web-3@h1"},
		{"{{ add 8080 .Instance }}", "8083"},
		{"{{ .Instance | add 8080 }}", "8083"},
		{"{{ add .Vars.n 1 }}", "6"},
		{"{{ add (add 1 2) .Instance }}", "6"},
		{`{{/* a comment */}}x{{ "lit" }}`, "xlit"},
	} {
		got, err := renderString(c.in, data, &renderBudget{left: MaxRenderedBytes}, false)
		require.NoError(t, err, c.in)
		require.Equal(t, c.out, got, c.in)
	}
	for _, c := range []struct{ in, says string }{
		{"{{range 100000000}}x{{end}}", "{{range}} is not allowed"},
		{"{{ if .Name }}x{{ end }}", "{{if}} is not allowed"},
		{"{{ with .Name }}x{{ end }}", "{{with}} is not allowed"},
		{`{{ define "x" }}{{ template "x" }}{{ end }}{{ template "x" }}`, "not allowed"},
		{`{{ printf "%0999999999d" 1 }}`, `function "printf" not defined`},
		{"{{ $x := .Name }}{{ $x }}", "variables are not allowed"},
		{"{{ .Vars }}", ".Vars is a map"},
		{"{{ .Secret }}", ".Secret is not a field"},
		{"{{ .Vars.nope }}", `no variable "nope"`},
		{"{{ .Name.Foo }}", "has no fields"},
		{"{{ add .Name 1 }}", "is not an integer"},
		{`{{ index .Name "x" }}`, "only index .Vars"},
	} {
		_, err := renderString(c.in, data, &renderBudget{left: MaxRenderedBytes}, false)
		require.Error(t, err, c.in)
		require.Contains(t, err.Error(), c.says, c.in)
	}
}

// TestRenderedSizeIsBounded: references to a large variable cannot make a
// node render to megabytes.
func TestRenderedSizeIsBounded(t *testing.T) {
	big := strings.Repeat("x", 30<<10)
	w := Node{Name: "w", Kind: KindProcess, Vars: map[string]string{"big": big},
		Process: map[string]any{"command": "c", "args": []any{"{{.Vars.big}}{{.Vars.big}}{{.Vars.big}}", "{{.Vars.big}}{{.Vars.big}}"}}}
	_, ps := Render(w, "")
	require.NotEmpty(t, ps)
	require.Contains(t, ps.Error(), "renders more than")
}

// TestChildNameOf1100CharactersIsRefused: apply accepted it, and the root
// then failed every task with BAD_START_CHILD_EXECUTION_ATTRIBUTES.
func TestChildNameOf1100CharactersIsRefused(t *testing.T) {
	root := Node{Name: "t", Children: []Node{{Name: strings.Repeat("a", 1100), Kind: KindStub}, {Name: "ok", Kind: KindStub}}}
	ps := Validate(root)
	require.Len(t, ps, 1, ps.Error())
	require.Equal(t, "children[0].name", ps[0].Path)
	require.Contains(t, ps[0].Msg, "1100 characters is too long (at most 100)")
}

// TestPathLimitCountsFromTheRoot: a spec sent to a supervisor deep in a
// tree is held to the path its children will have, not to its own names.
func TestPathLimitCountsFromTheRoot(t *testing.T) {
	name := strings.Repeat("n", 90)
	sub := Node{Name: name, Children: []Node{{Name: name, Kind: KindStub}}}
	require.Empty(t, ValidateAt("", sub))
	parent := strings.Join([]string{name, name, name}, "/")
	ps := ValidateAt(parent, sub)
	require.Len(t, ps, 1, ps.Error())
	require.Equal(t, "children[0].name", ps[0].Path)
	require.Contains(t, ps[0].Msg, "characters long (at most 400")
	// An instance's suffix counts.
	ps = ValidateAt(strings.Repeat("p", 305), Node{Name: "g", Children: []Node{{Name: name, Kind: KindStub, Instances: 1000}}})
	require.Len(t, ps, 1)
	require.Contains(t, ps[0].Msg, "-999")
}

func TestDepthLimit(t *testing.T) {
	n := Node{Name: "leaf", Kind: KindStub}
	for i := range MaxDepth {
		n = Node{Name: fmt.Sprintf("s%d", i), Children: []Node{n}}
	}
	ps := Validate(n)
	require.Len(t, ps, 1, ps.Error())
	require.Contains(t, ps[0].Msg, "deeper than 32 levels")
}

// TestEightChildrenInheriting1MBOfVarsAreRefused: each child inherited the
// vars, and the supervisor's task that started them all failed with
// GRPC_MESSAGE_TOO_LARGE for good.
func TestEightChildrenInheriting1MBOfVarsAreRefused(t *testing.T) {
	vars := map[string]string{}
	for i := range 12 {
		vars[fmt.Sprintf("v%d", i)] = strings.Repeat("x", 100<<10)
	}
	root := Node{Name: "t", Vars: vars}
	for i := range 8 {
		root.Children = append(root.Children, Node{Name: fmt.Sprintf("s%d", i), Kind: KindStub})
	}
	ps := Validate(root)
	require.NotEmpty(t, ps)
	require.Contains(t, ps.Error(), "children[0]: the worker's spec is 1.2Mi with what it inherits (at most 64Ki)")
}

func TestTreeSizeAndChildrenLimits(t *testing.T) {
	root := Node{Name: "t"}
	for i := range 1001 {
		root.Children = append(root.Children, Node{Name: fmt.Sprintf("w%d", i), Kind: KindStub})
	}
	ps := Validate(root)
	require.Len(t, ps, 1, ps.Error())
	require.Contains(t, ps[0].String(), "children: 1001 children (instances counted): a supervisor has at most 1000")

	big := Node{Name: "t"}
	for g := range 40 {
		sup := Node{Name: fmt.Sprintf("g%d", g)}
		for i := range 10 {
			sup.Children = append(sup.Children, Node{Name: fmt.Sprintf("w%d", i), Kind: KindStub, Vars: map[string]string{"x": strings.Repeat("x", 4<<10)}})
		}
		big.Children = append(big.Children, sup)
	}
	ps = Validate(big)
	require.NotEmpty(t, ps)
	require.Contains(t, ps[0].String(), "the tree's spec is 1.6Mi (at most 1.5Mi)")
}

// TestObserveInterval1nsIsRefused: 1ns was accepted, about 13 history
// events a second per worker.
func TestObserveInterval1nsIsRefused(t *testing.T) {
	ps := ValidateWorker("", Node{Name: "w", Kind: KindStub, Observe: &Observe{Interval: Dur(time.Nanosecond)}})
	require.Len(t, ps, 1)
	require.Equal(t, "observe.interval: 1ns is too short (at least 1s)", ps[0].String())
	ps = ValidateWorker("", Node{Name: "w", Kind: KindStub, Backoff: &Backoff{Initial: Dur(time.Microsecond)}, Retry: &Retry{InitialInterval: Dur(time.Millisecond)}})
	require.Len(t, ps, 2, ps.Error())
	_, err := Parse([]byte("name: w\nkind: process\nprocess: {command: x, ready: {tcp: 'h:1', interval: 1ms}}\n"))
	require.ErrorContains(t, err, "process.ready.interval: 1ms is too short (at least 100ms)")
	require.Empty(t, ValidateWorkerLegacy(Node{Name: "w", Kind: KindStub, Observe: &Observe{Interval: Dur(time.Nanosecond)}}), "a run of older code replays what it took")
}

// TestYAMLAliasBombIsRefused: aliases were expanded without a bound (10^6
// nodes took 1.7 s; a billion would not end). Shared blocks still work.
func TestYAMLAliasBombIsRefused(t *testing.T) {
	y := "x0: &a0 [x,x,x,x,x,x,x,x,x,x]\n"
	for i := 1; i <= 8; i++ {
		p := fmt.Sprintf("*a%d", i-1)
		y += fmt.Sprintf("x%d: &a%d [%s]\n", i, i, strings.TrimSuffix(strings.Repeat(p+",", 10), ","))
	}
	start := time.Now()
	_, err := Parse([]byte(y + "name: x\nkind: stub\n"))
	require.ErrorContains(t, err, "its aliases expand it by")
	require.Less(t, time.Since(start), 5*time.Second, "refused before the decoder expands it (a loose bound: it takes a millisecond)")

	var b strings.Builder
	b.WriteString("name: t\nchildren:\n  - {name: w0, kind: stub, stub: &s {delay: 1s, crashAfter: 1m}}\n")
	for i := 1; i < 2000; i++ {
		fmt.Fprintf(&b, "  - {name: w%d, kind: stub, stub: *s}\n", i)
	}
	_, err = Parse([]byte(b.String()))
	require.ErrorContains(t, err, "2000 children", "a shared block is no alias bomb (the children limit is what refuses this one)")
	require.NotContains(t, err.Error(), "aliases")
}

// TestLegacyValidationTakesWhatTextTemplateTook: a run begun before the
// template language replays the specs it took with text/template's engine,
// and a spec its supervisor kept still starts its child: such a field is no
// problem to ValidateLegacy (it stays as written), while what the old
// engine refused is still refused (a found review: they failed the run's
// input at once and orphaned its service).
func TestLegacyValidationTakesWhatTextTemplateTook(t *testing.T) {
	vars := map[string]string{"debug": "1", "port": "80"}
	for _, tmpl := range []string{`{{ if .Vars.debug }}-v{{ end }}`, `{{ printf "%s-x" .Name }}`, `{{ index .Vars "missing" }}`, `{{ range .Vars }}x{{ end }}`} {
		n := Node{Name: "w", Kind: KindProcess, Vars: vars, Process: map[string]any{"command": "c", "args": []any{tmpl}}}
		require.Empty(t, ValidateWorkerLegacy(n), tmpl)
		require.NotEmpty(t, ValidateWorker("", n), tmpl)
	}
	for _, tmpl := range []string{`{{ add 1 .Vars.port }}`, `{{ .Vars.missing }}`, `{{ .Vars.port`} {
		n := Node{Name: "w", Kind: KindProcess, Vars: vars, Process: map[string]any{"command": "c", "args": []any{tmpl}}}
		require.NotEmpty(t, ValidateWorkerLegacy(n), tmpl)
	}
	require.Empty(t, ValidateWorker("", Node{Name: "w", Kind: KindProcess, Vars: vars, Process: map[string]any{"command": "c", "args": []any{`{{ add 1 .Vars.port }}`}}}), "the language takes a variable holding an integer")
}

// TestExpandedChildrenOverTheTreeLimitAreRefused: web and db with 500
// instances each, db depending on web, is a spec of 300 bytes whose
// supervisor carries 2.6 MB (each db-i names 500 dependencies): more than
// a continue-as-new carries (a found review).
func TestExpandedChildrenOverTheTreeLimitAreRefused(t *testing.T) {
	root := Node{Name: "t", Children: []Node{
		{Name: "web", Kind: KindStub, Instances: 500},
		{Name: "db", Kind: KindStub, Instances: 500, DependsOn: []string{"web"}},
	}}
	ps := Validate(root)
	require.Len(t, ps, 1, ps.Error())
	require.Contains(t, ps[0].String(), "children: with instances expanded")
	root.Children[1].DependsOn = nil
	require.Empty(t, Validate(root), "without the dependencies it is small")
}

// TestValidationCostIsBoundedByTheLimits: a spec that is refused is not
// walked past the limit that refuses it, and a tree's vars are not copied
// into every worker (a found review: 20,000 vars over 1,000 children took
// 3.8 s to validate inside a signal handler, past the deadlock detector).
func TestValidationCostIsBoundedByTheLimits(t *testing.T) {
	vars := map[string]string{}
	for i := range 20000 {
		vars[fmt.Sprintf("v%05d", i)] = "0123456789"
	}
	root := Node{Name: "plant", Vars: vars}
	for i := range 1000 {
		root.Children = append(root.Children, Node{Name: fmt.Sprintf("c%d", i), Kind: KindStub})
	}
	root.Children = append(root.Children, Node{Name: "zz", Kind: "bogus"})
	start := time.Now()
	ps := Validate(root)
	require.NotEmpty(t, ps)
	require.Less(t, time.Since(start), 5*time.Second, "a loose bound: it takes milliseconds")
	root.Children = root.Children[:10]
	ps = Validate(root)
	require.Contains(t, ps.Error(), "20000 variables with those it inherits (at most 512)")
}

// Regression (attack review): a supervisor keeps a time for each restart
// within its intensity's period, up to maxRestarts+1; a spec with
// maxRestarts near 2^62 let one forged report grow that list without
// bound. The starter refuses one past MaxIntensityRestarts (Parse); a
// running supervisor bounds what it counts itself (supervisor 13), and
// Validate, which workflows run, does not change what it took.
func TestIntensityOfTwoTo62RestartsIsRefused(t *testing.T) {
	yaml := func(n int) string {
		return fmt.Sprintf("name: t\nchildren:\n  - name: g\n    intensity: {maxRestarts: %d, period: 1m}\n    children: [{name: w, kind: stub}]\n", n)
	}
	_, err := Parse([]byte(yaml(MaxIntensityRestarts)))
	require.NoError(t, err)
	_, err = Parse([]byte(yaml(1 << 62)))
	require.EqualError(t, err, "children[0].intensity.maxRestarts: 4611686018427387904 is too many (at most 10000)")
	period := Duration(time.Minute)
	n := Node{Name: "t", Intensity: &Intensity{MaxRestarts: 1 << 62, Period: &period}, Children: []Node{{Name: "w", Kind: KindStub}}}
	require.Empty(t, Validate(n), "a running supervisor's checks are as they were: replays take what they took")
}
