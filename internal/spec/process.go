package spec

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
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
	// Env: variables of the service, each a literal or a secret reference
	// ({file: PATH} or {env: NAME}) resolved on the host at every start.
	Env map[string]Value `json:"env,omitempty"`
	// EnvFile: files of KEY=VALUE lines (# comments, blank lines), as
	// systemd's EnvironmentFile reads them, read on the host at every start;
	// later files, then Env, win.
	EnvFile Paths `json:"envFile,omitempty"`
	// InheritEnv names the variables of the worker's environment the
	// service gets beside the base (BaseEnv); no other one reaches it.
	InheritEnv []string `json:"inheritEnv,omitempty"`
	// User and Group the service runs as (the worker must run as root);
	// empty: the worker's. A user without a group runs with its own
	// primary group and supplementary groups.
	User  string `json:"user,omitempty"`
	Group string `json:"group,omitempty"`
	// Limits are resource limits (rlimits) of the service.
	Limits *Limits `json:"limits,omitempty"`
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
	// Ready and Health are probes (probe.go).
	Ready  *Probe `json:"ready,omitempty"`
	Health *Probe `json:"health,omitempty"`
	// StopSignal is the signal a stop sends first (default TERM).
	StopSignal string `json:"stopSignal,omitempty"`
	// SuccessExitCodes are the exit statuses that are a normal end (default
	// [0]): what a transient service is not restarted after.
	SuccessExitCodes []int `json:"successExitCodes,omitempty"`
	// DieWithWorker: the process dies with the worker process that started
	// it (default false: it outlives it and the next worker adopts it).
	DieWithWorker bool `json:"dieWithWorker,omitempty"`
	// Notify: the service speaks systemd's notification protocol
	// (NOTIFY_SOCKET): its start succeeds at READY=1, and STATUS= shows in
	// its status (default false).
	Notify bool `json:"notify,omitempty"`
	// Watchdog: with Notify, a service that sends no WATCHDOG=1 for this
	// long is ended as a crash ("watchdog timeout"); WATCHDOG_USEC tells
	// it the period (default: none).
	Watchdog *Duration `json:"watchdog,omitempty"`
	// Resources are limits the kernel enforces on the service's whole
	// process group, through a cgroup of its own (default: none).
	Resources *Resources `json:"resources,omitempty"`
	// Reload is how the service re-reads its configuration without a
	// restart (`starter reload`; default: none, and a reload is refused).
	Reload *ProcessReload `json:"reload,omitempty"`
	// RestartOnMemory: a service whose memory (the resident memory of its
	// process group, as its host samples it every --usage-interval) is
	// sampled over this is restarted (pm2's max_memory_restart; default:
	// never).
	RestartOnMemory Size `json:"restartOnMemory,omitempty"`
	// Logs is how the service's log is kept on its host (default: the
	// host's, worker --log-max-size, --log-keep, --log-max-age).
	Logs *ProcessLogs `json:"logs,omitempty"`
}

// ProcessLogs is how a process service's log is kept: rotated when it
// reaches MaxSize, Keep rotated files kept (the newest as written, older
// ones gzip-compressed), files not written for MaxAge removed. An unset
// field takes the host's value (10Mi, 5, 720h by default).
type ProcessLogs struct {
	MaxSize Size      `json:"maxSize,omitempty"`
	Keep    int       `json:"keep,omitempty"`
	MaxAge  *Duration `json:"maxAge,omitempty"`
}

// Bounds of process.logs.
const (
	MinLogSize = 4 << 10
	MaxLogKeep = 1000
	MinLogAge  = time.Minute
)

// ProcessReload is a process service's reload: a signal sent to its main
// process (Signal; HUP when neither is set, as nginx, sshd and most
// daemons take it), or a command run on its host (Exec, without a shell,
// with MAINPID set to the service's pid; exit status 0 is success), as
// systemd's ExecReload.
type ProcessReload struct {
	Signal string   `json:"signal,omitempty"`
	Exec   []string `json:"exec,omitempty"`
}

// ReloadSignals are the signals a reload may send.
var ReloadSignals = []string{"HUP", "USR1", "USR2", "INT", "TERM", "QUIT", "WINCH"}

// Resources are the limits of a service's cgroup.
type Resources struct {
	// MemoryMax: memory the group may use; past it the kernel's OOM killer
	// ends a process of it ("out of memory (memoryMax 256Mi)").
	MemoryMax Size `json:"memoryMax,omitempty"`
	// CPUMax: cores' worth of CPU time the group may use (0.5: half a
	// core; 2: two cores), as systemd's CPUQuota=50%.
	CPUMax float64 `json:"cpuMax,omitempty"`
	// PidsMax: processes and threads the group may have at once.
	PidsMax int64 `json:"pidsMax,omitempty"`
}

// Limits are a service's resource limits, soft and hard alike; unset:
// the worker's own.
type Limits struct {
	// Nofile: open files (RLIMIT_NOFILE).
	Nofile *uint64 `json:"nofile,omitempty"`
	// Nproc: processes of the service's user (RLIMIT_NPROC).
	Nproc *uint64 `json:"nproc,omitempty"`
	// Core: core file size in bytes (RLIMIT_CORE; 0: no core files).
	Core *uint64 `json:"core,omitempty"`
}

