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
//
// From version 7 a child supervisor holds its slot until its whole subtree
// has started (its record says SubtreeStarted: every child up, each child
// supervisor's subtree started too), for SubtreeHold at most. In version 6
// it held it until its first report, which comes with its first task: a
// root of 100 groups had every group starting within seconds, 100 x
// StartWindow first tasks in the queue at once, and the queue's oldest
// task waited 55 s in a 10,000-worker apply. Now a root of groups of
// workers has at most StartWindow x StartWindow workflows starting,
// however many groups it has.
const (
	// StartWindow is how many children a supervisor has starting at once.
	StartWindow = 20
	// SlotHold is how long a child that has not reported holds its slot.
	SlotHold = time.Minute
	// SubtreeHold is how long a child supervisor whose subtree has not
	// all started holds its slot (version 7 on): a subtree that cannot
	// start whole (a worker that fails) slows its siblings' start, never
	// stops it.
	SubtreeHold = 5 * time.Minute
)

// WindowReason is the reason of a child that waits for a slot.
var WindowReason = fmt.Sprintf("waiting to start: a supervisor starts %d children at a time", StartWindow)

// Slot is a live child's hold on the window: started At (zero: not
// started by the window, or started since), for Hold at most (SlotHold, or
// SubtreeHold for a child supervisor from version 7).
type Slot struct {
	At   time.Time
	Hold time.Duration
}

// Held: the child is starting at now, and holds a slot of the window.
func (s Slot) Held(now time.Time) bool {
	return !s.At.IsZero() && now.Before(s.At.Add(s.Hold))
}

// HoldsSlot: a child in lifecycle l with slot s is starting at now, and
// holds a slot of the window.
func HoldsSlot(l Lifecycle, s Slot, now time.Time) bool {
	return l == Live && s.Held(now)
}

// SlotFreeAt is when the first of the slots held at now frees by itself
// (its Hold after its child's start), for a supervisor whose children wait
// for a slot to look again; zero when no slot is held. slots are the live
// children's.
func SlotFreeAt(slots []Slot, now time.Time) time.Time {
	var first time.Time
	for _, s := range slots {
		if !s.Held(now) {
			continue
		}
		if free := s.At.Add(s.Hold); first.IsZero() || free.Before(first) {
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
