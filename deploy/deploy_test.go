// Package deploy holds the docker-compose setup's configuration (Prometheus,
// Grafana) and the tests that check it hangs together without Docker: the
// services are wired, the mounts exist, Prometheus finds every worker, and the
// dashboard queries the metrics steward emits under their current names.
package deploy

import (
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/goccy/go-yaml"
	"github.com/stretchr/testify/require"
)

// root is the repository root, relative to this package's directory (where
// go test runs).
const root = ".."

func loadYAML(t *testing.T, path string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	var m map[string]any
	require.NoError(t, yaml.Unmarshal(b, &m), path)
	require.NotNil(t, m, "%s is empty", path)
	return m
}

func asMap(t *testing.T, v any, what string) map[string]any {
	t.Helper()
	m, ok := v.(map[string]any)
	require.True(t, ok, "%s: want a mapping, got %T", what, v)
	return m
}

func asList(t *testing.T, v any, what string) []any {
	t.Helper()
	l, ok := v.([]any)
	require.True(t, ok, "%s: want a list, got %T", what, v)
	return l
}

func strs(t *testing.T, v any, what string) []string {
	t.Helper()
	var out []string
	for _, x := range asList(t, v, what) {
		s, ok := x.(string)
		require.True(t, ok, "%s: want strings, got %T", what, x)
		out = append(out, s)
	}
	return out
}

// dependsOn lists a service's depends_on, in either of its Compose forms (a
// list of names, or a mapping of name to condition).
func dependsOn(t *testing.T, svc map[string]any, name string) []string {
	t.Helper()
	switch d := svc["depends_on"].(type) {
	case nil:
		return nil
	case []any:
		return strs(t, d, name+".depends_on")
	case map[string]any:
		var out []string
		for k := range d {
			out = append(out, k)
		}
		return out
	default:
		t.Fatalf("%s.depends_on: unexpected %T", name, d)
		return nil
	}
}

func TestComposeHasEveryServiceWired(t *testing.T) {
	compose := loadYAML(t, filepath.Join(root, "docker-compose.yml"))
	require.NotContains(t, compose, "version", "the Compose spec has no version key")
	services := asMap(t, compose["services"], "services")

	for _, name := range []string{"postgresql", "temporal", "temporal-ui", "worker", "prometheus", "grafana"} {
		require.Contains(t, services, name)
	}

	worker := asMap(t, services["worker"], "worker")
	require.Contains(t, worker, "build", "the worker is built from this repository")
	require.NotContains(t, worker, "container_name", "a fixed name stops --scale worker=N")
	require.NotContains(t, worker, "ports", "a host port stops --scale worker=N")
	if ctx, ok := worker["build"].(string); ok {
		require.FileExists(t, filepath.Join(root, ctx, "Dockerfile"))
	}

	cmd := strs(t, worker["command"], "worker.command")
	i := slices.Index(cmd, "--metrics")
	require.GreaterOrEqual(t, i, 0, "worker.command has no --metrics: %v", cmd)
	require.Less(t, i+1, len(cmd), "--metrics without a value")
	require.Equal(t, "0.0.0.0:9090", cmd[i+1], "Prometheus scrapes the worker from another container")
	require.Contains(t, cmd, "--address")
	require.Equal(t, "temporal:7233", cmd[slices.Index(cmd, "--address")+1])

	require.Contains(t, dependsOn(t, asMap(t, services["temporal"], "temporal"), "temporal"), "postgresql")
	require.Contains(t, dependsOn(t, worker, "worker"), "temporal")
	require.Contains(t, dependsOn(t, asMap(t, services["grafana"], "grafana"), "grafana"), "prometheus")

	// Every bind mount from this repository points at something that exists.
	mounts := 0
	for name, v := range services {
		svc := asMap(t, v, name)
		vols, ok := svc["volumes"]
		if !ok {
			continue
		}
		for _, vol := range strs(t, vols, name+".volumes") {
			src, _, _ := strings.Cut(vol, ":")
			if !strings.HasPrefix(src, "./") {
				continue
			}
			mounts++
			_, err := os.Stat(filepath.Join(root, src))
			require.NoError(t, err, "%s mounts %s, which does not exist", name, src)
		}
	}
	require.GreaterOrEqual(t, mounts, 3, "prometheus.yml, grafana provisioning and dashboards")

	// Named volumes are declared at the top level.
	pg := asMap(t, services["postgresql"], "postgresql")
	top := asMap(t, compose["volumes"], "volumes")
	for _, vol := range strs(t, pg["volumes"], "postgresql.volumes") {
		src, _, _ := strings.Cut(vol, ":")
		if !strings.HasPrefix(src, ".") && !strings.HasPrefix(src, "/") {
			require.Contains(t, top, src, "named volume %s is not declared", src)
		}
	}
}

