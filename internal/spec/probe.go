package spec

import (
	"fmt"
	"net"
	"slices"
	"strconv"
	"time"
)

// Probes, stop signals and success exit codes of a process service.
//
// `process.ready` and `process.health` are probes: exactly one of
// `tcp: "host:port"` (a connection is accepted), `http: URL` (a GET
// answers 2xx) or `exec: [argv]` (the command exits 0), run by the host's
// worker. A start with a ready probe succeeds when the probe first passes
// with the process still up (startSeconds does not apply); until then the
// worker is `starting`. A health probe runs while the service runs;
// failureThreshold failures in a row are a crash. Only a change reaches the
// workflow: a passing probe costs no history event.

// Probe defaults.
const (
	DefaultReadyInterval          = 500 * time.Millisecond
	DefaultHealthInterval         = 10 * time.Second
	DefaultProbeHealthTimeout     = 2 * time.Second
	DefaultHealthFailureThreshold = 3
)

// Probe is a readiness or health check.
type Probe struct {
	TCP              string    `json:"tcp,omitempty"`
	HTTP             string    `json:"http,omitempty"`
	Exec             []string  `json:"exec,omitempty"`
	Interval         *Duration `json:"interval,omitempty"`
	Timeout          *Duration `json:"timeout,omitempty"`
	FailureThreshold int       `json:"failureThreshold,omitempty"`
}

// StopSignals are the names process.stopSignal takes.
var StopSignals = []string{"TERM", "INT", "QUIT", "HUP", "USR1", "USR2", "KILL"}

func (v *validator) probe(path string, p *Probe, health bool) {
	if p == nil {
		return
	}
	forms := 0
	if p.TCP != "" {
		forms++
		host, port, err := net.SplitHostPort(p.TCP)
		n, perr := strconv.Atoi(port)
		if err != nil || host == "" || perr != nil || n < 1 || n > 65535 {
			v.add(join(path, "tcp"), "%q is not host:port (a port 1-65535)", p.TCP)
		}
	}
	if p.HTTP != "" {
		forms++
		v.httpURL(join(path, "http"), p.HTTP)
	}
	if p.Exec != nil {
		forms++
		if len(p.Exec) == 0 || p.Exec[0] == "" {
			v.add(join(path, "exec"), "needs a command: [command, args...]")
		}
	}
	switch forms {
	case 0:
		v.add(path, "needs one of tcp, http or exec")
	case 1:
	default:
		v.add(path, "takes one of tcp, http or exec, not %d", forms)
	}
	v.positive(join(path, "interval"), p.Interval)
	v.atLeast(join(path, "interval"), p.Interval, MinProbeInterval)
	v.positive(join(path, "timeout"), p.Timeout)
	switch {
	case !health && p.FailureThreshold != 0:
		v.add(join(path, "failureThreshold"), "only health takes a failureThreshold")
	case p.FailureThreshold < 0:
		v.add(join(path, "failureThreshold"), "must be >= 1")
	}
}

func (v *validator) stopSignal(path, sig string) {
	if sig != "" && !slices.Contains(StopSignals, sig) {
		v.add(path, "unknown signal %q (TERM, INT, QUIT, HUP, USR1, USR2 or KILL)", sig)
	}
}

func (v *validator) exitCodes(path string, codes []int) {
	for i, c := range codes {
		if c < 0 || c > 255 {
			v.add(fmt.Sprintf("%s[%d]", path, i), "%d is not an exit code (0-255)", c)
		}
	}
}
