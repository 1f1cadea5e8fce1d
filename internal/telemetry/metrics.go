package telemetry

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"runtime/metrics"
	"sync"
	"syscall"
	"time"

	enumspb "go.temporal.io/api/enums/v1"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/uber-go/tally/v4"
	tallyprom "github.com/uber-go/tally/v4/prometheus"
	"go.temporal.io/sdk/client"
	sdktally "go.temporal.io/sdk/contrib/tally"
	"golang.org/x/net/netutil"

	"github.com/steward-sh/steward/internal/treestatus"
)

// Metrics is one process's metrics: the Temporal SDK's, reported through
// tally's Prometheus reporter with histograms and no scope prefix (so that
// Temporal's published SDK dashboard works unchanged), on a registry that
// steward's own metrics can share.
type Metrics struct {
	Registry *prometheus.Registry
	// Handler goes into client.Options.MetricsHandler.
	Handler client.MetricsHandler
	closer  io.Closer

	mu     sync.Mutex
	server *http.Server
	closed bool
	done   chan struct{} // closed by Close: ServeWhenFree stops trying
}

var promSafe = tally.SanitizeOptions{
	NameCharacters: tally.ValidCharacters{Ranges: tally.AlphanumericRange, Characters: []rune{'_'}},
	KeyCharacters:  tally.ValidCharacters{Ranges: tally.AlphanumericRange, Characters: []rune{'_'}},
	// Label values may hold any text in Prometheus; paths and task queues
	// keep their '/', '-', '.' and ':'.
	ValueCharacters:      tally.ValidCharacters{Ranges: tally.AlphanumericRange, Characters: []rune{'_', '/', '-', '.', ':', '@'}},
	ReplacementCharacter: tally.DefaultReplacementCharacter,
}

// LatencyBuckets are the histograms' upper bounds, in seconds: a quarter
// of a millisecond apart from 1 to 2 ms, a half up to 4 ms, coarser above.
// A workflow task takes 0.3 to 5 ms; tally's default bounds (1, 2, 5, 10 ms,
// ...) put most tasks in two buckets, and a p99 read from them could not
// tell 2.1 ms from 4.9.
var LatencyBuckets = []float64{
	0.0005, 0.001, 0.00125, 0.0015, 0.00175, 0.002, 0.0025, 0.003, 0.0035, 0.004,
	0.005, 0.006, 0.0075, 0.01, 0.015, 0.02, 0.03, 0.05, 0.075, 0.1,
	0.2, 0.5, 1, 2, 5, 10, 30, 60,
}

// MetricHeapLive is the Go heap that the last collection found alive
// (runtime/metrics /gc/heap/live:bytes): what a leak grows. The heap in use
// (go_memstats_heap_inuse_bytes) and the RSS also hold what is garbage
// until the next collection, a saw whose samples land anywhere on it.
const MetricHeapLive = "steward_go_heap_live_bytes"

var liveHeap = prometheus.NewGaugeFunc(prometheus.GaugeOpts{
	Name: MetricHeapLive,
	Help: "The Go heap the last garbage collection found alive, in bytes (runtime/metrics /gc/heap/live:bytes).",
}, func() float64 {
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return float64(s[0].Value.Uint64())
})

// NewMetrics builds the registry and the SDK's metrics handler.
func NewMetrics(onError func(error)) *Metrics {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}), liveHeap)
	reporter := tallyprom.NewReporter(tallyprom.Options{
		Registerer:              reg,
		DefaultTimerType:        tallyprom.HistogramTimerType,
		DefaultHistogramBuckets: LatencyBuckets,
		OnRegisterError:         onError,
	})
	scope, closer := tally.NewRootScope(tally.ScopeOptions{
		CachedReporter:  reporter,
		Separator:       tallyprom.DefaultSeparator,
		SanitizeOptions: &promSafe,
	}, time.Second)
	return &Metrics{
		Registry: reg,
		Handler:  BoundTags(sdktally.NewMetricsHandler(sdktally.NewPrometheusNamingScope(scope))),
		closer:   closer,
		done:     make(chan struct{}),
	}
}

// Serve starts serving /metrics on addr (host:port) in the background. It
// fails at once when the address cannot be bound.
func (m *Metrics) Serve(addr string) (net.Addr, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("metrics: listen on %s: %w", addr, err)
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(m.Registry, promhttp.HandlerOpts{}))
	srv := OperatorServer(mux, 30*time.Second)
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		ln.Close()
		return nil, errors.New("metrics: closed")
	}
	m.server = srv
	go func() {
		if err := srv.Serve(LimitConns(ln)); err != nil && !errors.Is(err, http.ErrServerClosed) {
			fmt.Println("metrics server:", err)
		}
	}()
	return ln.Addr(), nil
}

// ServeWhenFree is Serve, tried again every retry while another process
// holds addr (EADDRINUSE), until it is free or m is closed. A port held by
// another process (any local user may bind an unprivileged port, before
// the worker starts at boot) must not keep a worker, and with it its
// services' supervision, down: it runs without metrics meanwhile, and warn
// hears of it once. Any other failure (a port out of range, one below 1024
// for a user that may not bind it, a name that does not resolve) is the
// operator's to fix: it is returned. served hears the address once bound.
func (m *Metrics) ServeWhenFree(addr string, retry time.Duration, warn func(error), served func(net.Addr)) error {
	bound, err := m.Serve(addr)
	if err == nil {
		served(bound)
		return nil
	}
	if !errors.Is(err, syscall.EADDRINUSE) {
		return err
	}
	warn(err)
	go func() {
		t := time.NewTicker(retry)
		defer t.Stop()
		for {
			select {
			case <-m.done:
				return
			case <-t.C:
			}
			if bound, err := m.Serve(addr); err == nil {
				served(bound)
				return
			}
		}
	}()
	return nil
}

