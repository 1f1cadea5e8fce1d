//go:build linux

package process

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestParseStatTakesFieldsAfterTheLastParenthesis(t *testing.T) {
	line := []byte("4242 (a (b) c) S 1 4240 4240 0 -1 4194560 100 0 0 0 250 50 0 0 20 0 1 0 12345 9000000 300 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0\n")
	pgrp, m, err := parseStat(line)
	require.NoError(t, err)
	require.Equal(t, 4240, pgrp)
	require.Equal(t, uint64(300), m.ticks, "utime 250 + stime 50")
	require.Equal(t, int64(300), m.rssBytes, "pages, before the page size")

	_, _, err = parseStat([]byte("4242 (x) S 1 2"))
	require.Error(t, err)
	_, _, err = parseStat([]byte("no name"))
	require.Error(t, err)
}

// A service that burns a core and a child of it in its group: the sample
// sums the group, its CPU only grows, and a service that ended is
// forgotten.
func TestSampleUsageSumsTheServicesGroup(t *testing.T) {
	t.Parallel()
	need(t, "sh")
	d, _ := newDriver(t, nil)
	r := req("tree/busy", map[string]any{"command": "sh", "args": []string{"-c", "sh -c 'while :; do :; done' & while :; do :; done"}, "startSeconds": "200ms"})
	id, err := d.Start(context.Background(), r)
	require.NoError(t, err)
	idle := req("tree/idle", sleepCfg())
	_, err = d.Start(context.Background(), idle)
	require.NoError(t, err)

	t0 := time.Now()
	require.NoError(t, d.SampleUsage(t0))
	first := d.Usage("tree/busy")["tree/busy"]
	require.Equal(t, t0, first.At)
	require.Positive(t, first.MemoryBytes)

	var u Usage
	deadline := time.Now().Add(20 * time.Second)
	for {
		time.Sleep(300 * time.Millisecond)
		require.NoError(t, d.SampleUsage(time.Now()))
		u = d.Usage("tree/busy")["tree/busy"]
		// Two busy loops: more than one core's worth when both run,
		// more than half a core on a machine that shares them.
		if u.CPUPercent > 50 || time.Now().After(deadline) {
			break
		}
	}
	require.Greater(t, u.CPUPercent, 50.0, "two busy loops in the group")
	require.Greater(t, u.CPUSeconds, first.CPUSeconds)
	require.Less(t, d.Usage("tree/idle")["tree/idle"].CPUPercent, 20.0, "sleep uses nothing")
	require.Len(t, d.Usage(), 2, "every service held")

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	r.Instance = id
	require.NoError(t, d.Stop(ctx, r))
	require.NoError(t, d.SampleUsage(time.Now()))
	require.NotContains(t, d.Usage(), "tree/busy", "a service that ended is forgotten")
	require.Contains(t, d.Usage(), "tree/idle")
}
