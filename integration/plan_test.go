package integration

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/steward-sh/steward/internal/spec"
)

// apply --dry-run compares a file with the running tree (assembled from
// its supervisors' spec queries, a subtree deep) and starts and signals
// nothing; for a tree that does not run, everything is added; a bad file
// is refused as apply refuses it.
func TestApplyDryRunPlansAndChangesNothing(t *testing.T) {
	needServer(t)
	const v1 = `
name: it-plan
children:
  - {name: web, kind: stub, stub: {delay: 10ms}}
  - {name: old, kind: stub}
  - name: g
    children:
      - {name: x, kind: stub}
      - {name: y, kind: stub}
`
	r := starter(t, "apply", "-f", writeSpec(t, v1), "--dry-run", "-o", "json")
	require.Equal(t, 0, r.code, r.stderr)
	var p spec.Plan
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &p), r.stdout)
	require.Equal(t, []string{"it-plan", "it-plan/web", "it-plan/old", "it-plan/g", "it-plan/g/x", "it-plan/g/y"}, p.Added)
	r = temporalCLI(t, "workflow", "describe", "-w", "it-plan")
	require.NotEqual(t, 0, r.code, "a dry run starts nothing")

	r = starter(t, "apply", "-f", writeSpec(t, v1), "--wait")
	require.Equal(t, 0, r.code, r.stdout+r.stderr)
	t.Cleanup(func() { deleteTree(t, "it-plan") })
	before := status(t, "it-plan/g/y").Generation

	v2 := `
name: it-plan
children:
  - {name: web, kind: stub, stub: {delay: 20ms}}
  - {name: new, kind: stub}
  - name: g
    children:
      - {name: x, kind: stub}
      - {name: y, kind: stub, desired: stopped}
`
	r = starter(t, "apply", "-f", writeSpec(t, v2), "--dry-run")
	require.Equal(t, 0, r.code, r.stderr)
	require.Equal(t, strings.Join([]string{
		"+ it-plan/new",
		"- it-plan/old",
		"~ it-plan/web: stub.delay: \"10ms\" -> \"20ms\"",
		"~ it-plan/g/y: desired: - -> \"stopped\"",
		"1 added, 1 removed, 2 changed, 3 unchanged",
	}, "\n")+"\n", r.stdout)
	r = starter(t, "apply", "-f", writeSpec(t, v2), "--dry-run", "-o", "json")
	require.Equal(t, 0, r.code, r.stderr)
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &p), r.stdout)
	require.Equal(t, []spec.Change{
		{Path: "it-plan/web", Fields: []spec.FieldChange{{Field: "stub.delay", Old: "10ms", New: "20ms"}}},
		{Path: "it-plan/g/y", Fields: []spec.FieldChange{{Field: "desired", Old: nil, New: "stopped"}}},
	}, p.Changed)
	require.Equal(t, 3, p.Unchanged)
	st := status(t, "it-plan/g/y")
	require.Equal(t, "running", st.State, "a dry run signals nothing")
	require.Equal(t, before, st.Generation)

	r = starter(t, "apply", "-f", writeSpec(t, "name: it-plan\nchildren: [{name: a, kind: stub, timeouts: {start: 0s}}]\n"), "--dry-run")
	require.Equal(t, 2, r.code, "a bad file is bad input, as for apply")
	require.Contains(t, r.stderr, "children[0].timeouts.start: must be > 0")
}