// BaseEnv are the variables of the worker's environment every service
// gets (LC_* too: every variable whose name starts so).
var BaseEnv = []string{"PATH", "HOME", "LANG", "TZ", "USER", "LOGNAME"}

// DefaultUnreachableAfter is the default of process.unreachableAfter.
const DefaultUnreachableAfter = 10 * time.Second

// UnreachableAfter is the schedule-to-start limit of the actions of a
// worker that runs on a host (RunsOn; 0 for others).
func (n *Node) UnreachableAfter() time.Duration {
	if n.Kind != KindProcess {
		if n.PlacedOn != "" {
			return DefaultUnreachableAfter
		}
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
	for _, k := range sortedKeys(p.Env) {
		if !envNamePattern.MatchString(k) {
			v.add(join(join(path, "env"), k), "%q is not a variable name (letters, digits and '_', not starting with a digit)", k)
			continue
		}
		p.Env[k].check(v, join(join(path, "env"), k))
	}
	for i, f := range p.EnvFile {
		if !filepath.IsAbs(f) {
			v.add(fmt.Sprintf("%s.envFile[%d]", path, i), "%q is not an absolute path", f)
		}
	}
	for i, n := range p.InheritEnv {
		if !envNamePattern.MatchString(n) {
			v.add(fmt.Sprintf("%s.inheritEnv[%d]", path, i), "%q is not a variable name", n)
		}
	}
	for _, f := range []struct{ name, val string }{{"user", p.User}, {"group", p.Group}} {
		if f.val != "" && !accountPattern.MatchString(f.val) {
			v.add(join(path, f.name), "%q is not a %s name or number", f.val, f.name)
		}
	}
	if p.Group != "" && p.User == "" {
		v.add(join(path, "group"), "needs user (a group alone is not a change of identity)")
	}
	v.probe(join(path, "ready"), p.Ready, false)
	v.probe(join(path, "health"), p.Health, true)
	v.stopSignal(join(path, "stopSignal"), p.StopSignal)
	v.exitCodes(join(path, "successExitCodes"), p.SuccessExitCodes)
	if r := p.Reload; r != nil {
		switch {
		case r.Signal != "" && len(r.Exec) > 0:
			v.add(join(path, "reload"), "names both signal and exec: choose one")
		case r.Signal != "" && !slices.Contains(ReloadSignals, r.Signal):
			v.add(join(join(path, "reload"), "signal"), "unknown signal %q (%s)", r.Signal, strings.Join(ReloadSignals, ", "))
		case r.Exec != nil && (len(r.Exec) == 0 || r.Exec[0] == ""):
			v.add(join(join(path, "reload"), "exec"), "needs a command (an argv: [cmd, args...])")
		}
	}
	if r := p.Resources; r != nil {
		if r.MemoryMax == "" && r.CPUMax == 0 && r.PidsMax == 0 {
			v.add(join(path, "resources"), "names no limit (memoryMax, cpuMax, pidsMax)")
		}
		if r.MemoryMax != "" {
			if b, err := r.MemoryMax.Bytes(); err != nil {
				v.add(join(join(path, "resources"), "memoryMax"), "%v", err)
			} else if b < 1<<20 {
				v.add(join(join(path, "resources"), "memoryMax"), "%s is less than 1Mi", r.MemoryMax)
			}
		}
		if r.CPUMax < 0 || r.CPUMax > 0 && r.CPUMax < 0.01 {
			v.add(join(join(path, "resources"), "cpuMax"), "must be at least 0.01 (cores), not %g", r.CPUMax)
		}
		if r.PidsMax < 0 {
			v.add(join(join(path, "resources"), "pidsMax"), "must be > 0, not %d", r.PidsMax)
		}
	}
	if p.RestartOnMemory != "" {
		if _, err := p.RestartOnMemory.Bytes(); err != nil {
			v.add(join(path, "restartOnMemory"), "%v", err)
		}
	}
	if l := p.Logs; l != nil {
		at := join(path, "logs")
		if l.MaxSize == "" && l.Keep == 0 && l.MaxAge == nil {
			v.add(at, "names nothing (maxSize, keep, maxAge)")
		}
		if l.MaxSize != "" {
			if b, err := l.MaxSize.Bytes(); err != nil {
				v.add(join(at, "maxSize"), "%v", err)
			} else if b < MinLogSize {
				v.add(join(at, "maxSize"), "%s is less than 4Ki", l.MaxSize)
			}
		}
		if l.Keep < 0 || l.Keep > MaxLogKeep {
			v.add(join(at, "keep"), "must be from 1 to %d, not %d", MaxLogKeep, l.Keep)
		}
		if l.MaxAge != nil && l.MaxAge.D() < MinLogAge {
			v.add(join(at, "maxAge"), "must be at least 1m, not %s", l.MaxAge.D())
		}
	}
	if p.Watchdog != nil {
		switch {
		case !p.Notify:
			v.add(join(path, "watchdog"), "needs notify: true (the service feeds the watchdog with WATCHDOG=1)")
		case p.Watchdog.D() < time.Second:
			v.add(join(path, "watchdog"), "must be at least 1s, not %s", p.Watchdog.D())
		}
	}
}

// accountPattern: a user or group name (as useradd takes them) or an ID.
var accountPattern = regexp.MustCompile(`^([a-z_][a-z0-9_.-]{0,31}\$?|[0-9]+)$`)
