package main

// Meters of processes: CPU seconds, context switches, the dev server's PID.

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

func cpuSeconds(pid int) float64 {
	if pid <= 0 {
		return 0
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	s := string(b)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
	if len(fields) < 13 {
		return 0
	}
	ut, _ := strconv.ParseFloat(fields[11], 64)
	st, _ := strconv.ParseFloat(fields[12], 64)
	return (ut + st) / 100 // clock ticks (USER_HZ = 100)
}

// switchMeter starts counting the context switches of process pid's
// threads (/proc/PID/task/*/status) and its CPU; the function it returns
// writes them per action under prefix: involuntary switches (the kernel
// took a CPU away from a running thread: on this machine's two cores, for
// the server's threads or another process's) and voluntary ones (a thread
// blocked), per action and per CPU millisecond of the process. They tell
// how often a task in flight can be set aside, which a task's p99 on a
// shared machine follows (docs/benchmarks.md).
func switchMeter(pid int) func(res Result, prefix string, actions int) {
	v0, i0 := ctxSwitches(pid)
	cpu0 := cpuSeconds(pid)
	return func(res Result, prefix string, actions int) {
		v1, i1 := ctxSwitches(pid)
		cpuMs := 1000 * (cpuSeconds(pid) - cpu0)
		res[prefix+"_cpu_ms_per_action"] = round(cpuMs / float64(actions))
		res[prefix+"_involuntary_switches_per_action"] = round((i1 - i0) / float64(actions))
		res[prefix+"_voluntary_switches_per_action"] = round((v1 - v0) / float64(actions))
		if cpuMs > 0 {
			res[prefix+"_involuntary_switches_per_cpu_ms"] = round((i1 - i0) / cpuMs)
		}
	}
}

// ctxSwitches sums the voluntary and involuntary context switches of
// every thread of process pid (0, 0 when it cannot be read).
func ctxSwitches(pid int) (voluntary, involuntary float64) {
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/status", pid))
	for _, t := range tasks {
		b, err := os.ReadFile(t)
		if err != nil {
			continue // the thread ended
		}
		for _, line := range strings.Split(string(b), "\n") {
			k, v, ok := strings.Cut(line, ":")
			if !ok {
				continue
			}
			n, _ := strconv.ParseFloat(strings.TrimSpace(v), 64)
			switch k {
			case "voluntary_ctxt_switches":
				voluntary += n
			case "nonvoluntary_ctxt_switches":
				involuntary += n
			}
		}
	}
	return voluntary, involuntary
}

// devServerPid finds the dev server this program started (a child
// `temporal server start-dev`).
func devServerPid() int {
	ents, _ := os.ReadDir("/proc")
	self := os.Getpid()
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cmd, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || !strings.Contains(string(cmd), "start-dev") {
			continue
		}
		if stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat")); err == nil {
			f := strings.Fields(string(stat)[strings.LastIndexByte(string(stat), ')')+2:])
			if len(f) > 1 && f[1] == strconv.Itoa(self) {
				return pid
			}
		}
	}
	return 0
}

// ---- report ----
