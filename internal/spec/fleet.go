package spec

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Fleets: instances and hosts.
//
// `instances: N` on a worker (any kind) makes N workers of it, NAME-0 ..
// NAME-(N-1), children of the same supervisor: siblings for its strategy,
// its restart intensity and its updates. Their driver templates see
// `{{ .Instance }}` (0 .. N-1) and `{{ .Host }}` (the host the instance
// runs on), and `add` adds integers: `{{ add 8080 .Instance }}`. A sibling
// that names the worker in dependsOn depends on every instance of it.
// Changing N adds or removes the highest numbers, through the update
// policy, as an apply that adds or removes children.
//
// `hosts: [h1, h2, ...]` beside `kind` places a worker (each instance) on
// one of the hosts: the fewest placed first, the earlier host of the list
// on a tie; a worker keeps the host it has (an apply that changes nothing
// moves nothing). A supervisor's hosts are inherited by the workers below
// it that name no host of their own; `process.host` names a single host,
// and a node that gives both is a spec error. A worker that runs on a
// host sends its actions to that host's worker (its task queue), whatever
// its kind.
//
// The supervisor expands its children (Expand) each time it takes a spec,
// so a stored or signalled spec keeps `instances` as the operator wrote it.

// MaxInstances bounds `instances`: a supervisor's children are one
// workflow each.
const MaxInstances = 1000

// Reschedule is a worker's failover: started again on another host of its
// list once its host has been unknown for After.
type Reschedule struct {
	After Duration `yaml:"after" json:"after"`
}

// Move is how a worker moves off a host that is up (a drain, a new hosts
// list): MoveOverlap (the default, as "") sends the stop on the old host and
// the start on the new one at once, as Nomad's and Kubernetes' drains do;
// MoveStopFirst starts on the new host only once the old copy has stopped
// (a service that must never run twice: it is down for both).
const (
	MoveOverlap   = "overlap"
	MoveStopFirst = "stopFirst"
)

// InFleet reports whether a worker's spec, as its supervisor hands it
// down, is a fleet's: an instance, or placed on one of its hosts (signed
// as a template: admission.VerifyFleet).
func (n Node) InFleet() bool { return n.Instance != nil || n.PlacedOn != "" }

// InstanceName is the name of a worker's instance i.
func InstanceName(name string, i int) string { return name + "-" + strconv.Itoa(i) }

// fleet checks a node's fleet fields; inherited are the hosts it inherits.
func (v *validator) fleet(p string, n Node) {
	if n.Instances < 0 || n.Instances > MaxInstances {
		v.add(join(p, "instances"), "must be 1 .. %d (or left out for one worker named %q)", MaxInstances, n.Name)
	}
	if n.Instances != 0 && n.IsSupervisor() {
		v.add(join(p, "instances"), "only workers (nodes with a kind) take instances")
	}
	if n.Hosts != nil && len(n.Hosts) == 0 {
		v.add(join(p, "hosts"), "an empty list places nothing: name at least one host, or leave hosts out")
	}
	for i, h := range n.Hosts {
		hp := fmt.Sprintf("%s[%d]", join(p, "hosts"), i)
		switch {
		case !v.checkName(hp, "a host name", h):
		case !namePattern.MatchString(h):
			v.add(hp, "%q is not a valid host name (letters, digits, '.', '_' and '-')", h)
		case slices.Index(n.Hosts, h) < i:
			v.add(hp, "%q is named twice", h)
		}
	}
	if len(n.Hosts) > 0 && n.Kind == KindProcess {
		if p2, err := ParseProcess(n.Process); err == nil && p2.Host != "" {
			v.add(join(p, "hosts"), "give hosts or process.host (%q), not both", p2.Host)
		}
	}
	if r := n.Reschedule; r != nil && r.After.D() <= 0 {
		v.add(join(p, "reschedule.after"), "must be > 0")
	}
	if n.Move != "" && n.Move != MoveOverlap && n.Move != MoveStopFirst {
		v.add(join(p, "move"), "%q is not a way to move: %s (the default) or %s", n.Move, MoveOverlap, MoveStopFirst)
	}
}

// instanceClashes reports a sibling whose name is one of a worker's
// instance names (web-1 beside web with instances: 2).
//
// Each sibling's name is read as NAME-N and looked up, once: not each
// worker's instances against every sibling (children x instances).
func (v *validator) instanceClashes(p string, children []Node) {
	names := map[string]int{}
	for i, c := range children {
		if _, dup := names[c.Name]; !dup {
			names[c.Name] = i
		}
	}
	for j, c := range children {
		dash := strings.LastIndexByte(c.Name, '-')
		if dash <= 0 {
			continue
		}
		k, err := strconv.Atoi(c.Name[dash+1:])
		if err != nil || k < 0 || InstanceName(c.Name[:dash], k) != c.Name {
			continue
		}
		if i, ok := names[c.Name[:dash]]; ok && k < min(children[i].Instances, MaxInstances) {
			v.add(fmt.Sprintf("%s[%d].instances", join(p, "children"), i), "instance %q has the name of children[%d]", c.Name, j)
		}
	}
}

