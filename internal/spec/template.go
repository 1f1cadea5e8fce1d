package spec

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"text/template/parse"
)

// Field templates.
//
// A string in a driver block is a Go text/template, but only in the small
// language a spec needs, checked by walking its parse tree and executed by
// this file, never by text/template's engine (whose `range` over an integer
// or nested templates let one string run for minutes or take the memory of
// the worker that renders it, inside a workflow task):
//
//   - field references: {{ .Vars.NAME }}, {{ index .Vars "NAME" }} (for a
//     variable whose name is no Go identifier: `my-port`), {{ .Name }},
//     {{ .Instance }}, {{ .Host }};
//   - `add`, which sums integers: {{ add 8080 .Instance }}, also in a
//     pipeline ({{ .Instance | add 8080 }}); a variable holding an integer
//     counts as one;
//   - literals (numbers, quoted strings) and comments.
//
// Everything else text/template knows (if, range, with, define, template,
// block, variables, printf and the other built-in functions) is a problem
// naming the action. A node renders at most MaxRenderedBytes in all, and a
// template is parsed from a string of at most MaxNodeBytes, so rendering is
// linear in the node's size whoever sent it.

// templateAllowed is what a problem lists as the language.
const templateAllowed = "a field template may use .Vars.NAME, index .Vars \"NAME\", .Name, .Instance, .Host, add and literals"

// templateFuncNames are the functions the parser accepts (the rest are
// refused by name, as text/template would: "function %q not defined").
// (The parser asks only that a name maps to something not nil.)
var templateFuncNames = map[string]any{"add": true, "index": true}

// languageError is a template that uses what the language leaves out.
// Validated as code older than the language validated (ValidateLegacy:
// text/template's engine, which took them), such a field is no problem and
// stays as written: a run begun before the language replays the specs it
// took, and a spec it kept still starts its child.
type languageError struct{ msg string }

func (e languageError) Error() string { return e.msg }

func notAllowed(format string, args ...any) error {
	return languageError{fmt.Sprintf(format, args...)}
}

// renderBudget is what is left of a node's rendered bytes.
type renderBudget struct{ left int }

// renderString renders one field. A string without "{{" is returned as is.
// legacy: as code older than the language validated (languageError).
func renderString(s string, data TemplateData, budget *renderBudget, legacy bool) (string, error) {
	if !strings.Contains(s, "{{") {
		return s, nil // the common case: no template, no parse
	}
	trees, err := parse.Parse("field", s, "{{", "}}", templateFuncNames)
	if err != nil {
		if legacy && strings.Contains(err.Error(), "not defined") {
			return s, nil // a function of text/template's: taken as it was
		}
		return "", fmt.Errorf("bad template %q: %v", s, strings.TrimPrefix(err.Error(), "template: field:"))
	}
	t := trees["field"]
	if len(trees) != 1 || t == nil || t.Root == nil {
		if legacy {
			return s, nil
		}
		return "", fmt.Errorf("template %q: define, block and template are not allowed (%s)", s, templateAllowed)
	}
	r := renderer{data: data, budget: budget, legacy: legacy}
	if err := r.list(t.Root); err != nil {
		var lang languageError
		if legacy && errors.As(err, &lang) {
			return s, nil
		}
		return "", fmt.Errorf("template %q: %v", s, err)
	}
	return r.out.String(), nil
}

type renderer struct {
	data   TemplateData
	budget *renderBudget
	out    strings.Builder
	legacy bool
}

func (r *renderer) write(s string) error {
	if len(s) > r.budget.left {
		return fmt.Errorf("renders more than %d bytes (the limit of a node's rendered fields)", MaxRenderedBytes)
	}
	r.budget.left -= len(s)
	r.out.WriteString(s)
	return nil
}

func (r *renderer) list(l *parse.ListNode) error {
	for _, n := range l.Nodes {
		switch x := n.(type) {
		case *parse.TextNode:
			if err := r.write(string(x.Text)); err != nil {
				return err
			}
		case *parse.CommentNode:
		case *parse.ActionNode:
			v, err := r.pipe(x.Pipe)
			if err != nil {
				return err
			}
			if err := r.write(v.String()); err != nil {
				return err
			}
		default:
			return notAllowed("%s is not allowed (%s)", actionName(n), templateAllowed)
		}
	}
	return nil
}

// actionName names a node that is not allowed as its source starts.
func actionName(n parse.Node) string {
	s := n.String()
	if i := strings.IndexAny(s, " }"); i > 2 && strings.HasPrefix(s, "{{") {
		return strings.TrimSpace(s[:i]) + "}}"
	}
	return fmt.Sprintf("%.20q", s)
}

// value is what a pipeline yields: a string or an integer.
type value struct {
	s     string
	n     int
	isInt bool
}

func (v value) String() string {
	if v.isInt {
		return strconv.Itoa(v.n)
	}
	return v.s
}

// integer is the value as an integer (a string that spells one counts).
func (v value) integer() (int, error) {
	if v.isInt {
		return v.n, nil
	}
	n, err := strconv.Atoi(strings.TrimSpace(v.s))
	if err != nil {
		return 0, fmt.Errorf("add: %q is not an integer", v.s)
	}
	return n, nil
}

