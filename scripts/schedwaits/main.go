// Command schedwaits reads a Go execution trace (runtime/trace, as
// net/http/pprof's /debug/pprof/trace serves it) and prints how long
// goroutines waited to run once runnable, by kind of goroutine: a
// workflow task's (the SDK's task goroutine once it processed a workflow
// task), a workflow coroutine's, an activity task's, and the rest.
//
// A diagnostic for scripts/sched-waits.sh (docs/benchmarks.md); nothing
// steward ships uses it. Its own module, so that the project's module does
// not require golang.org/x/exp.
package main

import (
	"fmt"
	"os"
	"sort"
	"strings"

	"golang.org/x/exp/trace"
)

// kind names a goroutine by a frame of a stack it was seen with.
func kind(stacks ...trace.Stack) string {
	for _, s := range stacks {
		for f := range s.Frames() {
			switch {
			case strings.Contains(f.Func, "coroutineState"), strings.Contains(f.Func, "newCoroutine"):
				return "workflow coroutine"
			case strings.Contains(f.Func, "workflowTaskProcessor"):
				return "workflow task"
			case strings.Contains(f.Func, "activityTaskPoller"), strings.Contains(f.Func, "activityTaskHandler"):
				return "activity task"
			}
		}
	}
	return ""
}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: schedwaits TRACE")
		os.Exit(2)
	}
	f, err := os.Open(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	r, err := trace.NewReader(f)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	kinds := map[trace.GoID]string{}
	runnable := map[trace.GoID]trace.Time{}
	var waits []struct {
		id trace.GoID
		us float64
	}
	for {
		ev, err := r.ReadEvent()
		if err != nil {
			break
		}
		if ev.Kind() != trace.EventStateTransition {
			continue
		}
		st := ev.StateTransition()
		if st.Resource.Kind != trace.ResourceGoroutine {
			continue
		}
		id := st.Resource.Goroutine()
		from, to := st.Goroutine()
		if kinds[id] == "" {
			kinds[id] = kind(st.Stack, ev.Stack())
		}
		switch {
		case to == trace.GoRunnable:
			runnable[id] = ev.Time()
		case to == trace.GoRunning && from == trace.GoRunnable:
			if t0, ok := runnable[id]; ok {
				waits = append(waits, struct {
					id trace.GoID
					us float64
				}{id, float64(ev.Time()-t0) / 1e3})
			}
			delete(runnable, id)
		}
	}
	by := map[string][]float64{}
	for _, w := range waits {
		k := kinds[w.id]
		if k == "" {
			k = "other"
		}
		by[k] = append(by[k], w.us)
	}
	names := make([]string, 0, len(by))
	for k := range by {
		names = append(names, k)
	}
	sort.Strings(names)
	fmt.Println("waits from runnable to running, microseconds")
	for _, k := range names {
		w := by[k]
		sort.Float64s(w)
		q := func(p float64) float64 { return w[int(p*float64(len(w)-1))] }
		over := 0
		for _, x := range w {
			if x > 500 {
				over++
			}
		}
		fmt.Printf("%-20s n=%6d p50=%7.1f p90=%7.1f p99=%7.1f p99.9=%7.1f max=%8.1f over 0.5 ms: %d\n",
			k, len(w), q(.5), q(.9), q(.99), q(.999), w[len(w)-1], over)
	}
}
