package spec

import (
	"bytes"

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
