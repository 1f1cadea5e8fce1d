package main

import (
	"context"
	"crypto/ecdh"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	ossignal "os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"

	"github.com/steward-sh/steward/activities"
	"github.com/steward-sh/steward/internal/admission"
	"github.com/steward-sh/steward/internal/driver/process"
	"github.com/steward-sh/steward/internal/spec"
	"github.com/steward-sh/steward/workflows"
)

// followWait is how long one follow read waits for new output on the host:
// new lines show within about this long plus a round trip.
const followWait = 500 * time.Millisecond

func logsCmd(g *globals) *cobra.Command {
	var n int
	var follow, previous bool
	var signKey, since, run string
	cmd := &cobra.Command{
		Use:   "logs PATH",
		Short: "Print the last lines of a process service's output (stdout and stderr), read on its host through that host's worker; -f follows",
		Long: `Print the last lines of the output (stdout and stderr) of the process
service at PATH, read from its log file on its host by that host's worker
(worker --host). With -f, go on printing new output as it is written, until
interrupted (Ctrl-C or SIGTERM).

--since and --previous read across the log's rotated files, compressed ones
included: --since 1h (or a time, 2026-11-27T10:00:00Z) what was written
since then (from at most about a minute earlier: a service's lines carry
no time of their own, the host's index of its log notes its size over time), --previous what the run
before the current one wrote. With either, -n keeps the last lines of it
only when given.

The output passes through Temporal in a short workflow per read
(` + workflows.LogsWorkflowIDPrefix + `*), which is deleted as soon as the read is answered;
it never enters the history of the service's own workflow.`,
		Args: args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, a []string) error {
			if n < 1 {
				return badInput("-n must be >= 1, not %d", n)
			}
			sel, err := logSelect(since, previous, time.Now())
			if err != nil {
				return err
			}
			if previous && follow {
				return badInput("--previous and --follow: the previous run has ended (follow the current one without --previous)")
			}
			rd, err := readSigner(signKey)
			if err != nil {
				return err
			}
			ctx, stop := ossignal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			c, err := g.dial()
			if err != nil {
				return err
			}
			defer c.Close()
			host, err := processHost(ctx, c, a[0])
			if err != nil {
				return err
			}
			logOf, err := logWorkflow(ctx, c, a[0], run)
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			req := activities.ReadLogRequest{WorkflowID: logOf, Lines: n}
			if sel != nil {
				next, err := readRange(ctx, c, g.namespace, host, logOf, *sel, rd, out, lastLines(cmd, n))
				if err != nil || ctx.Err() != nil || !follow {
					return err
				}
				req = activities.ReadLogRequest{WorkflowID: logOf, Follow: true, From: next, Wait: followWait}
			}
			for {
				began := time.Now()
				res, err := readLog(ctx, c, g.namespace, host, req, rd)
				if ctx.Err() != nil {
					return nil // interrupted: the normal end of a follow (or of a read)
				}
				if err != nil {
					return err
				}
				if _, err := out.Write(res.Data); err != nil {
					return err
				}
				if !follow {
					return nil
				}
				if len(res.Data) == 0 {
					// Nothing new sooner than the wait asked: the host
					// answered at once (its follows are all taken). The
					// rest of the wait here, not another read at once.
					select {
					case <-ctx.Done():
						return nil
					case <-time.After(followWait - time.Since(began)):
					}
				}
				req = activities.ReadLogRequest{WorkflowID: logOf, Follow: true, From: res.Next, Wait: followWait}
			}
		},
	}
	cmd.Flags().IntVarP(&n, "lines", "n", 100, "how many of the last lines")
	cmd.Flags().BoolVarP(&follow, "follow", "f", false, "go on printing new output until interrupted")
	cmd.Flags().StringVar(&since, "since", "", "what was written since: a duration back from now (1h, 30m, 2d) or a time (RFC 3339), across rotated files")
	cmd.Flags().StringVar(&run, "run", "", "a job's run (its ID, as `starter runs` lists it; default: its newest run)")
	cmd.Flags().BoolVar(&previous, "previous", false, "what the service's previous run wrote (the run before the current or last one)")
	signKeyFlag(cmd, &signKey, "sign the read with this private key: a host with --trusted-keys answers only signed reads, sealed to this starter")
	return cmd
}

// logWorkflow is the workflow whose log `starter logs PATH` reads: a
// service's own, a job's run (--run, or its newest).
func logWorkflow(ctx context.Context, c client.Client, path, run string) (string, error) {
	n, err := querySpec(ctx, c, path)
	if err != nil {
		return "", failure("%v", err)
	}
	if !n.IsJob() {
		if run != "" {
			return "", badInput("--run: %s is not a job", path)
		}
		return path, nil
	}
	if run != "" {
		if !strings.HasPrefix(run, workflows.JobRunPrefix(path)) {
			return "", badInput("--run %s is not a run of %s (its runs begin with %s)", run, path, workflows.JobRunPrefix(path))
		}
		return run, nil
	}
	runs, err := listRuns(ctx, c, converter.GetDefaultDataConverter(), path, 1) // its ID only
	if err != nil {
		return "", err
	}
	if len(runs) == 0 {
		return "", failure("%s has not run yet (see `starter jobs %s`)", path, path)
	}
	return runs[0].ID, nil
}

// logSelect reads --since and --previous (nil: neither given).
func logSelect(since string, previous bool, now time.Time) (*process.LogSelect, error) {
	if since == "" && !previous {
		return nil, nil
	}
	sel := &process.LogSelect{Previous: previous}
	if since != "" {
		if t, err := time.Parse(time.RFC3339, since); err == nil {
			sel.Since = t
		} else if d, err := spec.ParseDuration(since); err == nil && d > 0 {
			sel.Since = now.Add(-d)
		} else {
			return nil, badInput("--since %q: want a duration back from now (1h, 30m, 2d) or a time (2026-11-27T10:00:00Z)", since)
		}
	}
	return sel, nil
}

