package workflows

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// Each type's newest version is the highest of its table, every feature
// is on from its version and off one below, and the names are unique.
func TestVersions_TablesHoldTogether(t *testing.T) {
	newest := map[string]int{typeSupervisor: SupervisorVersion, typeWorker: WorkerVersion, typeRollout: RolloutVersion,
		typeHost: HostVersion, typeRevisions: RevisionsVersion}
	highest := map[string]int{}
	names := map[string]bool{}
	for _, f := range features {
		require.Contains(t, newest, f.workflow, f.name)
		require.False(t, names[f.name], "%s twice", f.name)
		names[f.name] = true
		require.GreaterOrEqual(t, f.since, 1, f.name)
		require.True(t, f.in(f.since), "%s on at %d", f.name, f.since)
		require.True(t, f.in(newest[f.workflow]), "%s on at the newest version", f.name)
		require.False(t, f.in(f.since-1), "%s off at %d", f.name, f.since-1)
		highest[f.workflow] = max(highest[f.workflow], f.since)
	}
	require.Equal(t, newest, highest, "each type's version is its table's highest")
}

// The code asks features, never numbers: no comparison of a version with
// a literal outside the tables (a gate written as `s.in.Version >= 9` would
// escape the table and its changelog). And every feature that gates
// something is asked somewhere.
func TestVersions_NoLiteralGates(t *testing.T) {
	literal := regexp.MustCompile(`(?i)version\)?\s*(>=|<=|<|>|==|!=)\s*[0-9]`)
	files, err := filepath.Glob("*.go")
	require.NoError(t, err)
	var code strings.Builder
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") || f == "versions.go" {
			continue
		}
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		for i, line := range strings.Split(string(b), "\n") {
			if c := strings.Index(line, "//"); c >= 0 {
				line = line[:c]
			}
			require.False(t, literal.MatchString(line), "%s:%d compares a version with a number: %s", f, i+1, strings.TrimSpace(line))
			code.WriteString(line + "\n")
		}
	}
	noGate := map[string]bool{hostVersioned.name: true, revisionsVersioned.name: true}
	vars := regexp.MustCompile(`(?m)^\t(\w+)\s*=\s*feature\{"([^"]+)"`)
	b, err := os.ReadFile("versions.go")
	require.NoError(t, err)
	found := vars.FindAllStringSubmatch(string(b), -1)
	require.Len(t, found, len(features), "every feature is in the features list")
	for _, m := range found {
		if noGate[m[2]] {
			continue
		}
		require.Contains(t, code.String(), m[1]+".in(", "feature %s is asked somewhere", m[2])
	}
}
