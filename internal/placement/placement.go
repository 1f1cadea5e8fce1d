// Package placement decides which host each worker of a fleet runs on: a
// pure function of the workers' host lists, where they run now and which
// hosts they must leave. It has no Temporal imports; a supervisor workflow
// calls it each time it takes a spec or a host of its workers is lost, and
// carries out what it returns (docs/fleet.md).
//
// The rules, in order:
//
//  1. A worker keeps the host it runs on while that host is on its list
//     and not to be left: an apply that changes nothing moves nothing, and
//     a worker never moves back by itself.
//  2. A worker without a host (new, or leaving one) goes to the host of its
//     list with the fewest workers placed (those kept counted first), the
//     earlier host of its list on a tie, and not to a host to avoid (one
//     that is unknown) while another is open.
//  3. A worker whose every host is to be left stays where it is (nowhere to
//     go is no reason to stop it); a new one goes to its first host.
package placement

import (
	"slices"
	"time"
)

// Worker is one worker to place: its name and the hosts it may run on, in
// the order of its spec.
type Worker struct {
	Name  string
	Hosts []string
}

// Input is what a placement decides from.
type Input struct {
	// Workers in spec order (the order decides ties between new workers).
	Workers []Worker
	// Current is where each worker runs now, by name ("" or absent: not
	// placed yet).
	Current map[string]string
	// Leave are hosts no worker may be placed on, nor stay on when another
	// host of its list is open: lost past a worker's reschedule.after, or
	// drained. A worker-specific reason is in LeaveFor.
	Leave map[string]bool
	// LeaveFor are, by worker name, hosts that worker must leave (its own
	// reschedule.after has passed on its host).
	LeaveFor map[string][]string
	// Avoid are hosts nothing is placed on while another host of a
	// worker's list is open (unknown ones), though what runs there stays.
	Avoid map[string]bool
}

// Place returns the host of every worker that has hosts, by name.
func Place(in Input) map[string]string {
	out := make(map[string]string, len(in.Workers))
	load := map[string]int{}
	leaving := func(w Worker, h string) bool {
		return in.Leave[h] || slices.Contains(in.LeaveFor[w.Name], h)
	}
	var todo []Worker
	for _, w := range in.Workers {
		if len(w.Hosts) == 0 {
			continue
		}
		cur := in.Current[w.Name]
		if cur != "" && slices.Contains(w.Hosts, cur) && !leaving(w, cur) {
			out[w.Name] = cur
			load[cur]++
			continue
		}
		todo = append(todo, w)
	}
	for _, w := range todo {
		best := ""
		for _, avoid := range []bool{true, false} { // an avoided host only when no other is open
			for _, h := range w.Hosts {
				if leaving(w, h) || (avoid && in.Avoid[h]) {
					continue
				}
				if best == "" || load[h] < load[best] {
					best = h
				}
			}
			if best != "" {
				break
			}
		}
		if best == "" { // every host of its list is to be left
			best = in.Current[w.Name]
			if best == "" || !slices.Contains(w.Hosts, best) {
				best = w.Hosts[0]
			}
		}
		out[w.Name] = best
		load[best]++
	}
	return out
}

// Moves returns the workers whose host changes from Current to placed, in
// the order of in.Workers.
func Moves(in Input, placed map[string]string) []string {
	var out []string
	for _, w := range in.Workers {
		if cur := in.Current[w.Name]; cur != "" && placed[w.Name] != "" && placed[w.Name] != cur {
			out = append(out, w.Name)
		}
	}
	return out
}

// Lost tells whether a worker whose host has been unknown since since
// (zero: its host is not unknown) must leave it at now, under its
// reschedule.after (0: never), and if not yet, how long until it must.
func Lost(since, now time.Time, after time.Duration) (lost bool, wait time.Duration) {
	if after <= 0 || since.IsZero() {
		return false, 0
	}
	if d := since.Add(after).Sub(now); d > 0 {
		return false, d
	}
	return true, 0
}

// Placed is a worker as LostDue sees it: its name, the host it is placed
// on, and its reschedule.after (0: it never leaves a lost host).
type Placed struct {
	Name  string
	Host  string
	After time.Duration
}

// LostDue returns leave (by worker name, the hosts each must leave) with
// every worker whose host has been unknown past its after added, in the
// order of workers, and when the next one is due at the earliest (zero:
// none waits). unknownSince says since when a host has been unknown (false:
// it is not).
func LostDue(workers []Placed, unknownSince func(host string) (time.Time, bool), leave map[string][]string, now time.Time) (map[string][]string, time.Time) {
	var next time.Time
	for _, w := range workers {
		since, unknown := unknownSince(w.Host)
		if w.Host == "" || !unknown || slices.Contains(leave[w.Name], w.Host) {
			continue
		}
		lost, wait := Lost(since, now, w.After)
		switch {
		case lost:
			if leave == nil {
				leave = map[string][]string{}
			}
			leave[w.Name] = append(leave[w.Name], w.Host)
		case wait > 0 && (next.IsZero() || now.Add(wait).Before(next)):
			next = now.Add(wait)
		}
	}
	return leave, next
}
