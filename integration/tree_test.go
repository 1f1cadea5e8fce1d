package integration

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/steward-sh/steward/workflows"
)

// A three-level tree with a crashing stub child under each strategy: the
// crash restarts only the child under one_for_one, every sibling under
// one_for_all, and the child and those after it under rest_for_one.
func TestTreeStrategiesWithACrashingChild(t *testing.T) {
	needServer(t)
	group := func(name, strategy string) string {
		return fmt.Sprintf(`
  - name: %s
    strategy: %s
    intensity: {maxRestarts: 1000, period: 1m}
    children:
      - {name: before, kind: stub, observe: {interval: 1h}}
      - name: crasher
        kind: stub
        stub: {crashAfter: 1500ms}
        backoff: {initial: 200ms, max: 500ms}
        observe: {interval: 1h}
      - {name: after, kind: stub, observe: {interval: 1h}}
`, name, strategy)
	}
	r := starter(t, "apply", "-f", writeSpec(t, "name: it-tree\nintensity: {maxRestarts: 1000, period: 1m}\nchildren:"+
		group("ofo", "one_for_one")+group("ofa", "one_for_all")+group("rfo", "rest_for_one")))
	require.Equal(t, 0, r.code, r.stdout+r.stderr)
	t.Cleanup(func() { deleteTree(t, "it-tree") })

	var root workflows.Status
	eventually(t, 2*time.Minute, func() (bool, string) {
		root = status(t, "it-tree")
		for _, g := range []string{"ofo", "ofa", "rfo"} {
			c, _ := root.Find("it-tree/" + g + "/crasher")
			if c.Restarts < 2 {
				return false, fmt.Sprintf("%s crasher restarted %d times", g, c.Restarts)
			}
		}
		return true, ""
	})
	restarts := func(path string) int {
		c, ok := root.Find(path)
		require.True(t, ok, path)
		return c.Restarts
	}
	require.Zero(t, restarts("it-tree/ofo/before"), "one_for_one: siblings untouched")
	require.Zero(t, restarts("it-tree/ofo/after"), "one_for_one: siblings untouched")
	require.NotZero(t, restarts("it-tree/ofa/before"), "one_for_all: every sibling restarts")
	require.NotZero(t, restarts("it-tree/ofa/after"), "one_for_all: every sibling restarts")
	require.Zero(t, restarts("it-tree/rfo/before"), "rest_for_one: those before are untouched")
	require.NotZero(t, restarts("it-tree/rfo/after"), "rest_for_one: those after restart")
	for _, g := range []string{"ofo", "ofa", "rfo"} {
		s, _ := root.Find("it-tree/" + g)
		require.Equal(t, "supervisor", s.Kind)
		require.NotEmpty(t, s.Strategy)
		require.Zero(t, s.Terminations, "%s did not give up", g)
	}
	require.Zero(t, root.Terminations)
}

// Escalation through three levels, across a worker process restart: a
// leaf that keeps crashing makes its supervisor give up; the root restarts
// that supervisor; when it gives up again the root gives up too and fails,
// and after its cooldown (which passes while the worker process is killed
// and replaced) it tries again.
func TestTreeEscalatesGivesUpAndRetriesAfterCooldownAcrossAWorkerRestart(t *testing.T) {
	needServer(t)
	r := starter(t, "apply", "-f", writeSpec(t, `
name: it-escalate
intensity: {maxRestarts: 1, period: 1m, cooldown: 8s}
children:
  - name: mid
    intensity: {maxRestarts: 1, period: 1m}
    backoff: {initial: 100ms}
    children:
      - {name: steady, kind: stub, observe: {interval: 1h}}
      - name: crasher
        kind: stub
        stub: {crashAfter: 500ms}
        backoff: {initial: 100ms, max: 200ms}
        observe: {interval: 1h}
  - {name: other, kind: stub, observe: {interval: 1h}}
`))
	require.Equal(t, 0, r.code, r.stdout+r.stderr)
	t.Cleanup(func() { deleteTree(t, "it-escalate") })

	root := waitState(t, "it-escalate", "failed", 2*time.Minute)
	require.Contains(t, root.Reason, "gave up: more than 1 restarts in 1m0s")
	require.Equal(t, 1, root.Terminations)
	mid, _ := root.Find("it-escalate/mid")
	require.GreaterOrEqual(t, mid.Terminations, 2, "mid gave up twice: %+v", mid)
	for _, p := range []string{"it-escalate/other", "it-escalate/mid/steady", "it-escalate/mid/crasher"} {
		c, _ := root.Find(p)
		require.Equal(t, "stopped", c.State, "%s: %s", p, c.Reason)
	}
	out := starter(t, "status", "it-escalate")
	require.Equal(t, 0, out.code, out.stderr)
	require.Regexp(t, `it-escalate\s+supervisor one_for_one\s+failed`, out.stdout)

	// The cooldown passes while no worker process runs.
	mainWorker.kill()
	w, err := startWorker("worker-escalate")
	require.NoError(t, err)
	mainWorker = w
	eventually(t, 2*time.Minute, func() (bool, string) {
		st := status(t, "it-escalate")
		return st.Restarts >= 1, fmt.Sprintf("root %s (%s), restarts %d", st.State, st.Reason, st.Restarts)
	})
}
