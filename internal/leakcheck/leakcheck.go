// Package leakcheck is a test helper: it checks that no goroutine running
// this module's code outlives a test.
//
// go.uber.org/goleak checks every goroutine, and the Temporal SDK's test
// environments leave goroutines of their own behind; this check looks only
// at what steward's code could leak (an activity, a driver call, a heartbeat
// loop, a timer callback).
package leakcheck

import (
	"bytes"
	"runtime"
	"strings"
	"testing"
	"time"
)

const modulePrefix = "github.com/steward-sh/steward/"

// Wait is how long NoLeaks lets goroutines wind down before it reports them.
const Wait = 5 * time.Second

func goroutineID(stack string) string {
	// "goroutine 18 [running]:\n..."
	header, _, _ := strings.Cut(stack, "\n")
	fields := strings.Fields(header)
	if len(fields) < 2 {
		return ""
	}
	return fields[1]
}

// ModuleGoroutines returns the stacks of goroutines, other than the caller's,
// that run code of this module.
func ModuleGoroutines() []string {
	self := make([]byte, 1<<10)
	self = self[:runtime.Stack(self, false)]
	selfID := goroutineID(string(self))
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	var out []string
	for _, g := range bytes.Split(buf, []byte("\n\n")) {
		s := string(g)
		if goroutineID(s) == selfID || !strings.Contains(s, modulePrefix) {
			continue
		}
		out = append(out, s)
	}
	return out
}

// NoLeaks checks, after the test and every cleanup registered after it, that
// no goroutine of this module is left running. Call it first in each test.
// It polls in the test's own goroutine (assert.Eventually would run the
// condition in a goroutine of its own, which would then see the test's).
func NoLeaks(t testing.TB) {
	t.Helper()
	t.Cleanup(func() {
		deadline := time.Now().Add(Wait)
		for {
			left := ModuleGoroutines()
			if len(left) == 0 {
				return
			}
			if time.Now().After(deadline) {
				t.Errorf("leaked goroutines:\n%s", strings.Join(left, "\n\n"))
				return
			}
			time.Sleep(5 * time.Millisecond)
		}
	})
}
