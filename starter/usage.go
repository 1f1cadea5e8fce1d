package main

import (
	"cmp"
	"context"
	"crypto/ecdh"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	ossignal "os/signal"
	"slices"
	"sort"
	"strings"
	"sync"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/steward-sh/steward/internal/admission"

	"github.com/spf13/cobra"
	"go.temporal.io/sdk/client"
	"golang.org/x/term"

	"github.com/steward-sh/steward/activities"
	"github.com/steward-sh/steward/internal/spec"
	"github.com/steward-sh/steward/internal/treestatus"
	"github.com/steward-sh/steward/workflows"
)

// usageWait bounds the reading of usage for a status: a host that does
// not answer by then leaves its services without usage (and is named).
const usageWait = 5 * time.Second

// hostReadsParallel bounds the hosts read at once for one status. The
// hosts are named by the supervisors' specs, and a supervisor started by
// hand may name thousands: each read is a workflow started on the host's
// queue, and every `starter status` and `top` refresh started them all at
// once.
const hostReadsParallel = 8

// addHostViews fills in what the hosts tell of every running process
// service of the trees (usage, notify status), read from them: one spec query per supervisor
// with process services (where its children run), then one read per host,
// in parallel. It returns a warning per host or supervisor it could not
// read; their services are left without usage.
func addHostViews(ctx context.Context, c client.Client, namespace string, sts []workflows.Status, rd *admission.Reader) []string {
	ctx, cancel := context.WithTimeout(ctx, usageWait)
	defer cancel()
	hosts, warnings := processHosts(ctx, c, sts)
	if len(hosts) == 0 {
		return warnings
	}
	byHost := map[string][]string{}
	for path, h := range hosts {
		byHost[h] = append(byHost[h], path)
	}
	var mu sync.Mutex
	got := map[string]treestatus.HostView{}
	var wg sync.WaitGroup
	sem := make(chan struct{}, hostReadsParallel)
	for h, paths := range byHost {
		wg.Go(func() {
			slices.Sort(paths)
			var views map[string]treestatus.HostView
			var err error
			select {
			case sem <- struct{}{}:
				views, err = readServices(ctx, c, namespace, h, activities.ReadServicesRequest{WorkflowIDs: paths}, rd)
				<-sem
			case <-ctx.Done():
				err = fmt.Errorf("not read within %s", usageWait)
			}
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				warnings = append(warnings, fmt.Sprintf("services of host %s (usage, notify status): %v", h, err))
				return
			}
			for p, u := range views {
				got[p] = u
			}
		})
	}
	wg.Wait()
	for i := range sts {
		fillHostViews(&sts[i], got)
	}
	slices.Sort(warnings)
	if len(warnings) > maxUsageWarnings {
		warnings = append(warnings[:maxUsageWarnings], fmt.Sprintf("and %d more", len(warnings)-maxUsageWarnings))
	}
	return warnings
}

// maxUsageWarnings bounds the warnings one status prints of hosts and
// supervisors it could not read (the rest are counted).
const maxUsageWarnings = 10

func fillHostViews(st *workflows.Status, got map[string]treestatus.HostView) {
	if v, ok := got[st.Path]; ok && st.Kind == spec.KindProcess {
		st.Usage, st.NotifyStatus = v.Usage, v.NotifyStatus
	}
	for i := range st.Children {
		fillHostViews(&st.Children[i], got)
	}
}

