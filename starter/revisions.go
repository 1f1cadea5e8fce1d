package main

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/user"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/steward-sh/steward/internal/admission"
	"github.com/steward-sh/steward/internal/buildinfo"
	"github.com/steward-sh/steward/internal/revision"
	"github.com/steward-sh/steward/internal/spec"
	"github.com/steward-sh/steward/internal/treestatus"
	"github.com/steward-sh/steward/workflows"
)

// Revisions from the starter (internal/revision, docs/updates.md): every
// apply of a tree records what it applies before the root has it;
// `starter revisions` lists them, `starter revert` applies one again.

// revisionRow is a revision as `starter revisions -o json` prints it.
type revisionRow struct {
	Revision int64            `json:"revision"`
	Time     time.Time        `json:"time"`
	Digest   string           `json:"digest"`
	Message  string           `json:"message"`
	User     string           `json:"user"`
	Host     string           `json:"host"`
	Outcome  revision.Outcome `json:"outcome"`
	Reason   string           `json:"reason,omitempty"`
}

// recordApply records an apply of node (a tree with a supervisor at its
// root) in the tree's revisions, with the spec as applied, and returns the
// apply's request ID for the root. It judges the revision before first, if
// it still rolls: that is the last look at it before this apply's updates
// take its place in the tree.
func recordApply(ctx context.Context, c client.Client, node spec.Node, message string) (string, error) {
	gz, err := spec.Compress(node)
	if err != nil {
		return "", failure("record the apply of %s: %v", node.Name, err)
	}
	if l, err := queryRevisions(ctx, c, node.Name); err == nil {
		judgeLatest(ctx, c, node.Name, l)
	}
	id := make([]byte, 8)
	_, _ = rand.Read(id)
	rec := workflows.RevisionRecord{Record: revision.Record{
		Request: hex.EncodeToString(id), Digest: spec.Digest(node), Message: message, User: osUser(),
	}, Spec: gz}
	rec.Host, _ = os.Hostname()
	_, err = c.SignalWithStartWorkflow(ctx, workflows.RevisionsID(node.Name), workflows.SignalRecord, rec, client.StartWorkflowOptions{
		ID:                       workflows.RevisionsID(node.Name),
		TaskQueue:                workflows.TaskQueue,
		WorkflowIDReusePolicy:    enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE,
		WorkflowIDConflictPolicy: enumspb.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING,
		StaticSummary:            "steward: the revisions of " + node.Name,
		TypedSearchAttributes: temporal.NewSearchAttributes(workflows.SearchPath.ValueSet(node.Name),
			workflows.SearchKind.ValueSet("revisions"), workflows.SearchBuild.ValueSet(buildinfo.ID())),
	}, workflows.RevisionsWorkflow, workflows.RevisionsInput{Root: node.Name, Version: workflows.RevisionsVersion})
	if err != nil {
		return "", failure("record the apply of %s in its revisions (nothing was sent to the tree): %v", node.Name, err)
	}
	return rec.Request, nil
}

func osUser() string {
	if u, err := user.Current(); err == nil && u.Username != "" {
		return u.Username
	}
	return os.Getenv("USER")
}

// queryRevisions asks the revisions of the tree root for their log.
func queryRevisions(ctx context.Context, c client.Client, root string) (revision.Log, error) {
	var l revision.Log
	v, err := c.QueryWorkflow(ctx, workflows.RevisionsID(root), "", workflows.QueryRevisions)
	var nf *serviceerror.NotFound
	if errors.As(err, &nf) {
		return l, failure("no revisions of %q: no tree of that name was applied by this build's starter (a tree applied before revisions were kept has them from its next apply on)", root)
	}
	if err != nil {
		return l, failure("query the revisions of %s: %v", root, err)
	}
	if err := v.Get(&l); err != nil {
		return l, failure("query the revisions of %s: %v", root, err)
	}
	return l, nil
}

// judgeLatest judges the newest revision of the log l of the tree root
// if it still rolls, from the tree as it is now, and tells the log a final
// outcome. It returns l as it then stands. Best effort: a tree that does
// not answer leaves the revision rolling.
func judgeLatest(ctx context.Context, c client.Client, root string, l revision.Log) revision.Log {
	last := l.Latest()
	if last == nil || last.Outcome.Final() {
		return l
	}
	qctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	st, err := assembleTree(qctx, c, root, treestatus.Options{})
	if err != nil || st.Stale != "" || len(st.StaleNodes()) > 0 {
		return l
	}
	var ups []revision.Update
	for _, u := range updatesOf(st, ofRevision(last.Revision)) {
		ups = append(ups, revision.Update{Path: u.path, State: u.State, Reason: u.Reason, Failed: u.Failed})
	}
	o, why := revision.Judge(st.Revision, last.Revision, !applying(st), ups)
	if !o.Final() {
		return l
	}
	if c.SignalWorkflow(qctx, workflows.RevisionsID(root), "", workflows.SignalOutcome, revision.OutcomeReport{Revision: last.Revision, Outcome: o, Reason: why}) == nil {
		last.Outcome, last.Reason = o, why
	}
	return l
}

