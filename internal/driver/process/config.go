package process

import (
	"errors"
	"fmt"
	"syscall"
	"time"

	"github.com/steward-sh/steward/internal/spec"
)

// Defaults of a process block.
const (
	DefaultStartSeconds = time.Second
	DefaultHost         = spec.DefaultHost
)

// Config is a worker's `process` block, decoded by ParseConfig.
type Config struct {
	// Command to run: a path, or a name looked up in PATH. No shell.
	Command string
	// Args passed to the command.
	Args []string
	// Env, EnvFile and InheritEnv make the service's environment (see
	// environment); secret references are resolved at every start.
	Env        map[string]spec.Value
	EnvFile    []string
	InheritEnv []string
	// User and Group the service runs as (empty: the worker's).
	User, Group string
	// Limits of the service (nil: the worker's).
	Limits *spec.Limits
	// Dir is the working directory (empty: the worker's).
	Dir string
	// StartSeconds is how long the process must stay up before its start
	// counts as succeeded ("startSeconds", a Go duration string, default 1s).
	StartSeconds time.Duration
	// Host names the worker that runs the process (default "local"); the
	// driver itself does not use it: routing to the host's task queue does.
	Host string
	// Ready and Health are the probes (nil: none).
	Ready, Health *Probe
	// StopSignal is what a stop sends first (default SIGTERM).
	StopSignal syscall.Signal
	// SuccessExitCodes are the normal exits (default [0]).
	SuccessExitCodes []int
	// DieWithWorker: the process dies with the worker that started it
	// (Pdeathsig, and Close kills it) instead of outliving it.
	DieWithWorker bool
	// Notify: the service speaks systemd's notification protocol
	// (notify.go); Watchdog is its watchdog period (0: none).
	Notify   bool
	Watchdog time.Duration
	// Resources are the limits of the service's cgroup (resources.go; nil:
	// none); MemoryMax is its memory limit in bytes, RestartOnMemory the
	// sampled memory the service is restarted over (0: never).
	// Reload is process.reload (nil: none).
	Reload          *spec.ProcessReload
	Resources       *spec.Resources
	MemoryMax       int64
	RestartOnMemory int64
	// Logs is process.logs (zero fields: the host's).
	Logs LogPolicy
}

// stopSignals maps process.stopSignal's names to signals.
var stopSignals = map[string]syscall.Signal{
	"TERM": syscall.SIGTERM, "INT": syscall.SIGINT, "QUIT": syscall.SIGQUIT, "HUP": syscall.SIGHUP,
	"USR1": syscall.SIGUSR1, "USR2": syscall.SIGUSR2, "KILL": syscall.SIGKILL,
}

// ParseConfig decodes a process block strictly (spec.ParseProcess) and fills
// in the defaults; a missing command or a negative start period is an error.
func ParseConfig(m map[string]any) (Config, error) {
	raw, err := spec.ParseProcess(m)
	if err != nil {
		return Config{}, fmt.Errorf("process: %w", err)
	}
	if raw.Command == "" {
		return Config{}, errors.New("process: command is required")
	}
	c := Config{
		Command:      raw.Command,
		Args:         raw.Args,
		Env:          raw.Env,
		EnvFile:      raw.EnvFile,
		InheritEnv:   raw.InheritEnv,
		User:         raw.User,
		Group:        raw.Group,
		Limits:       raw.Limits,
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
	c.Ready = probeOf(raw.Ready, spec.DefaultReadyInterval, 0, 0)
	c.Health = probeOf(raw.Health, spec.DefaultHealthInterval, spec.DefaultProbeHealthTimeout, spec.DefaultHealthFailureThreshold)
	c.StopSignal = syscall.SIGTERM
	if raw.StopSignal != "" {
		sig, ok := stopSignals[raw.StopSignal]
		if !ok {
			return Config{}, fmt.Errorf("process: unknown stopSignal %q", raw.StopSignal)
		}
		c.StopSignal = sig
	}
	c.DieWithWorker = raw.DieWithWorker
	c.Notify = raw.Notify
	c.Reload = raw.Reload
	if raw.Resources != nil {
		c.Resources = raw.Resources
		if raw.Resources.MemoryMax != "" {
			if c.MemoryMax, err = raw.Resources.MemoryMax.Bytes(); err != nil {
				return Config{}, fmt.Errorf("process: resources.memoryMax: %w", err)
			}
		}
	}
	if raw.RestartOnMemory != "" {
		if c.RestartOnMemory, err = raw.RestartOnMemory.Bytes(); err != nil {
			return Config{}, fmt.Errorf("process: restartOnMemory: %w", err)
		}
	}
	if raw.Watchdog != nil {
		c.Watchdog = raw.Watchdog.D()
	}
	if l := raw.Logs; l != nil {
		if l.MaxSize != "" {
			if c.Logs.MaxSize, err = l.MaxSize.Bytes(); err != nil {
				return Config{}, fmt.Errorf("process: logs.maxSize: %w", err)
			}
		}
		c.Logs.Keep = l.Keep
		c.Logs.MaxAge = l.MaxAge.D()
	}
	c.SuccessExitCodes = raw.SuccessExitCodes
	if len(c.SuccessExitCodes) == 0 {
		c.SuccessExitCodes = []int{0}
	}
	return c, nil
}
