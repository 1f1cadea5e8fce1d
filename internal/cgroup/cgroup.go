// Package cgroup gives a service a control group of its own with the
// limits of process.resources: memory, CPU and processes, enforced by the
// kernel on the service and every process it starts.
//
// Both hierarchies are supported:
//
//   - cgroup v2 (unified, /sys/fs/cgroup is cgroup2 with the memory, cpu and
//     pids controllers available): a group under /sys/fs/cgroup/steward,
//     with memory.max, cpu.max ("quota period") and pids.max; an OOM kill
//     is counted in memory.events (oom_kill).
//   - cgroup v1, where only v1 controllers are mounted (as on hosts whose
//     unified mount has no controllers): a group per controller used, at
//     /sys/fs/cgroup/<controller>/steward/<name>, with
//     memory.limit_in_bytes, cpu.cfs_quota_us over cpu.cfs_period_us, and
//     pids.max; an OOM kill is counted in memory.oom_control (oom_kill).
//
// The worker must be allowed to make groups there: root, since the groups
// are made at the hierarchy's top (/sys/fs/cgroup/steward, and the root's
// cgroup.subtree_control is written). On a systemd host with v2 they sit
// beside systemd's slices, outside the worker's own unit. In a container
// with a cgroup namespace of its own the root may refuse (EBUSY): the
// start then fails. Where no group can be made, New fails: a service is
// never started unlimited when its spec asks for limits.
package cgroup

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Limits are what a group enforces (0: not limited).
type Limits struct {
	MemoryMax int64   // bytes
	CPUMax    float64 // cores
	PidsMax   int64
}

// Group is one service's control group (one directory per controller
// with v1, one with v2).
type Group struct {
	Version int      `json:"version"`
	Dirs    []string `json:"dirs"`
	// Memory is the directory that holds the memory controller's files
	// ("" without a memory limit).
	Memory string `json:"memory,omitempty"`
}

// Root is where the hierarchies are mounted (a variable for tests).
var Root = "/sys/fs/cgroup"

// cpuPeriod is the CFS period the CPU quota is given over (100 ms, the
// kernel's default).
const cpuPeriod = 100000

// New makes the group name (a path element) with the limits l, in the
// hierarchy this host has. The caller adds the service's process (Add)
// before it runs anything, and removes the group after it ended.
func New(name string, l Limits) (*Group, error) {
	if strings.ContainsAny(name, "/\x00") || name == "" || name == "." || name == ".." {
		return nil, fmt.Errorf("cgroup: bad group name %q", name)
	}
	var need []string
	if l.MemoryMax > 0 {
		need = append(need, "memory")
	}
	if l.CPUMax > 0 {
		need = append(need, "cpu")
	}
	if l.PidsMax > 0 {
		need = append(need, "pids")
	}
	if len(need) == 0 {
		return nil, errors.New("cgroup: no limit to set")
	}
	if v2Has(need) {
		return newV2(name, l, need)
	}
	return newV1(name, l, need)
}

// v2Has: Root is a unified hierarchy offering every controller in need.
func v2Has(need []string) bool {
	b, err := os.ReadFile(filepath.Join(Root, "cgroup.controllers"))
	if err != nil {
		return false
	}
	have := strings.Fields(string(b))
	for _, c := range need {
		if !contains(have, c) {
			return false
		}
	}
	return true
}

func newV2(name string, l Limits, need []string) (*Group, error) {
	base := filepath.Join(Root, "steward")
	if err := os.MkdirAll(base, 0o755); err != nil {
		return nil, fmt.Errorf("cgroup v2: %w", err)
	}
	var enable []string
	for _, c := range need {
		enable = append(enable, "+"+c)
	}
	// The controllers reach the group through each level's subtree_control.
	for _, dir := range []string{Root, base} {
		if err := write(dir, "cgroup.subtree_control", strings.Join(enable, " ")); err != nil {
			return nil, fmt.Errorf("cgroup v2: enable %s: %w", strings.Join(need, ", "), err)
		}
	}
	dir := filepath.Join(base, name)
	if err := os.Mkdir(dir, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
		return nil, fmt.Errorf("cgroup v2: %w", err)
	}
	g := &Group{Version: 2, Dirs: []string{dir}}
	var err error
	if l.MemoryMax > 0 {
		g.Memory = dir
		err = errors.Join(err, write(dir, "memory.max", strconv.FormatInt(l.MemoryMax, 10)),
			// No swap: the limit is the service's memory, as memoryMax says.
			writeIfExists(dir, "memory.swap.max", "0"))
	}
	if l.CPUMax > 0 {
		err = errors.Join(err, write(dir, "cpu.max", fmt.Sprintf("%d %d", int64(l.CPUMax*cpuPeriod), cpuPeriod)))
	}
	if l.PidsMax > 0 {
		err = errors.Join(err, write(dir, "pids.max", strconv.FormatInt(l.PidsMax, 10)))
	}
	if err != nil {
		_ = g.Remove()
		return nil, fmt.Errorf("cgroup v2: %w", err)
	}
	return g, nil
}

