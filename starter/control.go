package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/spf13/cobra"

	"github.com/steward-sh/steward/internal/temporalclient"
	"github.com/steward-sh/steward/internal/versions"
	"github.com/steward-sh/steward/workflows"
)

func (g *globals) dial() (client.Client, error) {
	c, ns, err := temporalclient.Dial(g.conn, quietLogger{}, nil)
	if err != nil {
		return nil, failure("%v", err)
	}
	g.namespace = ns
	return c, nil
}

// signal sends a signal to the workflow at path, naming it when it is missing.
func signal(ctx context.Context, c client.Client, path, name string, arg any) error {
	err := c.SignalWorkflow(ctx, path, "", name, arg)
	var nf *serviceerror.NotFound
	if errors.As(err, &nf) {
		return failure("no running workflow at %q (see `starter status`)", path)
	}
	if err != nil {
		return failure("signal %s to %s: %v", name, path, err)
	}
	return nil
}

func desiredCmd(g *globals, use, desired, short string) *cobra.Command {
	return &cobra.Command{
		Use:   use + " PATH",
		Short: short,
		Args:  args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, a []string) error {
			c, err := g.dial()
			if err != nil {
				return err
			}
			defer c.Close()
			if err := signal(cmd.Context(), c, a[0], workflows.SignalDesired, desired); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s: desired %s\n", a[0], desired)
			return nil
		},
	}
}

func restartCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "restart PATH",
		Short: "Restart the service(s) at PATH (counted as manual restarts)",
		Args:  args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, a []string) error {
			c, err := g.dial()
			if err != nil {
				return err
			}
			defer c.Close()
			if err := signal(cmd.Context(), c, a[0], workflows.SignalRestart, nil); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s: restart requested\n", a[0])
			return nil
		},
	}
}

func deleteCmd(g *globals) *cobra.Command {
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "delete NAME",
		Short: "Stop the tree NAME (children in reverse order) and end its workflows and its revisions",
		Args:  args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, a []string) error {
			if strings.Contains(a[0], "/") {
				return badInput("delete takes the name of a tree (its root), not %q: to remove a subtree, apply the spec without it; to stop it, `starter stop %s`", a[0], a[0])
			}
			c, err := g.dial()
			if err != nil {
				return err
			}
			defer c.Close()
			ctx, cancel := context.WithTimeout(cmd.Context(), timeout)
			defer cancel()
			err = c.CancelWorkflow(ctx, a[0], "")
			var nf *serviceerror.NotFound
			if errors.As(err, &nf) {
				// Revisions left by a first start that failed, or by a
				// delete cut short, go still.
				if c.CancelWorkflow(ctx, workflows.RevisionsID(a[0]), "") == nil {
					fmt.Fprintf(cmd.ErrOrStderr(), "%s: no tree runs; its revisions were deleted\n", a[0])
				}
				return failure("no running workflow at %q", a[0])
			}
			if err != nil {
				return failure("delete %s: %v", a[0], err)
			}
			err = c.GetWorkflow(ctx, a[0], "").Get(ctx, nil)
			var ce *temporal.CanceledError
			if err != nil && !errors.As(err, &ce) {
				return failure("delete %s: the tree is still stopping (it goes on without this command; see `starter status %s`): %v", a[0], a[0], err)
			}
			// Its revisions go with it (their specs too): a tree applied
			// anew under the name starts again at revision 1.
			if err := c.CancelWorkflow(ctx, workflows.RevisionsID(a[0]), ""); err != nil && !errors.As(err, &nf) {
				linef(cmd.ErrOrStderr(), "warning: the revisions of %s were not deleted: %v", a[0], err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s: deleted\n", a[0])
			return nil
		},
	}
	cmd.Flags().DurationVar(&timeout, "timeout", 5*time.Minute, "how long to wait for the tree to stop")
	return cmd
}

