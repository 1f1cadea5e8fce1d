package spec

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// Regression (attack review): the parser copies the path at every level
// of a flow collection, so a file of 40,000 "[" took 4 GB (and the 16 MiB
// file limit allows millions). Nesting is counted before parsing, outside
// quotes and comments; an apostrophe in a plain scalar hides nothing.
func TestCheckYAML_DeepFlowNestingIsRefusedBeforeParsing(t *testing.T) {
	deep := func(prefix string, n int) []byte {
		return []byte(prefix + strings.Repeat("[", n) + strings.Repeat("]", n) + "}\n")
	}
	require.NoError(t, CheckYAML(deep("name: t\nkind: process\nprocess: {x: ", MaxFlowDepth-1)))
	err := CheckYAML(deep("name: t\nkind: process\nprocess: {x: ", 40000))
	require.ErrorContains(t, err, "line 3 nests [ and { more than 256 deep")
	_, err = Parse(deep("name: t\nkind: process\nprocess: {x: ", 40000))
	require.ErrorContains(t, err, "more than 256 deep")

	// Brackets in quotes and comments are not nesting...
	quoted := "name: t\nvars: {a: \"" + strings.Repeat("[", 1000) + "\", b: '" + strings.Repeat("{", 1000) + "'}\n# " + strings.Repeat("[", 1000) + "\n"
	require.NoError(t, CheckYAML([]byte(quoted)))
	// ...but an apostrophe inside a plain scalar opens no quote, nor a
	// quote on a block scalar's line, nor a quote after "x-" or "x:"; two
	// apostrophes in a single-quoted scalar are one (the reviewer's
	// bypasses, each of which the parser took 300 deep).
	nest := strings.Repeat("[", 300) + strings.Repeat("]", 300) + "\n"
	for _, sneaky := range []string{
		"name: it's\nx: " + nest,
		"a: |\n  \"\nb: " + nest,
		"a: x-\"\nb: " + nest,
		"a: x:'\nb: " + nest,
		"a: |\n  x, '\nb: " + nest,
		"a: " + strings.Repeat("['x'']', ", 1) + strings.Repeat("[", 300) + "\n",
		"a: [ |\n  " + nest,
	} {
		require.ErrorContains(t, CheckYAML([]byte(sneaky)), "more than 256 deep", "%.40q", sneaky)
	}
	// A block scalar's brackets are text: a script with many is taken.
	script := "name: t\nkind: process\nprocess:\n  command: sh\n  args:\n    - -c\n    - |\n      " + strings.Repeat("[ ", 300) + "\n      echo \"it's\"\nafter: [a, {b: c}]\n"
	require.NoError(t, CheckYAML([]byte(script)))
}

// Load read the whole file before its size was checked: /dev/zero given
// by mistake filled the starter's memory.
func TestLoad_ReadsNoMoreThanTheLimit(t *testing.T) {
	if _, err := os.Stat("/dev/zero"); err != nil {
		t.Skip("no /dev/zero")
	}
	_, err := Load("/dev/zero")
	require.ErrorContains(t, err, "(at most 16Mi)")
}
