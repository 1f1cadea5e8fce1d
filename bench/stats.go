package main

// Small statistics and helpers of the figures.

import (
	"math"
	"net"
	"sort"
)

func pct(v []float64, p float64) float64 {
	if len(v) == 0 {
		return math.NaN()
	}
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	i := int(math.Ceil(p/100*float64(len(s)))) - 1
	return round(s[max(0, min(i, len(s)-1))])
}

func mean(v []float64) float64 {
	if len(v) == 0 {
		return math.NaN()
	}
	s := 0.0
	for _, x := range v {
		s += x
	}
	return s / float64(len(v))
}

func round(f float64) float64 { return math.Round(f*1000) / 1000 }

func ratio(a, b any) float64 {
	x, _ := a.(float64)
	y, _ := b.(float64)
	if y == 0 {
		return math.NaN()
	}
	return round(x / y)
}

func freePort() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

// ---- metrics ----
