package main

import (
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// What the starter prints of a tree (status, jobs, runs, hosts, history,
// revisions, watch) is text that anyone who may signal a workflow can
// write: an exit's reason, a job run's, a report's. A terminal acts on
// the control characters in it (an escape sequence can rewrite or hide
// rows, or set the clipboard: OSC 52), so tables and event lines pass
// through printable first. `starter logs` prints a service's own output
// as it is.

// printable replaces each character a terminal acts on (C0 controls but
// tab and newline, DEL, C1 controls, and bytes that are not UTF-8) by '?'.
func printable(s string) string {
	if !needsCleaning(s) {
		return s
	}
	var b strings.Builder
	for len(s) > 0 {
		r, n := utf8.DecodeRuneInString(s)
		if (r == utf8.RuneError && n == 1) || controlRune(r) {
			b.WriteByte('?')
		} else {
			b.WriteString(s[:n])
		}
		s = s[n:]
	}
	return b.String()
}

// needsCleaning: s has a control byte, or any past ASCII (decided rune by
// rune).
func needsCleaning(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < 0x20 && c != '\t' && c != '\n') || c >= 0x7f {
			return true
		}
	}
	return false
}

func controlRune(r rune) bool {
	return (r < 0x20 && r != '\t' && r != '\n') || (r >= 0x7f && r <= 0x9f)
}

// terminalSafe is w with what is written through it made printable: the
// tables' tabwriters write through it (a cell is written whole, so a
// character is never split between writes).
type terminalSafe struct{ w io.Writer }

func (t terminalSafe) Write(p []byte) (int, error) {
	if _, err := io.WriteString(t.w, printable(string(p))); err != nil {
		return 0, err
	}
	return len(p), nil
}

// linef prints format as one printable line to w: warnings and progress
// lines quote paths, reasons, errors and identities that anyone who may
// write to the namespace chose.
func linef(w io.Writer, format string, a ...any) {
	fmt.Fprintln(w, cell(fmt.Sprintf(format, a...)))
}

// cell is s made printable for one cell of a table or one event line: a
// newline or a tab in it (which would begin a row or a column of its own,
// a forged row) becomes a space.
func cell(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '\n' || r == '\t' {
			return ' '
		}
		return r
	}, printable(s))
}
