package main

// Reading Prometheus' text format: the worker's and the server's metrics,
// histograms and their quantiles.

import (
	"bufio"
	"math"
	"net/http"
	"sort"
	"strconv"
	"strings"
)

type family struct {
	name    string
	labels  string
	buckets []bucket
	value   float64
}

type bucket struct{ le, count float64 }

// taskLatency is the SDK's workflow task histogram: a task's time in the
// worker, from its poll's answer to its completion (local activities it
// waits for included).
const taskLatency = "temporal_workflow_task_execution_latency_seconds"

// scraper returns a function reading a /metrics page into families.
func scraper(url string) func() ([]family, error) {
	return func() ([]family, error) {
		resp, err := http.Get(url)
		if err != nil {
			return nil, err
		}
		defer resp.Body.Close()
		return parseText(bufio.NewScanner(resp.Body))
	}
}

func parseText(sc *bufio.Scanner) ([]family, error) {
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	var out []family
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		sp := strings.LastIndexByte(line, ' ')
		if sp < 0 {
			continue
		}
		v, err := strconv.ParseFloat(line[sp+1:], 64)
		if err != nil {
			continue
		}
		name, labels := line[:sp], ""
		if i := strings.IndexByte(name, '{'); i >= 0 {
			name, labels = name[:i], name[i:]
		}
		out = append(out, family{name: name, labels: labels, value: v})
	}
	return out, sc.Err()
}

func gaugeValue(get func() ([]family, error), name, label string) (float64, bool) {
	fs, err := get()
	if err != nil {
		return 0, false
	}
	for _, f := range fs {
		if f.name == name && strings.Contains(f.labels, label) {
			return f.value, true
		}
	}
	return 0, false
}

// sumOf adds up a metric over every label set that contains label.
func sumOf(get func() ([]family, error), name, label string) float64 {
	fs, _ := get()
	total := 0.0
	for _, f := range fs {
		if f.name == name && strings.Contains(f.labels, label) {
			total += f.value
		}
	}
	return total
}

// maxOf is the largest value of a metric over its label sets.
func maxOf(get func() ([]family, error), name string) float64 {
	fs, _ := get()
	most := 0.0
	for _, f := range fs {
		if f.name == name {
			most = max(most, f.value)
		}
	}
	return most
}

// p99ms estimates a histogram's 99th percentile, in ms, summed over every
// label set that contains label ("" for all), from its cumulative buckets.
func p99ms(get func() ([]family, error), name, label string) float64 {
	fs, _ := get()
	return quantileMs(cumulative(fs, name, label), 0.99)
}

// cumulative sums a histogram's cumulative bucket counts (by upper bound)
// over every label set that contains label.
func cumulative(fs []family, name, label string) map[float64]float64 {
	les := map[float64]float64{}
	for _, f := range fs {
		if f.name != name+"_bucket" || !strings.Contains(f.labels, label) {
			continue
		}
		i := strings.Index(f.labels, `le="`)
		if i < 0 {
			continue
		}
		rest := f.labels[i+4:]
		le, err := strconv.ParseFloat(rest[:strings.IndexByte(rest, '"')], 64)
		if err != nil {
			continue
		}
		les[le] += f.value
	}
	return les
}

// histogramWindow reads a histogram now; its end reads it again and
// estimates the 99th percentile, in ms, of what was observed in between
// (the difference of the two readings): a figure of one step alone.
func histogramWindow(get func() ([]family, error), name string, labels ...string) (end func() float64) {
	sum := func(fs []family) map[float64]float64 {
		les := map[float64]float64{}
		for _, l := range labels {
			for le, n := range cumulative(fs, name, l) {
				les[le] += n
			}
		}
		return les
	}
	fs, _ := get()
	before := sum(fs)
	return func() float64 {
		fs, _ := get()
		les := sum(fs)
		for le, n := range before {
			les[le] -= n
		}
		return quantileMs(les, 0.99)
	}
}

// quantileMs is the q quantile, in ms, of cumulative bucket counts whose
// bounds are in seconds, linear within the bucket it falls in, as
// Prometheus' histogram_quantile.
func quantileMs(les map[float64]float64, q float64) float64 {
	var bs []bucket
	for le, n := range les {
		bs = append(bs, bucket{le, n})
	}
	sort.Slice(bs, func(i, j int) bool { return bs[i].le < bs[j].le })
	if len(bs) == 0 || bs[len(bs)-1].count <= 0 {
		return math.NaN()
	}
	want := q * bs[len(bs)-1].count
	prevLe, prevN := 0.0, 0.0
	for _, b := range bs {
		if b.count >= want {
			if math.IsInf(b.le, 1) {
				return round(prevLe * 1000)
			}
			frac := (want - prevN) / math.Max(b.count-prevN, 1e-9)
			return round((prevLe + frac*(b.le-prevLe)) * 1000)
		}
		prevLe, prevN = b.le, b.count
	}
	return math.NaN()
}

// ---- processes ----
