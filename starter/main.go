// Command starter is steward's CLI: it applies a spec, shows status, and
// sends start, stop and restart to any node of a running tree.
//
// Exit codes: 0 success, 1 failure, 2 bad input (an invalid spec, a wrong
// flag). An invalid spec is refused before anything starts, with one line per
// problem naming its path.
package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/steward-sh/steward/internal/temporalclient"
)

// exitError carries an exit code up to main.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }

func (e *exitError) Unwrap() error { return e.err }

func badInput(format string, args ...any) error {
	return &exitError{code: 2, err: fmt.Errorf(format, args...)}
}

func failure(format string, args ...any) error {
	return &exitError{code: 1, err: fmt.Errorf(format, args...)}
}

type globals struct {
	conn temporalclient.Config
	// namespace is the one dial resolved (flag, environment, profile).
	namespace string
}

func main() {
	g := &globals{}
	root := &cobra.Command{
		Use:           "starter",
		Short:         "steward's CLI: apply specs, show status, start/stop/restart services",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.PersistentFlags().StringVar(&g.conn.Address, "address", "", "Temporal frontend address (default: TEMPORAL_ADDRESS, the profile's, or localhost:7233)")
	root.PersistentFlags().StringVar(&g.conn.Namespace, "namespace", "", "Temporal namespace (default: TEMPORAL_NAMESPACE, the profile's, or default)")
	root.PersistentFlags().StringVar(&g.conn.Profile, "profile", "", "profile of the temporal CLI's config file, temporal.toml (default: TEMPORAL_PROFILE or default)")
	root.PersistentFlags().StringVar(&g.conn.EncryptionKeyFiles, "encryption-key-file", "", "the workers' payload encryption keys: files of 64 hex characters, comma-separated, the first encrypts (default: "+temporalclient.EncryptionKeyEnv+")")
	root.PersistentPreRunE = func(*cobra.Command, []string) error {
		if _, err := g.conn.Codec(); err != nil {
			return badInput("%v", err)
		}
		return nil
	}
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return badInput("%v", err) })
	root.AddCommand(applyCmd(g), statusCmd(g), deleteCmd(g),
		desiredCmd(g, "start", "running", "Start the service(s) at PATH (desired running)"),
		desiredCmd(g, "stop", "stopped", "Stop the service(s) at PATH (desired stopped)"),
		restartCmd(g), rolloutCmd(g), codecServerCmd(g), historyCmd(g), logsCmd(g),
		upgradeCmd(g), versionCmd(), keygenCmd(), consoleCmd(g), topCmd(g), reloadCmd(g),
		updateCmd(g), promoteCmd(g), revisionsCmd(g), revertCmd(g),
		hostsCmd(g), drainCmd(g), undrainCmd(g),
		jobsCmd(g), runsCmd(g), runCmd(g))
	err := root.Execute()
	if err == nil {
		return
	}
	// An error may quote what a workflow said (a failed worker's reason,
	// written by anyone who may signal it): printed made printable.
	fmt.Fprintln(os.Stderr, "starter:", printable(err.Error()))
	var ee *exitError
	if errors.As(err, &ee) {
		os.Exit(ee.code)
	}
	// Cobra's own errors (unknown command, wrong arguments) are bad input.
	os.Exit(2)
}

// args wraps a cobra positional-args check so its error is bad input.
func args(check cobra.PositionalArgs) cobra.PositionalArgs {
	return func(cmd *cobra.Command, a []string) error {
		if err := check(cmd, a); err != nil {
			return badInput("%v", err)
		}
		return nil
	}
}

// writeJSON writes v as indented JSON (every command's -o json).
func writeJSON(out io.Writer, v any) error {
	enc := json.NewEncoder(out)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
