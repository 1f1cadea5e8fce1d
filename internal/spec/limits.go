package spec

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"time"
)

// Limits.
//
// Every spec that enters steward (a file the starter applies, a `spec`
// signal or Update sent with the temporal CLI, a workflow's input) is held
// to the limits below, in this one place: Validate checks them, and every
// workflow handler validates before it changes anything, so a spec over a
// limit is refused at apply (exit 2) and rejected (counted) by a running
// workflow, never half-applied. docs/spec.md lists them with their reasons.
//
// Why these values:
//   - Workflow IDs are paths (`plant/line-1/press`), and steward adds
//     prefixes to some (`rollout:PATH`, `revision:ROOT:REQUEST`,
//     `host:NAME`); Temporal refuses IDs longer than 1,000 characters
//     (limit.maxIDLength), and a worker's log and record files are named
//     after its path under the 255-byte file name limit of Linux file
//     systems (with a hash beside a cut prefix). A path of MaxPathLength
//     leaves room for all of them.
//   - A node travels as a payload: a worker's as its input, its `spec`
//     signal and its actions' inputs; a tree's whole as its root's first
//     input. Temporal refuses a payload over 2 MiB (limit.blobSize.error)
//     and a gRPC message over 4 MiB: a supervisor starts up to
//     StartWindow children in one task, so a worker node is kept to
//     MaxNodeBytes (20 of them are well under 4 MiB) and a tree to
//     MaxTreeBytes (a 10,000-worker tree of stubs is 0.7 MiB).
//   - A supervisor's carried state grows with its direct children, and
//     Temporal allows 2,000 pending child workflows per workflow: at most
//     MaxChildren (after instances are expanded).
//   - Each observe is an activity and its events in the worker's history;
//     a restart backoff or retry interval of nanoseconds is a tight loop.
const (
	// MaxNameLength is the longest name of a node, a variable or a host.
	MaxNameLength = 100
	// MaxPathLength is the longest workflow path (names joined by '/',
	// with an instance's "-N").
	MaxPathLength = 400
	// MaxDepth is the most levels a tree has (the root is level 1).
	MaxDepth = 32
	// MaxChildren is the most children a supervisor has, instances counted.
	MaxChildren = 1000
	// MaxNodeBytes is the largest worker node, as its JSON with the vars
	// and notify it inherits.
	MaxNodeBytes = 64 << 10
	// MaxTreeBytes is the largest tree (or subtree sent to a supervisor),
	// as its JSON.
	MaxTreeBytes = 1536 << 10
	// MaxVars is the most variables a node has, with those it inherits.
	MaxVars = 512
	// MaxRenderedBytes is the most a worker's driver fields render to, in
	// all (template.go).
	MaxRenderedBytes = 128 << 10
	// MinObserveInterval is the shortest observe.interval.
	MinObserveInterval = time.Second
	// MinProbeInterval is the shortest ready or health probe interval.
	MinProbeInterval = 100 * time.Millisecond
	// MinBackoff is the shortest backoff.initial and retry.initialInterval.
	MinBackoff = 10 * time.Millisecond
	// MaxSpecFileBytes is the largest spec file the starter reads.
	MaxSpecFileBytes = 16 << 20
	// MaxAliasNodes is how many YAML nodes aliases may add to a file
	// beyond its own (or as many as it has, if that is more).
	MaxAliasNodes = 100_000
	// MaxIntensityRestarts bounds a supervisor's intensity.maxRestarts: a
	// supervisor keeps the time of each restart within its period, up to
	// this many (OTP's defaults are 1 in 5 s; steward's 5 in 60 s).
	MaxIntensityRestarts = 10_000
)

// checkName holds a node's name to MaxNameLength.
func (v *validator) checkName(path, what, name string) bool {
	if v.legacy || len(name) <= MaxNameLength {
		return true
	}
	v.add(path, "%s of %d characters is too long (at most %d)", what, len(name), MaxNameLength)
	return false
}

// checkPath holds the workflow path of a node (and of its instances) to
// MaxPathLength and its depth to MaxDepth.
func (v *validator) checkPath(p string, n Node, wfPath string, depth int) {
	if v.legacy {
		return
	}
	if depth > MaxDepth {
		v.add(p, "the tree is deeper than %d levels", MaxDepth)
	}
	longest := wfPath
	if n.Instances > 0 {
		longest += "-" + strconv.Itoa(n.Instances-1)
	}
	if len(longest) > MaxPathLength {
		v.add(join(p, "name"), "the path ...%s is %d characters long (at most %d: it names workflows and files)", longest[len(longest)-40:], len(longest), MaxPathLength)
	}
}

// checkChildren holds a supervisor to MaxChildren, instances counted.
func (v *validator) checkChildren(p string, children []Node) bool {
	if v.legacy {
		return true
	}
	total := 0
	for _, c := range children {
		total += max(c.Instances, 1)
	}
	if total > MaxChildren {
		v.add(join(p, "children"), "%d children (instances counted): a supervisor has at most %d; group them under supervisors", total, MaxChildren)
		return false
	}
	return true
}