// quietLogger keeps the SDK's client logs out of the CLI's output.
type quietLogger struct{}

func (quietLogger) Debug(string, ...any) {}
func (quietLogger) Info(string, ...any)  {}
func (quietLogger) Warn(string, ...any)  {}
func (quietLogger) Error(string, ...any) {}

func reloadCmd(g *globals) *cobra.Command {
	var wait bool
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "reload PATH",
		Short: "Ask the running service at PATH to re-read its configuration (no restart)",
		Long: `Reload sends the worker at PATH the reload signal: its process.reload (a
signal to its main process, HUP by default, or a command run on its host)
or its http.reload request. The service is not restarted: same instance,
restarts unchanged; status counts reloads and shows the reload as its last
action. A worker without a reload configured, or not running, is refused
and nothing is sent. With --wait (the default) it waits for the result.
Every worker under a supervisor: starter rollout reload PATH.`,
		Args: args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, a []string) error {
			path := strings.TrimSuffix(a[0], "/")
			c, err := g.dial()
			if err != nil {
				return err
			}
			defer c.Close()
			ctx := cmd.Context()
			n, err := querySpec(ctx, c, path)
			var nf *serviceerror.NotFound
			if errors.As(err, &nf) {
				return failure("no workflow at %q (see `starter status`)", path)
			}
			if err != nil {
				return err
			}
			switch {
			case n.IsSupervisor():
				return badInput("%s is a supervisor: `starter rollout reload %s` reloads every worker under it", path, path)
			case !n.ReloadConfigured():
				return badInput("%s has no reload configured: add process.reload ({signal: HUP} or {exec: [cmd, args]}) or http.reload (a URL) to its spec", path)
			}
			before, err := queryStatus(ctx, c, path)
			if err != nil {
				return err
			}
			if !versions.WorkerReload.In(before.CodeVersion) {
				return failure("%s runs worker code older than reload (version %d): run `starter upgrade` first (docs/upgrading.md)", path, before.CodeVersion)
			}
			if before.State != "running" {
				return failure("%s is %s, not running: nothing to reload", path, before.State)
			}
			if err := signal(ctx, c, path, workflows.SignalReload, nil); err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if !wait {
				fmt.Fprintf(out, "%s: reload requested\n", path)
				return nil
			}
			deadline := time.Now().Add(timeout)
			for {
				st, err := queryStatus(ctx, c, path)
				if err != nil {
					return err
				}
				la := st.LastAction
				switch {
				case st.Reloads > before.Reloads && la.Name == "reload" && la.Status == "succeeded":
					fmt.Fprintf(out, "%s: reloaded (%d reloads, instance %s)\n", path, st.Reloads, st.Instance)
					return nil
				case st.Reloads > before.Reloads && la.Name == "reload" && la.Status != "running":
					return failure("%s: reload %s: %s", path, la.Status, la.Error)
				case st.State == "running" && st.Instance != before.Instance:
					// A restart in flight took it in: the new instance
					// loaded the configuration.
					fmt.Fprintf(out, "%s: restarted meanwhile (instance %s): its configuration is loaded\n", path, st.Instance)
					return nil
				case st.RejectedSignals > before.RejectedSignals:
					return failure("%s rejected the reload (see its log): %s", path, st.Reason)
				case st.State != "running" && st.Reloads == before.Reloads:
					return failure("%s is %s (%s): not reloaded", path, st.State, st.Reason)
				}
				if time.Now().After(deadline) {
					return failure("%s: no reload result within %s (state %s: %s)", path, timeout, st.State, st.Reason)
				}
				select {
				case <-ctx.Done():
					return ctx.Err()
				case <-time.After(100 * time.Millisecond):
				}
			}
		},
	}
	cmd.Flags().BoolVar(&wait, "wait", true, "wait for the reload's result")
	cmd.Flags().DurationVar(&timeout, "timeout", time.Minute, "how long --wait waits")
	return cmd
}
