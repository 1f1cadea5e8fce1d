// Package admission decides whether a host runs what a spec asks of it:
// the host's command policy (Policy, `worker --policy`) and the operator's
// signatures on specs (Verify, `worker --trusted-keys`). It is pure: no
// Temporal; the activities ask a Guard before a process action runs
// anything, and a refusal is a permanent failure that names its rule.
package admission

import (
	"crypto/ed25519"

	"github.com/steward-sh/steward/internal/spec"
)

// Refusal is a spec a host will not run: Rule names what refused it
// ("policy /etc/steward/policy.yaml", "signature"), Msg why.
type Refusal struct {
	Rule string
	Msg  string
}

func (r *Refusal) Error() string { return r.Rule + ": " + r.Msg }

// Guard is a host's admission: its policy (nil: any command, as the
// worker's user) and its trusted keys (none: signatures not required).
type Guard struct {
	Policy  *Policy
	Trusted []ed25519.PublicKey
}

// Open reports whether the guard lets every spec through: a host without
// a policy and without trusted keys runs any command a spec names.
func (g *Guard) Open() bool { return g == nil || (g.Policy == nil && len(g.Trusted) == 0) }

// Admit checks an action's spec before anything runs: the signature
// first, for process and http workers (a spec not from the operator is
// refused whatever it names; an http worker's secret references are read
// by whichever worker takes its action), then, for a process, the policy.
// Stub workers are admitted.
// A fleet's worker is verified by its template (VerifyFleet; nil: none
// came with the action).
func (g *Guard) Admit(path string, n spec.Node, template *spec.Node) error {
	if g.Open() || (n.Kind != spec.KindProcess && n.Kind != spec.KindHTTP) {
		return nil
	}
	if len(g.Trusted) > 0 {
		var err error
		if n.InFleet() {
			err = VerifyFleet(g.Trusted, path, n, template)
		} else {
			err = Verify(g.Trusted, path, n)
		}
		if err != nil {
			return err
		}
	}
	if g.Policy != nil {
		return g.Policy.Check(n)
	}
	return nil
}