// processHosts finds the host of every running process service of the
// trees: from the spec of its supervisor (its own level holds its
// children's nodes), or its own for a tree that is one service.
func processHosts(ctx context.Context, c client.Client, sts []workflows.Status) (map[string]string, []string) {
	var sups []string
	isSup := map[string]bool{}
	hosts := map[string]string{}
	var warnings []string
	var walk func(workflows.Status)
	walk = func(st workflows.Status) {
		for _, ch := range st.Children {
			if ch.Kind == spec.KindProcess && ch.State == "running" && !isSup[st.Path] {
				isSup[st.Path] = true
				sups = append(sups, st.Path)
			}
			walk(ch)
		}
	}
	for _, st := range sts {
		if st.Kind == spec.KindProcess && st.State == "running" {
			if h, err := processHost(ctx, c, st.Path); err == nil {
				hosts[st.Path] = h
			}
		}
		walk(st)
	}
	var mu sync.Mutex
	var wg sync.WaitGroup
	sem := make(chan struct{}, 8)
	for _, sup := range sups {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			n, err := querySpec(ctx, c, sup)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				warnings = append(warnings, fmt.Sprintf("usage below %s: %v", sup, plain(err)))
				return
			}
			for _, child := range n.Children {
				if child.Kind != spec.KindProcess {
					continue
				}
				r, ps := spec.Render(spec.Inherit(n, child), "")
				if len(ps) == 0 {
					hosts[sup+"/"+child.Name] = r.RunsOn()
				}
			}
		})
	}
	wg.Wait()
	return hosts, warnings
}

// topRow is one service of `starter top`.
type topRow struct {
	Path        string    `json:"path"`
	State       string    `json:"state"`
	CPUPercent  float64   `json:"cpuPercent"`
	MemoryBytes int64     `json:"memoryBytes"`
	Restarts    int       `json:"restarts"`
	At          time.Time `json:"at"`
}

func topCmd(g *globals) *cobra.Command {
	var sortBy, output string
	var interval time.Duration
	var signKey string
	cmd := &cobra.Command{
		Use:   "top [PATH]",
		Short: "Show what the process services use (CPU, memory), live on a terminal",
		Long: `Show the CPU and resident memory of every running process service of the
tree at PATH (every tree when omitted), as their hosts last sampled them
(worker --usage-interval, 10 s by default), sorted by CPU (--sort memory).
On a terminal the table is redrawn every --interval until Ctrl-C; otherwise,
and with -o json, one sample is printed.`,
		Args: args(cobra.MaximumNArgs(1)),
		RunE: func(cmd *cobra.Command, a []string) error {
			rd, err := readSigner(signKey)
			if err != nil {
				return err
			}
			if sortBy != "cpu" && sortBy != "memory" {
				return badInput("--sort must be cpu or memory, not %q", sortBy)
			}
			if output != "text" && output != "json" {
				return badInput("-o must be text or json, not %q", output)
			}
			if interval < time.Second {
				return badInput("--interval must be at least 1s, not %s", interval)
			}
			c, err := g.dial()
			if err != nil {
				return err
			}
			defer c.Close()
			ctx, stop := ossignal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			out, errOut := cmd.OutOrStdout(), cmd.ErrOrStderr()
			sample := func() ([]topRow, []string, error) {
				sts, err := collectTrees(ctx, c, g.namespace, a, "false", treestatus.Options{})
				if err != nil {
					return nil, nil, err
				}
				warnings := addHostViews(ctx, c, g.namespace, sts, rd)
				return topRows(sts, sortBy), warnings, nil
			}
			f, isFile := out.(*os.File)
			if output == "json" || !isFile || !term.IsTerminal(int(f.Fd())) {
				rows, warnings, err := sample()
				if err != nil {
					return err
				}
				for _, w := range warnings {
					linef(errOut, "warning: %s", w)
				}
				if output == "json" {
					return writeJSON(out, rows)
				}
				printTop(out, rows)
				return nil
			}
			for {
				rows, warnings, err := sample()
				if ctx.Err() != nil {
					return nil
				}
				fmt.Fprint(out, "\033[H\033[2J")
				fmt.Fprintf(out, "starter top %s   %s   (every %s, Ctrl-C to quit)\n\n", strings.Join(a, " "), time.Now().Format("15:04:05"), interval)
				if err != nil {
					fmt.Fprintln(out, "error:", plain(err))
				} else {
					printTop(out, rows)
					for _, w := range warnings {
						fmt.Fprintln(out, "warning:", w)
					}
				}
				select {
				case <-ctx.Done():
					return nil
				case <-time.After(interval):
				}
			}
		},
	}
	cmd.Flags().StringVar(&sortBy, "sort", "cpu", "sort by cpu or memory (largest first)")
	cmd.Flags().StringVarP(&output, "output", "o", "text", "output format: text or json (one sample)")
	cmd.Flags().DurationVar(&interval, "interval", 2*time.Second, "how often the table is redrawn on a terminal")
	signKeyFlag(cmd, &signKey, "sign the hosts' usage reads with this private key: a host with --trusted-keys answers only signed reads, sealed to this starter")
	return cmd
}