// lastLines is -n when given (0: all of a --since or --previous read).
func lastLines(cmd *cobra.Command, n int) int {
	if cmd.Flags().Changed("lines") {
		return n
	}
	return 0
}

// readRange prints the part of a log sel picks, page by page (the last n
// lines of it only, n > 0), and returns the position after it.
func readRange(ctx context.Context, c client.Client, namespace, host, path string, sel process.LogSelect, rd *admission.Reader, out io.Writer, n int) (process.LogPosition, error) {
	req := activities.ReadLogRequest{WorkflowID: path, Select: &sel}
	var kept []byte
	for {
		res, err := readLog(ctx, c, namespace, host, req, rd)
		if ctx.Err() != nil {
			return res.Next, nil
		}
		if err != nil {
			return res.Next, err
		}
		if !res.Range {
			return res.Next, failure("the worker of host %s is older than --since and --previous: upgrade it (make dist, or its package)", host)
		}
		if n > 0 {
			kept = tailLines(append(kept, res.Data...), n)
		} else if _, err := out.Write(res.Data); err != nil {
			return res.Next, err
		}
		if !res.More {
			_, err := out.Write(kept)
			return res.Next, err
		}
		req.From = res.Next
	}
}

// tailLines is the last n lines of b.
func tailLines(b []byte, n int) []byte {
	end := len(b)
	if end > 0 && b[end-1] == '\n' {
		end--
	}
	for i := end - 1; i >= 0; i-- {
		if b[i] == '\n' {
			if n--; n == 0 {
				return b[i+1:]
			}
		}
	}
	return b
}

// processHost is the host of the process service at path, or why it has no
// log to read.
func processHost(ctx context.Context, c client.Client, path string) (string, error) {
	n, err := querySpec(ctx, c, path)
	var nf *serviceerror.NotFound
	if errors.As(err, &nf) {
		return "", failure("no workflow at %q (see `starter status`)", path)
	}
	if err != nil {
		return "", err
	}
	switch {
	case n.IsSupervisor():
		return "", badInput("%s is a supervisor: logs are a process service's (see `starter status %s` for its workers)", path, path)
	case n.Kind != spec.KindProcess:
		return "", badInput("%s is a %s worker: only process services have logs", path, n.Kind)
	}
	r, ps := spec.Render(n, "")
	if len(ps) > 0 {
		return "", failure("%s: %v", path, ps)
	}
	return r.RunsOn(), nil
}

// readLog runs one read through the host's worker and deletes its workflow.
func readLog(ctx context.Context, c client.Client, namespace, host string, req activities.ReadLogRequest, rd *admission.Reader) (activities.ReadLogResult, error) {
	var res activities.ReadLogResult
	var reply *ecdh.PrivateKey
	if rd != nil {
		auth, key, err := rd.Sign("log", req)
		if err != nil {
			return res, failure("sign the read: %v", err)
		}
		req.Auth, reply = &auth, key
	}
	err := hostRead(ctx, c, namespace, client.StartWorkflowOptions{
		WorkflowExecutionTimeout: workflows.LogHostWait + req.Wait + time.Minute,
		StaticSummary:            "steward logs " + req.WorkflowID,
	}, workflows.LogsWorkflow, workflows.LogsRequest{Host: host, Read: req}, &res)
	if err == nil && res.Sealed != nil {
		if reply == nil {
			return res, failure("read the log: the host sealed its answer to a read this starter did not sign")
		}
		if res, err = openLog(reply, res.Sealed); err != nil {
			return res, failure("read the log: %v", err)
		}
	}
	var he hostError
	if errors.As(err, &he) {
		return res, failure("%s", he.msg)
	}
	if err != nil {
		return res, failure("read the log: %v", err)
	}
	return res, nil
}

// hostError is what a host (or its read's workflow) answered instead of
// the read: its message says it all.
type hostError struct{ msg string }

func (e hostError) Error() string { return e.msg }

// hostRead runs one short workflow that reads something on a host (a log,
// usage) through its worker, takes its answer into res and deletes it: a
// host's answer is kept in no history. An answer the host refused is the
// host's message.
func hostRead(ctx context.Context, c client.Client, namespace string, opts client.StartWorkflowOptions, wf, req, res any) error {
	opts.ID = workflows.LogsWorkflowIDPrefix + strconv.FormatInt(time.Now().UnixNano(), 36)
	opts.TaskQueue = workflows.TaskQueue
	run, err := c.ExecuteWorkflow(ctx, opts, wf, req)
	if err != nil {
		return fmt.Errorf("start the read: %w", err)
	}
	err = run.Get(ctx, res)
	dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if ctx.Err() != nil {
		_ = c.TerminateWorkflow(dctx, opts.ID, run.GetRunID(), "starter interrupted")
	}
	// The server deletes it a little later (measured here: 10-60 s).
	_, _ = c.WorkflowService().DeleteWorkflowExecution(dctx, &workflowservice.DeleteWorkflowExecutionRequest{
		Namespace: namespace, WorkflowExecution: &commonpb.WorkflowExecution{WorkflowId: opts.ID, RunId: run.GetRunID()}})
	var app *temporal.ApplicationError
	if errors.As(err, &app) {
		return hostError{app.Message()}
	}
	return err
}

// openLog opens a signed read's sealed answer.
func openLog(reply *ecdh.PrivateKey, sealed *admission.Sealed) (activities.ReadLogResult, error) {
	var res activities.ReadLogResult
	plain, err := admission.Open(reply, sealed)
	if err != nil {
		return res, err
	}
	return res, json.Unmarshal(plain, &res)
}
