package supervise

import (
	"fmt"
	"slices"
	"time"

	"github.com/steward-sh/steward/internal/spec"
)

// Spec intake: whether a supervisor takes a new spec, and what taking it
// changes before its children are reconciled (Reconcile). The workflow
// decodes the signal, asks TakeSpec, and carries out what it says.

// SpecHeld is what a supervisor holds when a spec comes: its path, its
// node's name, the generation it runs, and its desired state and strategy
// as its current spec resolves them.
type SpecHeld struct {
	Path       string
	Name       string
	Generation int64
	Desired    string
	Strategy   string
	// Limits says whether the run holds specs to the input limits (a
	// live run; a replay of a history older code wrote takes them as they
	// were). Asked only of a spec with the supervisor's name: the
	// workflow's answer records a marker the first time, and a history
	// has it where the spec was checked.
	Limits func() bool
	// Now is when the spec came (workflow time).
	Now time.Time
	// Jobs: the run starts jobs (a child with a job block, supervisor
	// code version 9 on); Services and JobNames are its children now that
	// are not jobs (services, supervisors) and jobs, by name.
	// GenerationBounded: a spec's generation past spec.MaxGeneration is
	// refused (supervisor code version 12 on).
	GenerationBounded bool
	Jobs              bool
	Services          []string
	JobNames          []string
}

// SpecTaken is what taking a spec changes.
type SpecTaken struct {
	// Generation is the supervisor's generation from now: the update's,
	// or one past the held one when the update names none.
	Generation int64
	// DesiredChanged: the spec asks another desired state (its
	// supervision starts afresh).
	DesiredChanged bool
	// StrategyChanged: the spec moves between a coordinated strategy and
	// one_for_one, which changes how every worker child is supervised.
	StrategyChanged bool
	// Origin and Depth are what it hands down: where the change began (the
	// update's, or now for a change that begins here) and how many levels
	// it has come down, this one included.
	Origin time.Time
	Depth  int
}

// TakeSpec decides on spec update u for the supervisor held: an error
// naming the problem when it is not its to take (another node's name, a
// spec that breaks the rules, a node without children), else what taking
// it changes.
func TakeSpec(held SpecHeld, u spec.Update) (SpecTaken, error) {
	if u.Spec.Name != held.Name {
		return SpecTaken{}, fmt.Errorf("spec.name %q does not match this supervisor (%q)", u.Spec.Name, held.Name)
	}
	if ps := spec.ValidateSent(held.Limits(), held.Path, u.Spec); len(ps) > 0 {
		return SpecTaken{}, ps
	}
	if err := spec.CheckGeneration(held.Generation, u.Generation); held.GenerationBounded && err != nil {
		return SpecTaken{}, err
	}
	if !u.Spec.IsSupervisor() {
		return SpecTaken{}, fmt.Errorf("a supervisor's spec needs children")
	}
	for _, c := range u.Spec.Children {
		switch {
		case c.IsJob() && !held.Jobs:
			return SpecTaken{}, fmt.Errorf("%s is a job: this supervisor's code (older than version 9) runs no jobs; run `starter upgrade` first", c.Name)
		case c.IsJob() && slices.Contains(held.Services, c.Name):
			return SpecTaken{}, fmt.Errorf("%s: a service or a supervisor cannot become a job in place (remove it, apply, then add it back as a job)", c.Name)
		case !c.IsJob() && slices.Contains(held.JobNames, c.Name):
			return SpecTaken{}, fmt.Errorf("%s: a job cannot become a service or a supervisor in place (remove it, apply, then add it back)", c.Name)
		}
	}
	if err := spec.CheckExpansion(u.Spec); err != nil { // (what a run without the limits took too: none ever ran past it)
		return SpecTaken{}, err
	}
	r := u.Spec.Resolved()
	t := SpecTaken{
		Generation:      nextGeneration(held.Generation, held.GenerationBounded),
		DesiredChanged:  r.Desired != held.Desired,
		StrategyChanged: Coordinated(r.Strategy) != Coordinated(held.Strategy),
		Origin:          u.Origin,
		Depth:           u.Depth + 1,
	}
	if u.Generation > 0 {
		t.Generation = u.Generation
	}
	if t.Origin.IsZero() {
		t.Origin, t.Depth = held.Now, 1
	}
	return t, nil
}

// nextGeneration is the generation after g, bounded: at most spec.MaxGeneration (a
// child whose count was sent there by hand (a spec signal of generation
// 2^53, which workers take) is sent that generation again, which it takes
// (it is not older than its own), rather than one past the bound, which it
// refuses for good). Unbounded (supervisor code version 11), g+1, as that
// code computed it.
func nextGeneration(g int64, bounded bool) int64 {
	if bounded && g >= spec.MaxGeneration {
		return max(g, spec.MaxGeneration)
	}
	return g + 1
}