func TestComposeConfigWhenDockerComposeIsInstalled(t *testing.T) {
	bin, err := exec.LookPath("docker-compose")
	if err != nil {
		t.Skip("docker-compose not installed: structure checked by TestComposeHasEveryServiceWired")
	}
	out, err := exec.Command(bin, "-f", filepath.Join(root, "docker-compose.yml"), "config", "-q").CombinedOutput()
	require.NoError(t, err, "docker-compose config: %s", out)
}

func TestPrometheusScrapesEveryWorker(t *testing.T) {
	cfg := loadYAML(t, filepath.Join("prometheus", "prometheus.yml"))
	found := false
	for i, sc := range asList(t, cfg["scrape_configs"], "scrape_configs") {
		job := asMap(t, sc, "scrape_configs["+strconv.Itoa(i)+"]")
		dns, ok := job["dns_sd_configs"]
		if !ok {
			continue
		}
		for _, d := range asList(t, dns, "dns_sd_configs") {
			dc := asMap(t, d, "dns_sd_config")
			names := strs(t, dc["names"], "dns_sd_config.names")
			if slices.Contains(names, "worker") && portIs(dc["port"], 9090) {
				found = true
			}
		}
	}
	require.True(t, found, "no dns_sd_configs scrape of name worker on port 9090: a scaled worker would go unscraped")
}

func portIs(v any, want int) bool {
	switch p := v.(type) {
	case int:
		return p == want
	case int64:
		return p == int64(want)
	case uint64:
		return p == uint64(want)
	case float64:
		return p == float64(want)
	case string:
		return p == strconv.Itoa(want)
	}
	return false
}

// dashboard is the part of a Grafana dashboard the tests look at.
type dashboard struct {
	UID           string  `json:"uid"`
	Title         string  `json:"title"`
	SchemaVersion int     `json:"schemaVersion"`
	Panels        []panel `json:"panels"`
}

type panel struct {
	ID         int         `json:"id"`
	Type       string      `json:"type"`
	Title      string      `json:"title"`
	Datasource *datasource `json:"datasource"`
	GridPos    *gridPos    `json:"gridPos"`
	Targets    []target    `json:"targets"`
	Panels     []panel     `json:"panels"` // a collapsed row's
}

type datasource struct {
	Type string `json:"type"`
	UID  string `json:"uid"`
}

type gridPos struct {
	H, W, X, Y int
}

type target struct {
	RefID      string      `json:"refId"`
	Expr       string      `json:"expr"`
	Datasource *datasource `json:"datasource"`
}

func allPanels(ps []panel) []panel {
	var out []panel
	for _, p := range ps {
		out = append(out, p)
		out = append(out, allPanels(p.Panels)...)
	}
	return out
}

// metricName matches the identifiers in a PromQL expression that name a
// steward metric.
var metricName = regexp.MustCompile(`\bsteward_[a-zA-Z0-9_:]*`)

// alertMetricName matches the metrics an alert may query: steward's, and
// the SDK's that internal/telemetry names (a Metric* constant there, such
// as MetricWorkflowTaskFailed: steward emits no copy of them).
var alertMetricName = regexp.MustCompile(`\b(?:steward|temporal)_[a-zA-Z0-9_:]*`)

