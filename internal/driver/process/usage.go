package process

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/steward-sh/steward/internal/spec"
	"github.com/steward-sh/steward/internal/treestatus"
)

// Usage is what one service uses: the CPU and resident memory of its
// process group (the process the driver started and every descendant that
// stayed in its group).
type Usage = treestatus.Usage

// userHZ is the unit of /proc's CPU times: USER_HZ, 100 on every Linux
// architecture Go supports (the kernel's HZ may differ; /proc converts).
const userHZ = 100

// usageOf is a service's sampling state.
type usageOf struct {
	pid   int // the group's leader: a restart is a new group
	last  Usage
	ticks map[int]uint64 // each member's CPU ticks at the last sample
	total uint64         // ticks accumulated since the first sample
	at    time.Time
}

// SampleUsage reads /proc once and updates the usage of every process
// the driver holds (its process group: a service runs in a group of its
// own). A service whose process ended is forgotten. It costs one read of
// each /proc/PID/stat on the machine, whatever the number of services.
func (d *Driver) SampleUsage(now time.Time) error {
	groups, err := scanGroups("/proc")
	if err != nil {
		return err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.usage == nil {
		d.usage = map[string]*usageOf{}
	}
	live := map[string]*proc{}
	for _, p := range d.procs {
		if running(p) {
			live[p.wfID] = p
		}
	}
	for wfID := range d.usage {
		if live[wfID] == nil {
			delete(d.usage, wfID)
		}
	}
	for wfID, p := range live {
		members := groups[p.pid]
		u := d.usage[wfID]
		if u == nil || u.pid != p.pid {
			u = &usageOf{ticks: map[int]uint64{}, pid: p.pid}
			d.usage[wfID] = u
		}
		var delta uint64
		var rss int64
		seen := make(map[int]uint64, len(members))
		for _, m := range members {
			seen[m.pid] = m.ticks
			rss += m.rssBytes
			if before, ok := u.ticks[m.pid]; ok && m.ticks >= before {
				delta += m.ticks - before
			} else if !u.at.IsZero() {
				delta += m.ticks // a member new since the last sample
			}
		}
		u.ticks = seen
		u.total += delta
		pct := 0.0
		if !u.at.IsZero() {
			if wall := now.Sub(u.at).Seconds(); wall > 0 {
				pct = float64(delta) / userHZ / wall * 100
			}
		}
		u.last = Usage{CPUPercent: math.Round(pct*10) / 10, CPUSeconds: float64(u.total) / userHZ, MemoryBytes: rss, At: now}
		u.at = now
		if p.restartOnMemory > 0 && rss > p.restartOnMemory && p.unhealthy == "" && p.started && !d.closed {
			d.wg.Add(1)
			go func() {
				defer d.wg.Done()
				d.endUnhealthy(p, fmt.Sprintf("memory %s over restartOnMemory %s", spec.FormatSize(rss), spec.FormatSize(p.restartOnMemory)))
			}()
		}
	}
	return nil
}

// Usage returns the last sample of each of the workflows asked (all the
// services sampled when none is), without the ones not sampled yet.
func (d *Driver) Usage(wfIDs ...string) map[string]Usage {
	d.mu.Lock()
	defer d.mu.Unlock()
	out := map[string]Usage{}
	if len(wfIDs) == 0 {
		for id, u := range d.usage {
			out[id] = u.last
		}
		return out
	}
	for _, id := range wfIDs {
		if u, ok := d.usage[id]; ok {
			out[id] = u.last
		}
	}
	return out
}

// Services tells, of each running service asked (all when none is), its
// last usage sample and its last STATUS= (process.notify).
func (d *Driver) Services(wfIDs ...string) map[string]treestatus.HostView {
	d.mu.Lock()
	defer d.mu.Unlock()
	want := map[string]bool{}
	for _, id := range wfIDs {
		want[id] = true
	}
	out := map[string]treestatus.HostView{}
	for _, p := range d.procs {
		if !running(p) || len(want) > 0 && !want[p.wfID] {
			continue
		}
		var v treestatus.HostView
		if u, ok := d.usage[p.wfID]; ok {
			last := u.last
			v.Usage = &last
		}
		if p.notify != nil {
			v.NotifyStatus = p.notify.Status()
		}
		if v.Usage != nil || v.NotifyStatus != "" {
			out[p.wfID] = v
		}
	}
	return out
}

func running(p *proc) bool {
	select {
	case <-p.exited:
		return false
	default:
		return true
	}
}

// member is one process of a group, as /proc/PID/stat shows it.
type member struct {
	pid      int
	ticks    uint64 // utime + stime
	rssBytes int64
}

// scanGroups reads every process's stat under root and lists them by
// process group.
func scanGroups(root string) (map[int][]member, error) {
	entries, err := os.ReadDir(root)
	if err != nil {
		return nil, err
	}
	page := int64(os.Getpagesize())
	groups := map[int][]member{}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join(root, e.Name(), "stat"))
		if err != nil {
			continue // it ended meanwhile
		}
		pgrp, m, err := parseStat(b)
		if err != nil {
			continue
		}
		m.pid = pid
		m.rssBytes *= page
		groups[pgrp] = append(groups[pgrp], m)
	}
	return groups, nil
}

// parseStat reads the process group, CPU ticks and resident pages of a
// /proc/PID/stat line (proc(5)). The command name, in parentheses, may
// hold spaces and parentheses: the fields follow its last ')'.
func parseStat(b []byte) (pgrp int, m member, err error) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, m, errors.New("stat: no command name")
	}
	f := bytes.Fields(b[i+1:])
	// f[0] is field 3 (state): field n is f[n-3].
	if len(f) < 22 {
		return 0, m, fmt.Errorf("stat: %d fields", len(f)+2)
	}
	num := func(n int) uint64 {
		v, e := strconv.ParseUint(string(f[n-3]), 10, 64)
		if e != nil && err == nil {
			err = fmt.Errorf("stat field %d: %v", n, e)
		}
		return v
	}
	pgrp = int(num(5))
	m.ticks = num(14) + num(15)
	m.rssBytes = int64(num(24))
	return pgrp, m, err
}
