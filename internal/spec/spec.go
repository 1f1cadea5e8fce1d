// Package spec is the operator's declaration of a supervision tree: the YAML
// format of docs/spec.md, its defaults, and its validation.
//
// A Node with Children is a supervisor; a Node with Kind is a worker (one
// supervised service). Every option has a written default (see Defaults and
// docs/spec.md); Resolved returns a worker node with every default filled in,
// which is what workflows and drivers act on.
//
// The same types travel as JSON inside Temporal payloads (workflow inputs and
// the `spec` signal), so every field carries both yaml and json tags and
// durations marshal as Go duration strings ("1.5s") in both.
package spec

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/goccy/go-yaml/ast"
)

// Kinds of worker (drivers).
const (
	KindStub    = "stub"
	KindProcess = "process"
	KindHTTP    = "http"
	// KindSupervisor is reported in status for nodes with children.
	KindSupervisor = "supervisor"
)

// Desired states an operator can ask for.
const (
	DesiredRunning = "running"
	DesiredStopped = "stopped"
)

// Restart types (OTP): when a worker that ended is started again.
const (
	RestartPermanent = "permanent" // always
	RestartTransient = "transient" // only after an abnormal exit or failure
	RestartTemporary = "temporary" // never
)

// Supervisor strategies (OTP).
const (
	OneForOne  = "one_for_one"
	OneForAll  = "one_for_all"
	RestForOne = "rest_for_one"
)

// Node is one node of the tree: a supervisor (Children) or a worker (Kind).
type Node struct {
	Name      string            `yaml:"name" json:"name"`
	Children  []Node            `yaml:"children,omitempty" json:"children,omitempty"`
	Strategy  string            `yaml:"strategy,omitempty" json:"strategy,omitempty"`
	Intensity *Intensity        `yaml:"intensity,omitempty" json:"intensity,omitempty"`
	Vars      map[string]string `yaml:"vars,omitempty" json:"vars,omitempty"`
	// Notify is the node's webhook, inherited by its descendants (notify.go).
	Notify *Notify `yaml:"notify,omitempty" json:"notify,omitempty"`
	// DependsOn names siblings that must be running before this node starts;
	// it stops before them (depends.go).
	DependsOn []string `yaml:"dependsOn,omitempty" json:"dependsOn,omitempty"`
	// Update is a supervisor's update policy, inherited by the supervisors
	// below it (update.go).
	Update *UpdatePolicy `yaml:"update,omitempty" json:"update,omitempty"`

	// Instances, Hosts, Reschedule and Move make a fleet of a worker
	// (fleet.go).
	Instances  int         `yaml:"instances,omitempty" json:"instances,omitempty"`
	Hosts      []string    `yaml:"hosts,omitempty" json:"hosts,omitempty"`
	Reschedule *Reschedule `yaml:"reschedule,omitempty" json:"reschedule,omitempty"`
	Move       string      `yaml:"move,omitempty" json:"move,omitempty"`
	// Instance is an instance's number and PlacedOn the host its
	// supervisor placed it on (Expand), never written in a spec file.
	Instance *int   `yaml:"-" json:"instance,omitempty"`
	PlacedOn string `yaml:"-" json:"placedOn,omitempty"`

	Kind     string    `yaml:"kind,omitempty" json:"kind,omitempty"`
	Desired  string    `yaml:"desired,omitempty" json:"desired,omitempty"`
	Restart  string    `yaml:"restart,omitempty" json:"restart,omitempty"`
	Timeouts *Timeouts `yaml:"timeouts,omitempty" json:"timeouts,omitempty"`
	Retry    *Retry    `yaml:"retry,omitempty" json:"retry,omitempty"`
	Backoff  *Backoff  `yaml:"backoff,omitempty" json:"backoff,omitempty"`
	Observe  *Observe  `yaml:"observe,omitempty" json:"observe,omitempty"`

	// Job makes the worker a job: run to completion on a schedule or once
	// per generation, not kept up (job.go).
	Job *Job `yaml:"job,omitempty" json:"job,omitempty"`

	Stub *Stub `yaml:"stub,omitempty" json:"stub,omitempty"`
	// Process and HTTP are the driver blocks of kinds this build validates
	// but cannot run yet; they are kept so a spec round-trips unchanged.
	Process map[string]any `yaml:"process,omitempty" json:"process,omitempty"`
	HTTP    map[string]any `yaml:"http,omitempty" json:"http,omitempty"`

	// Signature is the operator's signature of what a worker's host runs
	// (internal/admission; `starter apply --sign-key`), never written in a
	// spec file: a host started with --trusted-keys runs no process whose
	// spec does not carry a valid one.
	Signature string `yaml:"-" json:"signature,omitempty"`
}

