package tick

import (
	"testing"
	"time"
)

// BenchmarkNext measures one tick: a running worker seeing its service crash
// and scheduling a backoff restart (the busiest path).
func BenchmarkNext(b *testing.B) {
	now := time.Unix(1_700_000_000, 0)
	s := Snapshot{
		Now:         now,
		Memory:      Memory{State: Running, Instance: "i1", RunningSince: now.Add(-time.Minute), Failures: make([]time.Time, MaxFailures)},
		Desired:     WantRunning,
		RestartType: Permanent,
		Backoff:     BackoffPolicy{Initial: time.Second, Max: time.Minute, Multiplier: 2, Jitter: 0.1, ResetAfter: time.Hour},
		JitterKey:   HashKey("plant/line-1/press"),
		Event:       EventExited,
		Exit:        &Exit{Instance: "i1"},
	}
	b.ReportAllocs()
	for b.Loop() {
		d := Next(s)
		if d.Memory.State != Backoff {
			b.Fatal(d.Memory.State)
		}
	}
}
