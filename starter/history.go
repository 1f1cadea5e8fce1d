package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"go.temporal.io/api/serviceerror"

	"github.com/steward-sh/steward/workflows"
)

func historyCmd(g *globals) *cobra.Command {
	var n int
	var output string
	cmd := &cobra.Command{
		Use:   "history PATH",
		Short: "Show the last state transitions of the node at PATH (a supervisor's: of its own state), oldest first, with reasons and the actions that caused them",
		Args:  args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, a []string) error {
			if output != "text" && output != "json" {
				return badInput("-o must be text or json, not %q", output)
			}
			if n < 1 {
				return badInput("-n must be >= 1, not %d", n)
			}
			c, err := g.dial()
			if err != nil {
				return err
			}
			defer c.Close()
			v, err := c.QueryWorkflow(cmd.Context(), a[0], "", workflows.QueryHistory)
			var nf *serviceerror.NotFound
			if errors.As(err, &nf) {
				return failure("no workflow at %q", a[0])
			}
			if err != nil {
				return failure("query %s: %v (a worker older than this starter has no history query)", a[0], err)
			}
			var entries []workflows.JournalEntry
			if err := v.Get(&entries); err != nil {
				return failure("query %s: %v", a[0], err)
			}
			if len(entries) > n {
				entries = entries[len(entries)-n:]
			}
			out := cmd.OutOrStdout()
			if output == "json" {
				if entries == nil {
					entries = []workflows.JournalEntry{}
				}
				b, err := json.MarshalIndent(entries, "", "  ")
				if err != nil {
					return err
				}
				_, err = fmt.Fprintln(out, string(b))
				return err
			}
			tw := tabwriter.NewWriter(terminalSafe{out}, 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "TIME\tFROM\tSTATE\tACTION\tREASON")
			for _, e := range entries {
				action := "-"
				if e.Action != nil {
					action = e.Action.Name + " " + e.Action.Status
					if e.Action.Error != "" {
						action += ": " + e.Action.Error
					}
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", e.Time.UTC().Format(time.RFC3339), cell(orDash(e.From)), cell(e.State), cell(action), cell(e.Reason))
			}
			return tw.Flush()
		},
	}
	cmd.Flags().IntVarP(&n, "lines", "n", 20, fmt.Sprintf("how many of the last transitions (a worker keeps %d)", workflows.JournalLimit))
	cmd.Flags().StringVarP(&output, "output", "o", "text", "output format: text or json")
	return cmd
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
