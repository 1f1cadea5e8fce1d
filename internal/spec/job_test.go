package spec

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A job's block: exactly one of schedule, every and once; every field's
// problem named by its path; what a job cannot take refused.
func TestValidateJob(t *testing.T) {
	const head = "name: t\nchildren:\n  - name: backup\n"
	proc := "    kind: process\n    process: {command: /bin/true}\n"
	for name, tc := range map[string]struct {
		node string
		want []string // problems, as "path: message" prefixes
	}{
		"cron":           {node: proc + "    job: {schedule: \"0 3 * * *\"}\n"},
		"descriptor":     {node: proc + "    job: {schedule: \"@daily\", timezone: Europe/Paris, overlap: bufferOne}\n"},
		"every":          {node: proc + "    job: {every: 6h, jitter: 10s, catchupWindow: 5m, pauseOnFailure: true, timeout: 30m}\n"},
		"once":           {node: proc + "    job: {once: true, timeout: 10m}\n"},
		"stub":           {node: "    kind: stub\n    stub: {exitAfter: 1s}\n    job: {every: 10s}\n"},
		"none":           {node: proc + "    job: {timeout: 1m}\n", want: []string{"children[0].job: give exactly one of"}},
		"two":            {node: proc + "    job: {every: 1m, once: true}\n", want: []string{"children[0].job: give exactly one of"}},
		"bad cron":       {node: proc + "    job: {schedule: \"61 * * * *\"}\n", want: []string{"children[0].job.schedule: \"61 * * * *\" is not a cron expression"}},
		"six fields":     {node: proc + "    job: {schedule: \"0 0 3 * * *\"}\n", want: []string{"children[0].job.schedule:"}},
		"tz in cron":     {node: proc + "    job: {schedule: \"CRON_TZ=UTC 0 3 * * *\"}\n", want: []string{"children[0].job.schedule: give the time zone as job.timezone"}},
		"@every":         {node: proc + "    job: {schedule: \"@every 1h\"}\n", want: []string{"children[0].job.schedule: give an interval as job.every"}},
		"short every":    {node: proc + "    job: {every: 10ms}\n", want: []string{"children[0].job.every: 10ms is too short"}},
		"bad timezone":   {node: proc + "    job: {every: 1m, timezone: \"../../etc/passwd\"}\n", want: []string{"children[0].job.timezone:"}},
		"bad overlap":    {node: proc + "    job: {every: 1m, overlap: sometimes}\n", want: []string{"children[0].job.overlap:"}},
		"zero timeout":   {node: proc + "    job: {every: 1m, timeout: 0s}\n", want: []string{"children[0].job.timeout: must be > 0"}},
		"long timeout":   {node: proc + "    job: {every: 1m, timeout: 8d}\n", want: []string{"children[0].job.timeout: 192h0m0s is too long"}},
		"once with tz":   {node: proc + "    job: {once: true, timezone: UTC}\n", want: []string{"children[0].job: a once job takes only timeout"}},
		"http":           {node: "    kind: http\n    http: {start: {url: \"http://127.0.0.1:1/run\"}}\n    job: {every: 1m}\n"},
		"http no start":  {node: "    kind: http\n    http: {health: {url: \"http://127.0.0.1:1/\"}}\n    job: {every: 1m}\n", want: []string{"children[0].http.start: required for an http job"}},
		"stub forever":   {node: "    kind: stub\n    job: {every: 1m}\n", want: []string{"children[0].stub: a stub job needs exitAfter"}},
		"restart":        {node: proc + "    restart: permanent\n    job: {every: 1m}\n", want: []string{"children[0].restart: a job is not restarted"}},
		"backoff":        {node: proc + "    backoff: {initial: 1s}\n    job: {every: 1m}\n", want: []string{"children[0].backoff: a job is not restarted"}},
		"observe":        {node: proc + "    observe: {interval: 1m}\n    job: {every: 1m}\n", want: []string{"children[0].observe: a job is not observed"}},
		"instances":      {node: proc + "    instances: 2\n    job: {every: 1m}\n", want: []string{"children[0].instances: a job runs on one host"}},
		"supervisor job": {node: "    job: {every: 1m}\n    children: [{name: a, kind: stub}]\n", want: []string{"children[0].job: only workers"}},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := Parse([]byte(head + tc.node))
			if len(tc.want) == 0 {
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
			for _, w := range tc.want {
				require.True(t, strings.Contains(err.Error(), w), "want %q in:\n%s", w, err)
			}
		})
	}
}

// Every default of a job, written down.
func TestJobDefaults(t *testing.T) {
	r := Job{Every: Dur(DefaultJobTimeout)}.Resolved()
	require.Equal(t, "UTC", r.Timezone)
	require.Equal(t, OverlapSkip, r.Overlap)
	require.Equal(t, DefaultJobCatchupWindow, r.CatchupWindow.D())
	require.Equal(t, DefaultJobTimeout, r.Timeout.D())
	require.Zero(t, r.Jitter.D())
	require.Equal(t, "every 1h0m0s", r.What())
	require.Equal(t, "once", Job{Once: true}.What())
	require.Equal(t, "@daily", Job{Schedule: "@daily"}.What())
}

// An `every` job's phase is its own, stable, within its interval in whole
// seconds, and 100 jobs of one interval are spread over it, not due in
// one second.
func TestJobPhaseSpreadsAnInterval(t *testing.T) {
	seen := map[time.Duration]int{}
	for i := range 100 {
		path := fmt.Sprintf("bench-jobs/j%03d", i)
		p := Phase(path, 10*time.Second)
		require.Equal(t, p, Phase(path, 10*time.Second), "stable")
		require.True(t, p >= 0 && p < 10*time.Second, "%s: %s", path, p)
		require.Zero(t, p%time.Second, "whole seconds")
		seen[p]++
	}
	require.Len(t, seen, 10, "every second of the interval has some")
	for p, n := range seen {
		require.Less(t, n, 25, "%s holds %d of the 100", p, n)
	}
	require.Zero(t, Phase("t/j", time.Second), "an interval of a second has one phase")
	require.Zero(t, Phase("t/j", 500*time.Millisecond))
}
