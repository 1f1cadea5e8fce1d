package main

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// The soak's goals on goroutines and fds are "no growth beyond noise": a
// slope whose 95 % interval holds 0 is noise, one whose interval does not
// is growth.
func TestSlopeHalfWidth_TellsGrowthFromNoise(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var x, flat, growing, saw []float64
	for i := range 105 { // minutes 15 to 120, in hours
		h := float64(15+i) / 60
		x = append(x, h)
		noise := rng.NormFloat64() * 20
		flat = append(flat, 1400+noise)
		growing = append(growing, 1400+40*h+noise)
		saw = append(saw, 1400+float64(i%10)*8+noise) // a collection's saw, no trend
	}
	for name, c := range map[string]struct {
		y      []float64
		growth bool
	}{"flat": {flat, false}, "growing": {growing, true}, "saw": {saw, false}} {
		b, hw := slope(x, c.y), slopeHalfWidth(x, c.y)
		require.False(t, math.IsNaN(hw), name)
		require.Equal(t, c.growth, b-hw > 0, "%s: slope %.1f ± %.1f", name, b, hw)
	}
	require.True(t, math.IsNaN(slopeHalfWidth(x[:3], flat[:3])), "too few samples to say")
}
