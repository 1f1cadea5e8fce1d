package spec

import (
	"fmt"
	"maps"
)

// Variables.
//
// A node's `vars` are inherited by its descendants, and a descendant's own
// vars override inherited ones of the same name. String fields of a worker's
// driver config (every string inside `process:` and `http:`, at any depth)
// are templates over them (template.go: field references and `add` only):
// `{{ .Vars.port }}`; `{{ .Name }}` is the worker's name. Rendering is strict: a missing variable is an error, found
// by Validate (with the field's path) before anything starts.
//
// Supervisors hand each child its effective vars (Inherit), so a worker's
// spec carries every variable it needs and renders on its own (Render).

// TemplateData is what a driver field template sees.
type TemplateData struct {
	Vars map[string]string
	Name string
	// Instance is the worker's instance number (0 for a worker without
	// instances) and Host the host it runs on ("" where it runs on any).
	Instance int
	Host     string
}

// MergeVars returns the vars a child of a node with vars parent sees: the
// parent's, overridden by the child's own. It returns nil when both are
// empty, so a tree without vars keeps the exact shape it had.
func MergeVars(parent, own map[string]string) map[string]string {
	if len(parent) == 0 && len(own) == 0 {
		return nil
	}
	out := make(map[string]string, len(parent)+len(own))
	maps.Copy(out, parent)
	maps.Copy(out, own)
	return out
}

// Inherit returns the child as its supervisor parent (as it was handed
// down itself) hands it down: with its effective vars, and with the
// parent's notify unless it has its own.
func Inherit(parent Node, child Node) Node {
	child.Vars = MergeVars(parent.Vars, child.Vars)
	if child.Notify == nil {
		child.Notify = parent.Notify
	}
	if child.Update == nil && child.Kind == "" { // a supervisor's (a pruned one has no children)
		child.Update = parent.Update
	}
	if child.Kind == "" {
		child = InheritFleet(parent, child)
	}
	return child
}

// Render returns the worker node with every driver field template executed
// over its vars. Its error is Problems, each with the field's path below
// prefix.
func Render(n Node, prefix string) (Node, Problems) { return render(n, prefix, false) }

// render is Render; legacy: as code older than the template language
// validated (template.go's languageError).
func render(n Node, prefix string, legacy bool) (Node, Problems) {
	data := TemplateData{Vars: n.Vars, Name: n.Name, Host: n.RunsOn()}
	if n.Instance != nil {
		data.Instance = *n.Instance
	}
	if data.Host == "" && len(n.Hosts) > 0 {
		data.Host = n.Hosts[0] // validation before placement: any host of the list
	}
	if data.Vars == nil {
		data.Vars = map[string]string{}
	}
	var ps Problems
	budget := &renderBudget{left: MaxRenderedBytes}
	if n.Process != nil {
		out, p := renderValue(n.Process, join(prefix, KindProcess), data, budget, legacy)
		n.Process = out.(map[string]any)
		ps = append(ps, p...)
	}
	if n.HTTP != nil {
		out, p := renderValue(n.HTTP, join(prefix, KindHTTP), data, budget, legacy)
		n.HTTP = out.(map[string]any)
		ps = append(ps, p...)
	}
	return n, ps
}

// renderValue renders every string in v (a decoded YAML/JSON value) and
// returns a copy; maps are walked in key order so problems come out in a
// stable order.
func renderValue(v any, path string, data TemplateData, budget *renderBudget, legacy bool) (any, Problems) {
	switch x := v.(type) {
	case string:
		s, err := renderString(x, data, budget, legacy)
		if err != nil {
			return x, Problems{{Path: path, Msg: err.Error()}}
		}
		return s, nil
	case map[string]any:
		out := make(map[string]any, len(x))
		var ps Problems
		for _, k := range sortedKeys(x) {
			r, p := renderValue(x[k], join(path, k), data, budget, legacy)
			out[k] = r
			ps = append(ps, p...)
		}
		return out, ps
	case []any:
		out := make([]any, len(x))
		var ps Problems
		for i, e := range x {
			r, p := renderValue(e, fmt.Sprintf("%s[%d]", path, i), data, budget, legacy)
			out[i] = r
			ps = append(ps, p...)
		}
		return out, ps
	}
	return v, nil
}
