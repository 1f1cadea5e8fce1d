package spec

import (
	"fmt"
	"regexp"
	"slices"
	"sort"
)

// namePattern keeps names usable as workflow ID segments and CLI arguments.
var namePattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)

// NameShaped reports whether s is made as a node's name is (letters,
// digits, '.', '_' and '-', a letter or digit first), whatever its length:
// a workflow ID that is not cannot be a tree's root (`starter` lists none
// such, so that no query it builds quotes one).
func NameShaped(s string) bool { return namePattern.MatchString(s) }

// Validate returns every problem in a spec tree, each named by its path.
// A spec with problems must start nothing.
func Validate(root Node) Problems { return ValidateAt("", root) }

// ValidateAt validates the node n of a supervisor's workflow (a `spec`
// signal or Update) whose parent's path is parent ("" for a root): the
// limits on paths and depth count from the root.
func ValidateAt(parent string, n Node) Problems {
	v := &validator{}
	if !v.checkTreeSize(n) {
		return v.ps // not walked: what is over the limit costs no more
	}
	v.node("", n, nil, childPath(parent, n.Name), pathDepth(parent)+1)
	return v.ps
}

// ValidateWorker validates one worker node on its own (a `spec` signal to a
// worker workflow), with paths relative to that node; path is its
// workflow's ("" where unknown: its name).
func ValidateWorker(path string, n Node) Problems {
	v := &validator{}
	v.worker1(path, n)
	return v.ps
}

// ValidateLegacy and ValidateWorkerLegacy validate as the code before the
// limits (limits.go) did: for a run of an older code version replaying a
// history its code wrote, which must take the same input it took then.
// Field templates are held to their language all the same (template.go).
func ValidateLegacy(n Node) Problems {
	v := &validator{legacy: true}
	v.node("", n, nil, n.Name, 1)
	return v.ps
}

// ValidateWorkerLegacy: see ValidateLegacy.
func ValidateWorkerLegacy(n Node) Problems {
	v := &validator{legacy: true}
	v.worker1("", n)
	return v.ps
}

func (v *validator) worker1(path string, n Node) {
	if path == "" {
		path = n.Name
	}
	v.node("", n, nil, path, pathDepth(path))
	if n.IsSupervisor() {
		v.add("", "children: a worker's spec cannot have children")
	}
}

// validator collects problems; legacy leaves the limits out.
type validator struct {
	ps     Problems
	legacy bool
	// varsOf and varsBytes: the encoded size of the last inherited vars
	// measured (a supervisor's, the same map for all its children).
	varsOf    map[string]string
	varsBytes int
}

func (v *validator) add(path, format string, args ...any) {
	v.ps = append(v.ps, Problem{Path: path, Msg: fmt.Sprintf(format, args...)})
}

func join(prefix, field string) string {
	if prefix == "" {
		return field
	}
	return prefix + "." + field
}

// node validates n, whose supervisor's effective vars are inherited, and
// whose workflow path is wfPath at level depth of its tree.
func (v *validator) node(p string, n Node, inherited map[string]string, wfPath string, depth int) {
	switch {
	case n.Name == "":
		v.add(join(p, "name"), "required")
	case !v.checkName(join(p, "name"), "a name", n.Name):
	case !namePattern.MatchString(n.Name):
		v.add(join(p, "name"), "%q is not a valid name (letters, digits, '.', '_' and '-', starting with a letter or digit; no '/')", n.Name)
	default:
		v.checkPath(p, n, wfPath, depth)
	}
	v.oneOf(join(p, "desired"), n.Desired, DesiredRunning, DesiredStopped)
	v.oneOf(join(p, "restart"), n.Restart, RestartPermanent, RestartTransient, RestartTemporary)
	v.vars(p, n.Vars)
	v.notify(p, n.Notify)
	v.update(p, n.Update, n.IsSupervisor())
	v.fleet(p, n)
	v.job(p, n)
	own := n.Vars
	switch {
	case len(own) == 0:
		n.Vars = inherited // not copied (read only below): a tree's vars are not copied into every node
	case !v.legacy && len(inherited)+len(own) > MaxVars:
		v.add(join(p, "vars"), "%d variables with those it inherits (at most %d)", len(inherited)+len(own), MaxVars)
		n.Vars = inherited
	default:
		n.Vars = MergeVars(inherited, own)
	}

	switch {
	case n.IsSupervisor() && n.Kind != "":
		v.add(join(p, "kind"), "a node has either children (a supervisor) or a kind (a worker), not both")
	case n.IsSupervisor():
		v.supervisor(p, n, wfPath, depth)
	case n.Kind == "":
		v.add(join(p, "kind"), "required for a worker (stub, process or http), or give the node children")
	default:
		if v.checkNodeSize(p, n, own, inherited) { // what is over it is not rendered
			v.worker(p, n)
		}
	}
}

