package workflows

import (
	"strings"
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/steward-sh/steward/internal/spec"
)

// Workflow-side metrics. They go through workflow.GetMetricsHandler, which
// drops them while a workflow task replays history, so each is counted once
// however often a history is replayed. The worker process serves them with
// the SDK's own on one /metrics endpoint (docs/metrics.md).
//
// Labels stay of low cardinality (kind, action, state, strategy, host); only
// per-supervisor gauges and a job's metrics carry a path.
const (
	MetricActionQueued         = "steward_action_queued_total"          // {action, kind}
	MetricActionTimeouts       = "steward_action_timeouts_total"        // {action, kind}
	MetricRestarts             = "steward_restarts_total"               // {reason: automatic|manual, kind}
	MetricStateTransitions     = "steward_state_transitions_total"      // {from, to, kind}
	MetricCircuitOpens         = "steward_circuit_opens_total"          // {host}
	MetricCircuitCloses        = "steward_circuit_closes_total"         // {host}: infrastructure recovered
	MetricRejectedSignals      = "steward_rejected_signals_total"       // {signal}
	MetricTemplateErrors       = "steward_template_render_errors_total" // a spec refused for a template
	MetricNotificationsDropped = "steward_notifications_dropped_total"  // undelivered ones cancelled past MaxPendingNotifications
	MetricPropagationDuration  = "steward_tick_propagation_duration_seconds"
	MetricPropagationDepth     = "steward_tick_propagation_depth"
	MetricChildCount           = "steward_child_count"           // gauge {path}
	MetricCircuitOpen          = "steward_circuit_open"          // gauge {path}: children whose host is unreachable
	MetricReconciliations      = "steward_reconciliations_total" // {strategy}
	MetricGroupRestarts        = "steward_group_restarts_total"  // {strategy}
	MetricGiveUps              = "steward_supervisor_give_ups_total"
	MetricRolloutTargets       = "steward_rollout_targets_total" // {op, status}
	MetricUpdates              = "steward_updates_total"         // {result: complete|failed|reverted|cancelled|replaced}
	MetricUpdateProgress       = "steward_update_progress"       // gauge {path}: the update's updated/total (1 when none runs)
	// A job's (job.go), by its path: one series per job.
	MetricJobRuns        = "steward_job_runs_total"                     // {path, outcome}: its runs that ended
	MetricJobLastSuccess = "steward_job_last_success_timestamp_seconds" // gauge {path}: when its last run succeeded (until one has: when the job began)
	MetricJobPeriod      = "steward_job_period_seconds"                 // gauge {path}: the time between its runs (a periodic job's)
)

func count(ctx workflow.Context, name string, tags map[string]string) {
	h := workflow.GetMetricsHandler(ctx)
	if len(tags) > 0 {
		h = h.WithTags(tags)
	}
	h.Counter(name).Inc(1)
}

func gauge(ctx workflow.Context, name string, tags map[string]string, v float64) {
	workflow.GetMetricsHandler(ctx).WithTags(tags).Gauge(name).Update(v)
}

// templateProblem reports whether a spec was refused for a template.
func templateProblem(err error) bool {
	return err != nil && strings.Contains(err.Error(), "template")
}

// recordPropagation records how long a spec change took to travel from the
// supervisor where it was applied to this node, and across how many levels.
func recordPropagation(ctx workflow.Context, u spec.Update) {
	if u.Origin.IsZero() {
		return
	}
	h := workflow.GetMetricsHandler(ctx)
	h.Timer(MetricPropagationDuration).Record(max(workflow.Now(ctx).Sub(u.Origin), time.Duration(0)))
	h.Gauge(MetricPropagationDepth).Update(float64(u.Depth))
}
