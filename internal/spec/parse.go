package spec

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/goccy/go-yaml"
)

// Problem is one thing wrong with a spec, named by its path in the spec
// (`children[1].timeouts.start`).
type Problem struct {
	Path string
	Msg  string
}

func (p Problem) String() string {
	if p.Path == "" {
		return p.Msg
	}
	return p.Path + ": " + p.Msg
}

// Problems is every problem found in a spec; it is an error.
type Problems []Problem

func (ps Problems) Error() string {
	lines := make([]string, len(ps))
	for i, p := range ps {
		lines[i] = p.String()
	}
	return strings.Join(lines, "\n")
}

// Parse decodes a YAML spec strictly (unknown fields are errors, reported
// with line and column) and validates it. The error is Problems.
func Parse(data []byte) (Node, error) {
	if len(data) > MaxSpecFileBytes {
		return Node{}, limitProblem("the spec is %s (at most %s)", FormatSize(int64(len(data))), FormatSize(MaxSpecFileBytes))
	}
	if err := CheckYAML(data); err != nil {
		return Node{}, err.(Problems)
	}
	var n Node
	if err := yaml.UnmarshalWithOptions(data, &n, yaml.Strict()); err != nil {
		return Node{}, Problems{{Msg: "invalid YAML: " + yaml.FormatError(err, false, false)}}
	}
	ps := Validate(n)
	ps = append(ps, intensityProblems("", n)...)
	if len(n.DependsOn) > 0 {
		ps = append(ps, Problem{Path: "dependsOn", Msg: "the root has no siblings to depend on"})
	}
	if n.Instances > 0 {
		ps = append(ps, Problem{Path: "instances", Msg: "the root is one workflow: give instances to a worker below a supervisor"})
	}
	if len(ps) > 0 {
		return Node{}, ps
	}
	return n, nil
}

// Load reads and parses a spec file.
func Load(path string) (Node, error) {
	data, err := ReadBounded(path, MaxSpecFileBytes)
	if err != nil {
		return Node{}, Problems{{Msg: fmt.Sprintf("cannot read spec: %v", err)}}
	}
	return Parse(data)
}

// ReadBounded reads a file of at most limit bytes: one larger is read no
// further than limit+1 (and refused by its parser), so that /dev/zero or
// a file of gigabytes given by mistake is not read into memory whole.
func ReadBounded(path string, limit int) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, int64(limit)+1))
}

// intensityProblems holds each supervisor's intensity.maxRestarts to
// MaxIntensityRestarts. It is the starter's (Parse) alone: a running
// supervisor counts at most so many terminations of a report from code
// version 13 on (internal/supervise), and a spec it took before keeps
// replaying as it ran, so Validate, which workflows run, does not check it.
func intensityProblems(p string, n Node) Problems {
	var ps Problems
	if in := n.Intensity; in != nil && in.MaxRestarts > MaxIntensityRestarts {
		ps = append(ps, Problem{Path: join(join(p, "intensity"), "maxRestarts"), Msg: fmt.Sprintf("%d is too many (at most %d)", in.MaxRestarts, MaxIntensityRestarts)})
	}
	for i, c := range n.Children {
		ps = append(ps, intensityProblems(join(p, fmt.Sprintf("children[%d]", i)), c)...)
	}
	return ps
}
