package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/steward-sh/steward/internal/revision"
)

func logOf(revs ...int64) revision.Log {
	var l revision.Log
	for _, r := range revs {
		l.Entries = append(l.Entries, revision.Entry{Revision: r, Digest: "d", Outcome: revision.Complete, Holder: "h"})
	}
	return l
}

func TestRevertTarget(t *testing.T) {
	code := func(err error) int {
		var ee *exitError
		require.True(t, errors.As(err, &ee), "%v", err)
		return ee.code
	}
	got, err := revertTarget(logOf(3, 4, 5), 0)
	require.NoError(t, err)
	require.EqualValues(t, 4, got.Revision, "the one before the current")
	got, err = revertTarget(logOf(3, 4, 5), 3)
	require.NoError(t, err)
	require.EqualValues(t, 3, got.Revision)

	_, err = revertTarget(logOf(3, 4, 5), 5)
	require.ErrorContains(t, err, "revision 5 is the current one")
	require.Equal(t, 2, code(err))
	_, err = revertTarget(logOf(3, 4, 5), 1)
	require.ErrorContains(t, err, "revision 1 is not kept (kept: 3 to 5)")
	require.Equal(t, 2, code(err))
	_, err = revertTarget(logOf(7), 0)
	require.ErrorContains(t, err, "revision 7 is the only one kept")
	require.Equal(t, 1, code(err))
	_, err = revertTarget(revision.Log{}, 0)
	require.ErrorContains(t, err, "no revision kept")
}

func TestPrintRevisions(t *testing.T) {
	at := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	l := revision.Log{Entries: []revision.Entry{
		{Revision: 1, Time: at, Digest: "abc", Message: "first", User: "ops", Host: "laptop", Outcome: revision.Complete, Holder: "revision:t:r1"},
		{Revision: 2, Time: at, Digest: "def", User: "ops", Outcome: revision.Reverted, Reason: "t: never ready (worker t/w0)"},
	}}
	var b bytes.Buffer
	require.NoError(t, printRevisions(&b, l, "json"))
	var rows []map[string]any
	require.NoError(t, json.Unmarshal(b.Bytes(), &rows))
	require.Len(t, rows, 2)
	require.Equal(t, "first", rows[0]["message"])
	require.Equal(t, "laptop", rows[0]["host"])
	require.NotContains(t, rows[0], "holder", "the holder is the log's own business")
	require.Equal(t, "reverted", rows[1]["outcome"])
	require.Equal(t, "", rows[1]["message"], "every field of the contract is there, empty or not")

	b.Reset()
	require.NoError(t, printRevisions(&b, l, "text"))
	require.Contains(t, b.String(), "REVISION")
	require.Contains(t, b.String(), "ops@laptop")
	require.Contains(t, b.String(), "t: never ready (worker t/w0)")
}
