package supervise

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// A child's lifecycle, state by event: every pair has a row, so that a new
// state or event cannot be added without deciding what each pair does.
func TestLifecycleStateByEvent(t *testing.T) {
	// Columns, in ChildEvents order: operatorStart, operatorStop,
	// operatorRestartInOrder, unqueue, releaseStop, releaseStart,
	// workflowStarted, reportedEnd, workflowClosed.
	table := map[Lifecycle][]Lifecycle{
		Live:         {HeldStart, PendingStop, RestartStop, Live, Live, Live, Live, Ended, Closed},
		Deferred:     {Deferred, Deferred, Deferred, Deferred, Deferred, Deferred, Live, Deferred, Deferred},
		HeldStart:    {HeldStart, PendingStop, RestartStop, Live, HeldStart, Live, HeldStart, Ended, Closed},
		PendingStop:  {HeldStart, PendingStop, RestartStop, Live, Live, PendingStop, PendingStop, Ended, Closed},
		RestartStop:  {HeldStart, PendingStop, RestartStop, Live, RestartStart, RestartStop, RestartStop, Ended, Closed},
		RestartStart: {HeldStart, PendingStop, RestartStop, Live, RestartStart, Live, RestartStart, Ended, Closed},
		Ended:        {Ended, Ended, Ended, Ended, Ended, Ended, Ended, Ended, Ended},
		Closed:       {Closed, Closed, Closed, Closed, Closed, Closed, Live, Closed, Closed},
	}
	require.Len(t, table, len(Lifecycles), "a row per lifecycle")
	for _, l := range Lifecycles {
		row, ok := table[l]
		require.True(t, ok, "no row for %s", l)
		require.Len(t, row, len(ChildEvents), "a column per event in the row of %s", l)
		for j, e := range ChildEvents {
			require.Equal(t, row[j], Step(l, e), "%s on %s", l, e)
		}
	}
}

// What each lifecycle means to the order and the plans.
func TestLifecyclePredicates(t *testing.T) {
	for _, c := range []struct {
		l                   Lifecycle
		gone, queued, waits bool
	}{
		{Live, false, false, false},
		{Deferred, true, false, true},
		{HeldStart, false, true, true},
		{PendingStop, false, true, true},
		{RestartStop, false, true, true},
		{RestartStart, false, true, true},
		{Ended, true, false, false},
		{Closed, true, false, false},
	} {
		require.Equal(t, c.gone, c.l.Gone(), "%s gone", c.l)
		require.Equal(t, c.queued, c.l.Queued(), "%s queued", c.l)
		require.Equal(t, c.waits, c.l.Waits(), "%s waits", c.l)
	}
	require.Equal(t, "live", Live.String())
	require.Equal(t, "unknown", ChildEvent(99).String())
}

// The booleans a record of code version 2 carried, read as one lifecycle:
// as the code that wrote them read them, a queued mark on a child that was
// gone dropped.
func TestLifecycleFromFlags(t *testing.T) {
	for _, c := range []struct {
		name                                            string
		ended, closed, deferred, held, pendingStop, rst bool
		want                                            Lifecycle
	}{
		{name: "none", want: Live},
		{name: "ended", ended: true, want: Ended},
		{name: "ended with a queued start", ended: true, held: true, want: Ended},
		{name: "closed", closed: true, want: Closed},
		{name: "closed with a queued stop", closed: true, pendingStop: true, want: Closed},
		{name: "deferred", deferred: true, want: Deferred},
		{name: "held", held: true, want: HeldStart},
		{name: "pending stop", pendingStop: true, want: PendingStop},
		{name: "restart, stop queued", held: true, pendingStop: true, rst: true, want: RestartStop},
		{name: "restart, start queued", held: true, rst: true, want: RestartStart},
	} {
		require.Equal(t, c.want, FromFlags(c.ended, c.closed, c.deferred, c.held, c.pendingStop, c.rst), c.name)
	}
}

// The operator's start, stop and restart of a supervisor, for children in
// every lifecycle: what is queued goes, the act queues on what is there,
// and a restart without dependencies restarts at once.
func TestOperate(t *testing.T) {
	all := Lifecycles
	for _, c := range []struct {
		name  string
		act   OperatorAct
		deps  bool
		want  OperatorOrder
		order []Lifecycle
	}{
		{name: "start", act: ActStart, want: OperatorOrder{Release: true, StartClosed: true},
			order: []Lifecycle{HeldStart, Deferred, HeldStart, HeldStart, HeldStart, HeldStart, Ended, Closed}},
		{name: "stop", act: ActStop, want: OperatorOrder{Release: true},
			order: []Lifecycle{PendingStop, Deferred, PendingStop, PendingStop, PendingStop, PendingStop, Ended, Closed}},
		{name: "restart with dependencies: in order", act: ActRestart, deps: true, want: OperatorOrder{Release: true, StartClosed: true},
			order: []Lifecycle{RestartStop, Deferred, RestartStop, RestartStop, RestartStop, RestartStop, Ended, Closed}},
		{name: "restart without dependencies: at once", act: ActRestart, want: OperatorOrder{RestartNow: []int{0, 2, 3, 4, 5}, StartClosed: true},
			order: []Lifecycle{Live, Deferred, Live, Live, Live, Live, Ended, Closed}},
	} {
		t.Run(c.name, func(t *testing.T) {
			c.want.Lifecycles = c.order
			require.Equal(t, c.want, Operate(c.act, all, c.deps))
		})
	}
}
