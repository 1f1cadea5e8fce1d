package treestatus

import (
	"context"
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/steward-sh/steward/internal/spec"
)

// A workflow started by hand at a root's ID answered `status` with itself,
// fifty times, as its children: every answer was nested and asked again,
// and the tree grew without end (133,000 goroutines in a second).
func TestAssemble_AnAnswerNamingItselfAsItsChildrenIsLeftOut(t *testing.T) {
	var asked atomic.Int64
	evil := Status{Path: "evil", Kind: spec.KindSupervisor, State: "running", Desired: "running"}
	for range 50 {
		evil.Children = append(evil.Children, Status{Path: "evil", Kind: spec.KindSupervisor})
	}
	q := func(_ context.Context, path string) (Status, error) {
		asked.Add(1)
		return evil, nil
	}
	st, err := Assemble(context.Background(), "evil", q, Options{})
	require.NoError(t, err)
	require.Empty(t, st.Children)
	require.Contains(t, st.Stale, "50 rows that are not its children")
	require.EqualValues(t, 1, asked.Load(), "only the root was asked")
}

// Rows of another tree in an answer (a rollout of prod then restarted
// billing/db), a grandchild named as a child, and one child named twice
// are not the supervisor's: they are left out, its own kept.
func TestAssemble_RowsThatAreNotTheSupervisorsOwnChildrenAreLeftOut(t *testing.T) {
	m := map[string]Status{
		"prod": {Path: "prod", Kind: spec.KindSupervisor, Children: []Status{
			{Path: "prod/web", Kind: "stub"},
			{Path: "billing/db", Kind: "process"},
			{Path: "prod/a/b", Kind: "stub"},
			{Path: "prod/", Kind: "stub"},
			{Path: "prod/web", Kind: "stub"},
			{Path: "prodx/web", Kind: "stub"},
		}},
	}
	st, err := Assemble(context.Background(), "prod", query(m), Options{})
	require.NoError(t, err)
	require.Equal(t, []string{"prod/web"}, st.Leaves())
	require.Contains(t, st.Stale, "5 rows")
}

// A child whose workflow answers with another path's status is not taken
// for it; a root's answer is its own row, with nothing below it asked.
func TestAssemble_AnAnswerForAnotherPathIsNotTaken(t *testing.T) {
	m := answers()
	m["plant/line-1"] = Status{Path: "billing", Kind: spec.KindSupervisor, Children: []Status{{Path: "billing/db", Kind: "process"}}}
	st, err := Assemble(context.Background(), "plant", query(m), Options{})
	require.NoError(t, err)
	line, ok := st.Find("plant/line-1")
	require.True(t, ok)
	require.Contains(t, line.Stale, `answered as "billing"`)
	require.NotContains(t, st.Leaves(), "billing/db")

	m["plant"] = Status{Path: "other", Kind: spec.KindSupervisor, Children: []Status{{Path: "other/x", Kind: spec.KindSupervisor}}}
	root, err := Assemble(context.Background(), "plant", query(m), Options{})
	require.NoError(t, err, "its own row is shown, as it answered")
	require.Equal(t, "other", root.Path)
	require.Empty(t, root.Children, "nothing it names is asked")
}

// A chain of supervisors started by hand, each naming the next one level
// down, is asked no deeper than a tree may be.
func TestAssemble_NoLevelBelowTheDeepestATreeHasIsAsked(t *testing.T) {
	var deepest atomic.Int64
	q := func(_ context.Context, path string) (Status, error) {
		d := int64(len(path)) // "a", "a/a", ...: 2 characters a level
		if d > deepest.Load() {
			deepest.Store(d)
		}
		return Status{Path: path, Kind: spec.KindSupervisor, Children: []Status{{Path: path + "/a", Kind: spec.KindSupervisor}}}, nil
	}
	_, err := Assemble(context.Background(), "a", q, Options{Parallel: 1})
	require.NoError(t, err)
	require.EqualValues(t, 2*spec.MaxDepth-1, deepest.Load(), "level MaxDepth is asked, none below it")
}

// Many workflows started by hand, each answering the most children a
// supervisor has, are held to MaxRows in all.
func TestAssemble_TheRowsOfOneAssemblyAreBounded(t *testing.T) {
	q := func(_ context.Context, path string) (Status, error) {
		st := Status{Path: path, Kind: spec.KindSupervisor}
		for i := range spec.MaxExpandedChildren + 10 {
			kind := "stub"
			if i < 200 {
				kind = spec.KindSupervisor
			}
			st.Children = append(st.Children, Status{Path: path + "/" + strconv.Itoa(i), Kind: kind})
		}
		return st, nil
	}
	st, err := Assemble(context.Background(), "r", q, Options{})
	require.NoError(t, err)
	rows := 0
	var walk func(s Status)
	walk = func(s Status) {
		rows += len(s.Children)
		for _, c := range s.Children {
			walk(c)
		}
	}
	walk(st)
	require.Equal(t, MaxRows, rows)
	require.Contains(t, st.Stale, "10 rows", "the root's own answer: past what a supervisor holds")
}
