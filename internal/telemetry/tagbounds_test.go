package telemetry

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Workflows of made-up types started on steward's task queue each made a
// series of the SDK's task metrics (tagged with the type), which the
// worker kept, and served at every scrape, for as long as it ran.
func TestMetrics_MadeUpWorkflowTypesMakeABoundedNumberOfSeries(t *testing.T) {
	m := NewMetrics(func(err error) { t.Error(err) })
	addr, err := m.Serve("127.0.0.1:0")
	require.NoError(t, err)
	defer m.Close()
	m.Handler.WithTags(map[string]string{"workflow_type": "SupervisorWorkflow", "namespace": "default"}).Counter("temporal_workflow_task_execution_failed").Inc(1)
	for i := range 1000 {
		m.Handler.WithTags(map[string]string{"workflow_type": fmt.Sprintf("Forged%d", i), "namespace": "default"}).Counter("temporal_workflow_task_execution_failed").Inc(1)
	}
	var got string
	require.Eventually(t, func() bool {
		got = scrape(t, addr)
		return strings.Contains(got, `temporal_workflow_task_execution_failed_total{namespace="default",workflow_type="_other"} 745`)
	}, 10*time.Second, 50*time.Millisecond, "the 745 values past the bound, counted as one (SupervisorWorkflow and 255 others had their own)")
	series := strings.Count(got, "\ntemporal_workflow_task_execution_failed_total{")
	require.Equal(t, tagValueBounds["workflow_type"]+1, series, "the bound's values and _other")
	require.True(t, strings.Contains(got, `workflow_type="SupervisorWorkflow"} 1`), "a value seen before the bound keeps its series")
}

// Tags whose values were all seen are passed as they are; a key of its
// own bound (the SDK's types) and the rest (paths) are bounded apart.
func TestTagBounds_EachKeyHasItsOwnBound(t *testing.T) {
	b := &tagBounds{seen: map[string]map[string]struct{}{}}
	for i := range DefaultTagValues {
		tags := map[string]string{"path": fmt.Sprint("t/", i)}
		require.Equal(t, tags, b.fit(tags))
	}
	require.Equal(t, map[string]string{"path": OtherTagValue, "host": "a"}, b.fit(map[string]string{"path": "new", "host": "a"}))
	require.Equal(t, map[string]string{"path": "t/7"}, b.fit(map[string]string{"path": "t/7"}))
	for i := range 300 {
		b.fit(map[string]string{"activity_type": fmt.Sprint(i)})
	}
	require.Len(t, b.seen["activity_type"], tagValueBounds["activity_type"])
}
