package process

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/steward-sh/steward/internal/spec"
)

// Defaults of a process block.
const (
	DefaultStartSeconds = time.Second
	DefaultHost         = "local"
)

// Config is a worker's `process` block, decoded by ParseConfig.
type Config struct {
	// Command to run: a path, or a name looked up in PATH. No shell.
	Command string
	// Args passed to the command.
	Args []string
	// Env is added to the worker's environment (and overrides it).
	Env map[string]string
	// Dir is the working directory (empty: the worker's).
	Dir string
	// StartSeconds is how long the process must stay up before its start
	// counts as succeeded ("startSeconds", a Go duration string, default 1s).
	StartSeconds time.Duration
	// Host names the worker that runs the process (default "local"); the
	// driver itself does not use it: routing to the host's task queue does.
	Host string
}

// rawConfig is the wire form of Config.
type rawConfig struct {
	Command      string            `json:"command"`
	Args         []string          `json:"args,omitempty"`
	Env          map[string]string `json:"env,omitempty"`
	Dir          string            `json:"dir,omitempty"`
	StartSeconds *spec.Duration    `json:"startSeconds,omitempty"`
	Host         string            `json:"host,omitempty"`
}

// ParseConfig decodes a process block strictly: unknown fields, wrong types
// and a missing command are errors. Defaults are filled in.
func ParseConfig(m map[string]any) (Config, error) {
	if m == nil {
		return Config{}, errors.New("process: no process block")
	}
	b, err := json.Marshal(m)
	if err != nil {
		return Config{}, fmt.Errorf("process: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var raw rawConfig
	if err := dec.Decode(&raw); err != nil {
		return Config{}, fmt.Errorf("process: invalid process block: %w", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return Config{}, errors.New("process: invalid process block: trailing data")
	}
	if raw.Command == "" {
		return Config{}, errors.New("process: command is required")
	}
	c := Config{
		Command:      raw.Command,
		Args:         raw.Args,
		Env:          raw.Env,
		Dir:          raw.Dir,
		StartSeconds: DefaultStartSeconds,
		Host:         raw.Host,
	}
	if raw.StartSeconds != nil {
		c.StartSeconds = raw.StartSeconds.D()
	}
	if c.StartSeconds < 0 {
		return Config{}, fmt.Errorf("process: startSeconds %s is negative", c.StartSeconds)
	}
	if c.Host == "" {
		c.Host = DefaultHost
	}
	return c, nil
}