func TestGrafanaDashboardQueriesStewardMetrics(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("grafana", "dashboards", "steward.json"))
	require.NoError(t, err)
	var d dashboard
	require.NoError(t, json.Unmarshal(b, &d))
	require.Equal(t, "steward", d.UID)
	require.Equal(t, "steward", d.Title)
	require.Equal(t, 39, d.SchemaVersion)

	ids := map[int]string{}
	used := map[string]bool{}
	queries := 0
	for _, p := range allPanels(d.Panels) {
		require.NotZero(t, p.ID, "panel %q has no id", p.Title)
		prev, dup := ids[p.ID]
		require.False(t, dup, "panels %q and %q share id %d", prev, p.Title, p.ID)
		ids[p.ID] = p.Title
		require.NotNil(t, p.GridPos, "panel %q has no gridPos", p.Title)
		require.NotZero(t, p.GridPos.W, "panel %q has no width", p.Title)
		require.LessOrEqual(t, p.GridPos.X+p.GridPos.W, 24, "panel %q is wider than the grid", p.Title)
		if p.Type == "row" {
			continue
		}
		require.NotNil(t, p.Datasource, "panel %q has no datasource", p.Title)
		require.Equal(t, "prometheus", p.Datasource.UID, "panel %q", p.Title)
		require.NotEmpty(t, p.Targets, "panel %q has no query", p.Title)
		for _, tg := range p.Targets {
			require.NotEmpty(t, strings.TrimSpace(tg.Expr), "panel %q, query %s, is empty", p.Title, tg.RefID)
			require.NotNil(t, tg.Datasource, "panel %q, query %s, has no datasource", p.Title, tg.RefID)
			require.Equal(t, "prometheus", tg.Datasource.UID, "panel %q, query %s", p.Title, tg.RefID)
			queries++
			for _, m := range metricName.FindAllString(tg.Expr, -1) {
				used[m] = true
			}
		}
	}
	require.Positive(t, queries)

	for _, m := range []string{
		"steward_action_queued_total",
		"steward_action_execution_duration_seconds_bucket",
		"steward_action_timeouts_total",
		"steward_restarts_total",
		"steward_state_transitions_total",
		"steward_worker_pool_utilization",
		"steward_worker_pool_queue_size",
		"steward_child_count",
		"steward_circuit_open",
		"steward_tick_propagation_duration_seconds_bucket",
		"steward_tick_propagation_depth",
		"steward_reconciliations_total",
		"steward_template_render_errors_total",
	} {
		require.True(t, used[m], "the dashboard does not query %s", m)
	}

	emitted := emittedMetrics(t)
	var unknown []string
	for m := range used {
		if !emitted[m] {
			unknown = append(unknown, m)
		}
	}
	sort.Strings(unknown)
	require.Empty(t, unknown, "the dashboard queries metrics steward does not emit (renamed?)")
}

// emittedMetrics reads the names steward's code emits: the string constants
// named Metric* in the files that define them (internal/telemetry also
// names the SDK's counter an alert reads, MetricWorkflowTaskFailed), and,
// for histograms (the *_seconds timers), the series Prometheus derives
// from them.
func emittedMetrics(t *testing.T) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	for _, f := range []string{
		filepath.Join(root, "workflows", "metrics.go"),
		filepath.Join(root, "activities", "activities.go"),
		filepath.Join(root, "internal", "telemetry", "metrics.go"),
	} {
		file, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.SkipObjectResolution)
		require.NoError(t, err)
		n := 0
		for _, decl := range file.Decls {
			gd, ok := decl.(*ast.GenDecl)
			if !ok || gd.Tok != token.CONST {
				continue
			}
			for _, spec := range gd.Specs {
				vs := spec.(*ast.ValueSpec)
				for i, id := range vs.Names {
					if !strings.HasPrefix(id.Name, "Metric") || i >= len(vs.Values) {
						continue
					}
					lit, ok := vs.Values[i].(*ast.BasicLit)
					if !ok || lit.Kind != token.STRING {
						continue
					}
					name, err := strconv.Unquote(lit.Value)
					require.NoError(t, err)
					n++
					out[name] = true
					if strings.HasSuffix(name, "_seconds") {
						for _, s := range []string{"_bucket", "_count", "_sum"} {
							out[name+s] = true
						}
					}
				}
			}
		}
		require.Positive(t, n, "%s defines no Metric* constants", f)
	}
	return out
}

func TestGrafanaProvisioningPointsAtTheMounts(t *testing.T) {
	ds := loadYAML(t, filepath.Join("grafana", "provisioning", "datasources", "prometheus.yml"))
	list := asList(t, ds["datasources"], "datasources")
	require.Len(t, list, 1)
	p := asMap(t, list[0], "datasources[0]")
	require.Equal(t, "prometheus", p["uid"], "the dashboard's panels name this uid")
	require.Equal(t, "prometheus", p["type"])
	require.Equal(t, "http://prometheus:9090", p["url"])

	prov := loadYAML(t, filepath.Join("grafana", "provisioning", "dashboards", "dashboards.yml"))
	providers := asList(t, prov["providers"], "providers")
	require.NotEmpty(t, providers)
	opts := asMap(t, asMap(t, providers[0], "providers[0]")["options"], "providers[0].options")
	require.Equal(t, "/var/lib/grafana/dashboards", opts["path"], "docker-compose.yml mounts the dashboards there")

	// And docker-compose.yml does mount them there.
	compose := loadYAML(t, filepath.Join(root, "docker-compose.yml"))
	grafana := asMap(t, asMap(t, compose["services"], "services")["grafana"], "grafana")
	vols := strs(t, grafana["volumes"], "grafana.volumes")
	require.Contains(t, vols, "./deploy/grafana/dashboards:/var/lib/grafana/dashboards:ro")
	require.Contains(t, vols, "./deploy/grafana/provisioning:/etc/grafana/provisioning:ro")
}