// IsSupervisor reports whether the node supervises children.
func (n *Node) IsSupervisor() bool { return len(n.Children) > 0 }

// Intensity is a supervisor's restart intensity: more than MaxRestarts
// restarts within Period make it give up; after Cooldown it tries again.
type Intensity struct {
	MaxRestarts int       `yaml:"maxRestarts" json:"maxRestarts"`
	Period      *Duration `yaml:"period" json:"period"`
	Cooldown    *Duration `yaml:"cooldown,omitempty" json:"cooldown,omitempty"`
}

// Timeouts are the StartToClose timeouts of each action type.
type Timeouts struct {
	Start   *Duration `yaml:"start,omitempty" json:"start,omitempty"`
	Stop    *Duration `yaml:"stop,omitempty" json:"stop,omitempty"`
	Restart *Duration `yaml:"restart,omitempty" json:"restart,omitempty"`
	Observe *Duration `yaml:"observe,omitempty" json:"observe,omitempty"`
}

// Retry is the Temporal RetryPolicy of every action of a worker.
type Retry struct {
	MaxAttempts        int       `yaml:"maxAttempts,omitempty" json:"maxAttempts,omitempty"`
	InitialInterval    *Duration `yaml:"initialInterval,omitempty" json:"initialInterval,omitempty"`
	BackoffCoefficient float64   `yaml:"backoffCoefficient,omitempty" json:"backoffCoefficient,omitempty"`
	MaxInterval        *Duration `yaml:"maxInterval,omitempty" json:"maxInterval,omitempty"`
}

// Backoff is the durable delay before a crashed or failed service is started
// again: Initial * Multiplier^(n-1), capped at Max, spread by ±Jitter, and
// reset once the service has stayed running for ResetAfter.
type Backoff struct {
	Initial    *Duration `yaml:"initial,omitempty" json:"initial,omitempty"`
	Max        *Duration `yaml:"max,omitempty" json:"max,omitempty"`
	Multiplier float64   `yaml:"multiplier,omitempty" json:"multiplier,omitempty"`
	Jitter     *float64  `yaml:"jitter,omitempty" json:"jitter,omitempty"`
	ResetAfter *Duration `yaml:"resetAfter,omitempty" json:"resetAfter,omitempty"`
}

// Observe sets the slow periodic health check of a running worker, the
// fallback behind drivers that push exits.
type Observe struct {
	Interval *Duration `yaml:"interval,omitempty" json:"interval,omitempty"`
}

// Stub configures the simulated service of the stub driver.
type Stub struct {
	// Delay is how long each action takes.
	Delay Duration `yaml:"delay,omitempty" json:"delay,omitempty"`
	// FailureRate is the chance (0..1) that an attempt fails (retryably),
	// drawn from Seed so that runs repeat.
	FailureRate float64 `yaml:"failureRate,omitempty" json:"failureRate,omitempty"`
	Seed        int64   `yaml:"seed,omitempty" json:"seed,omitempty"`
	// CrashAfter: a running service dies abnormally after this long.
	CrashAfter Duration `yaml:"crashAfter,omitempty" json:"crashAfter,omitempty"`
	// ExitAfter: a running service exits normally after this long.
	ExitAfter Duration `yaml:"exitAfter,omitempty" json:"exitAfter,omitempty"`
	// Outcomes per action (start, stop, restart, observe): the outcome of
	// attempt 1, 2, ... of each execution of that action. Attempts past the
	// end of the list fall back to FailureRate.
	Outcomes map[string][]string `yaml:"outcomes,omitempty" json:"outcomes,omitempty"`
}

// Stub outcomes.
const (
	OutcomeSuccess   = "success"
	OutcomeFailure   = "failure"   // the action failed; retryable
	OutcomeTimeout   = "timeout"   // the action hangs past its timeout
	OutcomeError     = "error"     // the driver itself errs; retryable
	OutcomePermanent = "permanent" // the action failed; not retryable
)

// Duration is a time.Duration written as a Go duration string ("1.5s").
type Duration time.Duration

// D returns the value as a time.Duration; nil (unset) is 0.
func (d *Duration) D() time.Duration {
	if d == nil {
		return 0
	}
	return time.Duration(*d)
}

// Dur makes a *Duration, for building specs in code.
func Dur(d time.Duration) *Duration { v := Duration(d); return &v }

// MarshalText writes the duration as "1.5s".
func (d Duration) MarshalText() ([]byte, error) { return []byte(time.Duration(d).String()), nil }

// UnmarshalText reads a Go duration string, or a whole number of days
// ("30d").
func (d *Duration) UnmarshalText(b []byte) error {
	v, err := ParseDuration(string(b))
	if err != nil {
		return err
	}
	*d = Duration(v)
	return nil
}