// Close stops the server and flushes the reporter.
func (m *Metrics) Close() {
	m.mu.Lock()
	if !m.closed {
		m.closed = true
		close(m.done)
	}
	srv := m.server
	m.mu.Unlock()
	if srv != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
	}
	_ = m.closer.Close()
}

// MaxOperatorConns bounds the connections an operator's endpoint (metrics,
// profiles) holds at once: each is a descriptor of the worker's, and a
// local user who opened them by the thousand, idle, would leave it none to
// open a service's log with. Past it, new connections wait.
const MaxOperatorConns = 64

// LimitConns is ln holding at most MaxOperatorConns connections.
func LimitConns(ln net.Listener) net.Listener { return netutil.LimitListener(ln, MaxOperatorConns) }

// OperatorServer is an HTTP server for an operator's tools (a scraper, a
// profiler) with every timeout set: a header, a request, an idle
// connection, and a reply (write) are each bounded, so that a connection opened and left
// cannot be kept.
func OperatorServer(h http.Handler, write time.Duration) *http.Server {
	// A short idle timeout: a connection kept alive holds one of the
	// MaxOperatorConns; 64 of them, each asking again within a minute,
	// kept a scraper out.
	return &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 30 * time.Second,
		WriteTimeout: write, IdleTimeout: 5 * time.Second}
}

// MetricWorkflowTaskFailed is the Temporal SDK's own counter of failed
// workflow tasks (temporal_workflow_task_execution_failed, in the SDK's
// internal/common/metrics), as this registry serves it: the Prometheus
// naming scope adds _total. The SDK counts every failed attempt (a panic,
// a deadlock detected, a nondeterminism error, a completion too large),
// labelled namespace, task_queue, workflow_type and failure_reason
// (WorkflowError, NonDeterminismError, GrpcMessageTooLarge, ...).
// steward emits no copy of it; the alert StewardWorkflowTaskFailing reads
// it (docs/metrics.md).
const MetricWorkflowTaskFailed = "temporal_workflow_task_execution_failed_total"

// MetricPoolQueueSize is the action queue's backlog: actions scheduled and
// not yet taken by a worker (the server's approximate count).
const MetricPoolQueueSize = "steward_worker_pool_queue_size"

// The health of the task queues a worker serves, as the server reports it,
// labelled task_queue and type (workflow, activity). The SDK's own
// temporal_num_pollers{poller_type} gives this process's split of polls
// between the shared workflow queue (workflow_task) and its sticky queue
// (workflow_sticky_task).
const (
	MetricQueueBacklog    = "steward_task_queue_backlog"
	MetricQueueBacklogAge = "steward_task_queue_backlog_age_seconds"
	MetricQueuePollers    = "steward_task_queue_pollers"
)

// ReportQueueSize asks the server every interval for the health of the
// workflow queue (the first of queues) and of every queue's actions, and
// reports it (MetricQueueBacklog, MetricQueueBacklogAge,
// MetricQueuePollers; MetricPoolQueueSize for actions), until ctx ends.
func ReportQueueSize(ctx context.Context, c client.Client, namespace string, h client.MetricsHandler, every time.Duration, queues ...string) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		for i, q := range queues {
			types := []enumspb.TaskQueueType{enumspb.TASK_QUEUE_TYPE_ACTIVITY}
			if i == 0 {
				types = append(types, enumspb.TASK_QUEUE_TYPE_WORKFLOW)
			}
			for _, typ := range types {
				rctx, cancel := context.WithTimeout(ctx, every)
				qh, err := DescribeQueue(rctx, c, namespace, q, typ)
				cancel()
				if err != nil {
					continue
				}
				tagged := h.WithTags(map[string]string{"task_queue": q, "type": qh.Type})
				tagged.Gauge(MetricQueueBacklog).Update(float64(qh.Backlog))
				tagged.Gauge(MetricQueueBacklogAge).Update(qh.BacklogAge.Seconds())
				tagged.Gauge(MetricQueuePollers).Update(float64(qh.Pollers))
				if typ == enumspb.TASK_QUEUE_TYPE_ACTIVITY {
					h.WithTags(map[string]string{"task_queue": q}).Gauge(MetricPoolQueueSize).Update(float64(qh.Backlog))
				}
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// ServiceUsage exports what each process service of this host uses, from
// the driver's last samples at each scrape (no sample is taken for it):
// steward_service_cpu_seconds_total and steward_service_memory_bytes,
// labelled path and host. A service that ended leaves the series.
type ServiceUsage struct {
	Host    string
	Samples func() map[string]treestatus.Usage
}

var (
	serviceCPU = prometheus.NewDesc("steward_service_cpu_seconds_total",
		"CPU (user and system) used by a process service's process group since its host first sampled it.", []string{"path", "host"}, nil)
	serviceMemory = prometheus.NewDesc("steward_service_memory_bytes",
		"Resident memory of a process service's process group at its last sample.", []string{"path", "host"}, nil)
)

// Describe implements prometheus.Collector.
func (s ServiceUsage) Describe(ch chan<- *prometheus.Desc) {
	ch <- serviceCPU
	ch <- serviceMemory
}

// Collect implements prometheus.Collector.
func (s ServiceUsage) Collect(ch chan<- prometheus.Metric) {
	for path, u := range s.Samples() {
		ch <- prometheus.MustNewConstMetric(serviceCPU, prometheus.CounterValue, u.CPUSeconds, path, s.Host)
		ch <- prometheus.MustNewConstMetric(serviceMemory, prometheus.GaugeValue, float64(u.MemoryBytes), path, s.Host)
	}
}
