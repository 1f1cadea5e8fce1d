package main

// The goals and the report: the table printed and the JSON written.

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"time"
)

type goal struct {
	key, op string
	target  float64
}

var goals = []goal{
	{"throughput_ratio_entity", ">=", 0.8},
	{"throughput_ratio", ">=", 0.5},
	{"steward_events_per_action", "<=", 12},
	{"steward_workflow_tasks_per_action", "<=", 2.5},
	{"latency_ratio_p99", "<=", 1.5},
	{"apply_ratio", "<=", 1.5},
	{"scale_status_seconds", "<=", 10},
	{"scale_apply_wait_ratio", "<=", 1.5},
	{"scale_status_failures", "<=", 0},
	{"upgrade_seconds_1000", "<=", 60},
	{"tick_ratio_p99_entity", "<=", 1.5},
	{"apply_ratio_children", "<=", 1.2},
	// Signed specs (issue 47): the same apply, signed, beside an unsigned one.
	{"apply_signed_ratio", "<=", 1.1},
	{"upgrade_restarts_1000", "<=", 0},
	// Rolling updates: against a rollout restart of the same workers.
	{"update_ratio_1000", "<=", 1.2},
	{"update_max_down_1000", "<=", 50},
	{"revert_touched_100", "<=", 10},
	{"revert_seconds_100", "<=", 45}, // healthyDeadline 30 s + one batch
	// Fleets: failover within after (5 s) + 5 s; a drain against a rollout.
	{"failover_seconds_p99", "<=", 10},
	{"drain_ratio_100", "<=", 1.5},
	{"drain_max_down_100", "<=", 10},
	{"fleet_overcount_moments", "<=", 0},
	{"failover_failures", "<=", 0},
	{"scale_status_max_seconds", "<=", 10},
	{"max_workflow_backlog_age_seconds", "<=", 30},
	{"scale_idle_worker_cpu_percent", "<=", 2},
	{"scale_idle_server_cpu_percent", "<=", 5},
	{"scale_root_max_event_bytes", "<=", 64 << 10},
	{"scale_group_max_event_bytes", "<=", 128 << 10},
	{"max_history_events", "<=", 2000},
	{"idle_worker_cpu_percent_1000", "<=", 2},
	{"idle_server_cpu_percent_1000", "<=", 5},
	{"tick_ratio_p99", "<=", 1.5},
	{"pool_utilization_under_load", ">=", 0.8},
	// A killed process runs again within its backoff (100ms) + 1 s.
	{"kill_to_running_own_p99_ms", "<=", 1100},
	{"kill_to_running_adopted_p99_ms", "<=", 1100},
	// The console on a 10,000-worker tree, in Chromium.
	{"console_first_paint_ms_10000", "<=", 2000},
	{"console_expand_ms", "<=", 1000},
	{"console_update_ms_p99", "<=", 2000},
	{"console_server_cpu_percent_10000", "<=", 1},
	// Process controls.
	{"reload_p99_ms", "<=", 500},
	{"usage_cpu_percent_100", "<=", 1},
	{"oom_restart_ms", "<=", 1300}, // backoff 100 ms + 1.2 s
}

func report(o options, res Result) error {
	keys := make([]string, 0, len(res))
	for k := range res {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	fmt.Printf("%-36s %14s   %s\n", "figure", "value", "goal")
	for _, k := range keys {
		g := ""
		for _, gl := range goals {
			if gl.key == k {
				v, _ := toFloat(res[k])
				ok := (gl.op == ">=" && v >= gl.target) || (gl.op == "<=" && v <= gl.target)
				g = fmt.Sprintf("%s %g  %s", gl.op, gl.target, map[bool]string{true: "met", false: "NOT met"}[ok])
			}
		}
		fmt.Printf("%-36s %14v   %s\n", k, res[k], g)
	}
	if err := os.MkdirAll(o.out, 0o755); err != nil {
		return err
	}
	clean := Result{}
	for k, v := range res {
		if f, ok := v.(float64); ok && (math.IsNaN(f) || math.IsInf(f, 0)) {
			v = nil
		}
		clean[k] = v
	}
	b, err := json.MarshalIndent(clean, "", "  ")
	if err != nil {
		return err
	}
	path := filepath.Join(o.out, time.Now().UTC().Format("20060102T150405Z")+".json")
	fmt.Println("written:", path)
	return os.WriteFile(path, b, 0o644)
}

func toFloat(v any) (float64, bool) {
	switch x := v.(type) {
	case float64:
		return x, true
	case int:
		return float64(x), true
	}
	return 0, false
}

type quiet struct{}

func (quiet) Debug(string, ...any) {}
func (quiet) Info(string, ...any)  {}
func (quiet) Warn(string, ...any)  {}
func (quiet) Error(string, ...any) {}
