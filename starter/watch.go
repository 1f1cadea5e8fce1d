package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	ossignal "os/signal"
	"syscall"
	"time"

	"golang.org/x/term"

	"github.com/steward-sh/steward/workflows"
)

// row is what a watch compares of a node between two looks.
type row struct {
	State, Desired, Reason string
	Restarts               int
}

// Change is one line of `status -w` off a terminal (-o json: one object).
type Change struct {
	Time   time.Time `json:"time"`
	Path   string    `json:"path"`
	From   string    `json:"from"` // "" for a node that appeared
	State  string    `json:"state"`
	Reason string    `json:"reason"`
}

func rows(sts []workflows.Status) map[string]row {
	out := map[string]row{}
	var walk func(workflows.Status)
	walk = func(s workflows.Status) {
		out[s.Path] = row{s.State, s.Desired, s.Reason, s.Restarts}
		for _, c := range s.Children {
			walk(c)
		}
	}
	for _, s := range sts {
		walk(s)
	}
	return out
}

// changes lists what differs between two looks, in path order.
func changes(now time.Time, prev, cur map[string]row, order []string) []Change {
	var out []Change
	for _, p := range order {
		c, was := cur[p], prev[p]
		if _, ok := prev[p]; !ok {
			out = append(out, Change{now, p, "", c.State, c.Reason})
		} else if c != was {
			out = append(out, Change{now, p, was.State, c.State, c.Reason})
		}
	}
	for p, was := range prev {
		if _, ok := cur[p]; !ok {
			out = append(out, Change{now, p, was.State, "gone", "no longer in the tree"})
		}
	}
	return out
}

func pathsOf(sts []workflows.Status) []string {
	var out []string
	var walk func(workflows.Status)
	walk = func(s workflows.Status) {
		out = append(out, s.Path)
		for _, c := range s.Children {
			walk(c)
		}
	}
	for _, s := range sts {
		walk(s)
	}
	return out
}

// watchStatus asks every interval until SIGINT or SIGTERM (then it returns
// nil: exit 0). On a terminal it redraws the tree when it changed; off a
// terminal it prints the tree once, then a line per changed node. A look
// that fails is said on stderr, and the watch goes on.
func watchStatus(ctx context.Context, out, errOut io.Writer, collect func(context.Context) ([]workflows.Status, error), output string, interval time.Duration, title string) error {
	ctx, stop := ossignal.NotifyContext(ctx, syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	f, ok := out.(*os.File)
	tty := ok && term.IsTerminal(int(f.Fd())) && output == "text"
	var last []byte
	var prev map[string]row
	ticker := time.NewTicker(interval)
	defer ticker.Stop()
	for {
		sts, err := collect(ctx)
		switch {
		case ctx.Err() != nil:
			return nil
		case err != nil:
			linef(errOut, "%s: %v (asking again in %s)", time.Now().UTC().Format(time.RFC3339), err, interval)
		case tty:
			var b bytes.Buffer
			printTree(&b, sts)
			if !bytes.Equal(b.Bytes(), last) {
				last = b.Bytes()
				fmt.Fprintf(out, "\x1b[H\x1b[2J%s, every %s: %s (Ctrl-C stops)\n\n%s", title, interval, time.Now().Format("15:04:05"), b.Bytes())
			}
		default:
			cur := rows(sts)
			if prev == nil && output == "text" {
				printTree(out, sts)
			} else {
				for _, c := range changes(time.Now().UTC(), prevOrEmpty(prev), cur, pathsOf(sts)) {
					if output == "json" {
						b, _ := json.Marshal(c)
						fmt.Fprintln(out, string(b))
					} else if c.From == "" {
						fmt.Fprintf(out, "%s %s: %s (%s)\n", c.Time.Format(time.RFC3339), cell(c.Path), cell(c.State), cell(c.Reason))
					} else {
						fmt.Fprintf(out, "%s %s: %s -> %s (%s)\n", c.Time.Format(time.RFC3339), cell(c.Path), cell(c.From), cell(c.State), cell(c.Reason))
					}
				}
			}
			prev = cur
		}
		select {
		case <-ctx.Done():
			return nil
		case <-ticker.C:
		}
	}
}

func prevOrEmpty(m map[string]row) map[string]row {
	if m == nil {
		return map[string]row{}
	}
	return m
}
