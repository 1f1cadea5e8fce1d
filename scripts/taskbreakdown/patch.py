"""Patch a copy of the Temporal Go SDK (v1.50.0) so that every workflow
task it completes prints one line to standard error when STEWARD_TASKLOG
is set: the task's execution time (the span of the SDK's
workflow_task_execution_latency histogram), the time of its outbound
payload walk, its workflow type and ID, the events and messages it
received, the commands and messages it sent, how many payloads they
carry, and how many coroutine calls its dispatcher made.

A diagnostic only (scripts/task-breakdown.sh builds with it); nothing
steward ships uses it.
"""
import sys

root = sys.argv[1]


def patch(path, pairs):
    p = f"{root}/internal/{path}"
    s = open(p).read()
    for old, new in pairs:
        if old not in s:
            sys.exit(f"patch.py: {path}: not found (another SDK version?):\n{old}")
        s = s.replace(old, new, 1)
    open(p, "w").write(s)


patch("internal_workflow.go", [
    ("\t\tnewEagerCoroutines []*coroutineState\n",
     "\t\tnewEagerCoroutines []*coroutineState\n\t\tdiagCalls          int64\n"),
    ("\t\t\t\tc.call(deadlockDetectionTimeout)\n\t\t\t}",
     "\t\t\t\tc.call(deadlockDetectionTimeout)\n\t\t\t\td.diagCalls++\n\t\t\t}"),
])

patch("internal_task_pollers.go", [
    ('\t"os"\n', '\t"os"\n\t"strings"\n'),
    ("\t\tif taskCompletion == nil && taskErr == nil {\n\t\t\treturn nil\n\t\t}",
     """\t\tif wfctx.eventHandler != nil {
\t\t\tif eh, ok := (*wfctx.eventHandler).(*workflowExecutionEventHandlerImpl); ok {
\t\t\t\tif sd, ok := eh.workflowDefinition.(*syncWorkflowDefinition); ok {
\t\t\t\t\tif d, ok := sd.dispatcher.(*dispatcherImpl); ok {
\t\t\t\t\t\tdiagCalls.Store(task.task, [2]int64{d.diagCalls, int64(len(d.coroutines))})
\t\t\t\t\t\td.diagCalls = 0
\t\t\t\t\t}
\t\t\t\t}
\t\t\t}
\t\t}
\t\tif taskCompletion == nil && taskErr == nil {\n\t\t\treturn nil\n\t\t}"""),
    ("\tif taskErr = visitProtoPayloads(ctx, outboundPayloadVisitor, taskCompletion.rawRequest, wtp.storageParams.MaxOperationsPerMessage()); taskErr != nil {",
     """\tvisitStart := time.Now()
\ttaskErr = visitProtoPayloads(ctx, outboundPayloadVisitor, taskCompletion.rawRequest, wtp.storageParams.MaxOperationsPerMessage())
\tvisitDur := time.Since(visitStart)
\tif taskErr != nil {"""),
    ("\tmetricsHandler.Timer(metrics.WorkflowTaskExecutionLatency).Record(taskDuration)\n",
     """\tmetricsHandler.Timer(metrics.WorkflowTaskExecutionLatency).Record(taskDuration)
\tif os.Getenv("STEWARD_TASKLOG") != "" {
\t\tvar cmds, evs []string
\t\tif req, ok := taskCompletion.rawRequest.(*workflowservice.RespondWorkflowTaskCompletedRequest); ok {
\t\t\tfor _, c := range req.Commands {
\t\t\t\tcmds = append(cmds, strings.TrimPrefix(c.CommandType.String(), "COMMAND_TYPE_"))
\t\t\t}
\t\t\tfor _, m := range req.Messages {
\t\t\t\tu := m.GetBody().GetTypeUrl()
\t\t\t\tcmds = append(cmds, "MSG:"+u[strings.LastIndex(u, ".")+1:])
\t\t\t}
\t\t}
\t\tfor _, e := range task.GetHistory().GetEvents() {
\t\t\tevs = append(evs, strings.TrimPrefix(e.EventType.String(), "EVENT_TYPE_"))
\t\t}
\t\tfor _, m := range task.GetMessages() {
\t\t\tu := m.GetBody().GetTypeUrl()
\t\t\tevs = append(evs, "MSG:"+u[strings.LastIndex(u, ".")+1:])
\t\t}
\t\tnpl, nbytes := 0, 0
\t\t_ = proxy.VisitPayloads(context.Background(), taskCompletion.rawRequest, proxy.VisitPayloadsOptions{Visitor: func(_ *proxy.VisitPayloadsContext, ps []*commonpb.Payload) ([]*commonpb.Payload, error) {
\t\t\tfor _, p := range ps {
\t\t\t\tnpl++
\t\t\t\tnbytes += len(p.GetData())
\t\t\t}
\t\t\treturn ps, nil
\t\t}})
\t\tcmds = append(cmds, fmt.Sprintf("payloads=%d/%dB", npl, nbytes))
\t\tif v, ok := diagCalls.LoadAndDelete(task); ok {
\t\t\tcmds = append(cmds, fmt.Sprintf("calls=%d/coros=%d", v.([2]int64)[0], v.([2]int64)[1]))
\t\t}
\t\tfmt.Fprintf(os.Stderr, "TASKLOG %d visit=%d %s %s q=%d ev=%s cmd=%s\\n", taskDuration.Microseconds(), visitDur.Microseconds(), task.WorkflowType.GetName(), task.WorkflowExecution.GetWorkflowId(), len(task.GetQueries()), strings.Join(evs, ","), strings.Join(cmds, ","))
\t}
"""),
    ("var wftDurationWarnThreshold =", "var diagCalls sync.Map\n\nvar wftDurationWarnThreshold ="),
])
