package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/steward-sh/steward/workflows"
)

// A host that did not answer is listed, as unanswered with its error, next
// to the hosts that did (a CI run: one query timed out, and `starter hosts`
// failed whole, the others unlisted).
func TestPrintHostsListsAHostThatDidNotAnswer(t *testing.T) {
	since := time.Date(2026, 11, 27, 1, 0, 0, 0, time.UTC)
	lines := []hostLine{
		{HostView: workflows.HostView{Name: "f1", State: hostUnanswered}, err: errors.New("query host f1: context deadline exceeded")},
		{HostView: workflows.HostView{Name: "f2", State: workflows.HostUp, Since: since, Services: 3, Build: "b1", Address: "10.0.0.2", BootedAt: since.Add(-time.Hour)}},
	}
	var js bytes.Buffer
	require.NoError(t, printHosts(&js, lines, "json"))
	var rows []hostRow
	require.NoError(t, json.Unmarshal(js.Bytes(), &rows))
	require.Len(t, rows, 2)
	require.Equal(t, hostRow{Name: "f1", State: "unanswered", Error: "query host f1: context deadline exceeded"}, rows[0])
	require.Equal(t, "up", rows[1].State)
	require.Empty(t, rows[1].Error)
	require.Equal(t, 3, rows[1].Services)

	var text bytes.Buffer
	require.NoError(t, printHosts(&text, lines, "text"))
	got := strings.Split(strings.TrimSpace(text.String()), "\n")
	require.Len(t, got, 3)
	require.Equal(t, []string{"f1", "unanswered", "-", "0", "-", "-", "-"}, strings.Fields(got[1]))
	require.Equal(t, "f2", strings.Fields(got[2])[0])
	require.Contains(t, got[0], "BOOTED")
	require.Contains(t, got[2], since.Add(-time.Hour).Local().Format(time.DateTime), "when the host booted")
	require.Equal(t, since.Add(-time.Hour), rows[1].BootedAt)
}
