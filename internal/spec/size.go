package spec

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Size is an amount of memory as a spec writes it: a number of bytes, or a
// number with a binary unit (Ki, Mi, Gi, Ti: 1024^n) or a decimal one (K,
// M, G, T: 1000^n), as Kubernetes writes quantities: 512Mi, 1Gi, 1.5G.
// It is kept as written; Bytes reads it.
type Size string

var sizeUnits = []struct {
	suffix string
	mult   float64
}{
	{"Ki", 1 << 10}, {"Mi", 1 << 20}, {"Gi", 1 << 30}, {"Ti", 1 << 40},
	{"K", 1e3}, {"M", 1e6}, {"G", 1e9}, {"T", 1e12},
}

// Bytes is the size in bytes; an error names what is wrong.
func (s Size) Bytes() (int64, error) {
	str := strings.TrimSpace(string(s))
	mult := 1.0
	for _, u := range sizeUnits {
		if num, ok := strings.CutSuffix(str, u.suffix); ok {
			str, mult = num, u.mult
			break
		}
	}
	v, err := strconv.ParseFloat(str, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("%q is not a size (bytes, or a number with Ki, Mi, Gi, Ti, K, M, G or T: 256Mi)", string(s))
	}
	b := v * mult
	if b < 1 || b > math.MaxInt64/2 {
		return 0, fmt.Errorf("%q is out of range (at least 1 byte)", string(s))
	}
	return int64(b), nil
}

// FormatSize formats a byte count in binary units, as a spec would write it.
func FormatSize(n int64) string {
	for _, u := range []struct {
		s string
		m int64
	}{{"Ti", 1 << 40}, {"Gi", 1 << 30}, {"Mi", 1 << 20}, {"Ki", 1 << 10}} {
		if n >= u.m {
			if n%u.m == 0 {
				return fmt.Sprintf("%d%s", n/u.m, u.s)
			}
			return fmt.Sprintf("%.1f%s", float64(n)/float64(u.m), u.s)
		}
	}
	return fmt.Sprintf("%dB", n)
}
