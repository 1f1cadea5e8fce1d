package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/steward-sh/steward/workflows"
)

// Regression (attack review): a reason sent by hand (a forged exit or job
// run: `temporal workflow signal ... "reason":"\u001b]52;c;...\u0007"`) was
// printed raw by `starter status`, so a writer of the namespace could
// rewrite or hide rows in the operator's terminal, or set its clipboard,
// and a newline in it made a row of its own.
func TestStatus_AReasonSentByHandCannotDriveTheTerminal(t *testing.T) {
	var out bytes.Buffer
	printTree(&out, []workflows.Status{{Path: "t1", Kind: "supervisor", State: "running", Children: []workflows.Status{
		{Path: "t1/backup", Kind: "stub", State: "failed", Reason: "\x1b]52;c;ZWNobyBwd25lZA==\x07\x1b[1A\x1b[2K\nt1/fake\tstub\trunning\r\u009b2J"},
	}}})
	text := out.String()
	for _, c := range text {
		if c == '\n' {
			continue
		}
		require.False(t, controlRune(c), "a control character %U reached the terminal: %q", c, text)
	}
	require.Equal(t, 3, strings.Count(text, "\n"), "a header and two rows, no forged one: %q", text)
	require.Contains(t, text, "?]52;c;ZWNobyBwd25lZA==??[1A?[2K t1/fake stub running??2J")
}

func TestPrintable(t *testing.T) {
	for in, want := range map[string]string{
		"plain text":           "plain text",
		"tab\tand\nnewline":    "tab\tand\nnewline",
		"caf\u00e9 \u2713":     "caf\u00e9 \u2713",
		"esc\x1b[31m":          "esc?[31m",
		"del\x7f c1\u0085":     "del? c1?",
		"bad utf-8 \xff\xfe":   "bad utf-8 ??",
		"bell\a and cr\r done": "bell? and cr? done",
	} {
		require.Equal(t, want, printable(in), "%q", in)
	}
	require.Equal(t, "a b c", cell("a\nb\tc"))
}