// applying reports whether a node of an assembled tree has not taken the
// spec its supervisor sent it (or is owed one by an update).
func applying(st workflows.Status) bool {
	if st.Applying {
		return true
	}
	return slices.ContainsFunc(st.Children, applying)
}

func revisionsCmd(g *globals) *cobra.Command {
	var output string
	var show int64
	cmd := &cobra.Command{
		Use:   "revisions NAME",
		Short: "List the revisions of the tree NAME: what each apply changed, when, by whom, and how its rollout ended",
		Args:  args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, a []string) error {
			if output != "text" && output != "json" {
				return badInput("-o must be text or json, not %q", output)
			}
			if strings.Contains(a[0], "/") {
				return badInput("revisions are a tree's: give the name of its root, not %q", a[0])
			}
			c, err := g.dial()
			if err != nil {
				return err
			}
			defer c.Close()
			ctx := cmd.Context()
			l, err := queryRevisions(ctx, c, a[0])
			if err != nil {
				return err
			}
			if show != 0 {
				return showKept(ctx, cmd.OutOrStdout(), c, a[0], l, show)
			}
			l = judgeLatest(ctx, c, a[0], l)
			if len(l.Pending) > 0 {
				fmt.Fprintf(cmd.ErrOrStderr(), "note: %d apply(s) recorded that the tree has not taken (yet: its root may be busy, or of an older version until `starter upgrade`)\n", len(l.Pending))
			}
			return printRevisions(cmd.OutOrStdout(), l, output)
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "text", "output format: text or json (a list of {revision, time, digest, message, user, host, outcome, reason})")
	cmd.Flags().Int64Var(&show, "show", 0, "print the spec kept for this revision (JSON, which starter apply -f reads) instead of the list: what `starter revert --to N` would apply")
	return cmd
}

// showKept prints the spec kept for revision n of tree root, as JSON.
func showKept(ctx context.Context, w io.Writer, c client.Client, root string, l revision.Log, n int64) error {
	e := l.Find(n)
	if e == nil {
		return badInput("revision %d is not kept", n)
	}
	node, err := keptSpec(ctx, c, root, *e)
	if err != nil {
		return err
	}
	return writeJSON(w, node) // JSON is YAML: `starter apply -f` reads it as it is
}