func (r *renderer) pipe(p *parse.PipeNode) (value, error) {
	if len(p.Decl) > 0 || p.IsAssign {
		return value{}, notAllowed("variables are not allowed (%s)", templateAllowed)
	}
	var prev *value
	for _, c := range p.Cmds {
		v, err := r.command(c, prev)
		if err != nil {
			return value{}, err
		}
		prev = &v
	}
	if prev == nil {
		return value{}, fmt.Errorf("an empty action")
	}
	return *prev, nil
}

// command evaluates one command of a pipeline; prev is the value piped in.
func (r *renderer) command(c *parse.CommandNode, prev *value) (value, error) {
	if len(c.Args) == 0 {
		return value{}, fmt.Errorf("an empty command")
	}
	if id, ok := c.Args[0].(*parse.IdentifierNode); ok {
		args := c.Args[1:]
		vals := make([]value, 0, len(args)+1)
		for _, a := range args {
			v, err := r.arg(a)
			if err != nil {
				return value{}, err
			}
			vals = append(vals, v)
		}
		if prev != nil {
			vals = append(vals, *prev)
		}
		return r.call(id.Ident, c.Args[1:], vals)
	}
	if prev != nil || len(c.Args) > 1 {
		return value{}, notAllowed("%s: only add takes arguments (%s)", c, templateAllowed)
	}
	if f, ok := c.Args[0].(*parse.FieldNode); ok && len(f.Ident) == 1 && f.Ident[0] == "Vars" {
		return value{}, notAllowed(".Vars is a map: name a variable (.Vars.NAME)")
	}
	return r.arg(c.Args[0])
}

func (r *renderer) call(fn string, args []parse.Node, vals []value) (value, error) {
	switch fn {
	case "add":
		if len(vals) == 0 {
			return value{}, fmt.Errorf("add: needs at least one integer")
		}
		sum := 0
		for _, v := range vals {
			if r.legacy && !v.isInt {
				return value{}, fmt.Errorf("add: %q is not an integer", v.s) // text/template's add took ints only
			}
			n, err := v.integer()
			if err != nil {
				return value{}, err
			}
			sum += n
		}
		return value{n: sum, isInt: true}, nil
	case "index":
		// Only index .Vars "NAME": a variable whose name is no identifier.
		if len(args) != 2 || len(vals) != 2 {
			return value{}, notAllowed("index: only index .Vars \"NAME\" is allowed")
		}
		f, ok := args[0].(*parse.FieldNode)
		if !ok || len(f.Ident) != 1 || f.Ident[0] != "Vars" {
			return value{}, notAllowed("index: only index .Vars \"NAME\" is allowed")
		}
		if _, ok := args[1].(*parse.StringNode); !ok {
			return value{}, notAllowed("index: only index .Vars \"NAME\" is allowed")
		}
		if _, ok := r.data.Vars[vals[1].s]; !ok && r.legacy {
			return value{}, nil // text/template's index of a missing key
		}
		return r.variable(vals[1].s)
	}
	return value{}, notAllowed("function %q is not allowed (%s)", fn, templateAllowed)
}

// arg evaluates an argument or a lone operand.
func (r *renderer) arg(n parse.Node) (value, error) {
	switch x := n.(type) {
	case *parse.FieldNode:
		return r.field(x.Ident)
	case *parse.NumberNode:
		if !x.IsInt || x.Int64 != int64(int(x.Int64)) {
			return value{}, fmt.Errorf("%s: only integers", x.Text)
		}
		return value{n: int(x.Int64), isInt: true}, nil
	case *parse.StringNode:
		return value{s: x.Text}, nil
	case *parse.PipeNode:
		return r.pipe(x)
	}
	return value{}, notAllowed("%s is not allowed (%s)", n, templateAllowed)
}

func (r *renderer) field(ident []string) (value, error) {
	if len(ident) == 0 {
		return value{}, fmt.Errorf("an empty field")
	}
	if ident[0] == "Vars" {
		if len(ident) == 1 {
			// .Vars alone: used as index's first argument only.
			return value{}, nil
		}
		if len(ident) > 2 {
			return value{}, notAllowed(".%s: a variable is a string, it has no fields", strings.Join(ident, "."))
		}
		return r.variable(ident[1])
	}
	if len(ident) > 1 {
		return value{}, notAllowed(".%s: .%s has no fields", strings.Join(ident, "."), ident[0])
	}
	switch ident[0] {
	case "Name":
		return value{s: r.data.Name}, nil
	case "Host":
		return value{s: r.data.Host}, nil
	case "Instance":
		return value{n: r.data.Instance, isInt: true}, nil
	}
	return value{}, notAllowed(".%s is not a field (.Vars.NAME, .Name, .Instance or .Host)", ident[0])
}

func (r *renderer) variable(name string) (value, error) {
	v, ok := r.data.Vars[name]
	if !ok {
		return value{}, fmt.Errorf("no variable %q", name)
	}
	return value{s: v}, nil
}
