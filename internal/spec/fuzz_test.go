package spec

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// FuzzParse feeds the parser and validator arbitrary bytes (`make fuzz`
// runs it; `go test` runs the seed corpus: the shipped example and specs
// from the tests). Whatever the input, Parse never panics and either
// refuses it with problems or returns a spec that validates, renders, and
// survives the JSON round trip it makes inside Temporal payloads unchanged.
func FuzzParse(f *testing.F) {
	demo, err := os.ReadFile(filepath.Join("..", "..", "examples", "demo.yaml"))
	require.NoError(f, err)
	f.Add(demo)
	for _, s := range []string{
		"name: a\nkind: stub\n",
		"name: plant\nstrategy: one_for_all\nintensity: {maxRestarts: 2, period: 1m, cooldown: 5s}\nchildren: [{name: a, kind: stub, stub: {crashAfter: 1s}}]\n",
		"name: p\nvars: {port: '80'}\nchildren: [{name: w, kind: process, process: {command: x, args: ['{{ .Vars.port }}']}}]\n",
		"name: p\nchildren: [{name: w, kind: http, http: {health: {url: 'http://h/{{ .Vars.nope }}'}}}]\n",
		"name: a\nkind: stub\ntimeouts: {start: 1.5s}\nbackoff: {initial: 0s}\n",
		"name: [\n", "- a\n", "name: a/b\nkind: stub\n", "",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		n, err := Parse(data)
		if err != nil {
			var ps Problems
			require.ErrorAs(t, err, &ps)
			require.NotEmpty(t, ps, "a refusal names at least one problem")
			return
		}
		require.Empty(t, Validate(n))
		b, err := json.Marshal(n)
		require.NoError(t, err)
		var back Node
		require.NoError(t, json.Unmarshal(b, &back))
		require.Empty(t, Validate(back), "the spec as a payload still validates")
		b2, err := json.Marshal(back)
		require.NoError(t, err)
		require.JSONEq(t, string(b), string(b2), "the JSON round trip changes nothing")
		var walk func(parent, n Node)
		walk = func(parent, n Node) {
			n = Inherit(parent, n)
			if !n.IsSupervisor() {
				_, ps := Render(n, "")
				require.Empty(t, ps, "a valid spec renders")
				_ = n.Resolved()
				return
			}
			for _, c := range n.Children {
				walk(n, c)
			}
		}
		walk(Node{}, n)
	})
}