// The alerting rules: loaded by the compose Prometheus, each a named alert
// with an expression over metrics steward emits, a severity and a summary;
// `promtool check rules` agrees and `promtool test rules` passes
// prometheus/alerts_test.yml where promtool is installed (Debian's package
// prometheus).
func TestAlertRules(t *testing.T) {
	cfg := loadYAML(t, filepath.Join("prometheus", "prometheus.yml"))
	require.Contains(t, strs(t, cfg["rule_files"], "rule_files"), "/etc/prometheus/alerts.yml")
	compose, err := os.ReadFile(filepath.Join("..", "docker-compose.yml"))
	require.NoError(t, err)
	require.Contains(t, string(compose), "./deploy/prometheus/alerts.yml:/etc/prometheus/alerts.yml:ro")

	rules := loadYAML(t, filepath.Join("prometheus", "alerts.yml"))
	emitted := emittedMetrics(t)
	require.True(t, emitted["temporal_workflow_task_execution_failed_total"], "internal/telemetry names the SDK's counter (MetricWorkflowTaskFailed)")
	alerts := map[string]bool{}
	var taskFailing map[string]any
	for _, g := range asList(t, rules["groups"], "groups") {
		group := asMap(t, g, "group")
		for i, r := range asList(t, group["rules"], "rules") {
			rule := asMap(t, r, "rules["+strconv.Itoa(i)+"]")
			name, _ := rule["alert"].(string)
			require.NotEmpty(t, name, "rule %d has no alert name", i)
			alerts[name] = true
			expr, _ := rule["expr"].(string)
			require.NotEmpty(t, strings.TrimSpace(expr), "%s has no expr", name)
			ms := alertMetricName.FindAllString(expr, -1)
			require.NotEmpty(t, ms, "%s queries no steward metric", name)
			for _, m := range ms {
				require.True(t, emitted[m], "%s queries %s, which steward does not emit", name, m)
			}
			labels := asMap(t, rule["labels"], name+".labels")
			require.Contains(t, []any{"page", "ticket"}, labels["severity"], "%s severity", name)
			ann := asMap(t, rule["annotations"], name+".annotations")
			require.NotEmpty(t, ann["summary"], "%s has no summary", name)
			if name == "StewardWorkflowTaskFailing" {
				taskFailing = rule
			}
		}
	}
	for _, want := range []string{"StewardWorkerFailed", "StewardSupervisorGaveUp", "StewardHostUnreachable", "StewardRolloutTargetsFailing", "StewardPoolSaturated", "StewardTaskQueueBacklogOld", "StewardActionsRefused", "StewardWorkflowTaskFailing", "StewardJobNotSucceeding"} {
		require.True(t, alerts[want], "no alert %s", want)
	}
	// A workflow task that keeps failing: the SDK's counter, by workflow
	// type, over a window longer than the server's longest retry interval
	// (10 minutes), held for a while, and it says what to do.
	expr := taskFailing["expr"].(string)
	require.Contains(t, expr, "increase(temporal_workflow_task_execution_failed_total[15m])")
	require.Contains(t, expr, "by (namespace, workflow_type)")
	require.Equal(t, "2m", taskFailing["for"])
	desc, _ := asMap(t, taskFailing["annotations"], "annotations")["description"].(string)
	for _, s := range []string{"starter status", "taskFailing", "stack", "temporal workflow show"} {
		require.Contains(t, desc, s)
	}
	if promtool, err := exec.LookPath("promtool"); err == nil {
		out, err := exec.Command(promtool, "check", "rules", filepath.Join("prometheus", "alerts.yml")).CombinedOutput()
		require.NoError(t, err, "promtool check rules: %s", out)
		// The rules' own tests: when they fire, and that they do not
		// resolve between a failing task's retries.
		out, err = exec.Command(promtool, "test", "rules", filepath.Join("prometheus", "alerts_test.yml")).CombinedOutput()
		require.NoError(t, err, "promtool test rules: %s", out)
	} else {
		t.Log("promtool not installed (Debian: apt-get install prometheus): the structure checks above only")
	}
}
