package main

// The soak's plots: its minute rows drawn with gonum/plot, a PNG per
// group of figures.

import (
	"math"
	"path/filepath"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
)

// soakPlot is one PNG: its title, Y axis and lines.
type soakPlot struct {
	file, title, y string
	lines          []soakLine
}

type soakLine struct {
	name string
	of   func(r soakRow) float64
}

var soakPlots = []soakPlot{
	{"memory", "Resident memory", "MiB", []soakLine{
		{"worker (kill -9 every 15 min)", func(r soakRow) float64 { return r.workerRSS }},
		{"3 host workers", func(r soakRow) float64 { return r.hostsRSS }},
		{"3 host workers' Go heap in use", func(r soakRow) float64 { return r.hostsHeapMiB }},
		{"3 host workers' live heap (after the last GC)", func(r soakRow) float64 { return r.hostsLiveMiB }},
		{"3 host workers' Go memory held (sys - released)", func(r soakRow) float64 { return r.hostsSysMiB - r.hostsReleasedMiB }},
		{"dev server", func(r soakRow) float64 { return r.serverRSS }},
	}},
	{"goroutines", "Goroutines and open files", "count", []soakLine{
		{"worker goroutines", func(r soakRow) float64 { return r.workerGoroutines }},
		{"host workers' goroutines", func(r soakRow) float64 { return r.hostsGoroutines }},
		{"worker fds", func(r soakRow) float64 { return r.workerFDs }},
		{"host workers' fds", func(r soakRow) float64 { return r.hostsFDs }},
		{"host workers' cached workflows", func(r soakRow) float64 { return r.hostsCached }},
	}},
	{"heap", "Worker heap objects", "objects", []soakLine{
		{"worker heap objects", func(r soakRow) float64 { return r.workerHeapObjects }},
	}},
	{"disk", "Disk", "MiB", []soakLine{
		{"server database", func(r soakRow) float64 { return r.dbMiB }},
		{"worker state dir", func(r soakRow) float64 { return r.stateMiB }},
		{"worker log dir", func(r soakRow) float64 { return r.logsMiB }},
	}},
	{"latency", "Latency", "ms", []soakLine{
		{"starter status", func(r soakRow) float64 { return r.statusMs }},
		{"kill -9 to running (probe)", func(r soakRow) float64 { return r.killToRunningMs }},
	}},
	{"history", "Longest history (sampled workflows)", "events", []soakLine{
		{"events", func(r soakRow) float64 { return r.maxHistory }},
	}},
	{"invariants", "Invariants", "count", []soakLine{
		{"workers not at desired", func(r soakRow) float64 { return r.notAtDesired }},
		{"duplicates", func(r soakRow) float64 { return r.duplicates }},
		{"orphans", func(r soakRow) float64 { return r.orphans }},
		{"failed workflow tasks", func(r soakRow) float64 { return r.taskFailures }},
	}},
}

// plotSoak writes stem-NAME.png for each plot and returns their file
// names.
func plotSoak(rows []soakRow, stem string) ([]string, error) {
	var files []string
	for _, sp := range soakPlots {
		p := plot.New()
		p.Title.Text = sp.title
		p.X.Label.Text = "minutes"
		p.Y.Label.Text = sp.y
		var args []any
		for _, l := range sp.lines {
			var xy plotter.XYs
			for _, r := range rows {
				if v := l.of(r); !math.IsNaN(v) {
					xy = append(xy, plotter.XY{X: r.minute, Y: v})
				}
			}
			if len(xy) > 0 {
				args = append(args, l.name, xy)
			}
		}
		if len(args) == 0 {
			continue
		}
		if err := plotutil.AddLinePoints(p, args...); err != nil {
			return nil, err
		}
		p.Legend.Top = true
		path := stem + "-" + sp.file + ".png"
		if err := p.Save(8*vg.Inch, 4*vg.Inch, path); err != nil {
			return nil, err
		}
		files = append(files, filepath.Base(path))
	}
	return files, nil
}
