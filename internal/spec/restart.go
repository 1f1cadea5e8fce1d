package spec

import "encoding/json"

// What a worker does with a new spec: which changes restart its service.

// DriverChanged reports whether a running service must restart to apply a
// new node: its kind or driver block changed. Timeouts, retries, backoff
// and the desired state apply without a restart. a and b are rendered
// (Rendered).
func DriverChanged(a, b Node) bool {
	ja, _ := json.Marshal([]any{a.Kind, a.Stub, a.Process, a.HTTP})
	jb, _ := json.Marshal([]any{b.Kind, b.Stub, b.Process, b.HTTP})
	return string(ja) != string(jb)
}

// Rendered is a validated worker node with its driver templates executed
// and every default filled in: what the tick and the drivers act on.
func Rendered(n Node) Node {
	r, _ := Render(n, "") // validated: it renders
	return r.Resolved()
}

// Restarts reports whether handing a worker node b in place of a restarts
// its running service: what the worker itself decides (DriverChanged over
// the rendered nodes, or a move to another host).
func Restarts(a, b Node) bool {
	return DriverChanged(Rendered(a), Rendered(b)) || a.RunsOn() != b.RunsOn()
}
