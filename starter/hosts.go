package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"golang.org/x/sync/errgroup"

	"github.com/steward-sh/steward/workflows"
)

// Hosts: `starter hosts`, `starter drain`, `starter undrain`
// (workflows/host.go, docs/fleet.md).

func hostsCmd(g *globals) *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "hosts",
		Short: "List the hosts: their state (up, unknown, draining, drained), since when, how many services they run, their build",
		Args:  args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if output != "text" && output != "json" {
				return badInput("-o must be text or json, not %q", output)
			}
			c, err := g.dial()
			if err != nil {
				return err
			}
			defer c.Close()
			hosts, err := listHosts(cmd.Context(), c, g.namespace)
			if err != nil {
				return err
			}
			for _, h := range hosts {
				if h.err != nil {
					linef(cmd.ErrOrStderr(), "warning: host %s did not answer, its row says %s: %v", h.Name, hostUnanswered, h.err)
				}
			}
			return printHosts(cmd.OutOrStdout(), hosts, output)
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "text", "output format: text or json (a list of {name, state, since, services, build, ...})")
	return cmd
}

// hostUnanswered is the state `starter hosts` shows for a host whose
// workflow did not answer its query in time. It is not one of the host's
// own states (up, unknown, draining, drained): it says only that this look
// could not tell. A worker cut off from the server without closing its
// connection is the usual cause: the server hands it tasks and queries
// until it drops that connection (frontend.keepAliveTime and
// keepAliveTimeout: about 70 s by default), and a host workflow whose task
// or query went there answers again only after that task times out.
const hostUnanswered = "unanswered"

// hostLine is a host as listed: its own answer, or, where the query
// failed, its name, hostUnanswered and the error.
type hostLine struct {
	workflows.HostView
	err error
}

// listHosts lists every host whose workflow runs, by name. The hosts are
// asked at once (at most hostQueriesAtOnce in flight), so that one that
// does not answer costs one query's timeout, not one per host; a host
// that does not answer is listed as hostUnanswered, not left out, and
// does not hide the others.
func listHosts(ctx context.Context, c client.Client, namespace string) ([]hostLine, error) {
	var names []string
	var token []byte
	for {
		resp, err := c.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{
			Namespace: namespace, NextPageToken: token,
			Query: "ExecutionStatus = 'Running' AND WorkflowType = 'HostWorkflow'",
		})
		if err != nil {
			return nil, failure("list hosts: %v", err)
		}
		for _, e := range resp.GetExecutions() {
			if name, ok := strings.CutPrefix(e.GetExecution().GetWorkflowId(), "host:"); ok {
				names = append(names, name)
			}
		}
		if token = resp.GetNextPageToken(); len(token) == 0 {
			break
		}
	}
	slices.Sort(names)
	names = slices.Compact(names)
	out := make([]hostLine, len(names))
	var g errgroup.Group
	g.SetLimit(hostQueriesAtOnce)
	for i, n := range names {
		g.Go(func() error {
			v, err := queryHost(ctx, c, n)
			if err != nil {
				v = workflows.HostView{Name: n, State: hostUnanswered}
			}
			out[i] = hostLine{HostView: v, err: err}
			return nil
		})
	}
	_ = g.Wait() // each error is kept in its line
	if err := ctx.Err(); err != nil {
		return nil, failure("list hosts: %v", err) // interrupted: no host was asked in full
	}
	return out, nil
}

// hostQueriesAtOnce bounds the queries `starter hosts` has in flight.
const hostQueriesAtOnce = 16

func queryHost(ctx context.Context, c client.Client, name string) (workflows.HostView, error) {
	qctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	var v workflows.HostView
	r, err := c.QueryWorkflow(qctx, workflows.HostID(name), "", workflows.QueryHost)
	var nf *serviceerror.NotFound
	if errors.As(err, &nf) {
		return v, &exitError{code: 1, err: noHostError{name}}
	}
	if err == nil {
		err = r.Get(&v)
	}
	if err != nil {
		return v, failure("query host %s: %v", name, err)
	}
	return v, nil
}

// noHostError is queryHost's error for a host that has no workflow.
type noHostError struct{ name string }

func (e noHostError) Error() string {
	return fmt.Sprintf("no host named %q: no worker was started with --host %s, and no tree places a service there", e.name, e.name)
}

