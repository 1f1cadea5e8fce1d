package supervise

// What a new spec does to a supervisor's children (Reconcile), decided
// here and carried out by the supervisor workflow:
//
//   - a child the spec no longer names is removed: its workflow is asked to
//     stop and end (cancelled), dependants first (reverse start order); one
//     whose workflow is gone already (ended, closed, never started) is
//     simply dropped;
//   - a child the spec names anew is started (in start order, after the
//     removals);
//   - a kept child whose node changed (its digest: its inherited vars, its
//     whole subtree for a supervisor), or all of them when the strategy
//     moves between coordinated and not, gets its new node: a live child by
//     a spec signal; a deferred one keeps it to start with; a closed one is
//     started anew with it by its plan;
//   - an unchanged child is not touched at all;
//   - a live child whose change the rolling update carries out (Roll) is
//     not sent its node: it is one of the update's targets, and keeps
//     what it runs until the update sends it.
//
// Each child sent a node gets the supervisor's new generation, and counts
// as applying until it reports it. Since supervisor version 2 (Resend): a
// child that reports a newer generation than its supervisor sent it was
// handed a spec around the supervisor (a raw spec signal), and gets the
// applied node again, numbered past its own count, so that an apply makes
// the tree what its file says.

import "github.com/steward-sh/steward/internal/spec"

// Current is what Reconcile knows of a child the supervisor has now.
type Current struct {
	Name      string
	Lifecycle Lifecycle
	Digest    string
	// WantGeneration: the generation last sent; Reported: the one it last
	// reported.
	WantGeneration, Reported int64
}

// Wanted is a child of the new spec: its name and its node's digest as
// handed down. Roll: the rolling update carries its change out (a worker
// whose running service the change restarts, under an `update` policy),
// and Roll is the node it was last handed.
type Wanted struct {
	Name, Digest string
	Roll         *spec.Node
}

// ReconcileInput is what Reconcile decides from.
type ReconcileInput struct {
	Children []Current // in the current start order
	Spec     []Wanted  // in the new start order
	// Generation is the supervisor's generation with the new spec.
	Generation int64
	// StrategyChanged: the strategy moved between coordinated and not (the
	// workers learn who restarts them from their node).
	StrategyChanged bool
	// Resend: supervisor version 2 and later (see above).
	Resend bool
	// GenerationBounded: a generation sent past a child's count stops at
	// spec.MaxGeneration (supervisor code version 12; nextGeneration).
	GenerationBounded bool
}

// NodeAction is what happens to a kept child's node.
type NodeAction int

const (
	// Untouched: the child's node did not change.
	Untouched NodeAction = iota
	// SendSpec: send the live child its new node (a spec signal).
	SendSpec
	// KeepNode: a deferred child keeps its new node to start with.
	KeepNode
	// StartsWithPlan: a closed child is started anew with its new node by
	// its plan (nothing to send: its workflow is gone).
	StartsWithPlan
	// AddChild: a new child: start its workflow.
	AddChild
)

// Placed is one child of the new spec, in its start order.
type Placed struct {
	Name string
	// From is the child's index in ReconcileInput.Children (-1: new).
	From   int
	Action NodeAction
	// Digest and WantGeneration are the child's record's after the spec.
	Digest         string
	WantGeneration int64
}

// Reconciled is what Reconcile decided.
type Reconciled struct {
	// Cancel lists the indexes (in ReconcileInput.Children) of the removed
	// children to stop, dependants first. Removed children not listed were
	// gone already.
	Cancel []int
	// Children is the new list of children, in the new start order.
	Children []Placed
	// Targets are the live children whose change the rolling update
	// carries out (Wanted.Roll), in start order: they are not sent their
	// node now (their Placed is Untouched, its digest and generation what
	// the child runs); the update sends it (NextUpdate).
	Targets []Target
}

// Reconcile decides what the new spec does to the children (see above).
func Reconcile(in ReconcileInput) Reconciled {
	wanted := make(map[string]bool, len(in.Spec))
	for _, w := range in.Spec {
		wanted[w.Name] = true
	}
	var out Reconciled
	current := make(map[string]int, len(in.Children))
	for i := len(in.Children) - 1; i >= 0; i-- {
		c := in.Children[i]
		if wanted[c.Name] {
			current[c.Name] = i
			continue
		}
		if !c.Lifecycle.Gone() {
			out.Cancel = append(out.Cancel, i)
		}
	}
	out.Children = make([]Placed, len(in.Spec))
	for j, w := range in.Spec {
		i, ok := current[w.Name]
		if !ok {
			out.Children[j] = Placed{Name: w.Name, From: -1, Action: AddChild, Digest: w.Digest, WantGeneration: in.Generation}
			continue
		}
		c := in.Children[i]
		p := Placed{Name: w.Name, From: i, Digest: c.Digest, WantGeneration: c.WantGeneration}
		strayed := in.Resend && c.Reported > c.WantGeneration
		if w.Digest != c.Digest || in.StrategyChanged || strayed {
			p.Digest, p.WantGeneration = w.Digest, in.Generation
			if in.Resend && c.Reported >= p.WantGeneration {
				// Its own count has reached the tree's: the node goes with
				// a newer number, so that the child counts as applying
				// until it has taken it.
				p.WantGeneration = nextGeneration(c.Reported, in.GenerationBounded)
			}
			switch c.Lifecycle {
			case Deferred:
				p.Action = KeepNode
			case Closed:
				p.Action = StartsWithPlan
			default:
				p.Action = SendSpec
			}
			if p.Action == SendSpec && w.Roll != nil {
				out.Targets = append(out.Targets, Target{Name: w.Name, Digest: p.Digest, Previous: w.Roll, PreviousDigest: c.Digest})
				p.Action, p.Digest, p.WantGeneration = Untouched, c.Digest, c.WantGeneration
			}
		}
		out.Children[j] = p
	}
	return out
}
