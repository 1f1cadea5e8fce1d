package spec

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// Vars are inherited down the tree, a child's own override its parent's,
// and every string in a driver block renders over them.
func TestVarsInheritOverrideAndRender(t *testing.T) {
	root := Node{Name: "plant", Vars: map[string]string{"host": "h", "port": "80"}, Children: []Node{
		{Name: "line", Vars: map[string]string{"port": "8080"}, Children: []Node{
			{Name: "web", Kind: KindProcess, Process: map[string]any{
				"command": "serve",
				"args":    []any{"--addr", "{{ .Vars.host }}:{{ .Vars.port }}", "--name={{ .Name }}"},
				"env":     map[string]any{"PORT": "{{ .Vars.port }}"},
			}},
		}},
	}}
	require.Empty(t, Validate(root))
	line := Inherit(root, root.Children[0])
	require.Equal(t, map[string]string{"host": "h", "port": "8080"}, line.Vars, "overridden")
	web := Inherit(line, line.Children[0])
	out, ps := Render(web, "")
	require.Empty(t, ps)
	require.Equal(t, []any{"--addr", "h:8080", "--name=web"}, out.Process["args"])
	require.Equal(t, map[string]any{"PORT": "8080"}, out.Process["env"])
	require.Equal(t, "{{ .Vars.port }}", web.Process["env"].(map[string]any)["PORT"], "Render leaves its input alone")

	p, err := ParseProcess(out.Process)
	require.NoError(t, err)
	require.Equal(t, "h:8080", p.Args[1])
}

func TestMergeVarsOfNothingIsNil(t *testing.T) {
	require.Nil(t, MergeVars(nil, map[string]string{}), "a tree without vars keeps its shape (and its canonical JSON)")
	require.Equal(t, map[string]string{"a": "1"}, MergeVars(map[string]string{"a": "1"}, nil))
}

// The shipped example must stay valid: `make run` applies it.
func TestExampleDemoSpecIsValid(t *testing.T) {
	n, err := Load("../../examples/demo.yaml")
	require.NoError(t, err)
	require.Equal(t, 3, len(n.Children[2].Children), "the shop group")
	hello, ps := Render(Inherit(n, n.Children[0]), "children[0]")
	require.Empty(t, ps)
	require.Equal(t, []any{"--addr", "127.0.0.1:18081"}, hello.Process["args"])
}
