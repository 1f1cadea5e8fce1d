package console

import (
	"context"
	"sync"
	"time"

	"github.com/steward-sh/steward/internal/treestatus"
)

// Change is one node's new look, as /api/events sends it: the node's full
// path and its new state, with what a row shows. State "gone": the node
// left the tree.
type Change struct {
	Path           string                  `json:"path"`
	State          string                  `json:"state"`
	From           string                  `json:"from,omitempty"` // "" for a node that appeared
	Desired        string                  `json:"desired,omitempty"`
	Reason         string                  `json:"reason,omitempty"`
	Restarts       int                     `json:"restarts"`
	ManualRestarts int                     `json:"manualRestarts"`
	Generation     int64                   `json:"generation"`
	Since          time.Time               `json:"since,omitzero"`
	LastAction     treestatus.ActionStatus `json:"lastAction"`
	Stale          string                  `json:"stale,omitempty"`
	At             time.Time               `json:"at"`
}

// Watch asks the trees every Interval (or sooner when poked) and hands
// what changed to every subscriber. A subscriber that does not keep up is
// dropped (its page reconnects and reloads the tree).
type Watch struct {
	src      Source
	interval time.Duration

	mu    sync.Mutex
	last  []treestatus.Status
	at    time.Time
	err   error
	rows  map[string]Change
	subs  map[chan []Change]struct{}
	ready chan struct{} // closed after the first look
	poke  chan struct{}
}

// NewWatch makes a watch of src every interval.
func NewWatch(src Source, interval time.Duration) *Watch {
	return &Watch{src: src, interval: interval, subs: map[chan []Change]struct{}{},
		ready: make(chan struct{}), poke: make(chan struct{}, 1)}
}

// Run looks until ctx ends.
func (w *Watch) Run(ctx context.Context) {
	t := time.NewTicker(w.interval)
	defer t.Stop()
	for {
		w.look(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-w.poke:
		}
	}
}

// Poke makes the next look come now (after an action).
func (w *Watch) Poke() {
	select {
	case w.poke <- struct{}{}:
	default:
	}
}

func (w *Watch) look(ctx context.Context) {
	lctx, cancel := context.WithTimeout(ctx, max(w.interval*5, 10*time.Second))
	trees, changed, err := w.src.Trees(lctx)
	cancel()
	if ctx.Err() != nil {
		return
	}
	if err == nil && !changed && w.rows != nil {
		return // at rest: nothing to walk, nothing to send
	}
	now := time.Now().UTC()
	w.mu.Lock()
	defer w.mu.Unlock()
	first := w.rows == nil
	defer func() {
		if first {
			close(w.ready)
		}
	}()
	if err != nil {
		w.err = err
		if first {
			w.rows = map[string]Change{}
		}
		return
	}
	w.last, w.at, w.err = trees, now, nil
	cur := map[string]Change{}
	var order []string
	var walk func(treestatus.Status)
	walk = func(s treestatus.Status) {
		cur[s.Path] = Change{Path: s.Path, State: s.State, Desired: s.Desired, Reason: s.Reason,
			Restarts: s.Restarts, ManualRestarts: s.ManualRestarts, Generation: s.Generation,
			Since: s.Since, LastAction: s.LastAction, Stale: s.Stale, At: now}
		order = append(order, s.Path)
		for _, c := range s.Children {
			walk(c)
		}
	}
	for _, t := range trees {
		walk(t)
	}
	if first {
		w.rows = cur
		return
	}
	changes := Diff(w.rows, cur, order)
	w.rows = cur
	if len(changes) == 0 {
		return
	}
	for ch := range w.subs {
		select {
		case ch <- changes:
		default:
			close(ch) // too slow: its page reconnects
			delete(w.subs, ch)
		}
	}
}

// Diff lists the nodes whose row changed between two looks (in tree
// order), the nodes that appeared, and those that left ("gone").
func Diff(prev, cur map[string]Change, order []string) []Change {
	var out []Change
	for _, p := range order {
		c := cur[p]
		was, ok := prev[p]
		switch {
		case !ok:
			out = append(out, c)
		case sameRow(was, c):
		default:
			c.From = was.State
			out = append(out, c)
		}
	}
	for p, was := range prev {
		if _, ok := cur[p]; !ok {
			out = append(out, Change{Path: p, State: "gone", From: was.State, Reason: "no longer in the tree", At: was.At})
		}
	}
	return out
}

func sameRow(a, b Change) bool {
	a.At, b.At = time.Time{}, time.Time{}
	return a == b
}

// Last is the trees as last seen (it waits for the first look).
func (w *Watch) Last(ctx context.Context) ([]treestatus.Status, time.Time, error) {
	select {
	case <-w.ready:
	case <-ctx.Done():
		return nil, time.Time{}, ctx.Err()
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.last == nil && w.err != nil {
		return nil, time.Time{}, w.err
	}
	if w.last == nil {
		return []treestatus.Status{}, w.at, nil
	}
	return w.last, w.at, nil
}

// Subscribe returns a channel of change batches and its cancel.
func (w *Watch) Subscribe() (<-chan []Change, func()) {
	ch := make(chan []Change, 64)
	w.mu.Lock()
	w.subs[ch] = struct{}{}
	w.mu.Unlock()
	return ch, func() {
		w.mu.Lock()
		defer w.mu.Unlock()
		if _, ok := w.subs[ch]; ok {
			delete(w.subs, ch)
			close(ch)
		}
	}
}
