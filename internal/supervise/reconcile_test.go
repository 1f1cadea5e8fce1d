package supervise

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/steward-sh/steward/internal/spec"
)

// Reconcile, case by case: what a new spec does to each child.
func TestReconcile(t *testing.T) {
	prevA := spec.Node{Name: "a", Kind: spec.KindStub}
	cur := func(name string, l Lifecycle, digest string, want, reported int64) Current {
		return Current{Name: name, Lifecycle: l, Digest: digest, WantGeneration: want, Reported: reported}
	}
	for _, c := range []struct {
		name string
		in   ReconcileInput
		want Reconciled
	}{
		{name: "an unchanged child is not touched",
			in:   ReconcileInput{Children: []Current{cur("a", Live, "d1", 1, 1)}, Spec: []Wanted{{Name: "a", Digest: "d1"}}, Generation: 2},
			want: Reconciled{Children: []Placed{{Name: "a", From: 0, Action: Untouched, Digest: "d1", WantGeneration: 1}}}},
		{name: "a changed live child is sent its node with the new generation",
			in:   ReconcileInput{Children: []Current{cur("a", Live, "d1", 1, 1)}, Spec: []Wanted{{Name: "a", Digest: "d2"}}, Generation: 2},
			want: Reconciled{Children: []Placed{{Name: "a", From: 0, Action: SendSpec, Digest: "d2", WantGeneration: 2}}}},
		{name: "a changed child with a queued start is live to the spec: sent",
			in:   ReconcileInput{Children: []Current{cur("a", HeldStart, "d1", 1, 1)}, Spec: []Wanted{{Name: "a", Digest: "d2"}}, Generation: 2},
			want: Reconciled{Children: []Placed{{Name: "a", From: 0, Action: SendSpec, Digest: "d2", WantGeneration: 2}}}},
		{name: "a changed deferred child keeps its node to start with",
			in:   ReconcileInput{Children: []Current{cur("a", Deferred, "d1", 1, 0)}, Spec: []Wanted{{Name: "a", Digest: "d2"}}, Generation: 2},
			want: Reconciled{Children: []Placed{{Name: "a", From: 0, Action: KeepNode, Digest: "d2", WantGeneration: 2}}}},
		{name: "a changed closed child starts with its plan",
			in:   ReconcileInput{Children: []Current{cur("a", Closed, "d1", 1, 1)}, Spec: []Wanted{{Name: "a", Digest: "d2"}}, Generation: 2},
			want: Reconciled{Children: []Placed{{Name: "a", From: 0, Action: StartsWithPlan, Digest: "d2", WantGeneration: 2}}}},
		{name: "a strategy change sends every child its node",
			in:   ReconcileInput{Children: []Current{cur("a", Live, "d1", 1, 1), cur("b", Live, "e1", 1, 1)}, Spec: []Wanted{{Name: "a", Digest: "d1"}, {Name: "b", Digest: "e1"}}, Generation: 2, StrategyChanged: true},
			want: Reconciled{Children: []Placed{{Name: "a", From: 0, Action: SendSpec, Digest: "d1", WantGeneration: 2}, {Name: "b", From: 1, Action: SendSpec, Digest: "e1", WantGeneration: 2}}}},
		{name: "removed children stop dependants first; a gone one is dropped; a new one starts",
			in: ReconcileInput{Children: []Current{cur("db", Live, "d", 1, 1), cur("old", Closed, "o", 1, 1), cur("api", Live, "a", 1, 1), cur("web", Live, "w", 1, 1)},
				Spec: []Wanted{{Name: "api", Digest: "a"}, {Name: "new", Digest: "n"}}, Generation: 2},
			want: Reconciled{Cancel: []int{3, 0}, Children: []Placed{
				{Name: "api", From: 2, Action: Untouched, Digest: "a", WantGeneration: 1},
				{Name: "new", From: -1, Action: AddChild, Digest: "n", WantGeneration: 2}}}},
		{name: "the new start order is the spec's, whatever the old one",
			in:   ReconcileInput{Children: []Current{cur("a", Live, "a", 1, 1), cur("b", Live, "b", 1, 1)}, Spec: []Wanted{{Name: "b", Digest: "b"}, {Name: "a", Digest: "a"}}, Generation: 2},
			want: Reconciled{Children: []Placed{{Name: "b", From: 1, Digest: "b", WantGeneration: 1}, {Name: "a", From: 0, Digest: "a", WantGeneration: 1}}}},
		{name: "version 1: a child changed around its supervisor is left as it is",
			in:   ReconcileInput{Children: []Current{cur("a", Live, "d1", 1, 2)}, Spec: []Wanted{{Name: "a", Digest: "d1"}}, Generation: 2},
			want: Reconciled{Children: []Placed{{Name: "a", From: 0, Action: Untouched, Digest: "d1", WantGeneration: 1}}}},
		{name: "version 2: a child changed around its supervisor is sent the applied node, numbered past its own count",
			in:   ReconcileInput{Children: []Current{cur("a", Live, "d1", 1, 2)}, Spec: []Wanted{{Name: "a", Digest: "d1"}}, Generation: 2, Resend: true},
			want: Reconciled{Children: []Placed{{Name: "a", From: 0, Action: SendSpec, Digest: "d1", WantGeneration: 3}}}},
		{name: "version 2: a changed child whose count is behind gets the tree's generation",
			in:   ReconcileInput{Children: []Current{cur("a", Live, "d1", 4, 4)}, Spec: []Wanted{{Name: "a", Digest: "d2"}}, Generation: 5, Resend: true},
			want: Reconciled{Children: []Placed{{Name: "a", From: 0, Action: SendSpec, Digest: "d2", WantGeneration: 5}}}},
		{name: "a live child whose change the update rolls out is its target, and not sent its node now",
			in: ReconcileInput{Children: []Current{cur("a", Live, "d1", 1, 1), cur("b", Live, "e1", 1, 1)},
				Spec: []Wanted{{Name: "a", Digest: "d2", Roll: &prevA}, {Name: "b", Digest: "e2"}}, Generation: 2},
			want: Reconciled{Children: []Placed{{Name: "a", From: 0, Action: Untouched, Digest: "d1", WantGeneration: 1},
				{Name: "b", From: 1, Action: SendSpec, Digest: "e2", WantGeneration: 2}},
				Targets: []Target{{Name: "a", Digest: "d2", Previous: &prevA, PreviousDigest: "d1"}}}},
		{name: "Roll on a child that gets no node (unchanged, deferred, closed) makes no target",
			in: ReconcileInput{Children: []Current{cur("a", Live, "d1", 1, 1), cur("b", Deferred, "e1", 1, 0), cur("c", Closed, "f1", 1, 1)},
				Spec: []Wanted{{Name: "a", Digest: "d1", Roll: &prevA}, {Name: "b", Digest: "e2", Roll: &prevA}, {Name: "c", Digest: "f2", Roll: &prevA}}, Generation: 2},
			want: Reconciled{Children: []Placed{{Name: "a", From: 0, Digest: "d1", WantGeneration: 1},
				{Name: "b", From: 1, Action: KeepNode, Digest: "e2", WantGeneration: 2},
				{Name: "c", From: 2, Action: StartsWithPlan, Digest: "f2", WantGeneration: 2}}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			require.Equal(t, c.want, Reconcile(c.in))
		})
	}
}
