package supervise

import (
	"fmt"
	"time"
)

// The start window: how many of its children a supervisor has starting at
// once (supervisor code version 6 on).
//
// A child's workflow is starting from the moment its supervisor starts it
// until its first report, which comes from the child's first workflow task
// (a child supervisor's second), or with a worker's start action, at its
// end or once it has run activities.SlowAfter (a second). So the window
// bounds the workflows whose first tasks wait in the workflow task queue,
// not the services that are starting: a start that takes a minute holds
// its slot for about a second.
//
// Without it, a supervisor started every child in its first task: a tree
// of 10,000 workers put 10,000 first tasks in the one workflow queue at
// once, which held the tasks of every other tree (their queries, a new
// tree's first tasks) behind them for two minutes. With it, a tree of S
// supervisors has at most S x StartWindow first tasks waiting, and the
// tree starts as fast as the worker and the server take them.
//
// The window is taken anew when three quarters of it are free, so that the
// next children start in batches: each batch costs the supervisor a
// workflow task (its children's started events), and a batch of one per
// report would add a task per child.
//
// A child that does not report holds its slot for SlotHold at most (a
// child whose first task fails, say): the rest of the tree still starts,
// more slowly. Adopted children (found running) and children whose start
// failed hold none.
const (
	// StartWindow is how many children a supervisor has starting at once.
	StartWindow = 20
	// SlotHold is how long a child that has not reported holds its slot.
	SlotHold = time.Minute
)

// WindowReason is the reason of a child that waits for a slot.
var WindowReason = fmt.Sprintf("waiting to start: a supervisor starts %d children at a time", StartWindow)

// HoldsSlot: a child started at startedAt (zero: not started by the window,
// or reported since) is starting at now, and holds a slot of the window.
func HoldsSlot(l Lifecycle, startedAt, now time.Time) bool {
	return l == Live && !startedAt.IsZero() && now.Before(startedAt.Add(SlotHold))
}

// SlotFreeAt is when the first of the slots held at now frees by itself
// (SlotHold after its child's start), for a supervisor whose children wait
// for a slot to look again; zero when no slot is held. startedAt are the
// live children's.
func SlotFreeAt(startedAt []time.Time, now time.Time) time.Time {
	var first time.Time
	for _, at := range startedAt {
		if !HoldsSlot(Live, at, now) {
			continue
		}
		if free := at.Add(SlotHold); first.IsZero() || free.Before(first) {
			first = free
		}
	}
	return first
}

// window counts the slots Release may still fill.
type window struct {
	size, starting int
	open           bool
}

// newWindow: size 0 is no window (code before version 6). It opens when
// three quarters of it or more are free.
func newWindow(size int, sibs []Sibling) window {
	w := window{size: size}
	for _, c := range sibs {
		if c.Starting {
			w.starting++
		}
	}
	w.open = size == 0 || w.starting <= size/4
	return w
}

// take takes a slot for a child that starts now: false if none is free.
func (w *window) take() bool {
	if w.size == 0 {
		return true
	}
	if !w.open || w.starting >= w.size {
		return false
	}
	w.starting++
	return true
}