// topRows lists the services with usage, largest first.
func topRows(sts []workflows.Status, sortBy string) []topRow {
	rows := []topRow{}
	var walk func(workflows.Status)
	walk = func(st workflows.Status) {
		if st.Usage != nil {
			rows = append(rows, topRow{Path: st.Path, State: st.State, CPUPercent: st.Usage.CPUPercent,
				MemoryBytes: st.Usage.MemoryBytes, Restarts: st.Restarts, At: st.Usage.At})
		}
		for _, c := range st.Children {
			walk(c)
		}
	}
	for _, st := range sts {
		walk(st)
	}
	sort.SliceStable(rows, func(i, j int) bool {
		a, b := rows[i], rows[j]
		if sortBy == "memory" && a.MemoryBytes != b.MemoryBytes {
			return a.MemoryBytes > b.MemoryBytes
		}
		if a.CPUPercent != b.CPUPercent {
			return a.CPUPercent > b.CPUPercent
		}
		return cmp.Less(a.Path, b.Path)
	})
	return rows
}

func printTop(out io.Writer, rows []topRow) {
	if len(rows) == 0 {
		fmt.Fprintln(out, "no running process services with a sample yet (hosts sample every worker --usage-interval)")
		return
	}
	tw := tabwriter.NewWriter(terminalSafe{out}, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "PATH\tSTATE\tCPU%\tMEMORY\tRESTARTS\tSAMPLED")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%.1f\t%s\t%d\t%s\n", cell(r.Path), cell(r.State), r.CPUPercent, humanBytes(r.MemoryBytes), r.Restarts, r.At.Local().Format("15:04:05"))
	}
	tw.Flush()
}

// humanBytes writes a size in binary units, as specs write them (12.4Mi).
func humanBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%dB", n)
	}
	v, i := float64(n)/unit, 0
	for v >= unit && i < 4 {
		v /= unit
		i++
	}
	return fmt.Sprintf("%.1f%si", v, "KMGTP"[i:i+1])
}

// readServices reads what host tells of its services, signed with rd's key
// when given (the answer then comes sealed to this read).
func readServices(ctx context.Context, c client.Client, namespace, host string, req activities.ReadServicesRequest, rd *admission.Reader) (map[string]treestatus.HostView, error) {
	var reply *ecdh.PrivateKey
	if rd != nil {
		auth, key, err := rd.Sign("services", req)
		if err != nil {
			return nil, err
		}
		req.Auth, reply = &auth, key
	}
	var res activities.ServicesResult
	err := hostRead(ctx, c, namespace, client.StartWorkflowOptions{
		WorkflowExecutionTimeout: usageWait + time.Minute,
		StaticSummary:            "steward services of " + host,
	}, workflows.ServicesWorkflow, workflows.ServicesRequest{Host: host, Read: req}, &res)
	if err != nil || res.Sealed == nil {
		return res.Views, err
	}
	if reply == nil {
		return nil, errors.New("the host sealed its answer to a read this starter did not sign")
	}
	plain, err := admission.Open(reply, res.Sealed)
	if err != nil {
		return nil, err
	}
	var views map[string]treestatus.HostView
	return views, json.Unmarshal(plain, &views)
}
