package spec

import (
	"encoding/json"
	"reflect"
	"sort"
	"strings"
)

// Plan is what applying a spec to a running tree would do, node by node
// (`starter apply --dry-run`): paths in spec order, depth first.
type Plan struct {
	// Added are the paths the file has and the running tree does not.
	Added []string `json:"added"`
	// Removed are the paths the running tree has and the file does not.
	Removed []string `json:"removed"`
	// Changed are the paths in both whose own fields differ (a
	// supervisor's children are their own paths, not its fields).
	Changed []Change `json:"changed"`
	// Unchanged counts the paths in both with no field changed.
	Unchanged int `json:"unchanged"`
	// Stale are the subtrees not compared: their running spec could not be
	// read (a workflow that did not answer in time). Set by the caller
	// that reads the running tree; Diff leaves it empty.
	Stale []StalePath `json:"stale,omitempty"`
}

// StalePath is a subtree a plan did not compare, and why.
type StalePath struct {
	Path   string `json:"path"`
	Reason string `json:"reason"`
}

// Change is one changed path and its changed fields.
type Change struct {
	Path   string        `json:"path"`
	Fields []FieldChange `json:"fields"`
}

// FieldChange is one field, named by its dotted path in the spec
// (`process.args`, `timeouts.start`), with its old and new values as JSON
// would write them (nil: not set).
type FieldChange struct {
	Field string `json:"field"`
	Old   any    `json:"old"`
	New   any    `json:"new"`
}

// Diff compares the running tree (nil: none runs) with the wanted one, as
// written: fields are compared as given, not with defaults filled in, so a
// field written out with its default value counts as a change. What a node
// inherits (vars, notify) is compared as its supervisor hands it down, on
// both sides (Effective).
func Diff(running *Node, wanted Node) Plan {
	p := Plan{Added: []string{}, Removed: []string{}, Changed: []Change{}}
	wanted = Expanded(Effective(wanted))
	if running != nil {
		r := Expanded(Effective(*running))
		running = &r
	}
	if running == nil || running.Name != wanted.Name {
		walkPaths("", wanted, func(path string) { p.Added = append(p.Added, path) })
		if running != nil {
			walkPaths("", *running, func(path string) { p.Removed = append(p.Removed, path) })
		}
		return p
	}
	p.diff("", *running, wanted)
	return p
}

func (p *Plan) diff(prefix string, old, new Node) {
	path := joinPath(prefix, new.Name)
	if fields := fieldChanges(old, new); len(fields) > 0 {
		p.Changed = append(p.Changed, Change{Path: path, Fields: fields})
	} else {
		p.Unchanged++
	}
	olds := map[string]Node{}
	for _, c := range old.Children {
		olds[c.Name] = c
	}
	news := map[string]bool{}
	for _, c := range new.Children {
		news[c.Name] = true
		if o, ok := olds[c.Name]; ok {
			p.diff(path, o, c)
			continue
		}
		walkPaths(path, c, func(q string) { p.Added = append(p.Added, q) })
	}
	for _, c := range old.Children {
		if !news[c.Name] {
			walkPaths(path, c, func(q string) { p.Removed = append(p.Removed, q) })
		}
	}
}

// Effective returns the tree with every descendant as its supervisor hands
// it down (Inherit): with its effective vars and notify. Its input is left
// alone; applying it twice changes nothing.
func Effective(n Node) Node {
	if len(n.Children) == 0 {
		return n
	}
	kids := make([]Node, len(n.Children))
	for i, c := range n.Children {
		kids[i] = Effective(Inherit(n, c))
	}
	n.Children = kids
	return n
}

// Expanded returns the tree with every supervisor's children as it runs
// them (Expand: instances, inherited hosts), unplaced.
func Expanded(n Node) Node {
	if len(n.Children) == 0 {
		return n
	}
	kids := Expand(n)
	for i, c := range kids {
		kids[i] = Expanded(c)
	}
	n.Children = kids
	return n
}

func joinPath(prefix, name string) string {
	if prefix == "" {
		return name
	}
	return prefix + "/" + name
}

// walkPaths calls f with the path of n and of each of its descendants.
func walkPaths(prefix string, n Node, f func(string)) {
	path := joinPath(prefix, n.Name)
	f(path)
	for _, c := range n.Children {
		walkPaths(path, c, f)
	}
}

// fieldChanges compares two nodes' own fields (not their children), as
// JSON leaves: a mapping is compared key by key, anything else whole.
func fieldChanges(old, new Node) []FieldChange {
	a, b := leaves(old), leaves(new)
	keys := map[string]bool{}
	for k := range a {
		keys[k] = true
	}
	for k := range b {
		keys[k] = true
	}
	sorted := make([]string, 0, len(keys))
	for k := range keys {
		sorted = append(sorted, k)
	}
	sort.Strings(sorted)
	var out []FieldChange
	for _, k := range sorted {
		if !reflect.DeepEqual(a[k], b[k]) {
			out = append(out, FieldChange{Field: k, Old: a[k], New: b[k]})
		}
	}
	return out
}

// leaves flattens a node's own fields to dotted paths and JSON values.
func leaves(n Node) map[string]any {
	n.Children = nil
	b, err := json.Marshal(n)
	if err != nil {
		return nil
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return nil
	}
	delete(m, "name")
	delete(m, "placedOn") // where a supervisor placed a worker is not the operator's field
	out := map[string]any{}
	flatten("", m, out)
	return out
}

func flatten(prefix string, m map[string]any, out map[string]any) {
	for k, v := range m {
		key := k
		if prefix != "" {
			key = prefix + "." + k
		}
		if sub, ok := v.(map[string]any); ok && len(sub) > 0 {
			flatten(key, sub, out)
			continue
		}
		out[key] = v
	}
}

// String is a value as `apply --dry-run` prints it: JSON, "-" for unset.
func (f FieldChange) String() string {
	show := func(v any) string {
		if v == nil {
			return "-"
		}
		b, _ := json.Marshal(v)
		return strings.TrimSpace(string(b))
	}
	return f.Field + ": " + show(f.Old) + " -> " + show(f.New)
}
