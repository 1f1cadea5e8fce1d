package workflows

import (
	"errors"
	"fmt"
	"slices"
	"sort"

	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/workflow"

	"github.com/steward-sh/steward/internal/spec"
)

// Receiving signals, for every workflow type: a payload is taken raw and
// decoded by its handler (a bad one is rejected and counted, never lost
// silently), and a signal of an unknown name is dropped and counted.

// receiveRaw takes one signal without decoding it, so a payload that does
// not decode is ours to reject and count (the SDK would drop it silently).
func receiveRaw(ctx workflow.Context, c workflow.ReceiveChannel) converter.RawValue {
	var raw converter.RawValue
	c.Receive(ctx, &raw)
	return raw
}

func decodeRaw(raw converter.RawValue, out any) error {
	if raw.Payload() == nil {
		return errors.New("no payload")
	}
	return converter.GetDefaultDataConverter().FromPayload(raw.Payload(), out)
}

// decodeUpdate accepts {"generation": N, "spec": {...}} or a bare node.
func decodeUpdate(raw converter.RawValue) (spec.Update, error) {
	var u spec.Update
	if err := decodeRaw(raw, &u); err == nil && u.Spec.Name != "" {
		return u, nil
	}
	var n spec.Node
	if err := decodeRaw(raw, &n); err != nil {
		return spec.Update{}, fmt.Errorf("payload is not a spec: %w", err)
	}
	if n.Name == "" {
		return spec.Update{}, errors.New("payload is not a spec: no name")
	}
	return spec.Update{Spec: n}, nil
}

// dropUnknownSignals consumes signals sent under a name this workflow does
// not know (a typo in a `temporal workflow signal`, say): each is logged
// and counted as rejected, and none piles up across continue-as-new. It
// returns how many it dropped. They are noticed at the workflow's next
// wake-up: an unknown name wakes nothing.
func dropUnknownSignals(ctx workflow.Context, log interface{ Warn(string, ...any) }, known ...string) int {
	names := workflow.GetUnhandledSignalNames(ctx)
	sort.Strings(names)
	n := 0
	for _, name := range names {
		if slices.Contains(known, name) {
			continue
		}
		ch := workflow.GetSignalChannel(ctx, name)
		var raw converter.RawValue
		for ch.ReceiveAsync(&raw) {
			n++
			log.Warn("rejected signal: unknown name", "signal", name)
			count(ctx, MetricRejectedSignals, map[string]string{"signal": "unknown"})
		}
	}
	return n
}
