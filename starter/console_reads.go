package main

import (
	"sync"
	"time"

	"golang.org/x/sync/singleflight"
)

// sharedReads makes one read of a host serve every page of the console
// that asks the same thing (a log's tail, a follow from one position, a
// service's usage) at once or within keepReadsFor: a read is a workflow
// on the server and an activity on the host, and pages that open, reload
// or poll together, or a client that asks again and again, cost one per
// key and keepReadsFor, not one each.
type sharedReads struct {
	flight singleflight.Group
	mu     sync.Mutex
	kept   map[string]keptRead
	now    func() time.Time
}

type keptRead struct {
	at time.Time
	v  any
}

// keepReadsFor is how long a read's answer serves the same request again.
const keepReadsFor = time.Second

// do answers key with read, or with its answer of less than keepReadsFor
// ago, or with the answer of the same read under way.
func (r *sharedReads) do(key string, read func() (any, error)) (any, error) {
	now := time.Now
	if r.now != nil {
		now = r.now
	}
	r.mu.Lock()
	if k, ok := r.kept[key]; ok && now().Sub(k.at) < keepReadsFor {
		r.mu.Unlock()
		return k.v, nil
	}
	r.mu.Unlock()
	v, err, _ := r.flight.Do(key, func() (any, error) {
		v, err := read()
		if err == nil {
			r.mu.Lock()
			if r.kept == nil {
				r.kept = map[string]keptRead{}
			}
			for k, old := range r.kept { // few keys: the pages open now
				if now().Sub(old.at) >= keepReadsFor {
					delete(r.kept, k)
				}
			}
			r.kept[key] = keptRead{at: now(), v: v}
			r.mu.Unlock()
		}
		return v, err
	})
	return v, err
}
