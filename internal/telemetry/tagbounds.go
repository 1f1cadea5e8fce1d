package telemetry

import (
	"maps"
	"sync"

	"go.temporal.io/sdk/client"
)

// What a worker's metrics are tagged with comes partly from outside it:
// the SDK tags every workflow task's metrics with the task's workflow
// type, and steward's own with workflow paths and host names. Anyone who
// may start workflows on steward's task queue chooses those (a thousand
// workflows of a thousand made-up types), and neither tally nor the
// Prometheus registry ever forgets a series: each new value was memory the
// worker kept, and lines every scrape carried, for as long as it ran. A
// worker left for months grows the same way with every tree deleted and
// applied under a new name. So each tag key has a bound on the values it
// takes; past it, a new value is reported as OtherTagValue.

// OtherTagValue stands for the values of a tag past its bound.
const OtherTagValue = "_other"

// DefaultTagValues bounds the values of a tag key not in tagValueBounds:
// paths and hosts of every tree and fleet a worker serves.
const DefaultTagValues = 10_000

// tagValueBounds are the keys with a bound of their own: the SDK's type
// tags, of which steward registers a few dozen.
var tagValueBounds = map[string]int{"workflow_type": 256, "activity_type": 256, "operation": 256}

// tagBounds counts, per tag key, the values it has let through.
type tagBounds struct {
	mu   sync.RWMutex
	seen map[string]map[string]struct{}
}

// fit is tags with each value past its key's bound replaced by
// OtherTagValue (tags itself when none is).
func (b *tagBounds) fit(tags map[string]string) map[string]string {
	b.mu.RLock()
	known := true
	for k, v := range tags {
		if _, ok := b.seen[k][v]; !ok {
			known = false
			break
		}
	}
	b.mu.RUnlock()
	if known {
		return tags
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	var out map[string]string
	for k, v := range tags {
		vals := b.seen[k]
		if _, ok := vals[v]; ok {
			continue
		}
		limit, ok := tagValueBounds[k]
		if !ok {
			limit = DefaultTagValues
		}
		if len(vals) < limit {
			if vals == nil {
				vals = map[string]struct{}{}
				b.seen[k] = vals
			}
			vals[v] = struct{}{}
			continue
		}
		if out == nil {
			out = maps.Clone(tags)
		}
		out[k] = OtherTagValue
	}
	if out == nil {
		return tags
	}
	return out
}

// boundedHandler is a metrics handler whose tags are held to tagBounds.
type boundedHandler struct {
	client.MetricsHandler
	bounds *tagBounds
}

// BoundTags is h with the values of each tag key bounded (tagBounds); the
// handlers it derives share the bounds.
func BoundTags(h client.MetricsHandler) client.MetricsHandler {
	return boundedHandler{h, &tagBounds{seen: map[string]map[string]struct{}{}}}
}

func (h boundedHandler) WithTags(tags map[string]string) client.MetricsHandler {
	return boundedHandler{h.MetricsHandler.WithTags(h.bounds.fit(tags)), h.bounds}
}
