package spec

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"time"
)

// DefaultHost is the host a process runs on when its spec names none: the
// worker started with --host local (the default).
const DefaultHost = "local"

// Process is a worker's `process:` block (kind process).
type Process struct {
	// Command to run: a path, or a name looked up in PATH. No shell.
	Command string `json:"command"`
	// Args passed to the command.
	Args []string `json:"args,omitempty"`
	// Env is added to the worker's environment (and overrides it).
	Env map[string]string `json:"env,omitempty"`
	// Dir is the working directory (empty: the worker's).
	Dir string `json:"dir,omitempty"`
	// StartSeconds is how long the process must stay up before its start
	// counts as succeeded (a Go duration; default 1s).
	StartSeconds *Duration `json:"startSeconds,omitempty"`
	// Host names the machine whose worker runs the process (default local).
	Host string `json:"host,omitempty"`
	// UnreachableAfter: an action that no worker of the host picks up
	// within this long finds the host unreachable (default 10s): the worker
	// goes to state unknown and probes until the host is back.
	UnreachableAfter *Duration `json:"unreachableAfter,omitempty"`
}

// DefaultUnreachableAfter is the default of process.unreachableAfter.
const DefaultUnreachableAfter = 10 * time.Second

// UnreachableAfter is the schedule-to-start limit of a process worker's
// actions (0 for other kinds).
func (n *Node) UnreachableAfter() time.Duration {
	if n.Kind != KindProcess {
		return 0
	}
	p, err := ParseProcess(n.Process)
	if err != nil || p.UnreachableAfter == nil {
		return DefaultUnreachableAfter
	}
	return p.UnreachableAfter.D()
}

// ParseProcess decodes a process block strictly: unknown fields and wrong
// types are errors. It does not fill in defaults or check values.
func ParseProcess(m map[string]any) (Process, error) {
	return decodeBlock[Process](m, "process")
}

// decodeBlock decodes a driver block (kept as a generic map in Node)
// strictly into its type: unknown fields at any depth and wrong types are
// errors.
func decodeBlock[T any](m map[string]any, kind string) (T, error) {
	var out T
	if m == nil {
		return out, fmt.Errorf("no %s block", kind)
	}
	b, err := json.Marshal(m)
	if err != nil {
		return out, err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&out); err != nil {
		return out, fmt.Errorf("invalid %s block: %w", kind, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return out, fmt.Errorf("invalid %s block: trailing data", kind)
	}
	return out, nil
}

// ProcessHost is the host of a process worker ("" for other kinds).
func (n *Node) ProcessHost() string {
	if n.Kind != KindProcess {
		return ""
	}
	p, err := ParseProcess(n.Process)
	if err != nil || p.Host == "" {
		return DefaultHost
	}
	return p.Host
}

func (v *validator) process(path string, m map[string]any) {
	if m == nil {
		v.add(path, "required for kind process (at least a command)")
		return
	}
	p, err := ParseProcess(m)
	if err != nil {
		v.add(path, "%v", err)
		return
	}
	if p.Command == "" {
		v.add(join(path, "command"), "required")
	}
	if p.StartSeconds != nil && p.StartSeconds.D() <= 0 {
		v.add(join(path, "startSeconds"), "must be > 0")
	}
	if p.UnreachableAfter != nil && p.UnreachableAfter.D() <= 0 {
		v.add(join(path, "unreachableAfter"), "must be > 0")
	}
	if p.Host != "" && !namePattern.MatchString(p.Host) {
		v.add(join(path, "host"), "%q is not a valid host name (letters, digits, '.', '_' and '-')", p.Host)
	}
}