// MaxExpandedChildren is the most children a supervisor's spec may expand
// to (instances counted), whatever version started it: Temporal refuses a
// workflow more than 2,000 pending children (the server's default
// limit.numPendingChildExecutions.error), so no supervisor ever ran with
// more. The starter holds a spec to less (MaxChildren).
const MaxExpandedChildren = 2000

// MaxExpandedDependencies is the most names a supervisor's children's
// dependsOn may expand to, all children together (a dependency on a
// worker of N instances is N names): MaxExpandedChildren²/4, the most a
// level of MaxExpandedChildren makes (half of it instances that the other
// half depends on), so that no spec that ran is refused (the starter's
// limits allow about 250,000); tens of MB of names at most.
const MaxExpandedDependencies = MaxExpandedChildren * MaxExpandedChildren / 4

// CheckExpansion bounds what Expand would make of sup, before it is made:
// a spec started by hand (a supervisor's first input is held to the limits
// of the version before them, which had none) of a few kilobytes with
// instances in the millions made a worker build a node for each, gigabytes
// in one workflow task, retried on every worker that polls.
func CheckExpansion(sup Node) error {
	multi := map[string]int{}
	total := 0
	for _, c := range sup.Children {
		n := 1
		if c.Instances > 0 && !c.IsSupervisor() {
			n = c.Instances
			multi[c.Name] = c.Instances
		}
		if n > MaxExpandedChildren-total {
			return fmt.Errorf("children expand to more than %d (instances counted): a supervisor has at most %d", MaxExpandedChildren, MaxExpandedChildren)
		}
		total += n
	}
	deps := 0
	for _, c := range sup.Children {
		for _, d := range c.DependsOn {
			if deps += max(multi[d], 1); deps > MaxExpandedDependencies {
				return fmt.Errorf("children's dependsOn expand to more than %d names (a dependency on N instances is N names)", MaxExpandedDependencies)
			}
		}
	}
	return nil
}

// Expand returns a supervisor's children as it runs them: a worker with
// instances becomes its instances (Instance set, Instances cleared), a
// worker without hosts of its own gets the supervisor's hosts and
// reschedule, and dependsOn names every instance of a worker it names.
// Placing the workers with hosts (PlacedOn) is left to the caller
// (internal/placement). Expand is idempotent: an expanded spec expands to
// itself.
func Expand(sup Node) []Node {
	multi := map[string]int{}
	for _, c := range sup.Children {
		if c.Instances > 0 && !c.IsSupervisor() {
			multi[c.Name] = c.Instances
		}
	}
	out := make([]Node, 0, len(sup.Children))
	for _, c := range sup.Children {
		c.DependsOn = expandDeps(c.DependsOn, multi)
		c = InheritFleet(sup, c)
		n := multi[c.Name]
		if n == 0 {
			out = append(out, c)
			continue
		}
		for i := range n {
			in := c
			in.Name = InstanceName(c.Name, i)
			in.Instances = 0
			idx := i
			in.Instance = &idx
			out = append(out, in)
		}
	}
	return out
}

// InheritFleet hands a child its supervisor's hosts, reschedule and move where
// it has none of its own (a process that names its host keeps it).
func InheritFleet(sup, c Node) Node {
	if c.Hosts == nil && len(sup.Hosts) > 0 && !namesProcessHost(c) {
		c.Hosts = sup.Hosts
	}
	if c.Reschedule == nil {
		c.Reschedule = sup.Reschedule
	}
	if c.Move == "" {
		c.Move = sup.Move
	}
	return c
}

func namesProcessHost(n Node) bool {
	if n.Kind != KindProcess {
		return false
	}
	p, err := ParseProcess(n.Process)
	return err == nil && p.Host != ""
}

func expandDeps(deps []string, multi map[string]int) []string {
	if len(deps) == 0 {
		return deps
	}
	out := make([]string, 0, len(deps))
	for _, d := range deps {
		if n := multi[d]; n > 0 {
			for i := range n {
				out = append(out, InstanceName(d, i))
			}
			continue
		}
		out = append(out, d)
	}
	return out
}

// RunsOn is the host whose worker runs this worker's actions: where it was
// placed, else a process's host (default local); "" for a worker of
// another kind that was not placed (any worker process runs it).
func (n *Node) RunsOn() string {
	if n.PlacedOn != "" {
		return n.PlacedOn
	}
	if n.Kind != KindProcess {
		return ""
	}
	p, err := ParseProcess(n.Process)
	if err != nil || p.Host == "" {
		return DefaultHost
	}
	return p.Host
}
