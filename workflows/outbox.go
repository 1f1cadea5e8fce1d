package workflows

import "go.temporal.io/sdk/workflow"

// outbox holds the signals and cancel requests a run has sent until they
// are delivered: a signal initiated by a run that then closes (continue as
// new) may be lost, so continue-as-new waits until the outbox is empty.
type outbox struct {
	sent []workflow.Future
}

// add records a sent request.
func (o *outbox) add(f workflow.Future) {
	o.delivered() // drops what was delivered
	o.sent = append(o.sent, f)
}

// delivered reports whether every request has completed (delivered or
// failed), dropping those that have.
func (o *outbox) delivered() bool {
	pending := o.sent[:0]
	for _, f := range o.sent {
		if !f.IsReady() {
			pending = append(pending, f)
		}
	}
	o.sent = pending
	return len(pending) == 0
}
