package spec

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/goccy/go-yaml/ast"
)

// The update policy: how a change that restarts workers rolls out.
//
// `update:` on any supervisor, inherited by the supervisors below it (a
// child supervisor's own block replaces it whole, as notify does). It
// governs every change an apply makes that restarts a worker: the changed
// workers of a supervisor are updated in start order, maxParallel at a
// time, and a worker counts as updated once it runs the new spec (its
// ready probe passed, if it has one) and has stayed running for
// minHealthyTime. The fields and their defaults:
//
//	maxParallel      25%    workers updated at once: a count, or a
//	                        percentage of the supervisor's workers (rounded
//	                        up, at least 1)
//	minHealthyTime   0s     how long an updated worker must stay running
//	healthyDeadline  5m     a worker not updated this long after it was
//	                        sent its spec fails the update
//	progressDeadline 10m    an update with no worker updated this long fails
//	canary           0      workers updated first; the rest wait for
//	                        `starter promote` (or autoPromote)
//	autoPromote      false  go on by itself once the canaries are updated
//	autoRevert       false  a failed update gives the workers it changed
//	                        their previous spec back, under the same policy

// Update policy defaults.
const (
	DefaultUpdateMaxParallelPercent = 25
	DefaultUpdateHealthyDeadline    = 5 * time.Minute
	DefaultUpdateProgressDeadline   = 10 * time.Minute
)

// UpdatePolicy is a supervisor's `update` block.
type UpdatePolicy struct {
	MaxParallel      *Parallel `yaml:"maxParallel,omitempty" json:"maxParallel,omitempty"`
	MinHealthyTime   *Duration `yaml:"minHealthyTime,omitempty" json:"minHealthyTime,omitempty"`
	HealthyDeadline  *Duration `yaml:"healthyDeadline,omitempty" json:"healthyDeadline,omitempty"`
	ProgressDeadline *Duration `yaml:"progressDeadline,omitempty" json:"progressDeadline,omitempty"`
	Canary           int       `yaml:"canary,omitempty" json:"canary,omitempty"`
	AutoPromote      bool      `yaml:"autoPromote,omitempty" json:"autoPromote,omitempty"`
	AutoRevert       bool      `yaml:"autoRevert,omitempty" json:"autoRevert,omitempty"`
}

// Parallel is a count (`2`) or a percentage (`25%`).
type Parallel struct {
	N       int
	Percent bool
}

// Of is the count for a supervisor of workers workers: a percentage
// rounded up, at least 1.
func (p Parallel) Of(workers int) int {
	n := p.N
	if p.Percent {
		n = (p.N*workers + 99) / 100
	}
	return max(n, 1)
}

func (p Parallel) String() string {
	if p.Percent {
		return strconv.Itoa(p.N) + "%"
	}
	return strconv.Itoa(p.N)
}

// parseParallel reads `2` or `25%`.
func parseParallel(s string) (Parallel, error) {
	s = strings.TrimSpace(strings.Trim(strings.TrimSpace(s), `"'`))
	num, pct := strings.CutSuffix(s, "%")
	n, err := strconv.Atoi(strings.TrimSpace(num))
	if err != nil {
		return Parallel{}, fmt.Errorf("invalid maxParallel %q (want a count such as 2 or a percentage such as 25%%)", s)
	}
	return Parallel{N: n, Percent: pct}, nil
}

// MarshalJSON writes a count as a number and a percentage as a string.
func (p Parallel) MarshalJSON() ([]byte, error) {
	if p.Percent {
		return json.Marshal(p.String())
	}
	return json.Marshal(p.N)
}

// UnmarshalJSON reads a number or a string.
func (p *Parallel) UnmarshalJSON(b []byte) error {
	v, err := parseParallel(string(b))
	if err != nil {
		return err
	}
	*p = v
	return nil
}

// UnmarshalYAML reads a number or a string, and says where a bad one
// stands.
func (p *Parallel) UnmarshalYAML(node ast.Node) error {
	tk := node.GetToken()
	if tk == nil {
		return fmt.Errorf("invalid maxParallel")
	}
	v, err := parseParallel(tk.Value)
	if err != nil {
		return fmt.Errorf("line %d column %d: %w", tk.Position.Line, tk.Position.Column, err)
	}
	*p = v
	return nil
}

// ResolvedUpdate is an update policy with every default filled in, its
// maxParallel counted for a supervisor of workers workers.
type ResolvedUpdate struct {
	MaxParallel      int           `json:"maxParallel"`
	MinHealthyTime   time.Duration `json:"minHealthyTime,omitempty"`
	HealthyDeadline  time.Duration `json:"healthyDeadline"`
	ProgressDeadline time.Duration `json:"progressDeadline"`
	Canary           int           `json:"canary,omitempty"`
	AutoPromote      bool          `json:"autoPromote,omitempty"`
	AutoRevert       bool          `json:"autoRevert,omitempty"`
}

// Resolve fills in the defaults (a nil policy is all defaults).
func (u *UpdatePolicy) Resolve(workers int) ResolvedUpdate {
	var p UpdatePolicy
	if u != nil {
		p = *u
	}
	par := Parallel{N: DefaultUpdateMaxParallelPercent, Percent: true}
	if p.MaxParallel != nil {
		par = *p.MaxParallel
	}
	r := ResolvedUpdate{MaxParallel: par.Of(workers), MinHealthyTime: p.MinHealthyTime.D(),
		HealthyDeadline: DefaultUpdateHealthyDeadline, ProgressDeadline: DefaultUpdateProgressDeadline,
		Canary: p.Canary, AutoPromote: p.AutoPromote, AutoRevert: p.AutoRevert}
	if p.HealthyDeadline != nil {
		r.HealthyDeadline = p.HealthyDeadline.D()
	}
	if p.ProgressDeadline != nil {
		r.ProgressDeadline = p.ProgressDeadline.D()
	}
	return r
}

// WritesMaxParallel reports whether the policy sets maxParallel itself (a
// rollout under it is cut to it).
func (u *UpdatePolicy) WritesMaxParallel() bool { return u != nil && u.MaxParallel != nil }

func (v *validator) update(p string, u *UpdatePolicy, supervisor bool) {
	if u == nil {
		return
	}
	up := join(p, "update")
	if !supervisor {
		v.add(up, "an update policy belongs on a supervisor (it governs the workers below it)")
		return
	}
	if m := u.MaxParallel; m != nil {
		switch {
		case m.N <= 0:
			v.add(join(up, "maxParallel"), "must be > 0")
		case m.Percent && m.N > 100:
			v.add(join(up, "maxParallel"), "a percentage must be at most 100%%")
		}
	}
	if d := u.MinHealthyTime; d != nil && d.D() < 0 {
		v.add(join(up, "minHealthyTime"), "must be >= 0")
	}
	if d := u.HealthyDeadline; d != nil && d.D() <= 0 {
		v.add(join(up, "healthyDeadline"), "must be > 0")
	}
	if d := u.ProgressDeadline; d != nil && d.D() <= 0 {
		v.add(join(up, "progressDeadline"), "must be > 0")
	}
	r := u.Resolve(1)
	if r.MinHealthyTime >= r.HealthyDeadline && r.HealthyDeadline > 0 {
		v.add(join(up, "minHealthyTime"), "must be less than healthyDeadline (%s), or no worker could ever count as updated", r.HealthyDeadline)
	}
	if u.Canary < 0 {
		v.add(join(up, "canary"), "must be >= 0")
	}
	if u.AutoPromote && u.Canary == 0 {
		v.add(join(up, "autoPromote"), "needs canary > 0 (there is nothing to promote)")
	}
}