func (v *validator) supervisor(p string, n Node, wfPath string, depth int) {
	switch n.Strategy {
	case "", OneForOne, OneForAll, RestForOne:
	default:
		v.add(join(p, "strategy"), "unknown strategy %q (one_for_one, one_for_all or rest_for_one)", n.Strategy)
	}
	if in := n.Intensity; in != nil {
		ip := join(p, "intensity")
		if in.MaxRestarts <= 0 {
			v.add(join(ip, "maxRestarts"), "must be > 0")
		}
		if in.Period == nil {
			v.add(join(ip, "period"), "required")
		} else {
			v.positive(join(ip, "period"), in.Period)
		}
		v.positive(join(ip, "cooldown"), in.Cooldown)
	}
	for _, f := range []struct {
		name string
		set  bool
	}{
		{"timeouts", n.Timeouts != nil}, {"retry", n.Retry != nil},
		{"observe", n.Observe != nil}, {"stub", n.Stub != nil}, {"process", n.Process != nil}, {"http", n.HTTP != nil},
	} {
		if f.set {
			v.add(join(p, f.name), "only workers (nodes with a kind) take %s", f.name)
		}
	}
	if !v.checkChildren(p, n.Children) {
		return // not walked: what is over the limit costs no more
	}
	v.checkExpandedSize(p, n.Children)
	seen := map[string]int{}
	for i, c := range n.Children {
		cp := fmt.Sprintf("%s[%d]", join(p, "children"), i)
		if j, dup := seen[c.Name]; dup && c.Name != "" {
			v.add(join(cp, "name"), "duplicate name %q (also children[%d])", c.Name, j)
		} else {
			seen[c.Name] = i
		}
		v.node(cp, c, n.Vars, childPath(wfPath, c.Name), depth+1)
	}
	v.dependsOn(p, n.Children)
	v.instanceClashes(p, n.Children)
	v.backoff(p, n.Backoff)
}

func (v *validator) worker(p string, n Node) {
	if n.Strategy != "" {
		v.add(join(p, "strategy"), "only supervisors (nodes with children) take a strategy")
	}
	if n.Intensity != nil {
		v.add(join(p, "intensity"), "only supervisors (nodes with children) take an intensity")
	}
	// Driver blocks are checked as they render (a template in a URL is not
	// a URL); one that does not render is reported by its fields' paths.
	n, rendered := render(n, p, v.legacy)
	v.ps = append(v.ps, rendered...)
	switch {
	case len(rendered) > 0 && (n.Kind == KindProcess || n.Kind == KindHTTP):
	case n.Kind == KindStub:
		v.stub(join(p, "stub"), n.Stub)
	case n.Kind == KindProcess:
		v.process(join(p, "process"), n.Process)
	case n.Kind == KindHTTP:
		v.httpBlock(join(p, "http"), n.HTTP, n.IsJob())
	default:
		v.add(join(p, "kind"), "unknown kind %q (stub, process or http)", n.Kind)
	}
	blocks := []struct {
		kind string
		set  bool
	}{{KindStub, n.Stub != nil}, {KindProcess, n.Process != nil}, {KindHTTP, n.HTTP != nil}}
	for _, b := range blocks {
		if b.set && b.kind != n.Kind {
			v.add(join(p, b.kind), "driver block %s: given for a worker of kind %q", b.kind, n.Kind)
		}
	}
	if t := n.Timeouts; t != nil {
		tp := join(p, "timeouts")
		v.positive(join(tp, "start"), t.Start)
		v.positive(join(tp, "stop"), t.Stop)
		v.positive(join(tp, "restart"), t.Restart)
		v.positive(join(tp, "observe"), t.Observe)
	}
	if r := n.Retry; r != nil {
		rp := join(p, "retry")
		if r.MaxAttempts < 0 {
			v.add(join(rp, "maxAttempts"), "must be >= 1 (or left out for the default, 3)")
		}
		v.positive(join(rp, "initialInterval"), r.InitialInterval)
		v.atLeast(join(rp, "initialInterval"), r.InitialInterval, MinBackoff)
		v.positive(join(rp, "maxInterval"), r.MaxInterval)
		if r.BackoffCoefficient != 0 && r.BackoffCoefficient < 1 {
			v.add(join(rp, "backoffCoefficient"), "must be >= 1")
		}
		if r.InitialInterval != nil && r.MaxInterval != nil && r.MaxInterval.D() < r.InitialInterval.D() {
			v.add(join(rp, "maxInterval"), "must be >= initialInterval")
		}
	}
	v.backoff(p, n.Backoff)
	if o := n.Observe; o != nil {
		v.positive(join(p, "observe.interval"), o.Interval)
		v.atLeast(join(p, "observe.interval"), o.Interval, MinObserveInterval)
	}
}

