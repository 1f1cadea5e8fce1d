package admission

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strings"

	"github.com/goccy/go-yaml"

	"github.com/steward-sh/steward/internal/spec"
)

// Policy is a host's command policy (`worker --policy FILE`): what the
// process specs this host runs may name.
//
//	commands:            # absolute paths or globs (filepath.Match: * does not cross /)
//	  - /usr/bin/sleep
//	  - /opt/shop/bin/*
//	users: [www-data]    # run-as users a spec may name (empty: only the worker's own)
//	groups: [www-data]   # run-as groups a spec may name (empty: only the worker's own)
//
// Commands govern every program a process spec makes this host run: the
// service's `command` (a bare name is looked up in the worker's PATH, as
// the start does; a relative path is taken from the service's `dir`), and
// the `exec` argv[0] of its ready and health probes. A policy governs
// programs, not their arguments: allowing a shell or an interpreter allows
// anything.
type Policy struct {
	Commands []string `yaml:"commands"`
	Users    []string `yaml:"users,omitempty"`
	Groups   []string `yaml:"groups,omitempty"`

	// file names the policy in refusals.
	file string
	// self and selfGroup are the worker's own user and primary group names.
	self, selfGroup string
}

// LoadPolicy reads and checks a policy file: unknown fields, a command
// that is not absolute and a bad glob are errors naming their entry.
func LoadPolicy(file string) (*Policy, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("policy: %w", err)
	}
	p, err := ParsePolicy(data)
	if err != nil {
		return nil, fmt.Errorf("policy %s: %w", file, err)
	}
	if abs, err := filepath.Abs(file); err == nil {
		file = abs // refusals name the file wherever they are read
	}
	p.file = file
	return p, nil
}

// ParsePolicy decodes a policy (LoadPolicy without the file).
func ParsePolicy(data []byte) (*Policy, error) {
	var p Policy
	if err := yaml.UnmarshalWithOptions(data, &p, yaml.Strict()); err != nil {
		return nil, errors.New(yaml.FormatError(err, false, false))
	}
	var problems []string
	for i, c := range p.Commands {
		switch {
		case !filepath.IsAbs(c):
			problems = append(problems, fmt.Sprintf("commands[%d]: %q must be an absolute path or glob", i, c))
		case !validGlob(c):
			problems = append(problems, fmt.Sprintf("commands[%d]: %q is not a valid glob", i, c))
		}
	}
	for i, u := range p.Users {
		if strings.TrimSpace(u) == "" {
			problems = append(problems, fmt.Sprintf("users[%d]: empty", i))
		}
	}
	for i, g := range p.Groups {
		if strings.TrimSpace(g) == "" {
			problems = append(problems, fmt.Sprintf("groups[%d]: empty", i))
		}
	}
	if len(problems) > 0 {
		return nil, errors.New(strings.Join(problems, "; "))
	}
	p.file = "(inline)"
	if u, err := user.Current(); err == nil {
		p.self = u.Username
		if g, err := user.LookupGroupId(u.Gid); err == nil {
			p.selfGroup = g.Name
		}
	}
	return &p, nil
}

func validGlob(pattern string) bool {
	_, err := filepath.Match(pattern, "")
	return err == nil
}

// File is where the policy was read from.
func (p *Policy) File() string { return p.file }

// Check refuses a node whose process names a program, a user or a group
// the policy does not allow; nil for other kinds. n is the node as the
// driver receives it (templates rendered).
func (p *Policy) Check(n spec.Node) error {
	if n.Kind != spec.KindProcess {
		return nil
	}
	proc, err := spec.ParseProcess(n.Process)
	if err != nil {
		return p.refuse("process block: %v", err)
	}
	if err := p.checkProgram("command", proc.Command, proc.Dir); err != nil {
		return err
	}
	for _, probe := range []struct {
		field string
		p     *spec.Probe
	}{{"process.ready.exec", proc.Ready}, {"process.health.exec", proc.Health}} {
		if probe.p != nil && len(probe.p.Exec) > 0 {
			// A probe runs in the worker's own directory, not the service's.
			if err := p.checkProgram("probe command ("+probe.field+")", probe.p.Exec[0], ""); err != nil {
				return err
			}
		}
	}
	if r := proc.Reload; r != nil && len(r.Exec) > 0 {
		// A reload command runs in the service's directory, as the service.
		if err := p.checkProgram("reload command (process.reload.exec)", r.Exec[0], proc.Dir); err != nil {
			return err
		}
	}
	for name := range proc.Env {
		if loaderVariable(name) {
			return p.refuse("env %s is not allowed (it makes an allowed program load other code)", name)
		}
	}
	if proc.User != "" && proc.User != p.self && !slices.Contains(p.Users, proc.User) {
		return p.refuse("user %s is not allowed", proc.User)
	}
	if proc.Group != "" && proc.Group != p.selfGroup && !slices.Contains(p.Groups, proc.Group) {
		return p.refuse("group %s is not allowed", proc.Group)
	}
	return nil
}

// checkProgram matches the program a start or a probe runs against the
// commands: the path as the host resolves it, cleaned (no "..").
func (p *Policy) checkProgram(what, program, dir string) error {
	path, err := Resolve(program, dir)
	if err != nil {
		return p.refuse("%s %s: %v", what, program, err)
	}
	if !p.allowed(path) {
		return p.refuse("%s %s is not allowed", what, path)
	}
	// A link under an allowed glob runs what it points to: that must be
	// allowed too.
	if real, err := filepath.EvalSymlinks(path); err == nil && real != path && !p.allowed(real) {
		return p.refuse("%s %s (a link to %s) is not allowed", what, path, real)
	}
	return nil
}

func (p *Policy) allowed(path string) bool {
	for _, c := range p.Commands {
		if ok, _ := filepath.Match(c, path); ok {
			return true
		}
	}
	return false
}

// loaderVariable: an environment variable that makes a program load or
// run code of another's choosing (the dynamic loader's, and the ones
// interpreters read at start).
func loaderVariable(name string) bool {
	switch name {
	case "BASH_ENV", "ENV", "PYTHONSTARTUP", "PYTHONPATH", "PERL5LIB", "PERL5OPT", "RUBYOPT", "NODE_OPTIONS":
		return true
	}
	return strings.HasPrefix(name, "LD_")
}

func (p *Policy) refuse(format string, args ...any) error {
	return &Refusal{Rule: "policy " + p.file, Msg: fmt.Sprintf(format, args...)}
}

// Resolve is the absolute, cleaned path of the program a start runs: a
// bare name is looked up in this process's PATH (as os/exec does), a
// relative path is taken from dir (or this process's working directory).
func Resolve(program, dir string) (string, error) {
	switch {
	case program == "":
		return "", errors.New("empty")
	case filepath.IsAbs(program):
		return filepath.Clean(program), nil
	case !strings.Contains(program, "/"):
		found, err := exec.LookPath(program)
		if err != nil {
			return "", errors.New("not found in this host's PATH")
		}
		return filepath.Abs(found)
	}
	if dir == "" {
		wd, err := os.Getwd()
		if err != nil {
			return "", err
		}
		dir = wd
	}
	return filepath.Abs(filepath.Join(dir, program))
}
