package placement

import (
	"slices"

	"github.com/steward-sh/steward/internal/spec"
)

// Moves (worker code version 5 on; docs/fleet.md).
//
// A spec that puts a running service on another host (its supervisor
// placed it elsewhere: a drain, a lost host, an operator's new hosts list
// or process.host) moves it. Off a host that is up, the move is the
// tick's restart carried out in two activities: the instance's stop on its
// old host and its start on the new one. Off a lost host (the supervisor
// says so, or the worker finds it unknown), the instance there cannot be
// reached: it is left as a stale copy, and the service starts on the new
// host at once. A stale copy has a stop of its own waiting on its host's
// queue, with no limit on how long it waits: when the host is back, its
// worker takes the stop and the copy ends. Until then two copies may run,
// the lost one unreachable; the worker counts one, the one it can reach.
//
// Whereabouts is the worker's record of it (its workflow, workflows/worker_move.go,
// sends the activities), and what follows decides: which spec change is a
// move (Note), where the instance runs after an action (Started,
// Cancelled), what an action runs against (Take), when a move off a lost
// host goes at once (Due), and the stale copies (Leave, Stopped).

// StaleCopy is an instance a worker left, or is to leave, on a host it
// moves off.
type StaleCopy struct {
	Host     string    `json:"host"`
	Instance string    `json:"instance"`
	Node     spec.Node `json:"node"` // as it was started (rendered)
	// Lost: the host was lost when the move began.
	Lost bool `json:"lost,omitempty"`
}

// Whereabouts is what a worker keeps of where its instance runs (its carry holds
// it inline: the JSON fields are the carry's).
type Whereabouts struct {
	// InstanceHost is the host the instance was started on ("" for one
	// started before worker version 5); Move a move not yet carried out
	// and Stale the copies left on hosts it moved off.
	InstanceHost string      `json:"instanceHost,omitempty"`
	Move         *StaleCopy  `json:"move,omitempty"`
	Stale        []StaleCopy `json:"stale,omitempty"`
}

// Note takes a new spec that places the worker on host to: old is the node
// before it, instance the one running ("" none), inFlight the move an
// action in flight carries out (nil: none), lost the host the supervisor
// found lost. It says whether the service must restart (it moves).
func (m *Whereabouts) Note(instance string, old spec.Node, to string, inFlight *StaleCopy, lost string) bool {
	from := m.InstanceHost
	if from == "" {
		from = old.RunsOn()
	}
	if instance == "" || from == "" || from == to {
		if mv := m.Move; mv != nil && mv.Host == to {
			m.Move = nil // back where it runs before the move was carried out
		}
		return false
	}
	if m.Move == nil {
		m.Move = &StaleCopy{Host: from, Instance: instance, Node: old}
		if inFlight != nil {
			// A move in flight: its instance runs where that move began
			// (old is the spec that move was for).
			mv := *inFlight
			m.Move = &mv
		}
	}
	if lost != "" && lost == m.Move.Host {
		m.Move.Lost = true
	}
	return true
}

// Started takes a start's or restart's success: instance now runs on host,
// started with node; to is where the spec places the worker. A move noted
// while the action ran that named the instance before (stopped by the
// action, or left stale by it) now moves the new one, or nothing if it runs
// where the spec says.
func (m *Whereabouts) Started(host string, node spec.Node, instance, to string) {
	m.InstanceHost = host
	mv := m.Move
	if mv == nil || mv.Instance == instance {
		return
	}
	if host == to {
		m.Move = nil
		return
	}
	m.Move = &StaleCopy{Host: host, Instance: instance, Node: node}
}

// Cancelled takes the cancel of an action that carried out move: the
// instance runs where it ran, and what comes next (a stop, the move again)
// goes there.
func (m *Whereabouts) Cancelled(move *StaleCopy) {
	if move != nil && m.Move == nil {
		mv := *move
		m.Move = &mv
	}
}

// Take says what an action runs against: a start or restart (starts)
// carries out the move (returned; the record no longer holds it: the
// action's success says where the instance runs next); any other action
// goes where the instance runs (node: the node to run it with, node
// itself when nothing moves).
func (m *Whereabouts) Take(starts bool, node spec.Node) (run spec.Node, moving *StaleCopy) {
	mv := m.Move
	switch {
	case mv == nil:
		return node, nil
	case starts:
		m.Move = nil
		return node, mv
	}
	return mv.Node, nil
}

// Due says whether the move goes at once, with nothing in flight: off a
// lost host, or one the worker finds unknown (unknown), its instance
// (instance) is left there as a stale copy (left) and the service starts
// on the new host; to is where the spec places it. A move whose instance
// no longer runs, or runs where the spec says, is dropped.
func (m *Whereabouts) Due(instance string, unknown bool, to string) (left StaleCopy, now bool) {
	mv := m.Move
	if mv == nil {
		return StaleCopy{}, false
	}
	if instance == "" || (instance != mv.Instance && m.InstanceHost == to) {
		m.Move = nil // nothing runs there any more
		return StaleCopy{}, false
	}
	if !mv.Lost && !unknown {
		return StaleCopy{}, false
	}
	m.Move = nil
	left = *mv
	left.Instance = instance
	return left, true
}

// Leave records a stale copy; false: none to record (no instance, or
// recorded already).
func (m *Whereabouts) Leave(c StaleCopy) bool {
	if c.Instance == "" || slices.ContainsFunc(m.Stale, func(o StaleCopy) bool { return o.Instance == c.Instance }) {
		return false
	}
	m.Stale = append(m.Stale, c)
	return true
}

// Stopped forgets the stale copy instance, whose stop ended; false: not
// one of its copies.
func (m *Whereabouts) Stopped(instance string) (StaleCopy, bool) {
	i := slices.IndexFunc(m.Stale, func(c StaleCopy) bool { return c.Instance == instance })
	if i < 0 {
		return StaleCopy{}, false
	}
	c := m.Stale[i]
	m.Stale = slices.Delete(m.Stale, i, i+1)
	return c, true
}

// Copies is what status shows of the stale copies: HOST/INSTANCE.
func (m *Whereabouts) Copies() []string {
	var out []string
	for _, c := range m.Stale {
		out = append(out, c.Host+"/"+c.Instance)
	}
	return out
}

// Host is the host the service runs on: its instance's while a move is
// not carried out, else to (where the spec places it).
func (m *Whereabouts) Host(to string) string {
	if mv := m.Move; mv != nil {
		return mv.Host
	}
	return to
}