// checkNodeSize holds a worker node, with what it inherits, to
// MaxNodeBytes: its own JSON without vars, its own vars, and the vars it
// inherits, measured once for all the children of a supervisor (a
// megabyte of vars is not encoded once per child; a variable a worker
// overrides is counted twice, an overestimate of a few bytes).
func (v *validator) checkNodeSize(p string, n Node, own, inherited map[string]string) bool {
	if v.legacy {
		return true
	}
	n.Vars = nil
	size := EncodedSize(n) + v.inheritedSize(inherited)
	if len(own) > 0 {
		size += EncodedSize(own)
	}
	if size > MaxNodeBytes {
		v.add(p, "the worker's spec is %s with what it inherits (at most %s)", FormatSize(int64(size)), FormatSize(MaxNodeBytes))
		return false
	}
	return true
}

func (v *validator) inheritedSize(m map[string]string) int {
	if len(m) == 0 {
		return 0
	}
	// The map measured is held, so its address names it until replaced.
	if v.varsOf == nil || reflect.ValueOf(m).Pointer() != reflect.ValueOf(v.varsOf).Pointer() {
		v.varsOf, v.varsBytes = m, EncodedSize(m)
	}
	return v.varsBytes
}

// checkTreeSize holds a tree to MaxTreeBytes.
func (v *validator) checkTreeSize(n Node) bool {
	if v.legacy {
		return true
	}
	if size := EncodedSize(n); size > MaxTreeBytes {
		v.add("", "the tree's spec is %s (at most %s)", FormatSize(int64(size)), FormatSize(MaxTreeBytes))
		return false
	}
	return true
}

// atLeast holds an interval to a minimum (a problem, or nothing when it
// is not set or is <= 0, which positive reports).
func (v *validator) atLeast(path string, d *Duration, least time.Duration) {
	if v.legacy || d == nil || d.D() <= 0 || d.D() >= least {
		return
	}
	v.add(path, "%s is too short (at least %s)", d.D(), least)
}

// EncodedSize is a value's size as JSON (what it weighs in a payload).
func EncodedSize(x any) int {
	b, err := json.Marshal(x)
	if err != nil {
		return 0 // what does not encode is refused where it is sent
	}
	return len(b)
}

// childPath is the workflow path of a child named name under parent.
func childPath(parent, name string) string {
	if parent == "" {
		return name
	}
	return parent + "/" + name
}

// pathDepth is the level of a workflow path (a root is 1).
func pathDepth(path string) int {
	if path == "" {
		return 0
	}
	return strings.Count(path, "/") + 1
}

// limitProblem says a YAML document is over a limit before it is decoded.
func limitProblem(format string, args ...any) Problems {
	return Problems{{Msg: fmt.Sprintf(format, args...)}}
}

// CheckPath says why path is not a workflow path steward makes (names
// joined by '/', within the limits), nil when it is: for a path that
// comes in a payload (a host's subscriber, say).
func CheckPath(path string) error {
	if path == "" || len(path) > MaxPathLength {
		return fmt.Errorf("path of %d characters (1 to %d)", len(path), MaxPathLength)
	}
	segs := strings.Split(path, "/")
	if len(segs) > MaxDepth {
		return fmt.Errorf("path %.60q... deeper than %d levels", path, MaxDepth)
	}
	for _, s := range segs {
		if len(s) > MaxNameLength || !namePattern.MatchString(s) {
			return fmt.Errorf("path %.60q: %.60q is not a name", path, s)
		}
	}
	return nil
}

// checkExpandedSize holds a supervisor's children as it runs and carries
// them (instances expanded, each dependsOn naming every instance of a
// worker it names: Expand) to MaxTreeBytes: a spec of a few hundred bytes
// (web and db with 500 instances each, db depending on web) expands to
// megabytes, more than a continue-as-new carries.
func (v *validator) checkExpandedSize(p string, children []Node) {
	if v.legacy {
		return
	}
	inst := map[string]int{}
	for _, c := range children {
		if c.Instances > 0 && !c.IsSupervisor() {
			inst[c.Name] = c.Instances
		}
	}
	if len(inst) == 0 {
		return // nothing expands: the level is within the tree's size
	}
	total := EncodedSize(children)
	for _, c := range children {
		copies := max(c.Instances, 1)
		if c.Instances > 1 {
			total += (c.Instances - 1) * EncodedSize(c)
		}
		for _, d := range c.DependsOn {
			if k := inst[d]; k > 0 {
				total += copies * k * (len(d) + 8) // "NAME-K",
			}
		}
		if total > MaxTreeBytes {
			v.add(join(p, "children"), "with instances expanded, the children's spec is over %s (instances copy a worker's spec, and dependsOn names every instance)", FormatSize(MaxTreeBytes))
			return
		}
	}
}