// ParseDuration reads a Go duration ("1.5s", "2m", "720h") or a whole
// number of days ("30d").
func ParseDuration(s string) (time.Duration, error) {
	if days, ok := strings.CutSuffix(s, "d"); ok {
		if n, err := strconv.Atoi(days); err == nil && n >= 0 && n <= 100000 {
			return time.Duration(n) * 24 * time.Hour, nil
		}
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("invalid duration %q (want a Go duration such as 1.5s or 2m, or days: 30d)", s)
	}
	return v, nil
}

// MaxGeneration is the highest generation a spec may carry: far past any
// tree's count (an apply a second for 285 million years) and exact as a
// JSON number. A receiver that counts on from a generation sent by hand
// near 2^63 would wrap (a supervisor sends a child the generation past
// the one it reports).
const MaxGeneration = 1 << 53

// MaxGenerationStep is how far past a node's generation a spec sent to it
// may be: a node's generation follows its supervisor's, which counts its
// applies, so a real spec is at most a few past it. A spec sent by hand
// far ahead (taken, a worker drops every later spec as older) would need
// 2^21 signals to reach MaxGeneration.
const MaxGenerationStep = 1 << 32

// CheckGeneration says why generation g cannot be the next spec of a node
// at generation have (nil: it can; 0 asks the receiver for its own next
// one).
func CheckGeneration(have, g int64) error {
	if err := GenerationInRange(g); err != nil {
		return err
	}
	if g > have && g-have > MaxGenerationStep {
		return fmt.Errorf("generation %d is more than 2^32 past this node's (%d)", g, have)
	}
	return nil
}

// GenerationInRange says why g cannot be a generation at all (a report's).
func GenerationInRange(g int64) error {
	if g < 0 || g > MaxGeneration {
		return fmt.Errorf("generation %d is out of range (0 to 2^53)", g)
	}
	return nil
}

// Generation-stamped spec, the payload of the `spec` signal.
type Update struct {
	// Generation of the spec; 0 asks the receiver to use its own next one.
	Generation int64 `json:"generation,omitempty"`
	Spec       Node  `json:"spec"`
	// Coordinated, set by a supervisor, says whether it restarts the worker
	// with its siblings (its strategy changed); nil leaves it as it is.
	Coordinated *bool `json:"coordinated,omitempty"`
	// Origin and Depth, set by supervisors handing a spec down, say when
	// (workflow time) and how many levels up it was applied, for the
	// propagation metrics.
	Origin time.Time `json:"origin,omitzero"`
	Depth  int       `json:"depth,omitempty"`
	// ReportSubtree, set by a supervisor handing a child supervisor its
	// spec, asks it to report its subtree's state (a sibling depends on it,
	// or it on one); nil leaves it as it is.
	ReportSubtree *bool `json:"reportSubtree,omitempty"`
	// Revision, set by a supervisor handing a spec down, is the tree's
	// revision of it (the root counts them: the apply that creates the tree
	// is 1, each apply that changes it the next).
	Revision int64 `json:"revision,omitempty"`
	// Request, set by `starter apply` on the root's spec, is the apply's
	// own ID: the root tells the tree's revisions which revision it
	// became (workflows.RevisionsWorkflow).
	Request string `json:"request,omitempty"`
	// Resent, set by a supervisor on a spec its hand-out sends again by
	// signal (the hand-out's local activity failed: its Update may have
	// been delivered, and a newer one after it), asks the worker to drop
	// it if it is older than the worker's generation. A spec sent by
	// signal otherwise is taken whatever its generation (a supervisor that
	// adopts its children sends its own, lower one).
	Resent bool `json:"resent,omitempty"`
	// Lost, sent by a supervisor that moves a worker off a lost host, is
	// that host: the worker does not wait for it to stop the copy there,
	// and stops it once the host is back (workflows/fleet.go).
	Lost string `json:"lost,omitempty"`
}

// Workers counts the workers (leaves) of a tree.
func (n *Node) Workers() int {
	if !n.IsSupervisor() {
		return 1
	}
	total := 0
	for i := range n.Children {
		total += n.Children[i].Workers()
	}
	return total
}

// UnmarshalYAML reads a Go duration string and, when it is not one, says on
// which line and column of the spec it stands.
func (d *Duration) UnmarshalYAML(node ast.Node) error {
	tk := node.GetToken()
	if tk == nil {
		return fmt.Errorf("invalid duration")
	}
	if err := d.UnmarshalText([]byte(tk.Value)); err != nil {
		return fmt.Errorf("line %d column %d: %w", tk.Position.Line, tk.Position.Column, err)
	}
	return nil
}
