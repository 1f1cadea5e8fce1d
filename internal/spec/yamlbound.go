package spec

import (
	"bytes"
	"strings"

	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"
)

// YAML aliases.
//
// An alias (`*name`) stands for a copy of what its anchor (`&name`) holds,
// and the decoder expands every one: a file of a few lines whose anchors
// alias each other nine deep is a billion nodes ("billion laughs"). Before
// a file is decoded, its nodes are counted with every alias expanded, and a
// file whose aliases add more than MaxAliasNodes nodes, or more than the
// file has of its own if that is more, is refused. Aliases that share a
// block among many workers stay well under it.

// MaxFlowDepth is how deep a YAML file's flow collections ([...] and
// {...}) may nest. The parser copies the path of every level at each one,
// so depth costs its square: a file of 40,000 "[" took 4 GB. Specs nest a
// few levels.
const MaxFlowDepth = 256

// CheckYAML refuses, before it is parsed, a YAML file whose parse or
// decoding would take memory out of proportion to its size: flow
// collections nested past MaxFlowDepth, aliases that expand too far
// (checkAliases). A spec, a worker's configuration and a host's policy
// are each checked so.
func CheckYAML(data []byte) error {
	if ps := checkFlowDepth(data); ps != nil {
		return ps
	}
	if ps := checkAliases(data); ps != nil {
		return ps
	}
	return nil
}

// checkFlowDepth scans data once for the nesting of flow collections,
// outside quoted scalars and comments. A quote opens a quoted scalar only
// where a scalar begins (after ':', '-', ',', '?', '[' or '{', or at a
// line's start), as in YAML: an apostrophe in a plain scalar ("it's")
// hides nothing after it. (A block scalar's brackets are counted too: one
// with more than MaxFlowDepth open ones is refused, a price no spec pays.)
func checkFlowDepth(data []byte) Problems {
	depth, line := 0, 1
	var quote, prev byte = 0, '\n' // prev: the last byte that is not a space
	comment := false
	for i := 0; i < len(data); i++ {
		b := data[i]
		if b == '\n' {
			line++
			comment = false
			if quote == 0 {
				prev = '\n'
			}
			continue
		}
		switch {
		case comment:
			continue
		case quote == '"':
			if b == '\\' {
				i++
			} else if b == '"' {
				quote = 0
			}
		case quote == '\'':
			if b == '\'' {
				quote = 0
			}
		case b == ' ' || b == '\t' || b == '\r':
			continue
		case b == '#' && (i == 0 || data[i-1] == ' ' || data[i-1] == '\t' || data[i-1] == '\n'):
			comment = true
			continue
		case (b == '"' || b == '\'') && strings.IndexByte(":-,?[{\n", prev) >= 0:
			quote = b
		case b == '[' || b == '{':
			if depth++; depth > MaxFlowDepth {
				return limitProblem("invalid YAML: line %d nests [ and { more than %d deep", line, MaxFlowDepth)
			}
		case b == ']' || b == '}':
			depth = max(depth-1, 0)
		}
		prev = b
	}
	return nil
}

// checkAliases refuses a YAML document whose aliases expand too far. It
// says nothing of a document that does not parse (the decoder does).
func checkAliases(data []byte) Problems {
	if !bytes.Contains(data, []byte("*")) {
		return nil // no alias: the common case, no second parse
	}
	f, err := parser.ParseBytes(data, 0)
	if err != nil {
		return nil
	}
	c := &aliasCounter{anchors: map[string]int64{}}
	for _, d := range f.Docs {
		if d != nil {
			c.walk(d)
		}
	}
	if added := c.expanded - c.own; added > max(MaxAliasNodes, c.own) {
		return limitProblem("invalid YAML: its aliases expand it by %d nodes (at most %d, or as many as it has)", min(added, 1<<40), max(MaxAliasNodes, c.own))
	}
	return nil
}

// aliasCounter counts a document's nodes as written (own) and with every
// alias expanded (expanded, saturating: it stops growing past any limit).
type aliasCounter struct {
	anchors       map[string]int64
	own, expanded int64
}

const aliasSaturation = 1 << 50

func (c *aliasCounter) walk(n ast.Node) { ast.Walk(c, n) }

// Visit counts n; an anchor's expanded size is kept under its name (a
// later anchor of the same name replaces it, as in the decoder).
func (c *aliasCounter) Visit(n ast.Node) ast.Visitor {
	switch x := n.(type) {
	case *ast.AliasNode:
		c.own++
		if x.Value != nil {
			c.add(c.anchors[x.Value.String()])
		}
		return nil
	case *ast.AnchorNode:
		c.own++
		c.add(1)
		if x.Value == nil {
			return nil
		}
		before := c.expanded
		ast.Walk(c, x.Value)
		if x.Name != nil {
			c.anchors[x.Name.String()] = c.expanded - before
		}
		return nil
	}
	c.own++
	c.add(1)
	return c
}

func (c *aliasCounter) add(k int64) { c.expanded = min(c.expanded+k, aliasSaturation) }
