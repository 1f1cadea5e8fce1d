// Package metricstest records what code reports through a Temporal SDK
// metrics handler, so tests can check that a metric moves when the thing it
// counts happens. (tally's test scope keeps only a gauge's last value; a
// test here often wants to see every update.)
package metricstest

import (
	"maps"
	"sync"
	"time"

	"go.temporal.io/sdk/client"
)

// Point is one update of a metric.
type Point struct {
	Name  string
	Tags  map[string]string
	Value float64 // a counter's increment, a gauge's value, a timer's seconds
}

// Recorder is a client.MetricsHandler that keeps every update.
type Recorder struct {
	mu     *sync.Mutex
	points *[]Point
	tags   map[string]string
}

// New returns an empty Recorder.
func New() *Recorder { return &Recorder{mu: &sync.Mutex{}, points: &[]Point{}} }

var _ client.MetricsHandler = (*Recorder)(nil)

// WithTags returns a handler whose updates carry tags too.
func (r *Recorder) WithTags(tags map[string]string) client.MetricsHandler {
	t := maps.Clone(r.tags)
	if t == nil {
		t = map[string]string{}
	}
	maps.Copy(t, tags)
	return &Recorder{mu: r.mu, points: r.points, tags: t}
}

func (r *Recorder) add(name string, v float64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	*r.points = append(*r.points, Point{Name: name, Tags: maps.Clone(r.tags), Value: v})
}

// Counter, Gauge and Timer record into the Recorder.
func (r *Recorder) Counter(name string) client.MetricsCounter { return counter{r, name} }
func (r *Recorder) Gauge(name string) client.MetricsGauge     { return gauge{r, name} }
func (r *Recorder) Timer(name string) client.MetricsTimer     { return timer{r, name} }

type counter struct {
	r    *Recorder
	name string
}

func (c counter) Inc(n int64) { c.r.add(c.name, float64(n)) }

type gauge struct {
	r    *Recorder
	name string
}

func (g gauge) Update(v float64) { g.r.add(g.name, v) }

type timer struct {
	r    *Recorder
	name string
}

func (t timer) Record(d time.Duration) { t.r.add(t.name, d.Seconds()) }

// Points returns the updates of name whose tags include tags, in order.
func (r *Recorder) Points(name string, tags map[string]string) []Point {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []Point
	for _, p := range *r.points {
		if p.Name != name {
			continue
		}
		match := true
		for k, v := range tags {
			if p.Tags[k] != v {
				match = false
				break
			}
		}
		if match {
			out = append(out, p)
		}
	}
	return out
}

// Sum adds up the updates of name with tags (a counter's total).
func (r *Recorder) Sum(name string, tags map[string]string) float64 {
	s := 0.0
	for _, p := range r.Points(name, tags) {
		s += p.Value
	}
	return s
}

// Last is the last update of name with tags (a gauge's value), and whether
// there was one.
func (r *Recorder) Last(name string, tags map[string]string) (float64, bool) {
	ps := r.Points(name, tags)
	if len(ps) == 0 {
		return 0, false
	}
	return ps[len(ps)-1].Value, true
}
