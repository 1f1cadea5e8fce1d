package internal

// Regression tests of steward's patch (third_party/README.md): a command
// that is resolved leaves nothing behind in the commands helper, so that a
// cached workflow's memory does not grow with its history.

import (
	"fmt"
	"testing"

	commandpb "go.temporal.io/api/command/v1"
	"go.temporal.io/sdk/converter"
)

// TestStewardPatch_ACanceledTimerLeavesNoCommand: a timer started in one
// workflow task and cancelled in a later one (its cancel command sent, its
// TimerCanceled event handled) kept its cancel state machine for the rest
// of the run.
func TestStewardPatch_ACanceledTimerLeavesNoCommand(t *testing.T) {
	h := newCommandsHelper()
	h.setCurrentWorkflowTaskStartedEventID(3)
	for i := range 100 {
		id := fmt.Sprint(1000 + i)
		h.startTimer(&commandpb.StartTimerCommandAttributes{TimerId: id}, TimerOptions{}, converter.GetDefaultDataConverter())
		if n := len(h.getCommands(true)); n != 1 {
			t.Fatalf("timer %s: %d commands sent, want its start", id, n)
		}
		h.handleTimerStarted(id)
		h.cancelTimer(TimerID{id})
		if n := len(h.getCommands(true)); n != 1 {
			t.Fatalf("timer %s: %d commands sent, want its cancel", id, n)
		}
		h.handleTimerCanceled(id)
		if n := len(h.getCommands(true)); n != 0 {
			t.Fatalf("timer %s: %d commands sent after its TimerCanceled, want none", id, n)
		}
	}
	if len(h.commands) != 0 || h.orderedCommands.Len() != 0 {
		t.Fatalf("after 100 cancelled timers the helper holds %d commands (%d ordered), want 0", len(h.commands), h.orderedCommands.Len())
	}
}

// TestStewardPatch_ACanceledActivityLeavesNoCommand: an activity whose
// cancellation was requested and that ended Canceled kept its cancel
// request's state machine.
func TestStewardPatch_ACanceledActivityLeavesNoCommand(t *testing.T) {
	h := newCommandsHelper()
	h.setCurrentWorkflowTaskStartedEventID(3)
	for i := range 100 {
		id, sched := fmt.Sprint("a", i), int64(1000+i)
		h.scheduleActivityTask(sched, &commandpb.ScheduleActivityTaskCommandAttributes{ActivityId: id}, nil)
		h.getCommands(true)
		h.handleActivityTaskScheduled(id, sched)
		h.requestCancelActivityTask(id)
		if n := len(h.getCommands(true)); n != 1 {
			t.Fatalf("activity %s: %d commands sent, want its cancel request", id, n)
		}
		h.handleActivityTaskCancelRequested(sched)
		h.handleActivityTaskCanceled(id, sched)
		if n := len(h.getCommands(true)); n != 0 {
			t.Fatalf("activity %s: %d commands sent after it was cancelled, want none", id, n)
		}
	}
	if len(h.commands) != 0 || h.orderedCommands.Len() != 0 {
		t.Fatalf("after 100 cancelled activities the helper holds %d commands (%d ordered), want 0", len(h.commands), h.orderedCommands.Len())
	}
}

// TestStewardPatch_ASignalSentLeavesNoEntry: each external signal kept its
// initiated event's entry in scheduledEventIDToSignalID for the rest of the
// run, whether it was delivered or failed.
func TestStewardPatch_ASignalSentLeavesNoEntry(t *testing.T) {
	h := newCommandsHelper()
	h.setCurrentWorkflowTaskStartedEventID(3)
	for i := range 100 {
		sid, initiated := fmt.Sprint(5000+i), int64(100000+i)
		h.signalExternalWorkflowExecution("", "tree/child", "", "report", nil, nil, sid, false)
		h.getCommands(true)
		h.handleSignalExternalWorkflowExecutionInitiated(initiated, sid)
		if i%2 == 0 {
			h.handleSignalExternalWorkflowExecutionCompleted(initiated)
		} else {
			h.handleSignalExternalWorkflowExecutionFailed(initiated)
		}
		h.getCommands(true)
	}
	if len(h.scheduledEventIDToSignalID) != 0 || len(h.commands) != 0 {
		t.Fatalf("after 100 signals the helper holds %d signal entries and %d commands, want 0", len(h.scheduledEventIDToSignalID), len(h.commands))
	}
}