func newV1(name string, l Limits, need []string) (*Group, error) {
	g := &Group{Version: 1}
	fail := func(err error) (*Group, error) {
		_ = g.Remove()
		return nil, err
	}
	for _, c := range need {
		mount := filepath.Join(Root, c)
		if _, err := os.Stat(filepath.Join(mount, "cgroup.procs")); err != nil {
			return fail(fmt.Errorf("cgroup: no %s controller on this host (neither cgroup v2 with it at %s nor v1 at %s)", c, Root, mount))
		}
		dir := filepath.Join(mount, "steward", name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fail(fmt.Errorf("cgroup v1 %s: %w", c, err))
		}
		g.Dirs = append(g.Dirs, dir)
		var err error
		switch c {
		case "memory":
			g.Memory = dir
			// memory+swap capped at the memory limit where the kernel
			// accounts swap: no swap, as v2's memory.swap.max 0.
			err = errors.Join(write(dir, "memory.limit_in_bytes", strconv.FormatInt(l.MemoryMax, 10)),
				writeIfExists(dir, "memory.memsw.limit_in_bytes", strconv.FormatInt(l.MemoryMax, 10)),
				writeIfExists(dir, "memory.swappiness", "0"))
		case "cpu":
			err = errors.Join(write(dir, "cpu.cfs_period_us", strconv.Itoa(cpuPeriod)),
				write(dir, "cpu.cfs_quota_us", strconv.FormatInt(int64(l.CPUMax*cpuPeriod), 10)))
		case "pids":
			err = write(dir, "pids.max", strconv.FormatInt(l.PidsMax, 10))
		}
		if err != nil {
			return fail(fmt.Errorf("cgroup v1 %s: %w", c, err))
		}
	}
	return g, nil
}

// Add moves the process pid (and its threads) into the group.
func (g *Group) Add(pid int) error {
	for _, dir := range g.Dirs {
		if err := write(dir, "cgroup.procs", strconv.Itoa(pid)); err != nil {
			return fmt.Errorf("cgroup: add %d: %w", pid, err)
		}
	}
	return nil
}

// OOMKills is how many processes of the group the kernel's OOM killer
// ended (0 without a memory limit).
func (g *Group) OOMKills() int {
	if g == nil || g.Memory == "" {
		return 0
	}
	file := "memory.oom_control"
	if g.Version == 2 {
		file = "memory.events"
	}
	b, err := os.ReadFile(filepath.Join(g.Memory, file))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "oom_kill "); ok {
			n, _ := strconv.Atoi(strings.TrimSpace(v))
			return n
		}
	}
	return 0
}

// Remove removes the group's directories once no process is left in
// them (the kernel refuses before): it tries for up to a second.
// Kill kills every process left in the group: those a service started
// that left its process group (setsid, a daemon's double fork) outlive its
// main process, held the group, and ran on unsupervised. cgroup.kill where
// the kernel has it (v2, Linux 5.14), else SIGKILL to each process the
// group lists, until none is left (a second at most: one may fork while
// it is listed).
func (g *Group) Kill() {
	if g == nil {
		return
	}
	for _, dir := range g.Dirs {
		if g.Version == 2 && write(dir, "cgroup.kill", "1") == nil {
			continue
		}
		for range 20 {
			b, err := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
			pids := strings.Fields(string(b))
			if err != nil || len(pids) == 0 {
				break
			}
			for _, p := range pids {
				if pid, err := strconv.Atoi(p); err == nil && pid > 1 {
					_ = syscall.Kill(pid, syscall.SIGKILL)
				}
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
}

func (g *Group) Remove() error {
	if g == nil {
		return nil
	}
	var err error
	for _, dir := range g.Dirs {
		for i := 0; ; i++ {
			e := os.Remove(dir)
			if e == nil || errors.Is(e, os.ErrNotExist) {
				break
			}
			if i == 20 {
				err = errors.Join(err, e)
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	return err
}

func write(dir, file, value string) error {
	return os.WriteFile(filepath.Join(dir, file), []byte(value), 0o644)
}

// writeIfExists sets a file the kernel may not have (no swap accounting).
func writeIfExists(dir, file, value string) error {
	if _, err := os.Stat(filepath.Join(dir, file)); err != nil {
		return nil
	}
	return write(dir, file, value)
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
