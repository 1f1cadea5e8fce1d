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

// checkFlowDepth scans data once, line by line, for the nesting of flow
// collections, as YAML reads them: not inside a quoted scalar (a quote
// opens one only where a scalar begins: at a line's start, after '[', '{'
// or ',', or after ':', '-' or '?' and a space; "it's" and "x-'" open
// none; two apostrophes in a single-quoted scalar are one), not in a
// comment (a '#' after a space or at a line's start), not in a block
// scalar (the lines after a "|" or ">" header, outside flow collections,
// indented more than it). It errs towards counting: brackets it cannot
// tell from nesting are counted, and a file with more than MaxFlowDepth
// of them open is refused, which no spec is.
func checkFlowDepth(data []byte) Problems {
	depth := 0
	var quote byte    // the quoted scalar open, across lines
	blockIndent := -1 // in a block scalar: the indentation of its header's line
	for lineNo := 1; len(data) > 0; lineNo++ {
		line := data
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i], data[i+1:]
		} else {
			data = nil
		}
		indent := 0
		for indent < len(line) && line[indent] == ' ' {
			indent++
		}
		blank := len(bytes.TrimSpace(line)) == 0
		if blockIndent >= 0 {
			if blank || indent > blockIndent {
				continue
			}
			blockIndent = -1
		}
		prev, spaced := byte('\n'), true // what precedes: the line's start
		wordStart, wordEnd := -1, -1     // the line's last word outside quotes and comments
	scan:
		for i := 0; i < len(line); i++ {
			b := line[i]
			switch quote {
			case '"':
				if b == '\\' {
					i++
				} else if b == '"' {
					quote, prev, spaced = 0, b, false
				}
				continue
			case '\'':
				if b == '\'' {
					if i+1 < len(line) && line[i+1] == '\'' {
						i++ // '' is a quote inside
					} else {
						quote, prev, spaced = 0, b, false
					}
				}
				continue
			}
			switch {
			case b == ' ' || b == '\t' || b == '\r':
				spaced = true
				continue
			case b == '#' && spaced:
				break scan
			case (b == '"' || b == '\'') && (prev == '\n' || prev == '[' || prev == '{' || prev == ',' ||
				(spaced && (prev == ':' || prev == '-' || prev == '?'))):
				quote = b
				continue
			case b == '[' || b == '{':
				if depth++; depth > MaxFlowDepth {
					return limitProblem("invalid YAML: line %d nests [ and { more than %d deep", lineNo, MaxFlowDepth)
				}
			case b == ']' || b == '}':
				depth = max(depth-1, 0)
			}
			if spaced || wordEnd != i {
				wordStart = i
			}
			wordEnd = i + 1
			prev, spaced = b, false
		}
		if quote == 0 && depth == 0 && wordStart >= 0 && isBlockHeader(line[wordStart:wordEnd]) {
			blockIndent = indent
		}
	}
	return nil
}

// isBlockHeader says whether w is a block scalar's header: | or >, with a
// chomping indicator and an indentation digit in either order.
func isBlockHeader(w []byte) bool {
	if len(w) == 0 || len(w) > 3 || (w[0] != '|' && w[0] != '>') {
		return false
	}
	for _, b := range w[1:] {
		if b != '-' && b != '+' && (b < '1' || b > '9') {
			return false
		}
	}
	return true
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
