package workflows

import (
	"github.com/steward-sh/steward/internal/placement"
	"github.com/steward-sh/steward/internal/spec"
)

// expand returns a supervisor spec's children as this supervisor runs them
// (spec.Expand: instances, inherited hosts), each worker with hosts placed
// (internal/placement): where it runs now if it may stay, else on the
// host of its list with the fewest. Where a child runs now is what this
// supervisor last handed it (s.full).
func (s *supervisorRun) expand(sup spec.Node) []spec.Node {
	kids := spec.Expand(sup)
	in := placement.Input{Current: map[string]string{}, LeaveFor: s.carry.Leave}
	for _, c := range s.full.Children {
		if c.PlacedOn != "" {
			in.Current[c.Name] = c.PlacedOn
		}
	}
	for _, c := range kids {
		if c.PlacedOn != "" { // an expanded spec (continue-as-new) keeps its places
			in.Current[c.Name] = c.PlacedOn
		}
		in.Workers = append(in.Workers, placement.Worker{Name: c.Name, Hosts: c.Hosts})
	}
	placed := placement.Place(in)
	for i := range kids {
		if h := placed[kids[i].Name]; h != "" {
			kids[i].PlacedOn = h
		}
	}
	return kids
}
