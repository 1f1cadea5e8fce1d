package main

import (
	"context"
	"crypto/ecdh"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/steward-sh/steward/internal/admission"
	"os"
	ossignal "os/signal"
	"strconv"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/steward-sh/steward/activities"
	"github.com/steward-sh/steward/internal/spec"
	"github.com/steward-sh/steward/workflows"
)

// followWait is how long one follow read waits for new output on the host:
// new lines show within about this long plus a round trip.
const followWait = 500 * time.Millisecond

func logsCmd(g *globals) *cobra.Command {
	var n int
	var follow bool
	var signKey string
	cmd := &cobra.Command{
		Use:   "logs PATH",
		Short: "Print the last lines of a process service's output (stdout and stderr), read on its host through that host's worker; -f follows",
		Long: `Print the last lines of the output (stdout and stderr) of the process
service at PATH, read from its log file on its host by that host's worker
(worker --host). With -f, go on printing new output as it is written, until
interrupted (Ctrl-C or SIGTERM).

The output passes through Temporal in a short workflow per read
(` + workflows.LogsWorkflowIDPrefix + `*), which is deleted as soon as the read is answered;
it never enters the history of the service's own workflow.`,
		Args: args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, a []string) error {
			if n < 1 {
				return badInput("-n must be >= 1, not %d", n)
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
			out := cmd.OutOrStdout()
			req := activities.ReadLogRequest{WorkflowID: a[0], Lines: n}
			for {
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
				req = activities.ReadLogRequest{WorkflowID: a[0], Follow: true, From: res.Next, Wait: followWait}
			}
		},
	}
	cmd.Flags().IntVarP(&n, "lines", "n", 100, "how many of the last lines")
	cmd.Flags().BoolVarP(&follow, "follow", "f", false, "go on printing new output until interrupted")
	signKeyFlag(cmd, &signKey, "sign the read with this private key: a host with --trusted-keys answers only signed reads, sealed to this starter")
	return cmd
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
