// Package admission decides whether a host runs what a spec asks of it:
// the host's command policy (Policy, `worker --policy`) and the operator's
// signatures on specs (Verify, `worker --trusted-keys`). It is pure: no
// Temporal; the activities ask a Guard before a process action runs
// anything, and a refusal is a permanent failure that names its rule.
package admission

import (
	"crypto/ed25519"
	"fmt"

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
// worker's user), its trusted keys (none: signatures not required), the
// host it is (its worker's --host: a process placed elsewhere is refused)
// and the revisions it has run (nil: not kept, no replay refused).
type Guard struct {
	Policy    *Policy
	Trusted   []ed25519.PublicKey
	Host      string
	Revisions *RevisionStore
}

// Open reports whether the guard lets every spec through: a host without
// a policy and without trusted keys runs any command a spec names.
func (g *Guard) Open() bool { return g == nil || (g.Policy == nil && len(g.Trusted) == 0) }

// Action is what a host is asked to run, as its guard judges it.
type Action struct {
	// WorkflowID is the workflow that asked, as the server knows it (the
	// activity's own info, never its input): the path a signature must
	// cover.
	WorkflowID string
	// Path is the path the request names (its input).
	Path string
	// Spec is the node the driver receives; Template a fleet worker's
	// template (nil: none came).
	Spec     spec.Node
	Template *spec.Node
	// Starts: a start or a restart, whose revision the host records.
	Starts bool
}

// Admit checks an action's spec before anything runs: the signature
// first, for process and http workers (a spec not from the operator is
// refused whatever it names; an http worker's secret references are read
// by whichever worker takes its action), bound to the workflow that asked
// and, for a start, to a revision no older than this host has run; then
// the host a process is placed on; then the policy. Stub workers are
// admitted. A fleet's worker is verified by its template (VerifyFleet).
func (g *Guard) Admit(a Action) error {
	n := a.Spec
	if g.Open() || (n.Kind != spec.KindProcess && n.Kind != spec.KindHTTP) {
		return nil
	}
	var sig Signature
	if len(g.Trusted) > 0 {
		// A job's run is a workflow of its own, named after its job: the
		// job's signature holds for it (a run of another path's job is
		// refused as any other workflow's action is).
		if n.IsJob() && n.InFleet() {
			return &Refusal{Rule: "signature", Msg: fmt.Sprintf("the spec of %s is a fleet's and a job's: a fleet's signature does not cover a job", a.Path)}
		}
		if a.WorkflowID != a.Path && !(n.IsJob() && spec.IsJobRun(a.WorkflowID, a.Path)) {
			return &Refusal{Rule: "signature", Msg: fmt.Sprintf("the action names path %s, and comes from workflow %s: a signature holds for its own path's workflow only", a.Path, a.WorkflowID)}
		}
		var err error
		if n.InFleet() {
			sig, err = VerifyFleet(g.Trusted, a.Path, n, a.Template)
		} else {
			sig, err = Verify(g.Trusted, a.Path, n)
		}
		if err != nil {
			return err
		}
	}
	if g.Host != "" && n.Kind == spec.KindProcess {
		if on := n.RunsOn(); on != g.Host {
			return &Refusal{Rule: "host " + g.Host, Msg: fmt.Sprintf("the spec of %s runs on host %s, not this one", a.Path, on)}
		}
	}
	if g.Policy != nil {
		if err := g.Policy.Check(n); err != nil {
			return err
		}
	}
	if len(g.Trusted) > 0 && a.Starts { // admitted: the revision is run
		return g.Revisions.Admit(a.Path, sig.Revision)
	}
	return nil
}
