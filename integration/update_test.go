package integration

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/steward-sh/steward/workflows"
)

// readyServer is the ready probe of the update test: /v1/NAME and
// /v2/NAME pass, /bad/NAME never does; it records every path asked.
type readyServer struct {
	mu    sync.Mutex
	asked map[string]int
}

func (s *readyServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.asked[r.URL.Path]++
	s.mu.Unlock()
	if strings.HasPrefix(r.URL.Path, "/bad/") {
		w.WriteHeader(http.StatusServiceUnavailable)
	}
}

func (s *readyServer) askedUnder(prefix string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for p := range s.asked {
		if strings.HasPrefix(p, prefix) {
			out = append(out, strings.TrimPrefix(p, prefix))
		}
	}
	sort.Strings(out)
	return out
}

// A change of four process services whose ready probe gates them rolls out
// one at a time (maxParallel 1): no two are ever down together. A bad
// change (a ready probe that never passes) fails at its first worker, no
// other is touched, and autoRevert brings that one back on the spec before;
// apply --wait exits 1 naming it.
func TestUpdateRollsOutUnderItsPolicyAndRevertsABadChange(t *testing.T) {
	needServer(t)
	rs := &readyServer{asked: map[string]int{}}
	srv := httptest.NewServer(rs)
	defer srv.Close()
	tree := func(version string) string {
		return writeSpec(t, fmt.Sprintf(`name: it-upd
vars: {ready: "%s/%s"}
update: {maxParallel: 1, minHealthyTime: 1s, healthyDeadline: 15s, autoRevert: true}
children:
  - {name: w0, kind: process, process: {command: sleep, args: ["300"], ready: {http: "{{ .Vars.ready }}/{{ .Name }}", interval: 200ms}}}
  - {name: w1, kind: process, process: {command: sleep, args: ["300"], ready: {http: "{{ .Vars.ready }}/{{ .Name }}", interval: 200ms}}}
  - {name: w2, kind: process, process: {command: sleep, args: ["300"], ready: {http: "{{ .Vars.ready }}/{{ .Name }}", interval: 200ms}}}
  - {name: w3, kind: process, process: {command: sleep, args: ["300"], ready: {http: "{{ .Vars.ready }}/{{ .Name }}", interval: 200ms}}}
`, srv.URL, version))
	}
	r := starter(t, "apply", "-f", tree("v1"), "--wait", "-m", "first")
	require.Equal(t, 0, r.code, r.stdout+r.stderr)
	t.Cleanup(func() { deleteTree(t, "it-upd") })
	// Applied again unchanged: no revision.
	r = starter(t, "apply", "-f", tree("v1"))
	require.Equal(t, 0, r.code, r.stdout+r.stderr)
	pids := map[string]int{}
	for i := range 4 {
		p := fmt.Sprintf("it-upd/w%d", i)
		pids[p] = pidOf(t, status(t, p).Instance)
	}

	applied := time.Now()
	r = starter(t, "apply", "-f", tree("v2"), "--wait")
	require.Equal(t, 0, r.code, r.stdout+r.stderr)
	require.Contains(t, r.stdout, "update of it-upd:", "apply --wait shows the update's progress:\n%s", r.stdout)
	require.Equal(t, []string{"w0", "w1", "w2", "w3"}, rs.askedUnder("/v2/"))
	// Down: from leaving running to running again, per worker, from its
	// journal. With maxParallel 1, no two of these overlap.
	type span struct {
		path       string
		down, back time.Time
	}
	var spans []span
	for i := range 4 {
		p := fmt.Sprintf("it-upd/w%d", i)
		require.NotEqual(t, pids[p], pidOf(t, status(t, p).Instance), "%s restarted", p)
		var sp span
		sp.path = p
		for _, e := range journal(t, p) {
			switch {
			case e.Time.Before(applied.Add(-time.Second)):
			case e.From == "running" && sp.down.IsZero():
				sp.down = e.Time
			case e.State == "running" && !sp.down.IsZero() && sp.back.IsZero():
				sp.back = e.Time
			}
		}
		require.False(t, sp.down.IsZero() || sp.back.IsZero(), "%s went down and came back: %+v", p, sp)
		spans = append(spans, sp)
	}
	sort.Slice(spans, func(i, j int) bool { return spans[i].down.Before(spans[j].down) })
	for i := 1; i < len(spans); i++ {
		require.False(t, spans[i].down.Before(spans[i-1].back.Add(time.Second)),
			"%s went down at %s, before %s had run 1s (back at %s)", spans[i].path, spans[i].down, spans[i-1].path, spans[i-1].back)
	}
	var root workflows.Status
	sr := starter(t, "status", "it-upd", "-o", "json")
	require.Equal(t, 0, sr.code, sr.stderr)
	require.NoError(t, json.Unmarshal([]byte(sr.stdout), &root))
	require.EqualValues(t, 2, root.Revision)
	require.Equal(t, "complete", root.Update.State)
	require.Equal(t, 4, root.Update.Updated)

	// A rollout under a supervisor whose policy writes maxParallel is cut
	// to it (said on stderr; the JSON result is as ever).
	r = starter(t, "rollout", "restart", "it-upd", "--chunk", "4", "-o", "json")
	require.Equal(t, 0, r.code, r.stdout+r.stderr)
	require.Contains(t, r.stderr, "rollout: --chunk 4 cut to 1: the update policy of it-upd writes maxParallel 1")
	var rolled struct{ Total, Succeeded int }
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &rolled), r.stdout)
	require.Equal(t, 4, rolled.Succeeded)

	// The bad change.
	hits := func(path string) int {
		rs.mu.Lock()
		defer rs.mu.Unlock()
		return rs.asked[path]
	}
	v2w0 := hits("/v2/w0")
	r = starter(t, "apply", "-f", tree("bad"), "--wait", "--timeout", "2m", "--message", "the bad one")
	require.Equal(t, 1, r.code, r.stdout+r.stderr)
	require.Contains(t, r.stderr, "the update of it-upd reverted", r.stderr)
	require.Contains(t, r.stderr, "worker it-upd/w0", r.stderr)
	require.Equal(t, []string{"w0"}, rs.askedUnder("/bad/"), "only the first worker was given the bad spec")
	eventually(t, time.Minute, func() (bool, string) {
		st := status(t, "it-upd/w0")
		return st.State == "running", fmt.Sprintf("%+v", st)
	})
	sr = starter(t, "status", "it-upd", "-o", "json")
	require.Equal(t, 0, sr.code, sr.stderr)
	require.NoError(t, json.Unmarshal([]byte(sr.stdout), &root))
	require.EqualValues(t, 3, root.Revision)
	require.Equal(t, "reverted", root.Update.State)
	for _, c := range root.Children {
		require.Equal(t, "running", c.State, c.Path)
	}
	require.Greater(t, hits("/v2/w0"), v2w0, "w0 was started again on the spec before the bad one (its probe asked at /v2)")

	// The revisions: what each apply changed and how it ended.
	rows := revisions(t, "it-upd")
	require.Len(t, rows, 3, "%+v", rows)
	for i, want := range []string{"complete", "complete", "reverted"} {
		require.EqualValues(t, i+1, rows[i].Revision)
		require.Equal(t, want, rows[i].Outcome, "%+v", rows[i])
		require.NotEmpty(t, rows[i].User)
		require.NotEmpty(t, rows[i].Digest)
	}
	require.Equal(t, "first", rows[0].Message)
	require.Equal(t, "the bad one", rows[2].Message)
	require.Contains(t, rows[2].Reason, "worker it-upd/w0")

	// A revert to revision 1 is revision 4, rolled out under the policy:
	// every worker restarted on the spec of revision 1.
	for i := range 4 {
		p := fmt.Sprintf("it-upd/w%d", i)
		pids[p] = pidOf(t, status(t, p).Instance)
	}
	r = starter(t, "revert", "it-upd", "--to", "1", "--wait")
	require.Equal(t, 0, r.code, r.stdout+r.stderr)
	require.Contains(t, r.stdout, "applying revision 1")
	for i := range 4 {
		p := fmt.Sprintf("it-upd/w%d", i)
		require.NotEqual(t, pids[p], pidOf(t, status(t, p).Instance), "%s restarted", p)
	}
	rows = revisions(t, "it-upd")
	require.Len(t, rows, 4, "%+v", rows)
	require.Equal(t, "revert to revision 1", rows[3].Message)
	require.Equal(t, "complete", rows[3].Outcome, "%+v", rows[3])
	require.Equal(t, rows[0].Digest, rows[3].Digest)
	sr = starter(t, "status", "it-upd", "-o", "json")
	require.Equal(t, 0, sr.code, sr.stderr)
	require.NoError(t, json.Unmarshal([]byte(sr.stdout), &root))
	require.EqualValues(t, 4, root.Revision)

	r = starter(t, "revert", "it-upd", "--to", "4")
	require.Equal(t, 2, r.code, "reverting to the current revision is bad input: %s", r.stdout+r.stderr)
	require.Contains(t, r.stderr, "revision 4 is the current one")
}

// revisionRow is a row of `starter revisions -o json`.
type revisionRow struct {
	Revision                                     int64
	Time                                         time.Time
	Digest, Message, User, Host, Outcome, Reason string
}

func revisions(t *testing.T, name string) []revisionRow { return revisionsAt(t, address, name) }

// revisionsAt is the revisions of the tree name on the server at addr,
// once none is rolling.
func revisionsAt(t *testing.T, addr, name string) []revisionRow {
	t.Helper()
	var rows []revisionRow
	eventually(t, time.Minute, func() (bool, string) {
		r := starter(t, "--address", addr, "revisions", name, "-o", "json")
		if r.code != 0 {
			return false, r.stderr
		}
		rows = nil
		require.NoError(t, json.Unmarshal([]byte(r.stdout), &rows), r.stdout)
		for _, row := range rows {
			if row.Outcome == "rolling" {
				return false, r.stdout
			}
		}
		return true, ""
	})
	return rows
}