// backoff checks a node's backoff: a worker's restart delay, or the delay
// before a supervisor's parent restarts it.
func (v *validator) backoff(p string, b *Backoff) {
	if b != nil {
		bp := join(p, "backoff")
		// A zero delay would restart a failing service in a tight loop.
		v.positive(join(bp, "initial"), b.Initial)
		v.atLeast(join(bp, "initial"), b.Initial, MinBackoff)
		v.positive(join(bp, "max"), b.Max)
		v.positive(join(bp, "resetAfter"), b.ResetAfter)
		if b.Multiplier != 0 && b.Multiplier < 1 {
			v.add(join(bp, "multiplier"), "must be >= 1")
		}
		if b.Jitter != nil && (*b.Jitter < 0 || *b.Jitter > 1) {
			v.add(join(bp, "jitter"), "must be between 0 and 1")
		}
		if b.Initial != nil && b.Max != nil && b.Max.D() < b.Initial.D() {
			v.add(join(bp, "max"), "must be >= initial")
		}
	}
}

var stubActions = []string{"start", "stop", "restart", "observe"}
var stubOutcomes = []string{OutcomeSuccess, OutcomeFailure, OutcomeTimeout, OutcomeError, OutcomePermanent}

func (v *validator) stub(p string, s *Stub) {
	if s == nil {
		return
	}
	if s.Delay < 0 {
		v.add(join(p, "delay"), "must be >= 0")
	}
	if s.CrashAfter < 0 {
		v.add(join(p, "crashAfter"), "must be >= 0")
	}
	if s.ExitAfter < 0 {
		v.add(join(p, "exitAfter"), "must be >= 0")
	}
	if s.FailureRate < 0 || s.FailureRate > 1 {
		v.add(join(p, "failureRate"), "must be between 0 and 1")
	}
	for _, a := range sortedKeys(s.Outcomes) {
		ap := join(join(p, "outcomes"), a)
		if !slices.Contains(stubActions, a) {
			v.add(ap, "unknown action %q (start, stop, restart or observe)", a)
			continue
		}
		for i, o := range s.Outcomes[a] {
			if !slices.Contains(stubOutcomes, o) {
				v.add(fmt.Sprintf("%s[%d]", ap, i), "unknown outcome %q (success, failure, timeout, error or permanent)", o)
			}
		}
	}
}

func (v *validator) vars(p string, vars map[string]string) {
	for _, k := range sortedKeys(vars) {
		if !v.checkName(join(join(p, "vars"), k), "a variable name", k) {
			continue
		}
		if !namePattern.MatchString(k) {
			v.add(join(join(p, "vars"), k), "%q is not a valid variable name", k)
		}
	}
}

func (v *validator) oneOf(path, val string, allowed ...string) {
	if val != "" && !slices.Contains(allowed, val) {
		v.add(path, "%q is not one of %v", val, allowed)
	}
}

func (v *validator) positive(path string, d *Duration) {
	if d != nil && d.D() <= 0 {
		v.add(path, "must be > 0")
	}
}

// sortedKeys returns a map's keys in order: validation reports problems in
// a stable order, and stays deterministic inside workflow code.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// ValidateSent checks a spec sent to the supervisor at path (a `spec`
// signal): by the limits when held (their marker is recorded in its run:
// workflows/limits.go), as the code before them did otherwise.
func ValidateSent(held bool, path string, n Node) Problems {
	if held {
		return ValidateAt(ParentPath(path), n)
	}
	return ValidateLegacy(n)
}

// ValidateSentWorker checks a spec sent to the worker at path, as
// ValidateSent does.
func ValidateSentWorker(held bool, path string, n Node) Problems {
	if held {
		return ValidateWorker(path, n)
	}
	return ValidateWorkerLegacy(n)
}

// ParentPath is the path of a workflow path's parent ("" for a root).
func ParentPath(path string) string {
	for i := len(path) - 1; i >= 0; i-- {
		if path[i] == '/' {
			return path[:i]
		}
	}
	return ""
}
