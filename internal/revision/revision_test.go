package revision

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

var t0 = time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)

func record(req string) Record {
	return Record{Request: req, Digest: "d-" + req, Message: "msg " + req, User: "ops", Host: "laptop"}
}

func TestLog_ARecordBecomesTheRevisionTheRootCounted(t *testing.T) {
	var l Log
	require.Empty(t, l.Add(record("a"), t0, "h-a"))
	require.Len(t, l.Pending, 1)
	require.Empty(t, l.Take(Taken{Request: "a", Revision: 1, Changed: true}))
	require.Empty(t, l.Pending)
	require.Equal(t, []Entry{{Revision: 1, Time: t0, Digest: "d-a", Message: "msg a", User: "ops", Host: "laptop", Outcome: Rolling, Holder: "h-a"}}, l.Entries)

	// An apply that changes nothing leaves no revision, and its spec goes.
	l.Add(record("b"), t0.Add(time.Minute), "h-b")
	require.Equal(t, []string{"h-b"}, l.Take(Taken{Request: "b", Revision: 1}))
	require.Len(t, l.Entries, 1)
	require.Empty(t, l.Pending)
	require.Equal(t, Rolling, l.Latest().Outcome, "an apply that changed nothing replaces nothing")

	// The next revision replaces one that still rolled.
	l.Add(record("c"), t0.Add(2*time.Minute), "h-c")
	l.Take(Taken{Request: "c", Revision: 2, Changed: true})
	require.Equal(t, Replaced, l.Find(1).Outcome)
	require.Contains(t, l.Find(1).Reason, "revision 2 came while it still rolled")
	require.Equal(t, Rolling, l.Find(2).Outcome)
}

func TestLog_AFinalOutcomeNeverChanges(t *testing.T) {
	var l Log
	l.Add(record("a"), t0, "h-a")
	l.Take(Taken{Request: "a", Revision: 1, Changed: true})
	require.False(t, l.Judged(OutcomeReport{Revision: 1, Outcome: Rolling}), "rolling is no judgement")
	require.True(t, l.Judged(OutcomeReport{Revision: 1, Outcome: Complete}))
	require.False(t, l.Judged(OutcomeReport{Revision: 1, Outcome: Failed, Reason: "late"}))
	require.False(t, l.Judged(OutcomeReport{Revision: 7, Outcome: Failed}), "no such revision")
	require.Equal(t, Complete, l.Find(1).Outcome)

	// A complete revision stays complete when a later one comes.
	l.Add(record("b"), t0, "h-b")
	l.Take(Taken{Request: "b", Revision: 2, Changed: true})
	require.Equal(t, Complete, l.Find(1).Outcome)
	require.Empty(t, l.Find(1).Reason)
}

func TestLog_KeepsTheLastTwentyAndDropsTheirHolders(t *testing.T) {
	var l Log
	var dropped []string
	for i := 1; i <= Keep+3; i++ {
		req := fmt.Sprint(i)
		l.Add(record(req), t0, "h-"+req)
		dropped = append(dropped, l.Take(Taken{Request: req, Revision: int64(i), Changed: true})...)
	}
	require.Len(t, l.Entries, Keep)
	require.EqualValues(t, 4, l.Entries[0].Revision)
	require.EqualValues(t, Keep+3, l.Latest().Revision)
	require.Equal(t, []string{"h-1", "h-2", "h-3"}, dropped)
	require.Len(t, l.Holders(), Keep)
}

func TestLog_PendingRecordsAreBounded(t *testing.T) {
	var l Log
	var dropped []string
	for i := range MaxPending + 2 {
		dropped = append(dropped, l.Add(record(fmt.Sprint(i)), t0, fmt.Sprint("h-", i))...)
	}
	require.Len(t, l.Pending, MaxPending)
	require.Equal(t, []string{"h-0", "h-1"}, dropped)
	// The same request again (an apply retried) keeps one record.
	require.Equal(t, []string{"h-6"}, l.Add(record("6"), t0, "h-6b"))
	require.Len(t, l.Pending, MaxPending)
	require.Equal(t, "h-6b", l.Pending[MaxPending-1].Holder)
}

func TestLog_ARevisionNoRecordNamesHasNoSpec(t *testing.T) {
	var l Log
	require.Empty(t, l.Take(Taken{Request: "", Revision: 3, Changed: true}))
	require.Equal(t, "", l.Latest().Holder)
	require.Contains(t, l.Latest().Reason, "no spec kept")
	require.Empty(t, l.Holders())
}

func TestLog_TheRootsCountRulesOverEntriesOfAnEarlierTree(t *testing.T) {
	var l Log
	for i := 1; i <= 3; i++ {
		req := fmt.Sprint(i)
		l.Add(record(req), t0, "h-"+req)
		l.Take(Taken{Request: req, Revision: int64(i), Changed: true})
	}
	l.Add(record("new"), t0, "h-new")
	require.Equal(t, []string{"h-2", "h-3"}, l.Take(Taken{Request: "new", Revision: 2, Changed: true}))
	require.Len(t, l.Entries, 2)
	require.Equal(t, "d-new", l.Latest().Digest)
}

func TestJudge(t *testing.T) {
	for _, c := range []struct {
		name    string
		root    int64
		settled bool
		ups     []Update
		want    Outcome
		because string
	}{
		{"not taken yet", 2, true, nil, Rolling, "not taken"},
		{"a newer one taken", 4, true, []Update{{Path: "t", State: "complete"}}, Rolling, "newer"},
		{"restarted nothing", 3, true, nil, Complete, ""},
		{"taken, not settled", 3, false, nil, Rolling, "not taken its spec"},
		{"every update complete", 3, true, []Update{{Path: "t", State: "complete"}, {Path: "t/g", State: "complete"}}, Complete, ""},
		{"complete here, not settled below", 3, false, []Update{{Path: "t", State: "complete"}}, Rolling, ""},
		{"one still rolls", 3, true, []Update{{Path: "t", State: "complete"}, {Path: "t/g", State: "paused"}}, Rolling, ""},
		{"one failed, one rolls", 3, false, []Update{{Path: "t", State: "failed", Reason: "not healthy", Failed: "w1"}, {Path: "t/g", State: "rolling"}}, Failed, "t: not healthy (worker t/w1)"},
		{"cancelled", 3, false, []Update{{Path: "t", State: "cancelled"}}, Failed, "t: cancelled by the operator"},
		{"reverted", 3, false, []Update{{Path: "t", State: "reverted", Reason: "never ready", Failed: "w0"}, {Path: "t/g", State: "complete"}}, Reverted, "t: never ready (worker t/w0)"},
		{"reverting still rolls", 3, true, []Update{{Path: "t", State: "reverting"}}, Rolling, ""},
		{"replaced", 3, true, []Update{{Path: "t", State: "replaced"}}, Replaced, "under t"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, why := Judge(c.root, 3, c.settled, c.ups)
			require.Equal(t, c.want, got)
			require.Contains(t, why, c.because)
			require.Equal(t, c.want != Rolling, got.Final())
		})
	}
}
