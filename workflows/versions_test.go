package workflows

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/steward-sh/steward/internal/versions"
)

// The code asks features, never numbers: no comparison of a version with
// a literal outside the tables (a gate written as `s.in.Version >= 9` would
// escape the table and its changelog). And every feature that gates
// something is asked somewhere.
func TestVersions_NoLiteralGates(t *testing.T) {
	literal := regexp.MustCompile(`(?i)version\)?\s*(>=|<=|<|>|==|!=)\s*[0-9]`)
	files, err := filepath.Glob("*.go")
	require.NoError(t, err)
	starter, err := filepath.Glob("../starter/*.go")
	require.NoError(t, err)
	files = append(files, starter...)
	var code strings.Builder
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
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
	noGate := map[string]bool{versions.HostVersioned.Name: true, versions.RevisionsVersioned.Name: true, versions.JobVersioned.Name: true}
	vars := regexp.MustCompile(`(?m)^\t(\w+)\s*=\s*Feature\{"([^"]+)"`)
	b, err := os.ReadFile("../internal/versions/versions.go")
	require.NoError(t, err)
	found := vars.FindAllStringSubmatch(string(b), -1)
	require.Len(t, found, len(versions.All), "every feature is in the list All")
	for _, m := range found {
		if noGate[m[2]] {
			continue
		}
		require.Contains(t, code.String(), "versions."+m[1]+".In(", "feature %s is asked somewhere", m[2])
	}
}
