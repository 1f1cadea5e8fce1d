package hostcore

import (
	"fmt"
	"slices"
	"sort"

	"github.com/steward-sh/steward/internal/spec"
)

// The subscriber's side: what a supervisor with workers on hosts
// (workflows/fleet.go) tells each host, and what it takes of what a host
// tells it.

// Worker is one of a supervisor's workers as its hosts see it: its path,
// the hosts of its list, and the host it runs on ("" none yet).
type Worker struct {
	Path  string
	Hosts []string
	On    string
}

// Movable says whether a worker on host h could run elsewhere (its list
// names another host).
func Movable(hosts []string, h string) bool {
	return slices.ContainsFunc(hosts, func(o string) bool { return o != h })
}

// Subscriptions is what supervisor tells each host its workers list: every
// host of a worker's list (an empty subscription too: the supervisor hears
// of each, so it knows which hosts are up), with the number of movable
// workers running there and the paths of those pinned to it.
func Subscriptions(supervisor string, workers []Worker) map[string]Subscription {
	want := map[string]Subscription{}
	for _, w := range workers {
		for _, h := range w.Hosts {
			want[h] = Subscription{Supervisor: supervisor, Movable: want[h].Movable, Pinned: want[h].Pinned}
		}
		if w.On == "" {
			continue
		}
		sub := want[w.On]
		sub.Supervisor = supervisor
		if Movable(w.Hosts, w.On) {
			sub.Movable++
		} else {
			sub.Pinned = append(sub.Pinned, w.Path)
		}
		want[w.On] = sub
	}
	return want
}

// SubscriptionChange is a subscription to send to Host: Sub, or (Gone) the
// end of one, no worker listing the host any more.
type SubscriptionChange struct {
	Host string
	Sub  Subscription
}

// SubscriptionChanges are the subscriptions to send for want, given had
// (what each host was last sent): each wanted host whose subscription
// differs, in host order, then each host no longer wanted, gone.
func SubscriptionChanges(supervisor string, want, had map[string]Subscription) []SubscriptionChange {
	hosts := sortedKeys(want)
	var gone []string
	for _, h := range sortedKeys(had) {
		if _, ok := want[h]; !ok {
			gone = append(gone, h)
		}
	}
	var out []SubscriptionChange
	for _, h := range hosts {
		w, old := want[h], had[h]
		if old.Supervisor != "" && w.Movable == old.Movable && slices.Equal(w.Pinned, old.Pinned) {
			continue
		}
		out = append(out, SubscriptionChange{Host: h, Sub: w})
	}
	for _, h := range gone {
		out = append(out, SubscriptionChange{Host: h, Sub: Subscription{Supervisor: supervisor, Gone: true}})
	}
	return out
}

// MaxHostStates bounds the hosts a supervisor keeps the state of: far more
// than its workers' host lists name.
const MaxHostStates = 1024

// CheckTold says why a supervisor does not take a host's state (nil: it
// takes it): a host says up or unknown, and one it does not know yet
// (known false; it knows of count) has a name's length (spec's limit) and room among its
// MaxHostStates. Anything else was sent by someone else (the temporal
// CLI), and kept it would grow the carry past what a continue-as-new
// carries.
func CheckTold(host, live string, known bool, count int) error {
	if live != Up && live != Unknown {
		return fmt.Errorf("a state of host %.100q that is neither %s nor %s (%d bytes)", host, Up, Unknown, len(live))
	}
	if !known && (len(host) > spec.MaxNameLength || count >= MaxHostStates) {
		return fmt.Errorf("a state of host %.100q (%d characters; %d hosts known, at most %d)", host, len(host), count, MaxHostStates)
	}
	return nil
}

// sortedKeys are m's keys in order (collected, then sorted: nothing is
// decided in the map's order).
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