// hostRow is a host as `starter hosts -o json` lists it.
type hostRow struct {
	Name     string    `json:"name"`
	State    string    `json:"state"`
	Since    time.Time `json:"since"`
	Services int       `json:"services"`
	Build    string    `json:"build"`
	Address  string    `json:"address,omitempty"`
	PID      int       `json:"pid,omitempty"`
	UpSince  time.Time `json:"upSince,omitzero"`
	BootedAt time.Time `json:"bootedAt,omitzero"`
	Pinned   []string  `json:"pinned,omitempty"`
	// Error says why a host's state is unanswered.
	Error string `json:"error,omitempty"`
}

func printHosts(w io.Writer, hosts []hostLine, output string) error {
	rows := make([]hostRow, 0, len(hosts))
	for _, h := range hosts {
		r := hostRow{Name: h.Name, State: h.State, Since: h.Since, Services: h.Services, Build: h.Build,
			Address: h.Address, PID: h.PID, UpSince: h.UpSince, BootedAt: h.BootedAt, Pinned: h.Pinned}
		if h.err != nil {
			r.Error = h.err.Error()
		}
		rows = append(rows, r)
	}
	if output == "json" {
		return writeJSON(w, rows)
	}
	tw := tabwriter.NewWriter(terminalSafe{w}, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "HOST\tSTATE\tSINCE\tSERVICES\tBUILD\tADDRESS\tBOOTED")
	for _, r := range rows {
		since := "-"
		if !r.Since.IsZero() {
			since = r.Since.Local().Format(time.DateTime)
		}
		build, addr := r.Build, r.Address
		if build == "" {
			build = "-" // its worker never said
		}
		if addr == "" {
			addr = "-"
		}
		booted := "-"
		if !r.BootedAt.IsZero() {
			booted = r.BootedAt.Local().Format(time.DateTime)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%s\t%s\n", cell(r.Name), cell(r.State), since, r.Services, cell(build), cell(addr), booted)
	}
	return tw.Flush()
}

func drainCmd(g *globals) *cobra.Command {
	var wait, force bool
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "drain HOST",
		Short: "Move every service that may run elsewhere off HOST (under each supervisor's update policy) and place nothing new there",
		Long: "Move every service that may run elsewhere off HOST, never more than a supervisor's update.maxParallel down at once, " +
			"and place nothing new there until `starter undrain HOST`. A service that can run only on HOST is listed and left running; " +
			"--force stops it (undrain starts it again).",
		Args: args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, a []string) error {
			c, err := g.dial()
			if err != nil {
				return err
			}
			defer c.Close()
			ctx := cmd.Context()
			host := a[0]
			before, err := queryHost(ctx, c, host)
			if err != nil {
				return err
			}
			if err := c.SignalWorkflow(ctx, workflows.HostID(host), "", workflows.SignalHostDrain, workflows.HostDrain{Drain: true, Force: force}); err != nil {
				return failure("drain %s: %v", host, err)
			}
			if !wait {
				fmt.Fprintf(cmd.OutOrStdout(), "draining %s: %d services there, %d of them can run nowhere else (`starter hosts` shows when it is drained)\n",
					host, before.Services, len(before.Pinned))
				return nil
			}
			wctx, cancel := context.WithTimeout(ctx, timeout)
			defer cancel()
			return waitDrained(wctx, c, g.namespace, host, before.Subscribers, force, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	cmd.Flags().BoolVar(&wait, "wait", false, "wait until every service that can move runs elsewhere")
	cmd.Flags().BoolVar(&force, "force", false, "stop the services that can run only on HOST too")
	cmd.Flags().DurationVar(&timeout, "timeout", 30*time.Minute, "how long --wait waits")
	return cmd
}

// waitDrained waits until the host is draining, no service of the
// supervisors that had workers on host runs there but those that can run
// nowhere else (stopped, with force), and every one that moved runs.
//
// It looks when something changed: it follows the histories of the host
// and of those supervisors (one long poll each, as the console does) and
// looks again after an event, at most once every drainLookEvery, and at
// least every drainLookAtMost (a history not followed yet, or one whose
// poll failed). Looking every 300 ms whatever happened left a drain of 100
// instances (about 2.5 s) done 150 ms before the starter said so, on
// average.
func waitDrained(ctx context.Context, c client.Client, namespace, host string, supervisors []string, force bool, out, progress io.Writer) error {
	fctx, stop := context.WithCancel(ctx)
	defer stop()
	changed := make(chan struct{}, 1)
	follow := &followers{c: c, namespace: namespace, ctx: fctx, by: map[string]*follower{}, poke: func() {
		select {
		case changed <- struct{}{}:
		default:
		}
	}}
	for _, id := range append([]string{workflows.HostID(host)}, supervisors...) {
		follow.fresh(id) // starts following it
	}
	last, unanswered := drainCount{-1, -1}, false
	for {
		looked := time.Now()
		v, err := queryHost(ctx, c, host)
		var nh noHostError
		switch {
		case err != nil && (errors.As(err, &nh) || ctx.Err() != nil):
			return err
		case err != nil:
			// The host did not answer this time (a worker cut off from
			// the server can hold its task or query for a while): ask
			// again, within --timeout.
			if !unanswered {
				linef(progress, "%s did not answer, asking again: %v", host, err)
			}
			unanswered = true
		default:
			unanswered = false
			if done, n := drainedYet(ctx, c, v, host, supervisors, force); done {
				fmt.Fprintf(out, "%s drained\n", host)
				if len(v.Pinned) > 0 {
					word := "left running there (they can run nowhere else; --force stops them)"
					if force {
						word = "stopped there (they can run nowhere else)"
					}
					fmt.Fprintf(out, "%d %s:\n  %s\n", len(v.Pinned), word, strings.Join(v.Pinned, "\n  "))
				}
				return nil
			} else if n != last {
				linef(progress, "%s: %d services still there, %d on their way elsewhere", host, n.left, n.moving)
				last = n
			}
		}
		select {
		case <-ctx.Done():
		case <-changed:
		case <-time.After(drainLookAtMost):
		}
		select {
		case <-ctx.Done():
			if unanswered {
				return failure("timed out waiting for %s to drain: it did not answer the last query", host)
			}
			return failure("timed out waiting for %s to drain: %d services still there, %d on their way", host, last.left, last.moving)
		case <-time.After(drainLookEvery - time.Since(looked)):
		}
	}
}

// drainCount is what a look of drain --wait found: services of the
// supervisors concerned still on the host, and those on their way
// elsewhere.
type drainCount struct{ left, moving int }

// drainedYet says whether host, as v says it is, is drained: it is
// draining or drained, and every service that can move runs elsewhere as
// the supervisors' records say (the host's own word, drained, follows
// their next subscription, a few tasks later).
func drainedYet(ctx context.Context, c client.Client, v workflows.HostView, host string, supervisors []string, force bool) (bool, drainCount) {
	var n drainCount
	for _, sup := range supervisors {
		st, err := queryOne(ctx, c, sup)
		if err != nil {
			continue // a supervisor deleted meanwhile has nothing left there
		}
		for _, ch := range st.Children {
			pinned := slices.Contains(v.Pinned, ch.Path)
			switch {
			case pinned && (!force || ch.State == "stopped"):
			case ch.Host == host:
				n.left++
			case ch.Applying || (ch.State != "running" && ch.State != "stopped"):
				n.moving++
			}
		}
	}
	done := (v.State == workflows.HostDrained || v.State == workflows.HostDraining) && n.left == 0 && n.moving == 0
	return done, n
}

// How often drain --wait looks: at most every drainLookEvery (each look
// asks the host and every supervisor concerned), at least every
// drainLookAtMost.
const (
	drainLookEvery  = 100 * time.Millisecond
	drainLookAtMost = 300 * time.Millisecond
)

func undrainCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "undrain HOST",
		Short: "Let services be placed on HOST again (nothing moves back by itself); start what a drain --force stopped",
		Args:  args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, a []string) error {
			c, err := g.dial()
			if err != nil {
				return err
			}
			defer c.Close()
			if _, err := queryHost(cmd.Context(), c, a[0]); err != nil {
				return err
			}
			if err := c.SignalWorkflow(cmd.Context(), workflows.HostID(a[0]), "", workflows.SignalHostDrain, workflows.HostDrain{}); err != nil {
				return failure("undrain %s: %v", a[0], err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s takes services again\n", a[0])
			return nil
		},
	}
}