func printRevisions(w io.Writer, l revision.Log, output string) error {
	rows := make([]revisionRow, 0, len(l.Entries))
	for _, e := range l.Entries {
		rows = append(rows, revisionRow{Revision: e.Revision, Time: e.Time, Digest: e.Digest, Message: e.Message, User: e.User, Host: e.Host, Outcome: e.Outcome, Reason: e.Reason})
	}
	if output == "json" {
		return writeJSON(w, rows)
	}
	tw := tabwriter.NewWriter(terminalSafe{w}, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "REVISION\tTIME\tOUTCOME\tDIGEST\tBY\tMESSAGE\tREASON")
	for _, r := range rows {
		by := r.User
		if r.Host != "" {
			by += "@" + r.Host
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s\n", r.Revision, r.Time.Local().Format(time.DateTime), cell(string(r.Outcome)), cell(r.Digest), cell(by), cell(r.Message), cell(r.Reason))
	}
	return tw.Flush()
}

func revertCmd(g *globals) *cobra.Command {
	var to int64
	var o applyOptions
	var signKey string
	cmd := &cobra.Command{
		Use:   "revert NAME [--to N]",
		Short: "Apply an earlier revision of the tree NAME again, as a new revision, through its update policy (default: the one before the current)",
		Args:  args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, a []string) error {
			if err := o.check(); err != nil {
				return err
			}
			if to < 0 {
				return badInput("--to must be a revision number >= 1, not %d", to)
			}
			c, err := g.dial()
			if err != nil {
				return err
			}
			defer c.Close()
			ctx := cmd.Context()
			l, err := queryRevisions(ctx, c, a[0])
			if err != nil {
				return err
			}
			target, err := revertTarget(l, to)
			if err != nil {
				return err
			}
			node, err := keptSpec(ctx, c, a[0], target)
			if err != nil {
				return err
			}
			if signKeyFile(signKey) != "" {
				// Signed again now: a host refuses the kept signatures'
				// revisions once it has run two newer ones. Only what this
				// key signed before: a kept spec is whatever was last
				// recorded for its revision, and anyone who may signal the
				// tree's revisions log can record one.
				if err := keptSignedBy(node, signKey, target.Revision); err != nil {
					return err
				}
				if node, err = signSpec(ctx, c, node, signKey); err != nil {
					return err
				}
			}
			if o.message == "" {
				o.message = fmt.Sprintf("revert to revision %d", target.Revision)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s: applying revision %d (%s) again\n", a[0], target.Revision, target.Digest)
			return applyNode(cmd, g, c, node, o)
		},
	}
	cmd.Flags().Int64Var(&to, "to", 0, "the revision to apply again (0: the one before the current)")
	signKeyFlag(cmd, &signKey, "sign the revision again with this private key (a host with --trusted-keys runs a kept signature only while it is one of the two newest it has run)")
	o.flags(cmd, "wait until every worker is at its desired state (or the update fails), showing progress")
	return cmd
}

// keptSignedBy refuses to sign anew a kept spec that the key at file did
// not sign as it is (admission.SignedBy).
func keptSignedBy(n spec.Node, file string, revision int64) error {
	key, err := admission.LoadPrivateKey(signKeyFile(file))
	if err != nil {
		return badInput("--sign-key: %v", err)
	}
	if err := admission.SignedBy(key.Public().(ed25519.PublicKey), n); err != nil {
		return failure("the spec kept for revision %d is not signed by this key as it is (%v): a kept spec may have been recorded by anyone who can signal the namespace, so a revert signs only what this key signed before. Read it (starter revisions %s --show %d > FILE) and apply it from its file with --sign-key", revision, err, n.Name, revision)
	}
	return nil
}

// revertTarget is the entry a revert applies: revision to, or the newest
// one before the current.
func revertTarget(l revision.Log, to int64) (revision.Entry, error) {
	last := l.Latest()
	if last == nil {
		return revision.Entry{}, failure("no revision kept")
	}
	if to == 0 {
		if len(l.Entries) >= 2 {
			return l.Entries[len(l.Entries)-2], nil
		}
		return revision.Entry{}, failure("revision %d is the only one kept: nothing before it to revert to", last.Revision)
	}
	e := l.Find(to)
	if e == nil {
		return revision.Entry{}, badInput("revision %d is not kept (kept: %d to %d)", to, l.Entries[0].Revision, last.Revision)
	}
	if e.Revision == last.Revision {
		return revision.Entry{}, badInput("revision %d is the current one", to)
	}
	return *e, nil
}

// keptSpec is the spec revision e applied, from its holder.
func keptSpec(ctx context.Context, c client.Client, root string, e revision.Entry) (spec.Node, error) {
	if e.Holder == "" {
		return spec.Node{}, failure("the spec of revision %d was not kept (%s)", e.Revision, e.Reason)
	}
	v, err := c.QueryWorkflow(ctx, e.Holder, "", workflows.QuerySpec)
	if err != nil {
		return spec.Node{}, failure("the spec of revision %d of %s: %v", e.Revision, root, err)
	}
	var in workflows.RevisionSpecInput
	if err := v.Get(&in); err != nil {
		return spec.Node{}, failure("the spec of revision %d of %s: %v", e.Revision, root, err)
	}
	n, err := spec.Decompress(in.Spec)
	if err != nil {
		return spec.Node{}, failure("the spec of revision %d of %s: %v", e.Revision, root, err)
	}
	if ps := spec.Validate(n); len(ps) > 0 {
		return spec.Node{}, failure("the spec of revision %d of %s is no longer valid:\n%v", e.Revision, root, ps)
	}
	if spec.Digest(n) != e.Digest {
		return spec.Node{}, failure("the spec kept for revision %d of %s is not the one applied (digest %s, recorded %s)", e.Revision, root, spec.Digest(n), e.Digest)
	}
	if n.Name != root {
		// A record written by hand into this tree's revisions, of another
		// tree's spec (one an operator signed): applied, it would have
		// rolled that tree back.
		return spec.Node{}, failure("the spec kept for revision %d of %s is of the tree %s", e.Revision, root, printable(n.Name))
	}
	return n, nil
}
