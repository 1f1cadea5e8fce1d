package internal

// All code in this file is private to the package.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"go.temporal.io/sdk/internal/common/retry"
	"golang.org/x/sync/errgroup"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/wrapperspb"

	commandpb "go.temporal.io/api/command/v1"
	commonpb "go.temporal.io/api/common/v1"
	deploymentpb "go.temporal.io/api/deployment/v1"
	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/api/proxy"
	taskqueuepb "go.temporal.io/api/taskqueue/v1"
	"go.temporal.io/api/workflowservice/v1"

	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/internal/common/metrics"
	"go.temporal.io/sdk/internal/common/serializer"
	"go.temporal.io/sdk/internal/extstore"
	"go.temporal.io/sdk/log"
)

const (
	// Server returns empty task after dynamicconfig.MatchingLongPollExpirationInterval (default is 60 seconds).
	// pollTaskServiceTimeOut should be dynamicconfig.MatchingLongPollExpirationInterval + some delta for full round trip to matching
	// because empty task should be returned before timeout is expired (expired timeout counts against SLO).
	pollTaskServiceTimeOut = 70 * time.Second

	stickyWorkflowTaskScheduleToStartTimeoutSeconds = 5

	ratioToForceCompleteWorkflowTaskComplete = 0.8
)

type workflowTaskPollerMode int

const (
	Mixed workflowTaskPollerMode = iota
	NonSticky
	Sticky
)

type (
	// taskPoller polls for one task at a time. A single implementation instance
	// may be called concurrently by multiple poll loops, so implementations must
	// be safe for concurrent use. The caller owns any supplied poller-group lease.
	// Autoscaling leases are acquired before slot reservation. Fixed pollers pass
	// an empty lease.
	taskPoller interface {
		// PollTask polls for one new task
		PollTask(pollerGroupLease) (taskForWorker, error)
	}

	// taskProcessor processes tasks after polling and dispatch. ProcessTask may be
	// invoked concurrently for different slot permits.
	taskProcessor interface {
		// ProcessTask processes a task
		ProcessTask(any) error
	}

	pollerScaleDecision struct {
		pollRequestDeltaSuggestion int
	}

	taskForWorker interface {
		scaleDecision() (pollerScaleDecision, bool)
		isEmpty() bool
	}

	// basePoller is the base class for all poller implementations
	basePoller struct {
		metricsHandler metrics.Handler // base metric handler used for rpc calls
		stopC          <-chan struct{}
		// The worker's build ID, either as defined by the user or automatically set
		workerBuildID string
		// Whether the worker has opted in to the build-id based versioning feature
		useBuildIDVersioning bool
		// The worker's deployment version identifier.
		workerDeploymentVersion WorkerDeploymentVersion
		// Server's capabilities
		capabilities *workflowservice.GetSystemInfoResponse_Capabilities
		// tracks timestamp for last poll request, for worker heartbeating
		pollTimeTracker *pollTimeTracker
		// Unique identifier for worker
		workerInstanceKey string
		// Per-client queue used by the server to send worker commands.
		workerControlTaskQueue string
		// Shared snapshot for this worker's task queue.
		pollerGroupSnapshotStore *pollerGroupSnapshotStore
		// Server cancels polls on shutdown
		workerPollCompleteOnShutdown *atomic.Bool
	}

	// numPollerMetric tracks the number of active pollers and publishes a metric on it.
	numPollerMetric struct {
		lock       sync.Mutex
		numPollers int32
		gauge      metrics.Gauge
	}

	workflowTaskPoller struct {
		basePoller
		mode             workflowTaskPollerMode
		namespace        string
		taskQueueName    string
		identity         string
		service          workflowservice.WorkflowServiceClient
		taskHandler      WorkflowTaskHandler
		contextManager   WorkflowContextManager
		logger           log.Logger
		dataConverter    converter.DataConverter
		failureConverter converter.FailureConverter

		stickyUUID                   string
		StickyScheduleToStartTimeout time.Duration

		pendingRegularPollCount int
		pendingStickyPollCount  int
		mixedStickyBacklog      int64
		requestLock             sync.Mutex
		autoscalingBalancer     *workflowAutoscalingBalancer
		stickyCacheSize         int
		eagerActivityExecutor   *eagerActivityExecutor

		numNormalPollerMetric *numPollerMetric
		numStickyPollerMetric *numPollerMetric

		inboundPayloadVisitor PayloadVisitor
		storageParams         extstore.StorageParameters

		pollerGroups *pollerGroupManager
	}

	// workflowTaskProcessor implements processing of a workflow task and can create
	// workflow task pollers
	workflowTaskProcessor struct {
		basePoller
		namespace        string
		taskQueueName    string
		identity         string
		service          workflowservice.WorkflowServiceClient
		taskHandler      WorkflowTaskHandler
		contextManager   WorkflowContextManager
		logger           log.Logger
		dataConverter    converter.DataConverter
		failureConverter converter.FailureConverter

		stickyUUID                   string
		StickyScheduleToStartTimeout time.Duration

		pendingRegularPollCount int
		pendingStickyPollCount  int
		mixedStickyBacklog      int64
		stickyCacheSize         int
		eagerActivityExecutor   *eagerActivityExecutor

		numNormalPollerMetric *numPollerMetric
		numStickyPollerMetric *numPollerMetric

		inboundPayloadVisitor  PayloadVisitor
		outboundPayloadVisitor PayloadVisitor
		storageParams          extstore.StorageParameters

		workflowTaskCompletionPagination *workflowTaskCompletionPaginationConfig
	}

	// activityTaskPoller implements polling/processing a workflow task
	activityTaskPoller struct {
		basePoller
		namespace           string
		taskQueueName       string
		identity            string
		service             workflowservice.WorkflowServiceClient
		taskHandler         ActivityTaskHandler
		logger              log.Logger
		activitiesPerSecond float64
		numPollerMetric     *numPollerMetric
		pollerGroups        *pollerGroupManager
	}

	historyIteratorImpl struct {
		iteratorFunc  func(nextPageToken []byte) (*historypb.History, []byte, error)
		execution     *commonpb.WorkflowExecution
		nextPageToken []byte
		namespace     string
		service       workflowservice.WorkflowServiceClient
		// maxEventID is the maximum eventID that the history iterator is expected to return.
		// 0 means that the iterator will return all history events.
		maxEventID     int64
		metricsHandler metrics.Handler
		taskQueue      string
	}

	// retrievingHistoryIterator wraps a HistoryIterator and applies the inbound
	// payload visitor to each page fetched, resolving external storage references
	// in paginated history events that were not part of the initial poll response.
	retrievingHistoryIterator struct {
		inner          HistoryIterator
		inboundVisitor PayloadVisitor
		storageParams  extstore.StorageParameters
	}

	localActivityTaskPoller struct {
		basePoller
		handler      *localActivityTaskHandler
		logger       log.Logger
		laTunnel     *localActivityTunnel
		workerStopCh <-chan struct{}
	}

	localActivityTaskHandler struct {
		backgroundContext  context.Context
		metricsHandler     metrics.Handler
		logger             log.Logger
		dataConverter      converter.DataConverter
		contextPropagators []ContextPropagator
		interceptors       []WorkerInterceptor
		client             *WorkflowClient
		workerStopChannel  <-chan struct{}
	}

	localActivityResult struct {
		result  *commonpb.Payloads
		err     error
		task    *localActivityTask
		backoff time.Duration
	}

	localActivityTunnel struct {
		// Task submission cannot wait for execution capacity because the submitting
		// workflow task is also responsible for receiving local activity results.
		taskQueueMu   sync.Mutex
		taskQueueHead *localActivityTask
		taskQueueTail *localActivityTask
		taskReadyCh   chan struct{}
		resultCh      chan eagerOrPolledTask
		// stopCh is a read-only view of workflowWorker.localActivityStopC.
		// It is closed by workflowWorker.Stop() after the workflow worker stops,
		// causing tunnel sends/receives to stop accepting local activity work.
		stopCh <-chan struct{}
	}
)

func newNumPollerMetric(metricsHandler metrics.Handler, pollerType string) *numPollerMetric {
	if heartbeatHandler, isHeartbeat := metricsHandler.(*heartbeatMetricsHandler); isHeartbeat {
		metricsHandler = heartbeatHandler.forPoller(pollerType)
	}
	return &numPollerMetric{
		gauge: metricsHandler.WithTags(metrics.PollerTags(pollerType)).Gauge(metrics.NumPoller),
	}
}

func (npm *numPollerMetric) increment() {
	npm.lock.Lock()
	defer npm.lock.Unlock()
	npm.numPollers += 1
	npm.gauge.Update(float64(npm.numPollers))
}

func (npm *numPollerMetric) decrement() {
	npm.lock.Lock()
	defer npm.lock.Unlock()
	npm.numPollers -= 1
	npm.gauge.Update(float64(npm.numPollers))
}

func newLocalActivityTunnel(stopCh <-chan struct{}) *localActivityTunnel {
	return &localActivityTunnel{
		taskReadyCh: make(chan struct{}, 1),
		resultCh:    make(chan eagerOrPolledTask),
		stopCh:      stopCh,
	}
}

func (lat *localActivityTunnel) getTask() *localActivityTask {
	for {
		select {
		case <-lat.stopCh:
			lat.clearTasks()
			return nil
		default:
		}

		lat.taskQueueMu.Lock()
		if lat.taskQueueHead != nil {
			task := lat.taskQueueHead
			lat.taskQueueHead = task.nextQueuedTask
			task.nextQueuedTask = nil
			hasMore := lat.taskQueueHead != nil
			if !hasMore {
				lat.taskQueueTail = nil
			}
			lat.taskQueueMu.Unlock()
			if hasMore {
				lat.notifyTaskReady()
			}
			return task
		}
		lat.taskQueueMu.Unlock()

		select {
		case <-lat.taskReadyCh:
		case <-lat.stopCh:
			lat.clearTasks()
			return nil
		}
	}
}

func (lat *localActivityTunnel) sendTask(task *localActivityTask) bool {
	select {
	case <-lat.stopCh:
		return false
	default:
	}

	lat.taskQueueMu.Lock()
	select {
	case <-lat.stopCh:
		lat.taskQueueMu.Unlock()
		return false
	default:
	}
	if lat.taskQueueTail == nil {
		lat.taskQueueHead = task
	} else {
		lat.taskQueueTail.nextQueuedTask = task
	}
	lat.taskQueueTail = task
	lat.taskQueueMu.Unlock()

	lat.notifyTaskReady()
	return true
}

func (lat *localActivityTunnel) notifyTaskReady() {
	select {
	case lat.taskReadyCh <- struct{}{}:
	default:
	}
}

func (lat *localActivityTunnel) clearTasks() {
	lat.taskQueueMu.Lock()
	for lat.taskQueueHead != nil {
		task := lat.taskQueueHead
		lat.taskQueueHead = task.nextQueuedTask
		task.nextQueuedTask = nil
	}
	lat.taskQueueTail = nil
	lat.taskQueueMu.Unlock()
}

func isClientSideError(err error) bool {
	// If an activity execution exceeds deadline.
	return err == context.DeadlineExceeded
}

// stopping returns true if worker is stopping right now
func (bp *basePoller) stopping() bool {
	select {
	case <-bp.stopC:
		return true
	default:
		return false
	}
}

func (bp *basePoller) shouldDrainOnShutdown() bool {
	return bp.workerPollCompleteOnShutdown != nil && bp.workerPollCompleteOnShutdown.Load()
}

// doPoll runs the given pollFunc in a separate go routine. Returns when any of the conditions are met:
//   - poll succeeds
//   - poll fails
//   - worker is stopping
func (bp *basePoller) doPoll(pollFunc func(ctx context.Context) (taskForWorker, error)) (taskForWorker, error) {
	if bp.stopping() {
		return nil, errStop
	}

	var err error
	var result taskForWorker

	doneC := make(chan struct{})
	ctx, cancel := newGRPCContext(context.Background(), grpcTimeout(pollTaskServiceTimeOut), grpcLongPoll(true))

	go func() {
		result, err = pollFunc(ctx)
		cancel()
		close(doneC)
	}()

	if bp.shouldDrainOnShutdown() {
		// Don't cancel the gRPC stream. After ShutdownWorker, the server
		// completes the poll with an empty response. The poll is bounded
		// by the gRPC timeout (pollTaskServiceTimeOut). Stop() waits for
		// all pollers to finish before proceeding to task drain.
		<-doneC
		return result, err
	}

	// Legacy: cancel in-flight polls immediately on shutdown
	select {
	case <-doneC:
		return result, err
	case <-bp.stopC:
		cancel()
		return nil, errStop
	}
}

func (bp *basePoller) getCapabilities() *workflowservice.GetSystemInfoResponse_Capabilities {
	if bp.capabilities == nil {
		return &workflowservice.GetSystemInfoResponse_Capabilities{}
	}
	return bp.capabilities
}

func (bp *basePoller) updatePollerGroups(info *taskqueuepb.PollerGroupsInfo) {
	if bp.pollerGroupSnapshotStore == nil {
		return
	}

	// Fixed pollers also publish discoveries for autoscaling pollers on the
	// same task queue.
	// TODO: Use discoveries for runtime SimpleMaximum-to-autoscaling transitions.
	bp.pollerGroupSnapshotStore.updateGroups(info)
}

func (bp *basePoller) getDeploymentName() string {
	return bp.workerDeploymentVersion.DeploymentName
}

// newWorkflowTaskProcessor creates a new workflow task poller which must have a one to one relationship to workflow worker
func newWorkflowTaskProcessor(
	taskHandler WorkflowTaskHandler,
	contextManager WorkflowContextManager,
	service workflowservice.WorkflowServiceClient,
	params workerExecutionParameters,
	stickyUUID string,
) *workflowTaskProcessor {
	return &workflowTaskProcessor{
		basePoller: basePoller{
			metricsHandler:               params.MetricsHandler,
			stopC:                        params.WorkerStopChannel,
			workerBuildID:                params.getBuildID(),
			useBuildIDVersioning:         params.UseBuildIDForVersioning,
			workerDeploymentVersion:      params.DeploymentOptions.Version,
			capabilities:                 params.capabilities,
			pollTimeTracker:              params.pollTimeTracker,
			workerInstanceKey:            params.workerInstanceKey,
			workerControlTaskQueue:       params.workerControlTaskQueue,
			pollerGroupSnapshotStore:     params.pollerGroupSnapshotStore,
			workerPollCompleteOnShutdown: params.workerPollCompleteOnShutdown,
		},
		service:                          service,
		namespace:                        params.Namespace,
		taskQueueName:                    params.TaskQueue,
		identity:                         params.Identity,
		taskHandler:                      taskHandler,
		contextManager:                   contextManager,
		logger:                           params.Logger,
		dataConverter:                    params.DataConverter,
		failureConverter:                 params.FailureConverter,
		stickyUUID:                       stickyUUID,
		StickyScheduleToStartTimeout:     params.StickyScheduleToStartTimeout,
		stickyCacheSize:                  params.cache.MaxWorkflowCacheSize(),
		eagerActivityExecutor:            params.eagerActivityExecutor,
		numNormalPollerMetric:            newNumPollerMetric(params.MetricsHandler, metrics.PollerTypeWorkflowTask),
		numStickyPollerMetric:            newNumPollerMetric(params.MetricsHandler, metrics.PollerTypeWorkflowStickyTask),
		inboundPayloadVisitor:            params.inboundPayloadVisitor,
		outboundPayloadVisitor:           params.outboundPayloadVisitor,
		storageParams:                    params.storageParams,
		workflowTaskCompletionPagination: params.workflowTaskCompletionPagination,
	}
}

// PollTask polls a new task
func (wtp *workflowTaskPoller) PollTask(lease pollerGroupLease) (taskForWorker, error) {
	// doPoll owns shutdown; the runner owns the group lease.
	workflowTask, err := wtp.doPoll(func(ctx context.Context) (taskForWorker, error) {
		return wtp.poll(ctx, lease)
	})
	if err != nil {
		return nil, err
	}

	return workflowTask, nil
}

func (wtp *workflowTaskProcessor) createPoller(
	mode workflowTaskPollerMode,
	pollerGroups *pollerGroupManager,
) *workflowTaskPoller {
	return &workflowTaskPoller{
		basePoller:                   wtp.basePoller,
		mode:                         mode,
		namespace:                    wtp.namespace,
		taskQueueName:                wtp.taskQueueName,
		identity:                     wtp.identity,
		service:                      wtp.service,
		taskHandler:                  wtp.taskHandler,
		contextManager:               wtp.contextManager,
		logger:                       wtp.logger,
		dataConverter:                wtp.dataConverter,
		failureConverter:             wtp.failureConverter,
		stickyUUID:                   wtp.stickyUUID,
		StickyScheduleToStartTimeout: wtp.StickyScheduleToStartTimeout,
		pendingRegularPollCount:      wtp.pendingRegularPollCount,
		pendingStickyPollCount:       wtp.pendingStickyPollCount,
		mixedStickyBacklog:           wtp.mixedStickyBacklog,
		stickyCacheSize:              wtp.stickyCacheSize,
		eagerActivityExecutor:        wtp.eagerActivityExecutor,
		numNormalPollerMetric:        wtp.numNormalPollerMetric,
		numStickyPollerMetric:        wtp.numStickyPollerMetric,
		inboundPayloadVisitor:        wtp.inboundPayloadVisitor,
		storageParams:                wtp.storageParams,
		pollerGroups:                 pollerGroups,
	}
}

// ProcessTask processes a task which could be workflow task or local activity result
func (wtp *workflowTaskProcessor) ProcessTask(task any) error {
	if !wtp.shouldDrainOnShutdown() && wtp.stopping() {
		return errStop
	}

	switch task := task.(type) {
	case *workflowTask:
		return wtp.processWorkflowTask(task)
	case *eagerWorkflowTask:
		return wtp.processWorkflowTask(wtp.toWorkflowTask(task.task))
	default:
		panic("unknown task type.")
	}
}

func (wtp *workflowTaskProcessor) processWorkflowTask(task *workflowTask) (retErr error) {
	if task.task == nil {
		// We didn't have task, poll might have timeout.
		traceLog(func() {
			wtp.logger.Debug("Workflow task unavailable")
		})
		return nil
	}

	doneCh := make(chan struct{})
	laResultCh := make(chan *localActivityResult)
	laRetryCh := make(chan *localActivityTask)
	// close doneCh so local activity worker won't get blocked forever when trying to send back result to laResultCh.
	defer close(doneCh)

	downloadPayloadMetrics := &workflowTaskStorageMetrics{}
	ctx := extstore.WithStorageOperationCallback(context.Background(), downloadPayloadMetrics)

	var taskErr error
	if taskErr = visitProtoPayloads(ctx, wtp.inboundPayloadVisitor, task.task, wtp.storageParams.MaxOperationsPerMessage()); taskErr != nil {
		wtp.handleInboundVisitorError(task.task, taskErr)
		return nil
	}

	wfctx, err := wtp.contextManager.GetOrCreateWorkflowContext(task.task, task.historyIterator)
	if err != nil {
		return err
	}
	defer func() {
		// If we panic during processing the workflow task, we need to unlock the workflow context with an error to discard it.
		if p := recover(); p != nil {
			topLine := fmt.Sprintf("workflow task for %s [panic]:", wtp.taskQueueName)
			st := getStackTraceRaw(topLine, 7, 0)
			wtp.logger.Error("Workflow task processing panic.",
				tagWorkflowID, task.task.WorkflowExecution.GetWorkflowId(),
				tagRunID, task.task.WorkflowExecution.GetRunId(),
				tagWorkerType, task.task.GetWorkflowType().Name,
				tagAttempt, task.task.Attempt,
				tagPanicError, fmt.Sprintf("%v", p),
				tagPanicStack, st)
			taskErr = newPanicError(p, st)
			retErr = taskErr
		}
		wfctx.Unlock(taskErr)
	}()

	for {
		startTime := time.Now()
		task.doneCh = doneCh
		task.laResultCh = laResultCh
		task.laRetryCh = laRetryCh
		var taskCompletion *workflowTaskCompletion
		taskCompletion, taskErr = wtp.taskHandler.ProcessWorkflowTask(
			task,
			wfctx,
			func(taskCompletion *workflowTaskCompletion, startTime time.Time) (*workflowTask, error) {
				wtp.logger.Debug("Force RespondWorkflowTaskCompleted.", "TaskStartedEventID", task.task.GetStartedEventId())
				heartbeatResponse, err := wtp.RespondTaskCompletedWithMetrics(
					taskCompletion,
					nil,
					task.task,
					startTime,
					downloadPayloadMetrics,
					wfctx.workflowInfo)
				if err != nil {
					return nil, err
				}
				if heartbeatResponse == nil || heartbeatResponse.WorkflowTask == nil {
					return nil, nil
				}
				task := wtp.toWorkflowTask(heartbeatResponse.WorkflowTask)
				if err := visitProtoPayloads(ctx, wtp.inboundPayloadVisitor, task.task, wtp.storageParams.MaxOperationsPerMessage()); err != nil {
					wtp.handleInboundVisitorError(task.task, err)
					return nil, nil
				}
				task.doneCh = doneCh
				task.laResultCh = laResultCh
				task.laRetryCh = laRetryCh
				return task, nil
			},
		)
		if taskCompletion == nil && taskErr == nil {
			return nil
		}
		if _, ok := taskErr.(workflowTaskHeartbeatError); ok {
			return taskErr
		}
		response, err := wtp.RespondTaskCompletedWithMetrics(
			taskCompletion,
			taskErr,
			task.task,
			startTime,
			downloadPayloadMetrics,
			wfctx.workflowInfo)
		if err != nil {
			// If we get an error responding to the workflow task we need to evict the execution from the cache.
			taskErr = err
			return err
		}

		if eventLevel := response.GetResetHistoryEventId(); eventLevel != 0 {
			wfctx.SetPreviousStartedEventID(eventLevel)
		}

		if response == nil || response.WorkflowTask == nil || taskErr != nil {
			return nil
		}

		// we are getting new workflow task, so reset the workflowTask and continue process the new one
		task = wtp.toWorkflowTask(response.WorkflowTask)
		if err := visitProtoPayloads(ctx, wtp.inboundPayloadVisitor, task.task, wtp.storageParams.MaxOperationsPerMessage()); err != nil {
			wtp.handleInboundVisitorError(task.task, err)
			return nil
		}
	}
}

func (wtp *workflowTaskProcessor) RespondTaskCompletedWithMetrics(
	taskCompletion *workflowTaskCompletion,
	taskErr error,
	task *workflowservice.PollWorkflowTaskQueueResponse,
	startTime time.Time,
	downloadPayloadMetrics *workflowTaskStorageMetrics,
	workflowInfo *WorkflowInfo,
) (response *workflowservice.RespondWorkflowTaskCompletedResponse, err error) {
	metricsHandler := wtp.metricsHandler.WithTags(metrics.WorkflowTags(task.WorkflowType.GetName()))

	emitFailMetric := false
	var failureReason string
	if taskErr != nil {
		wtp.logger.Warn("Failed to process workflow task.",
			tagWorkflowType, task.WorkflowType.GetName(),
			tagWorkflowID, task.WorkflowExecution.GetWorkflowId(),
			tagRunID, task.WorkflowExecution.GetRunId(),
			tagAttempt, task.Attempt,
			tagError, taskErr)
		emitFailMetric = true
		failureReason = metrics.FailureReasonWorkflowError
		if workflowTaskFailureCause(taskErr) == enumspb.WORKFLOW_TASK_FAILED_CAUSE_NON_DETERMINISTIC_ERROR {
			failureReason = metrics.FailureReasonNonDeterminismError
		}
		taskCompletion = wtp.taskFailureCompletion(task, taskErr)
	}

	uploadPayloadMetrics := &workflowTaskStorageMetrics{}
	ctx := extstore.WithStorageOperationCallback(context.Background(), uploadPayloadMetrics)
	ctx = extstore.WithStorageTarget(ctx, extstore.StorageDriverWorkflowInfo{
		Namespace:    wtp.namespace,
		WorkflowID:   task.WorkflowExecution.GetWorkflowId(),
		RunID:        task.WorkflowExecution.GetRunId(),
		WorkflowType: task.WorkflowType.GetName(),
	})
	outboundPayloadVisitor := &commandAwarePayloadVisitor{
		innerVisitor: wtp.outboundPayloadVisitor,
		workflowInfo: workflowInfo,
	}
	if taskErr = visitProtoPayloads(ctx, outboundPayloadVisitor, taskCompletion.rawRequest, wtp.storageParams.MaxOperationsPerMessage()); taskErr != nil {
		// The outbound visitor failed (e.g. storage driver error or panic). We
		// cannot send the original response, so fall back to an explicit
		// failure so the server records the error immediately.
		keyvals := []any{
			tagWorkflowType, task.WorkflowType.GetName(),
			tagWorkflowID, task.WorkflowExecution.GetWorkflowId(),
			tagRunID, task.WorkflowExecution.GetRunId(),
			tagAttempt, task.Attempt,
		}
		var errPayloadSize payloadSizeError
		if errors.As(taskErr, &errPayloadSize) {
			keyvals = append(keyvals,
				tagPayloadSize, errPayloadSize.size,
				tagPayloadSizeLimit, errPayloadSize.limit)
		}
		wtp.logger.Warn("Workflow task postprocess error: "+taskErr.Error(), keyvals...)
		emitFailMetric = true
		failureReason = metrics.FailureReasonWorkflowError
		if errors.As(taskErr, new(payloadSizeError)) {
			failureReason = metrics.FailureReasonPayloadsTooLarge
		}
		taskCompletion = wtp.taskFailureCompletion(task, taskErr)
	}

	// The namespace limit governs the server's recombined page buffer, so it only applies to a
	// completion large enough to be paginated; a completion that fits in a single request is never
	// buffered and is left for the server to accept. A paginated completion whose buffered command
	// bytes would exceed the limit is rejected and the workflow terminated by the server, so fail it
	// proactively rather than sending doomed pages. Only buffered command bytes count toward the
	// limit, not messages or metadata.
	if req, ok := taskCompletion.rawRequest.(*workflowservice.RespondWorkflowTaskCompletedRequest); ok &&
		wtp.workflowTaskCompletionPagination != nil &&
		wtp.workflowTaskCompletionPagination.enabled.Load() &&
		proto.Size(req) > maxWorkflowTaskCompletionPageBytes {
		if limit := wtp.workflowTaskCompletionPagination.sizeLimit.Load(); limit > 0 {
			var commandBytes int64
			for _, command := range req.Commands {
				commandBytes += int64(proto.Size(command))
			}
			if commandBytes > limit {
				taskErr := fmt.Errorf("workflow task completion command size %d exceeds the namespace limit of %d bytes", commandBytes, limit)
				wtp.logger.Warn("Workflow task completion exceeds namespace size limit.",
					tagWorkflowType, task.WorkflowType.GetName(),
					tagWorkflowID, task.WorkflowExecution.GetWorkflowId(),
					tagRunID, task.WorkflowExecution.GetRunId(),
					tagAttempt, task.Attempt,
					tagError, taskErr)
				emitFailMetric = true
				failureReason = metrics.FailureReasonRequestTooLarge
				taskCompletion = &workflowTaskCompletion{
					rawRequest: wtp.errorToFailWorkflowTaskWithCause(
						task.TaskToken,
						task.WorkflowExecution.GetWorkflowId(),
						taskErr,
						enumspb.WORKFLOW_TASK_FAILED_CAUSE_REQUEST_TOO_LARGE,
					),
				}
			}
		}
	}

	taskDuration := time.Since(startTime)
	metricsHandler.Timer(metrics.WorkflowTaskExecutionLatency).Record(taskDuration)

	response, err = wtp.sendTaskCompletedRequest(taskCompletion, task)

	if threshold := wftDurationWarnThreshold(); taskDuration > threshold {
		completionEventId := task.GetStartedEventId() + 1
		loggerDurationKeyVals := []any{
			tagWorkflowType, task.WorkflowType.GetName(),
			tagWorkflowID, task.WorkflowExecution.GetWorkflowId(),
			tagRunID, task.WorkflowExecution.GetRunId(),
			tagAttempt, task.Attempt,
			tagEventID, completionEventId,
			tagWorkflowTaskDuration, taskDuration,
		}
		if downloadPayloadMetrics.payloadCount > 0 {
			loggerDurationKeyVals = append(loggerDurationKeyVals,
				tagPayloadDownloadCount, downloadPayloadMetrics.payloadCount,
				tagPayloadDownloadSize, downloadPayloadMetrics.totalSize,
				tagPayloadDownloadDuration, downloadPayloadMetrics.TotalDuration(),
				tagPayloadDownloadDrivers, downloadPayloadMetrics.GetDriverNames(),
			)
		}
		if uploadPayloadMetrics.payloadCount > 0 {
			loggerDurationKeyVals = append(loggerDurationKeyVals,
				tagPayloadUploadCount, uploadPayloadMetrics.payloadCount,
				tagPayloadUploadSize, uploadPayloadMetrics.totalSize,
				tagPayloadUploadDuration, uploadPayloadMetrics.TotalDuration(),
				tagPayloadUploadDrivers, uploadPayloadMetrics.GetDriverNames(),
			)
		}

		taskID := fmt.Sprintf("%s:%d:%d", task.WorkflowExecution.GetRunId(), completionEventId, task.Attempt)
		wtp.logger.Warn(
			fmt.Sprintf("[TMPRL1104] %s Workflow task duration exceeded %d seconds.", taskID, int64(threshold/time.Second)),
			loggerDurationKeyVals...)
	}

	var grpcMessageTooLargeErr *retry.GrpcMessageTooLargeError
	if errors.As(err, &grpcMessageTooLargeErr) {
		secondEmitFailMetric, secondErr := wtp.reportGrpcMessageTooLarge(ctx, taskCompletion, task, err)
		if secondEmitFailMetric {
			emitFailMetric = true
			// Overwriting the original failure reason for metrics purposes
			failureReason = metrics.FailureReasonGrpcMessageTooLarge
		}
		// We already know the first error was GRPC message too large, if there was another error when reporting the first error
		// to the server it's probably more interesting for the user.
		if secondErr != nil {
			err = secondErr
		}
	}

	if emitFailMetric {
		incrementWorkflowTaskFailureCounter(metricsHandler, failureReason)
	}

	return
}

func (wtp *workflowTaskProcessor) sendTaskCompletedRequest(
	taskCompletion *workflowTaskCompletion,
	task *workflowservice.PollWorkflowTaskQueueResponse,
) (response *workflowservice.RespondWorkflowTaskCompletedResponse, err error) {
	ctx := context.Background()
	// Respond task completion.
	grpcCtx, cancel := wtp.newWorkflowTaskReportGRPCContext(ctx, task)
	defer cancel()
	if taskCompletion == nil {
		// should not happen
		panic("unknown request type from ProcessWorkflowTask()")
	}
	switch request := taskCompletion.rawRequest.(type) {
	case *workflowservice.RespondWorkflowTaskFailedRequest:
		// Only fail workflow task on first attempt, subsequent failure on the same workflow task will timeout.
		// This is to avoid spin on the failed workflow task. Checking Attempt not nil for older server.
		if task.GetAttempt() == 1 {
			_, err = wtp.service.RespondWorkflowTaskFailed(grpcCtx, request)
			if err != nil {
				traceLog(func() {
					wtp.logger.Debug("RespondWorkflowTaskFailed failed.", tagError, err)
				})
			} else if taskCompletion.applyCompletionMetrics != nil {
				taskCompletion.applyCompletionMetrics()
			}
		}
	case *workflowservice.RespondWorkflowTaskCompletedRequest:
		if request.StickyAttributes == nil && wtp.stickyCacheSize > 0 {
			request.StickyAttributes = &taskqueuepb.StickyExecutionAttributes{
				WorkerTaskQueue: &taskqueuepb.TaskQueue{
					Name:       getWorkerTaskQueue(wtp.stickyUUID),
					Kind:       enumspb.TASK_QUEUE_KIND_STICKY,
					NormalName: wtp.taskQueueName,
				},
				ScheduleToStartTimeout: durationpb.New(wtp.StickyScheduleToStartTimeout),
			}
		}
		eagerReserved := wtp.eagerActivityExecutor.applyToRequest(request)
		response, err = wtp.respondWorkflowTaskCompleted(ctx, grpcCtx, request, task)
		if err != nil {
			traceLog(func() {
				wtp.logger.Debug("RespondWorkflowTaskCompleted failed.", tagError, err)
			})
		} else if taskCompletion.applyCompletionMetrics != nil {
			taskCompletion.applyCompletionMetrics()
		}
		wtp.eagerActivityExecutor.handleResponse(response, eagerReserved)
	case *workflowservice.RespondQueryTaskCompletedRequest:
		_, err = wtp.service.RespondQueryTaskCompleted(grpcCtx, request)
		if err != nil {
			traceLog(func() {
				wtp.logger.Debug("RespondQueryTaskCompleted failed.", tagError, err)
			})
		} else if taskCompletion.applyCompletionMetrics != nil {
			taskCompletion.applyCompletionMetrics()
		}
	default:
		// should not happen
		panic("unknown request type from ProcessWorkflowTask()")
	}
	return
}

// respondWorkflowTaskCompleted sends a workflow task completion, paginating it across multiple
// requests sharing one task token when the namespace supports it and the completion would otherwise
// exceed the gRPC request size limit.
func (wtp *workflowTaskProcessor) respondWorkflowTaskCompleted(
	ctx context.Context,
	grpcCtx context.Context,
	request *workflowservice.RespondWorkflowTaskCompletedRequest,
	task *workflowservice.PollWorkflowTaskQueueResponse,
) (*workflowservice.RespondWorkflowTaskCompletedResponse, error) {
	if wtp.workflowTaskCompletionPagination == nil || !wtp.workflowTaskCompletionPagination.enabled.Load() {
		return wtp.service.RespondWorkflowTaskCompleted(grpcCtx, request)
	}
	intermediatePages, finalPage := paginateWorkflowTaskCompletion(request, maxWorkflowTaskCompletionPageBytes)
	if len(intermediatePages) == 0 {
		return wtp.service.RespondWorkflowTaskCompleted(grpcCtx, finalPage)
	}
	return wtp.sendPaginatedWorkflowTaskCompletion(ctx, intermediatePages, finalPage, task)
}

// sendPaginatedWorkflowTaskCompletion sends a paginated completion, resending every page from page 0
// on buffer loss. Buffer loss — the server dropping the pages it had buffered for this token — is
// transient, so it backs off exponentially and retries. The server bounds the loop by eventually
// timing the task out, after which the stale token fails with a different, non-buffer-lost error;
// worker shutdown ends it sooner. The gRPC retry layer does not retry buffer loss
// (see retry.IsWorkflowTaskCompletionBufferLost), so this loop is its sole handler.
func (wtp *workflowTaskProcessor) sendPaginatedWorkflowTaskCompletion(
	ctx context.Context,
	intermediatePages []*workflowservice.RespondWorkflowTaskCompletedRequest,
	finalPage *workflowservice.RespondWorkflowTaskCompletedRequest,
	task *workflowservice.PollWorkflowTaskQueueResponse,
) (*workflowservice.RespondWorkflowTaskCompletedResponse, error) {
	backoff := workflowTaskCompletionPageResendInitialBackoff
	for {
		response, err := wtp.sendWorkflowTaskCompletionPages(ctx, intermediatePages, finalPage, task)
		if err == nil {
			return response, nil
		}
		if !retry.IsWorkflowTaskCompletionBufferLost(err) {
			return nil, err
		}
		timer := time.NewTimer(backoff)
		select {
		case <-wtp.stopC:
			timer.Stop()
			return nil, err
		case <-timer.C:
		}
		if backoff *= 2; backoff > workflowTaskCompletionPageResendMaxBackoff {
			backoff = workflowTaskCompletionPageResendMaxBackoff
		}
	}
}

// sendWorkflowTaskCompletionPages sends the intermediate pages concurrently, then the final page; a
// failed page cancels the rest, since any failure resends the whole set or fails the task.
func (wtp *workflowTaskProcessor) sendWorkflowTaskCompletionPages(
	ctx context.Context,
	intermediatePages []*workflowservice.RespondWorkflowTaskCompletedRequest,
	finalPage *workflowservice.RespondWorkflowTaskCompletedRequest,
	task *workflowservice.PollWorkflowTaskQueueResponse,
) (*workflowservice.RespondWorkflowTaskCompletedResponse, error) {
	group, groupCtx := errgroup.WithContext(ctx)
	group.SetLimit(maxConcurrentWorkflowTaskCompletionPages)
	for _, page := range intermediatePages {
		group.Go(func() error {
			grpcCtx, cancel := wtp.newWorkflowTaskReportGRPCContext(groupCtx, task)
			defer cancel()
			_, err := wtp.service.RespondWorkflowTaskCompleted(grpcCtx, page)
			return err
		})
	}
	if err := group.Wait(); err != nil {
		return nil, err
	}
	grpcCtx, cancel := wtp.newWorkflowTaskReportGRPCContext(ctx, task)
	defer cancel()
	return wtp.service.RespondWorkflowTaskCompleted(grpcCtx, finalPage)
}

// newWorkflowTaskReportGRPCContext builds the gRPC context for reporting a workflow task
// (completion, failure, or query result), shared by the single-request and per-page send paths.
func (wtp *workflowTaskProcessor) newWorkflowTaskReportGRPCContext(
	ctx context.Context,
	task *workflowservice.PollWorkflowTaskQueueResponse,
) (context.Context, context.CancelFunc) {
	return newGRPCContext(ctx, grpcMetricsHandler(
		wtp.metricsHandler.WithTags(metrics.RPCTags(task.GetWorkflowType().GetName(),
			metrics.NoneTagValue, metrics.NoneTagValue))),
		defaultGrpcRetryParameters(ctx))
}

func (wtp *workflowTaskProcessor) reportGrpcMessageTooLarge(
	ctx context.Context,
	taskCompletion *workflowTaskCompletion,
	task *workflowservice.PollWorkflowTaskQueueResponse,
	sendErr error,
) (emitFailMetric bool, err error) {
	if taskCompletion == nil {
		// should not happen
		panic("unknown request type from ProcessWorkflowTask()")
	}
	switch taskCompletion.rawRequest.(type) {
	case *workflowservice.RespondWorkflowTaskCompletedRequest, *workflowservice.RespondWorkflowTaskFailedRequest:
		emitFailMetric = true
		request := wtp.errorToFailWorkflowTask(task.TaskToken, task.WorkflowExecution.GetWorkflowId(), sendErr)
		request.Cause = enumspb.WORKFLOW_TASK_FAILED_CAUSE_GRPC_MESSAGE_TOO_LARGE
		if err = visitProtoPayloads(ctx, wtp.outboundPayloadVisitor, request, wtp.storageParams.MaxOperationsPerMessage()); err != nil {
			wtp.logger.Error("Failed to visit payloads for GRPC message too large failure response.", tagError, err)
			return
		}
		_, err = wtp.sendTaskCompletedRequest(&workflowTaskCompletion{rawRequest: request}, task)
	case *workflowservice.RespondQueryTaskCompletedRequest:
		request := &workflowservice.RespondQueryTaskCompletedRequest{
			TaskToken:     task.TaskToken,
			CompletedType: enumspb.QUERY_RESULT_TYPE_FAILED,
			ErrorMessage:  sendErr.Error(),
			Namespace:     wtp.namespace,
			Failure:       wtp.failureConverter.ErrorToFailure(sendErr),
			Cause:         enumspb.WORKFLOW_TASK_FAILED_CAUSE_GRPC_MESSAGE_TOO_LARGE,
			PollerGroupId: task.GetPollerGroupId(),
		}
		if err = visitProtoPayloads(ctx, wtp.outboundPayloadVisitor, request, wtp.storageParams.MaxOperationsPerMessage()); err != nil {
			wtp.logger.Error("Failed to visit payloads for GRPC message too large query failure response.", tagError, err)
			return
		}
		_, err = wtp.sendTaskCompletedRequest(&workflowTaskCompletion{rawRequest: request}, task)
	default:
		// should not happen
		panic("unknown request type from ProcessWorkflowTask()")
	}
	return
}

func (wtp *workflowTaskProcessor) handleInboundVisitorError(task *workflowservice.PollWorkflowTaskQueueResponse, visitErr error) {
	keyvals := []any{
		tagWorkflowType, task.WorkflowType.GetName(),
		tagWorkflowID, task.WorkflowExecution.GetWorkflowId(),
		tagRunID, task.WorkflowExecution.GetRunId(),
		tagAttempt, task.Attempt,
	}
	var errPayloadSize payloadSizeError
	if errors.As(visitErr, &errPayloadSize) {
		keyvals = append(keyvals,
			tagPayloadSize, errPayloadSize.size,
			tagPayloadSizeLimit, errPayloadSize.limit)
	}
	wtp.logger.Warn("Workflow task preprocess error: "+visitErr.Error(), keyvals...)
	// Submit an explicit failure so the server records the error immediately
	// rather than waiting for the task to time out.
	failCompletion := wtp.taskFailureCompletion(task, visitErr)
	if _, submitErr := wtp.sendTaskCompletedRequest(failCompletion, task); submitErr != nil {
		wtp.logger.Warn("Failed to submit failure after inbound visitor error.", tagError, submitErr)
	}
}

func (wtp *workflowTaskProcessor) taskFailureCompletion(
	task *workflowservice.PollWorkflowTaskQueueResponse,
	err error,
) *workflowTaskCompletion {
	if task.Query != nil {
		return &workflowTaskCompletion{
			rawRequest: &workflowservice.RespondQueryTaskCompletedRequest{
				TaskToken:     task.TaskToken,
				CompletedType: enumspb.QUERY_RESULT_TYPE_FAILED,
				ErrorMessage:  err.Error(),
				Namespace:     wtp.namespace,
				Failure:       wtp.failureConverter.ErrorToFailure(err),
				PollerGroupId: task.GetPollerGroupId(),
				Cause:         workflowQueryFailureCause(err),
			},
		}
	}

	return &workflowTaskCompletion{
		rawRequest: wtp.errorToFailWorkflowTask(
			task.TaskToken,
			task.WorkflowExecution.GetWorkflowId(),
			err,
		),
	}
}

func (wtp *workflowTaskProcessor) errorToFailWorkflowTask(
	taskToken []byte,
	workflowID string,
	err error,
) *workflowservice.RespondWorkflowTaskFailedRequest {
	return wtp.errorToFailWorkflowTaskWithCause(taskToken, workflowID, err, workflowTaskFailureCause(err))
}

// workflowQueryFailureCause maps a task failure to a WorkflowTaskFailedCause
// for legacy query failure responses. Unlike workflowTaskFailureCause it keeps
// UNSPECIFIED when no cause maps cleanly.
func workflowQueryFailureCause(err error) enumspb.WorkflowTaskFailedCause {
	if errors.As(err, new(payloadSizeError)) {
		return enumspb.WORKFLOW_TASK_FAILED_CAUSE_PAYLOADS_TOO_LARGE
	}
	if panicErr, _ := err.(*workflowPanicError); panicErr != nil {
		if _, badStateMachine := panicErr.value.(stateMachineIllegalStatePanic); badStateMachine {
			return enumspb.WORKFLOW_TASK_FAILED_CAUSE_NON_DETERMINISTIC_ERROR
		}
		return enumspb.WORKFLOW_TASK_FAILED_CAUSE_WORKFLOW_WORKER_UNHANDLED_FAILURE
	}
	if _, mismatch := err.(historyMismatchError); mismatch {
		return enumspb.WORKFLOW_TASK_FAILED_CAUSE_NON_DETERMINISTIC_ERROR
	}
	if _, unknown := err.(unknownSdkFlagError); unknown {
		return enumspb.WORKFLOW_TASK_FAILED_CAUSE_NON_DETERMINISTIC_ERROR
	}
	return enumspb.WORKFLOW_TASK_FAILED_CAUSE_UNSPECIFIED
}

func workflowTaskFailureCause(err error) enumspb.WorkflowTaskFailedCause {
	cause := enumspb.WORKFLOW_TASK_FAILED_CAUSE_WORKFLOW_WORKER_UNHANDLED_FAILURE
	// If it was a panic due to a bad state machine or if it was a history
	// mismatch error, mark as non-deterministic.
	if panicErr, _ := err.(*workflowPanicError); panicErr != nil {
		if _, badStateMachine := panicErr.value.(stateMachineIllegalStatePanic); badStateMachine {
			cause = enumspb.WORKFLOW_TASK_FAILED_CAUSE_NON_DETERMINISTIC_ERROR
		}
	} else if _, mismatch := err.(historyMismatchError); mismatch {
		cause = enumspb.WORKFLOW_TASK_FAILED_CAUSE_NON_DETERMINISTIC_ERROR
	} else if _, unknown := err.(unknownSdkFlagError); unknown {
		cause = enumspb.WORKFLOW_TASK_FAILED_CAUSE_NON_DETERMINISTIC_ERROR
	} else if errors.As(err, new(payloadSizeError)) {
		cause = enumspb.WORKFLOW_TASK_FAILED_CAUSE_PAYLOADS_TOO_LARGE
	}
	return cause
}

func (wtp *workflowTaskProcessor) errorToFailWorkflowTaskWithCause(taskToken []byte, workflowId string, err error, cause enumspb.WorkflowTaskFailedCause) *workflowservice.RespondWorkflowTaskFailedRequest {
	builtRequest := &workflowservice.RespondWorkflowTaskFailedRequest{
		TaskToken: taskToken,
		Cause:     cause,
		Failure:   wtp.failureConverter.ErrorToFailure(err),
		Identity:  wtp.identity,
		//lint:ignore SA1019 retain the checksum used by servers without Build ID versioning support
		BinaryChecksum: wtp.workerBuildID,
		Namespace:      wtp.namespace,
		ResourceId:     getWorkflowResourceId(workflowId),
		//lint:ignore SA1019 retain legacy Build ID versioning metadata for older servers
		WorkerVersion: &commonpb.WorkerVersionStamp{
			BuildId:       wtp.workerBuildID,
			UseVersioning: wtp.useBuildIDVersioning,
		},
		//lint:ignore SA1019 retain legacy deployment metadata for servers predating deployment options
		Deployment: &deploymentpb.Deployment{
			BuildId:    wtp.workerBuildID,
			SeriesName: wtp.getDeploymentName(),
		},
		DeploymentOptions: workerDeploymentOptionsToProto(
			wtp.useBuildIDVersioning,
			wtp.workerDeploymentVersion,
		),
	}

	if wtp.getCapabilities().BuildIdBasedVersioning {
		//lint:ignore SA1019 ignore deprecated versioning APIs
		builtRequest.BinaryChecksum = ""
	}

	return builtRequest
}

const defaultWFTDurationWarnThreshold = 5 * time.Second

var wftDurationWarnThreshold = sync.OnceValue(func() time.Duration {
	return parseWFTDurationWarnThreshold(os.Getenv("TEMPORAL_WORKFLOW_TASK_DURATION_WARN_SECONDS"))
})

// Separated from the env read so it can be unit-tested without mutating the process environment.
// An unparsable value, including a negative one, falls back to the default rather than disabling
// the warning.
func parseWFTDurationWarnThreshold(value string) time.Duration {
	seconds, err := strconv.ParseUint(value, 10, 32)
	if err != nil {
		return defaultWFTDurationWarnThreshold
	}
	return time.Duration(seconds) * time.Second
}

// workflowTaskStorageMetrics implements extstore.StorageOperationCallback for a single workflow
// task. Batches may complete concurrently, so mu guards every field.
type workflowTaskStorageMetrics struct {
	mu           sync.Mutex
	payloadCount int
	totalSize    int64
	// Start and end of each completed batch.
	spans       [][2]time.Time
	driverNames map[string]struct{}
}

func (callback *workflowTaskStorageMetrics) PayloadBatchCompleted(count int, size int64, start, end time.Time, driverNames []string) {
	callback.mu.Lock()
	defer callback.mu.Unlock()
	callback.payloadCount += count
	callback.totalSize += size
	callback.spans = append(callback.spans, [2]time.Time{start, end})
	for _, name := range driverNames {
		if callback.driverNames == nil {
			callback.driverNames = make(map[string]struct{})
		}
		callback.driverNames[name] = struct{}{}
	}
}

// TotalDuration reports the wall-clock time storage was in flight. Batches may run
// concurrently, so overlapping spans are counted once rather than summed.
func (callback *workflowTaskStorageMetrics) TotalDuration() time.Duration {
	callback.mu.Lock()
	defer callback.mu.Unlock()
	if len(callback.spans) == 0 {
		return 0
	}
	ordered := make([][2]time.Time, len(callback.spans))
	copy(ordered, callback.spans)
	sort.Slice(ordered, func(i, j int) bool { return ordered[i][0].Before(ordered[j][0]) })
	var total time.Duration
	spanStart, spanEnd := ordered[0][0], ordered[0][1]
	for _, span := range ordered[1:] {
		if span[0].After(spanEnd) {
			total += spanEnd.Sub(spanStart)
			spanStart, spanEnd = span[0], span[1]
		} else if span[1].After(spanEnd) {
			spanEnd = span[1]
		}
	}
	return total + spanEnd.Sub(spanStart)
}

func (callback *workflowTaskStorageMetrics) GetDriverNames() []string {
	names := make([]string, 0, len(callback.driverNames))
	for name := range callback.driverNames {
		names = append(names, name)
	}
	sort.Strings(names)
	return names
}

func newLocalActivityPoller(
	params workerExecutionParameters,
	laTunnel *localActivityTunnel,
	interceptors []WorkerInterceptor,
	client *WorkflowClient,
	workerStopCh <-chan struct{},
) *localActivityTaskPoller {
	handler := &localActivityTaskHandler{
		backgroundContext:  params.BackgroundContext,
		metricsHandler:     params.MetricsHandler,
		logger:             params.Logger,
		dataConverter:      params.DataConverter,
		contextPropagators: params.ContextPropagators,
		interceptors:       interceptors,
		client:             client,
		workerStopChannel:  workerStopCh,
	}
	return &localActivityTaskPoller{
		basePoller:   basePoller{metricsHandler: params.MetricsHandler, stopC: params.WorkerStopChannel},
		handler:      handler,
		logger:       params.Logger,
		laTunnel:     laTunnel,
		workerStopCh: workerStopCh,
	}
}

func (latp *localActivityTaskPoller) PollTask(pollerGroupLease) (taskForWorker, error) {
	task := latp.laTunnel.getTask()
	if task == nil {
		return nil, nil
	}
	return task, nil
}

func (latp *localActivityTaskPoller) ProcessTask(task any) error {
	if latp.stopping() {
		return errStop
	}

	result := latp.handler.executeLocalActivityTask(task.(*localActivityTask))

	// If shutdown is initiated after we begin local activity execution, there is no need to send result back to
	// laResultCh, as both workers receive shutdown from top down.
	if latp.stopping() {
		return errStop
	}
	// We need to send back the local activity result to unblock workflowTaskPoller.processWorkflowTask() which is
	// synchronously listening on the laResultCh. We also want to make sure we don't block here forever in case
	// processWorkflowTask() already returns and nobody is receiving from laResultCh. We guarantee that doneCh is closed
	// before returning from workflowTaskPoller.processWorkflowTask().
	select {
	case result.task.workflowTask.laResultCh <- result:
		return nil
	case <-result.task.workflowTask.doneCh:
		// processWorkflowTask() already returns, just drop this local activity result.
		return nil
	}
}

func (lath *localActivityTaskHandler) executeLocalActivityTask(task *localActivityTask) (result *localActivityResult) {
	workflowType := task.params.WorkflowInfo.WorkflowType.Name
	activityType := task.params.ActivityType
	metricsHandler := lath.metricsHandler.WithTags(metrics.LocalActivityTags(workflowType, activityType))

	metricsHandler.Counter(metrics.LocalActivityTotalCounter).Inc(1)

	ae := activityExecutor{name: activityType, fn: task.params.ActivityFn}
	traceLog(func() {
		lath.logger.Debug("Processing new local activity task",
			tagWorkflowID, task.params.WorkflowInfo.WorkflowExecution.ID,
			tagRunID, task.params.WorkflowInfo.WorkflowExecution.RunID,
			tagActivityType, activityType,
			tagAttempt, task.attempt,
		)
	})
	dataConverter := task.params.DataConverter
	if dataConverter == nil {
		dataConverter = lath.dataConverter
	}
	ctx, err := WithLocalActivityTask(lath.backgroundContext, task, lath.logger, lath.metricsHandler,
		dataConverter, lath.interceptors, lath.client, lath.workerStopChannel)
	if err != nil {
		return &localActivityResult{task: task, err: fmt.Errorf("failed building context: %w", err)}
	}

	// propagate context information into the local activity context from the headers
	ctx, err = contextWithHeaderPropagated(ctx, task.header, lath.contextPropagators)
	if err != nil {
		return &localActivityResult{task: task, err: err}
	}

	info := getActivityEnv(ctx)
	ctx, cancel := context.WithDeadline(ctx, info.deadline)
	defer cancel()

	task.Lock()
	if task.canceled {
		task.Unlock()
		return &localActivityResult{err: ErrCanceled, task: task}
	}
	task.attemptsThisWFT += 1
	task.cancelFunc = cancel
	task.Unlock()

	var laResult *commonpb.Payloads
	doneCh := make(chan struct{})
	go func(ch chan struct{}) {
		laStartTime := time.Now()
		defer close(ch)

		// panic handler
		defer func() {
			if p := recover(); p != nil {
				topLine := fmt.Sprintf("local activity for %s [panic]:", activityType)
				st := getStackTraceRaw(topLine, 7, 0)
				lath.logger.Error("LocalActivity panic.",
					tagWorkflowID, task.params.WorkflowInfo.WorkflowExecution.ID,
					tagRunID, task.params.WorkflowInfo.WorkflowExecution.RunID,
					tagActivityType, activityType,
					tagAttempt, task.attempt,
					tagPanicError, fmt.Sprintf("%v", p),
					tagPanicStack, st)
				metricsHandler.Counter(metrics.LocalActivityErrorCounter).Inc(1)
				err = newPanicError(p, st)
			}
			if err != nil && !isBenignApplicationError(err) {
				metricsHandler.Counter(metrics.LocalActivityFailedCounter).Inc(1)
				metricsHandler.
					WithTags(metrics.ActivityTaskFailedTags(metrics.FailureReasonActivityError)).
					Counter(metrics.LocalActivityExecutionFailedCounter).Inc(1)
			}
		}()

		laResult, err = ae.ExecuteWithActualArgs(ctx, task.params.InputArgs)
		executionLatency := time.Since(laStartTime)
		metricsHandler.Timer(metrics.LocalActivityExecutionLatency).Record(executionLatency)
		if time.Now().After(info.deadline) {
			// If local activity takes longer than expected timeout, the context would already be DeadlineExceeded and
			// the result would be discarded. Print a warning in this case.
			lath.logger.Warn("LocalActivity completed after activity deadline.",
				"LocalActivityID", task.activityID,
				"ActivityDeadline", info.deadline,
				"LocalActivityType", activityType,
				"ScheduleToCloseTimeout", task.params.ScheduleToCloseTimeout,
				"StartToCloseTimeout", task.params.StartToCloseTimeout,
				"ActualExecutionDuration", executionLatency)
		}
	}(doneCh)

WaitResult:
	select {
	case <-ctx.Done():
		select {
		case <-doneCh:
			// double check if result is ready.
			break WaitResult
		default:
		}

		// context is done
		if ctx.Err() == context.Canceled {
			metricsHandler.Counter(metrics.LocalActivityCanceledCounter).Inc(1)
			metricsHandler.Counter(metrics.LocalActivityExecutionCanceledCounter).Inc(1)
			return &localActivityResult{err: ErrCanceled, task: task}
		} else if ctx.Err() == context.DeadlineExceeded {
			if task.params.ScheduleToCloseTimeout != 0 && time.Now().After(info.scheduledTime.Add(task.params.ScheduleToCloseTimeout)) {
				return &localActivityResult{err: ErrDeadlineExceeded, task: task}
			} else {
				return &localActivityResult{err: NewTimeoutError("deadline exceeded", enumspb.TIMEOUT_TYPE_START_TO_CLOSE, nil), task: task}
			}
		} else {
			// should not happen
			return &localActivityResult{err: NewApplicationError("unexpected context done", "", true, nil), task: task}
		}
	case <-doneCh:
		// local activity completed
	}

	if err == nil {
		metricsHandler.
			Timer(metrics.LocalActivitySucceedEndToEndLatency).
			Record(time.Since(task.params.ScheduledTime))
	}
	return &localActivityResult{result: laResult, err: err, task: task}
}

func (wtp *workflowTaskPoller) release(kind enumspb.TaskQueueKind) {
	if wtp.stickyCacheSize <= 0 {
		return
	}

	wtp.requestLock.Lock()
	if kind == enumspb.TASK_QUEUE_KIND_STICKY {
		wtp.pendingStickyPollCount--
	} else {
		wtp.pendingRegularPollCount--
	}
	wtp.requestLock.Unlock()
}

func (wtp *workflowTaskPoller) updateBacklog(
	taskQueueKind enumspb.TaskQueueKind,
	responseGroupID string,
	backlogCountHint int64,
) {
	if taskQueueKind == enumspb.TASK_QUEUE_KIND_NORMAL || wtp.stickyCacheSize <= 0 {
		// we only care about sticky backlog for now.
		return
	}
	if wtp.autoscalingBalancer != nil {
		if wtp.autoscalingBalancer.groupStore == nil {
			wtp.autoscalingBalancer.setStickyBacklog(backlogCountHint)
		} else {
			wtp.autoscalingBalancer.setStickyGroupBacklog(
				responseGroupID,
				backlogCountHint,
			)
		}
	}
	if wtp.mode != Mixed {
		return
	}

	// Mixed pollers use this copy to choose their next queue.
	wtp.requestLock.Lock()
	wtp.mixedStickyBacklog = backlogCountHint
	wtp.requestLock.Unlock()
}

// getNextPollRequest returns appropriate next poll request based on poller configuration and mode.
// Simple rules:
//  1. if mode is NonSticky, always poll from regular task queue
//  2. if mode is Sticky, always poll from sticky task queue
//  3. if mode is Mixed
//     3.1. if sticky execution is disabled, always poll for regular task queue
//     3.2. otherwise:
//     3.2.1) if sticky task queue has backlog, always prefer to process sticky task first
//     3.2.2) poll from the task queue that has less pending requests (prefer sticky when they are the same).
func (wtp *workflowTaskPoller) getNextPollRequest() *workflowservice.PollWorkflowTaskQueueRequest {
	queueKind := enumspb.TASK_QUEUE_KIND_NORMAL

	if wtp.mode == NonSticky || wtp.stickyCacheSize <= 0 {
		// Do nothing, taskQueue is already set to non-sticky
	} else if wtp.mode == Sticky {
		queueKind = enumspb.TASK_QUEUE_KIND_STICKY
	} else if wtp.mode == Mixed {
		wtp.requestLock.Lock()
		if wtp.mixedStickyBacklog > 0 || wtp.pendingStickyPollCount <= wtp.pendingRegularPollCount {
			wtp.pendingStickyPollCount++
			queueKind = enumspb.TASK_QUEUE_KIND_STICKY
		} else {
			wtp.pendingRegularPollCount++
		}
		wtp.requestLock.Unlock()
	} else {
		panic("unknown workflow task poller mode")
	}

	return wtp.getPollRequestForKind(queueKind)
}

func (wtp *workflowTaskPoller) getPollRequestForKind(queueKind enumspb.TaskQueueKind) *workflowservice.PollWorkflowTaskQueueRequest {
	taskQueue := &taskqueuepb.TaskQueue{
		Name: wtp.taskQueueName,
		Kind: enumspb.TASK_QUEUE_KIND_NORMAL,
	}
	if queueKind == enumspb.TASK_QUEUE_KIND_STICKY {
		taskQueue.Name = getWorkerTaskQueue(wtp.stickyUUID)
		taskQueue.Kind = enumspb.TASK_QUEUE_KIND_STICKY
		taskQueue.NormalName = wtp.taskQueueName
	}

	builtRequest := &workflowservice.PollWorkflowTaskQueueRequest{
		Namespace: wtp.namespace,
		TaskQueue: taskQueue,
		Identity:  wtp.identity,
		//lint:ignore SA1019 retain the checksum used by servers without Build ID versioning support
		BinaryChecksum: wtp.workerBuildID,
		//lint:ignore SA1019 retain legacy Build ID versioning metadata for older servers
		WorkerVersionCapabilities: &commonpb.WorkerVersionCapabilities{
			BuildId:              wtp.workerBuildID,
			UseVersioning:        wtp.useBuildIDVersioning,
			DeploymentSeriesName: wtp.getDeploymentName(),
		},
		DeploymentOptions: workerDeploymentOptionsToProto(
			wtp.useBuildIDVersioning,
			wtp.workerDeploymentVersion,
		),
		WorkerInstanceKey:      wtp.workerInstanceKey,
		WorkerControlTaskQueue: wtp.workerControlTaskQueue,
	}
	if wtp.getCapabilities().BuildIdBasedVersioning {
		//lint:ignore SA1019 ignore deprecated versioning APIs
		builtRequest.BinaryChecksum = ""
	}
	return builtRequest
}

// Poll the workflow task queue and update the num_poller metric
func (wtp *workflowTaskPoller) pollWorkflowTaskQueue(ctx context.Context, request *workflowservice.PollWorkflowTaskQueueRequest) (*workflowservice.PollWorkflowTaskQueueResponse, error) {
	if request.TaskQueue.GetKind() == enumspb.TASK_QUEUE_KIND_NORMAL {
		wtp.numNormalPollerMetric.increment()
		defer wtp.numNormalPollerMetric.decrement()
	} else {
		wtp.numStickyPollerMetric.increment()
		defer wtp.numStickyPollerMetric.decrement()
	}

	return wtp.service.PollWorkflowTaskQueue(ctx, request)
}

// Poll for a single workflow task from the service.
func (wtp *workflowTaskPoller) poll(
	ctx context.Context,
	lease pollerGroupLease,
) (taskForWorker, error) {
	traceLog(func() {
		wtp.logger.Debug("workflowTaskPoller::Poll")
	})

	var request *workflowservice.PollWorkflowTaskQueueRequest
	var queueKind enumspb.TaskQueueKind
	var expectedOwner pollerGroupLeaseOwner
	if wtp.autoscalingBalancer != nil {
		expectedOwner = wtp.autoscalingBalancer
	} else if wtp.pollerGroups != nil {
		expectedOwner = wtp.pollerGroups
	}
	if lease.owner != nil && lease.owner != expectedOwner {
		return nil, errors.New("workflow poller-group lease belongs to a different manager")
	}
	if lease.owner != nil || wtp.pollerGroups != nil {
		queueKind = wtp.preferredQueueKind()
		request = wtp.getPollRequestForKind(queueKind)
		request.PollerGroupId = lease.groupIDOrEmpty()
	} else {
		request = wtp.getNextPollRequest()
		queueKind = request.TaskQueue.GetKind()
		defer wtp.release(queueKind)
	}

	response, err := wtp.pollWorkflowTaskQueue(ctx, request)
	if err != nil {
		// SimpleMaximum uses mixed pollers, so a stale hint can move every poll to
		// sticky. Autoscaling retains hints because its balancer preserves normal coverage.
		if wtp.mode == Mixed {
			wtp.updateBacklog(queueKind, "", 0)
		}
		return nil, err
	}

	if response != nil && response.GetPollerGroupsInfo() != nil {
		wtp.updatePollerGroups(response.GetPollerGroupsInfo())
	}

	if response == nil || len(response.TaskToken) == 0 {
		// Emit using base scope as no workflow type information is available in the case of empty poll
		wtp.metricsHandler.Counter(metrics.WorkflowTaskQueuePollEmptyCounter).Inc(1)
		backlog := response.GetBacklogCountHint()
		if wtp.mode == Mixed {
			// SimpleMaximum preserves its legacy empty-poll reset.
			backlog = 0
		}
		wtp.updateBacklog(queueKind, response.GetPollerGroupId(), backlog)
		return &workflowTask{}, nil
	}

	if queueKind == enumspb.TASK_QUEUE_KIND_STICKY {
		wtp.pollTimeTracker.recordPollSuccess(metrics.PollerTypeWorkflowStickyTask)
	} else {
		wtp.pollTimeTracker.recordPollSuccess(metrics.PollerTypeWorkflowTask)
	}

	wtp.updateBacklog(queueKind, response.GetPollerGroupId(), response.GetBacklogCountHint())

	task := wtp.toWorkflowTask(response)
	traceLog(func() {
		var firstEventID int64 = -1
		if response.History != nil && len(response.History.Events) > 0 {
			firstEventID = response.History.Events[0].GetEventId()
		}
		wtp.logger.Debug("workflowTaskPoller::Poll Succeed",
			"StartedEventID", response.GetStartedEventId(),
			"Attempt", response.GetAttempt(),
			"FirstEventID", firstEventID,
			"IsQueryTask", response.Query != nil)
	})

	metricsHandler := wtp.metricsHandler.WithTags(metrics.WorkflowTags(response.WorkflowType.GetName()))
	metricsHandler.Counter(metrics.WorkflowTaskQueuePollSucceedCounter).Inc(1)

	scheduleToStartLatency := response.GetStartedTime().AsTime().Sub(response.GetScheduledTime().AsTime())
	metricsHandler.Timer(metrics.WorkflowTaskScheduleToStartLatency).Record(scheduleToStartLatency)
	return task, nil
}

func (wtp *workflowTaskPoller) preferredQueueKind() enumspb.TaskQueueKind {
	if wtp.mode == Sticky && wtp.stickyCacheSize > 0 {
		return enumspb.TASK_QUEUE_KIND_STICKY
	}
	return enumspb.TASK_QUEUE_KIND_NORMAL
}

func (wtp *workflowTaskPoller) toWorkflowTask(response *workflowservice.PollWorkflowTaskQueueResponse) *workflowTask {
	return &workflowTask{
		task: response,
		historyIterator: &retrievingHistoryIterator{
			inner: &historyIteratorImpl{
				execution:      response.WorkflowExecution,
				nextPageToken:  response.NextPageToken,
				namespace:      wtp.namespace,
				service:        wtp.service,
				maxEventID:     response.GetStartedEventId(),
				metricsHandler: wtp.metricsHandler,
				taskQueue:      wtp.taskQueueName,
			},
			inboundVisitor: wtp.inboundPayloadVisitor,
			storageParams:  wtp.storageParams,
		},
	}
}

func (wtp *workflowTaskProcessor) toWorkflowTask(response *workflowservice.PollWorkflowTaskQueueResponse) *workflowTask {
	return &workflowTask{
		task: response,
		historyIterator: &retrievingHistoryIterator{
			inner: &historyIteratorImpl{
				execution:      response.WorkflowExecution,
				nextPageToken:  response.NextPageToken,
				namespace:      wtp.namespace,
				service:        wtp.service,
				maxEventID:     response.GetStartedEventId(),
				metricsHandler: wtp.metricsHandler,
				taskQueue:      wtp.taskQueueName,
			},
			inboundVisitor: wtp.inboundPayloadVisitor,
			storageParams:  wtp.storageParams,
		},
	}
}

func (h *historyIteratorImpl) GetNextPage() (*historypb.History, error) {
	if h.iteratorFunc == nil {
		h.iteratorFunc = newGetHistoryPageFunc(
			context.Background(),
			h.service,
			h.namespace,
			h.execution,
			h.maxEventID,
			h.metricsHandler,
			h.taskQueue,
		)
	}

	history, token, err := h.iteratorFunc(h.nextPageToken)
	if err != nil {
		return nil, err
	}
	h.nextPageToken = token
	return history, nil
}

func (h *historyIteratorImpl) Reset() {
	h.nextPageToken = nil
}

func (h *historyIteratorImpl) HasNextPage() bool {
	return h.nextPageToken != nil
}

func (r *retrievingHistoryIterator) GetNextPage() (*historypb.History, error) {
	history, err := r.inner.GetNextPage()
	if err != nil || history == nil {
		return history, err
	}
	if err := visitProtoPayloads(context.Background(), r.inboundVisitor, history, r.storageParams.MaxOperationsPerMessage()); err != nil {
		return nil, err
	}
	return history, nil
}

func (r *retrievingHistoryIterator) HasNextPage() bool { return r.inner.HasNextPage() }
func (r *retrievingHistoryIterator) Reset()            { r.inner.Reset() }

func newGetHistoryPageFunc(
	ctx context.Context,
	service workflowservice.WorkflowServiceClient,
	namespace string,
	execution *commonpb.WorkflowExecution,
	lastEventID int64,
	metricsHandler metrics.Handler,
	taskQueue string,
) func(nextPageToken []byte) (*historypb.History, []byte, error) {
	return func(nextPageToken []byte) (*historypb.History, []byte, error) {
		var resp *workflowservice.GetWorkflowExecutionHistoryResponse
		grpcCtx, cancel := newGRPCContext(ctx, grpcMetricsHandler(
			metricsHandler.WithTags(metrics.RPCTags(metrics.NoneTagValue, metrics.NoneTagValue, taskQueue))),
			defaultGrpcRetryParameters(ctx))
		defer cancel()

		resp, err := service.GetWorkflowExecutionHistory(grpcCtx, &workflowservice.GetWorkflowExecutionHistoryRequest{
			Namespace:     namespace,
			Execution:     execution,
			NextPageToken: nextPageToken,
		})
		if err != nil {
			return nil, nil, err
		}

		var h *historypb.History

		if resp.RawHistory != nil {
			h, err = serializer.DeserializeBlobDataToHistoryEvents(resp.RawHistory, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
			if err != nil {
				return nil, nil, nil
			}
		} else {
			h = resp.History
		}

		size := len(h.Events)
		// While the SDK is processing a workflow task, the workflow task could timeout and server would start
		// a new workflow task or the server looses the workflow task if it is a speculative workflow task. In either
		// case, the new workflow task could have events that are beyond the last event ID that the SDK expects to process.
		// In such cases, the SDK should return error indicating that the workflow task is stale since the result will not be used.
		if size > 0 && lastEventID > 0 &&
			h.Events[size-1].GetEventId() > lastEventID {
			return nil, nil, fmt.Errorf("history contains events past expected last event ID (%v) "+
				"likely this means the current workflow task is no longer valid", lastEventID)

		}

		return h, resp.NextPageToken, nil
	}
}

func newActivityTaskPoller(
	taskHandler ActivityTaskHandler,
	service workflowservice.WorkflowServiceClient,
	params workerExecutionParameters,
	pollerGroups *pollerGroupManager,
) *activityTaskPoller {
	return &activityTaskPoller{
		basePoller: basePoller{
			metricsHandler:               params.MetricsHandler,
			stopC:                        params.WorkerStopChannel,
			workerBuildID:                params.getBuildID(),
			useBuildIDVersioning:         params.UseBuildIDForVersioning,
			workerDeploymentVersion:      params.DeploymentOptions.Version,
			capabilities:                 params.capabilities,
			pollTimeTracker:              params.pollTimeTracker,
			workerInstanceKey:            params.workerInstanceKey,
			workerControlTaskQueue:       params.workerControlTaskQueue,
			pollerGroupSnapshotStore:     params.pollerGroupSnapshotStore,
			workerPollCompleteOnShutdown: params.workerPollCompleteOnShutdown,
		},
		taskHandler:         taskHandler,
		service:             service,
		namespace:           params.Namespace,
		taskQueueName:       params.TaskQueue,
		identity:            params.Identity,
		logger:              params.Logger,
		activitiesPerSecond: params.TaskQueueActivitiesPerSecond,
		numPollerMetric:     newNumPollerMetric(params.MetricsHandler, metrics.PollerTypeActivityTask),
		pollerGroups:        pollerGroups,
	}
}

// Poll the activity task queue and update the num_poller metric
func (atp *activityTaskPoller) pollActivityTaskQueue(ctx context.Context, request *workflowservice.PollActivityTaskQueueRequest) (*workflowservice.PollActivityTaskQueueResponse, error) {
	atp.numPollerMetric.increment()
	defer atp.numPollerMetric.decrement()

	return atp.service.PollActivityTaskQueue(ctx, request)
}

// Poll for a single activity task from the service.
func (atp *activityTaskPoller) poll(
	ctx context.Context,
	lease pollerGroupLease,
) (taskForWorker, error) {
	if lease.owner != nil && lease.owner != atp.pollerGroups {
		return nil, errors.New("activity poller-group lease belongs to a different manager")
	}

	traceLog(func() {
		atp.logger.Debug("activityTaskPoller::Poll")
	})

	request := &workflowservice.PollActivityTaskQueueRequest{
		Namespace:         atp.namespace,
		TaskQueue:         &taskqueuepb.TaskQueue{Name: atp.taskQueueName, Kind: enumspb.TASK_QUEUE_KIND_NORMAL},
		Identity:          atp.identity,
		TaskQueueMetadata: &taskqueuepb.TaskQueueMetadata{MaxTasksPerSecond: wrapperspb.Double(atp.activitiesPerSecond)},
		//lint:ignore SA1019 retain legacy Build ID versioning metadata for older servers
		WorkerVersionCapabilities: &commonpb.WorkerVersionCapabilities{
			BuildId:              atp.workerBuildID,
			UseVersioning:        atp.useBuildIDVersioning,
			DeploymentSeriesName: atp.getDeploymentName(),
		},
		DeploymentOptions: workerDeploymentOptionsToProto(
			atp.useBuildIDVersioning,
			atp.workerDeploymentVersion,
		),
		WorkerInstanceKey:      atp.workerInstanceKey,
		WorkerControlTaskQueue: atp.workerControlTaskQueue,
	}

	request.PollerGroupId = lease.groupIDOrEmpty()

	response, err := atp.pollActivityTaskQueue(ctx, request)
	if err != nil {
		return nil, err
	}
	if response != nil && response.GetPollerGroupsInfo() != nil {
		atp.updatePollerGroups(response.GetPollerGroupsInfo())
	}
	if response == nil || len(response.TaskToken) == 0 {
		// No activity info is available on empty poll.  Emit using base scope.
		atp.metricsHandler.Counter(metrics.ActivityPollNoTaskCounter).Inc(1)
		return &activityTask{}, nil
	}

	atp.pollTimeTracker.recordPollSuccess(metrics.PollerTypeActivityTask)

	workflowType := response.WorkflowType.GetName()
	activityType := response.ActivityType.GetName()
	metricsHandler := atp.metricsHandler.WithTags(metrics.ActivityTags(workflowType, activityType, atp.taskQueueName))

	scheduleToStartLatency := response.GetStartedTime().AsTime().Sub(response.GetCurrentAttemptScheduledTime().AsTime())
	metricsHandler.Timer(metrics.ActivityScheduleToStartLatency).Record(scheduleToStartLatency)

	return &activityTask{task: response}, nil
}

// PollTask polls a new task
func (atp *activityTaskPoller) PollTask(lease pollerGroupLease) (taskForWorker, error) {
	// doPoll owns shutdown; the runner owns the group lease.
	activityTask, err := atp.doPoll(func(ctx context.Context) (taskForWorker, error) {
		return atp.poll(ctx, lease)
	})
	if err != nil {
		return nil, err
	}
	return activityTask, nil
}

// ProcessTask processes a new task
func (atp *activityTaskPoller) ProcessTask(task any) error {
	if !atp.shouldDrainOnShutdown() && atp.stopping() {
		return errStop
	}

	activityTask := task.(*activityTask)
	if activityTask.task == nil {
		// We didn't have task, poll might have timeout.
		traceLog(func() {
			atp.logger.Debug("Activity task unavailable")
		})
		return nil
	}

	workflowType := activityTask.task.WorkflowType.GetName()
	activityType := activityTask.task.ActivityType.GetName()
	activityMetricsHandler := atp.metricsHandler.WithTags(metrics.ActivityTags(workflowType, activityType, atp.taskQueueName))

	executionStartTime := time.Now()

	// Process the activity task.
	result, err := atp.taskHandler.Execute(atp.taskQueueName, activityTask.task)
	request := result.response

	// err is returned in case of internal failure, such as unable to propagate context or context timeout.
	if err != nil {
		activityMetricsHandler.
			WithTags(metrics.ActivityTaskFailedTags(metrics.FailureReasonActivityError)).
			Counter(metrics.ActivityExecutionFailedCounter).Inc(1)
		return err
	}

	// in case if activity execution failed, request should be of type RespondActivityTaskFailedRequest
	if req, ok := request.(*workflowservice.RespondActivityTaskFailedRequest); ok {
		if !isBenignProtoApplicationFailure(req.Failure) {
			failureReason := metrics.FailureReasonActivityError
			if errors.As(result.failureErr, new(payloadSizeError)) {
				failureReason = metrics.FailureReasonPayloadsTooLarge
			}
			activityMetricsHandler.
				WithTags(metrics.ActivityTaskFailedTags(failureReason)).
				Counter(metrics.ActivityExecutionFailedCounter).Inc(1)
		}
	}
	activityMetricsHandler.Timer(metrics.ActivityExecutionLatency).Record(time.Since(executionStartTime))

	if request == ErrActivityResultPending {
		return nil
	}

	rpcMetricsHandler := atp.metricsHandler.WithTags(metrics.RPCTags(workflowType, activityType, metrics.NoneTagValue))
	reportErr := reportActivityComplete(context.Background(), atp.service, request, rpcMetricsHandler)
	if reportErr != nil {
		traceLog(func() {
			atp.logger.Debug("reportActivityComplete failed", tagError, reportErr)
		})
		return reportErr
	}

	if _, ok := request.(*workflowservice.RespondActivityTaskCompletedRequest); ok {
		activityMetricsHandler.
			Timer(metrics.ActivitySucceedEndToEndLatency).
			Record(time.Since(activityTask.task.GetScheduledTime().AsTime()))
	}
	return nil
}

func reportActivityComplete(
	ctx context.Context,
	service workflowservice.WorkflowServiceClient,
	request any,
	rpcMetricsHandler metrics.Handler,
) error {
	if request == nil {
		// nothing to report
		return nil
	}

	var reportErr error
	switch rqst := request.(type) {
	case *workflowservice.RespondActivityTaskCanceledRequest:
		grpcCtx, cancel := newGRPCContext(ctx, grpcMetricsHandler(rpcMetricsHandler),
			defaultGrpcRetryParameters(ctx))
		defer cancel()
		_, err := service.RespondActivityTaskCanceled(grpcCtx, rqst)
		reportErr = err
	case *workflowservice.RespondActivityTaskFailedRequest:
		grpcCtx, cancel := newGRPCContext(ctx, grpcMetricsHandler(rpcMetricsHandler), defaultGrpcRetryParameters(ctx))
		defer cancel()
		_, err := service.RespondActivityTaskFailed(grpcCtx, rqst)
		reportErr = err
	case *workflowservice.RespondActivityTaskCompletedRequest:
		grpcCtx, cancel := newGRPCContext(ctx, grpcMetricsHandler(rpcMetricsHandler),
			defaultGrpcRetryParameters(ctx))
		defer cancel()
		_, err := service.RespondActivityTaskCompleted(grpcCtx, rqst)
		reportErr = err
	}
	return reportErr
}

func reportActivityCompleteByID(
	ctx context.Context,
	service workflowservice.WorkflowServiceClient,
	request any,
	rpcMetricsHandler metrics.Handler,
) error {
	if request == nil {
		// nothing to report
		return nil
	}

	var reportErr error
	switch request := request.(type) {
	case *workflowservice.RespondActivityTaskCanceledByIdRequest:
		grpcCtx, cancel := newGRPCContext(ctx, grpcMetricsHandler(rpcMetricsHandler),
			defaultGrpcRetryParameters(ctx))
		defer cancel()
		_, err := service.RespondActivityTaskCanceledById(grpcCtx, request)
		reportErr = err
	case *workflowservice.RespondActivityTaskFailedByIdRequest:
		grpcCtx, cancel := newGRPCContext(ctx, grpcMetricsHandler(rpcMetricsHandler),
			defaultGrpcRetryParameters(ctx))
		defer cancel()
		_, err := service.RespondActivityTaskFailedById(grpcCtx, request)
		reportErr = err
	case *workflowservice.RespondActivityTaskCompletedByIdRequest:
		grpcCtx, cancel := newGRPCContext(ctx, grpcMetricsHandler(rpcMetricsHandler),
			defaultGrpcRetryParameters(ctx))
		defer cancel()
		_, err := service.RespondActivityTaskCompletedById(grpcCtx, request)
		reportErr = err
	}
	return reportErr
}

func getActivityResourceId(workflowId, activityId string) string {
	if workflowId != "" {
		return getWorkflowResourceId(workflowId)
	}
	if activityId != "" {
		return fmt.Sprintf("activity:%s", activityId)
	}
	return ""
}

func getWorkflowResourceId(workflowId string) string {
	if workflowId == "" {
		return ""
	}
	return fmt.Sprintf("workflow:%s", workflowId)
}

func convertActivityResultToRespondRequest(
	identity string,
	taskToken []byte,
	result *commonpb.Payloads,
	err error,
	dataConverter converter.DataConverter,
	failureConverter converter.FailureConverter,
	namespace string,
	cancelAllowed bool,
	versionStamp *commonpb.WorkerVersionStamp,
	deployment *deploymentpb.Deployment,
	workerDeploymentOptions *deploymentpb.WorkerDeploymentOptions,
	workflowId string,
	activityId string,
) any {
	if err == ErrActivityResultPending {
		// activity result is pending and will be completed asynchronously.
		// nothing to report at this point
		return ErrActivityResultPending
	}

	if err == nil {
		return &workflowservice.RespondActivityTaskCompletedRequest{
			TaskToken:  taskToken,
			Result:     result,
			Identity:   identity,
			Namespace:  namespace,
			ResourceId: getActivityResourceId(workflowId, activityId),
			//lint:ignore SA1019 retain legacy Build ID versioning metadata for older servers
			WorkerVersion: versionStamp,
			//lint:ignore SA1019 retain legacy deployment metadata for servers predating deployment options
			Deployment:        deployment,
			DeploymentOptions: workerDeploymentOptions,
		}
	}

	// Only respond with canceled if allowed
	if cancelAllowed {
		var canceledErr *CanceledError
		if errors.As(err, &canceledErr) {
			return &workflowservice.RespondActivityTaskCanceledRequest{
				TaskToken:  taskToken,
				Details:    convertErrDetailsToPayloads(canceledErr.details, dataConverter),
				Identity:   identity,
				Namespace:  namespace,
				ResourceId: getActivityResourceId(workflowId, activityId),
				//lint:ignore SA1019 retain legacy Build ID versioning metadata for older servers
				WorkerVersion: versionStamp,
				//lint:ignore SA1019 retain legacy deployment metadata for servers predating deployment options
				Deployment:        deployment,
				DeploymentOptions: workerDeploymentOptions,
			}
		}
		if errors.Is(err, context.Canceled) {
			return &workflowservice.RespondActivityTaskCanceledRequest{
				TaskToken:  taskToken,
				Identity:   identity,
				Namespace:  namespace,
				ResourceId: getActivityResourceId(workflowId, activityId),
				//lint:ignore SA1019 retain legacy Build ID versioning metadata for older servers
				WorkerVersion: versionStamp,
				//lint:ignore SA1019 retain legacy deployment metadata for servers predating deployment options
				Deployment:        deployment,
				DeploymentOptions: workerDeploymentOptions,
			}
		}
	}

	// If a canceled error is returned but it wasn't allowed, we have to wrap in
	// an unexpected-cancel application error
	if _, isCanceledErr := err.(*CanceledError); isCanceledErr {
		err = fmt.Errorf("unexpected activity cancel error: %w", err)
	}

	return &workflowservice.RespondActivityTaskFailedRequest{
		TaskToken:  taskToken,
		Failure:    failureConverter.ErrorToFailure(err),
		Identity:   identity,
		Namespace:  namespace,
		ResourceId: getActivityResourceId(workflowId, activityId),
		//lint:ignore SA1019 retain legacy Build ID versioning metadata for older servers
		WorkerVersion: versionStamp,
		//lint:ignore SA1019 retain legacy deployment metadata for servers predating deployment options
		Deployment:        deployment,
		DeploymentOptions: workerDeploymentOptions,
	}
}

func convertActivityResultToRespondRequestByID(
	identity string,
	namespace string,
	workflowID string,
	runID string,
	activityID string,
	result *commonpb.Payloads,
	err error,
	dataConverter converter.DataConverter,
	failureConverter converter.FailureConverter,
	cancelAllowed bool,
) any {
	if err == ErrActivityResultPending {
		// activity result is pending and will be completed asynchronously.
		// nothing to report at this point
		return nil
	}

	if err == nil {
		return &workflowservice.RespondActivityTaskCompletedByIdRequest{
			Namespace:  namespace,
			WorkflowId: workflowID,
			RunId:      runID,
			ActivityId: activityID,
			Result:     result,
			Identity:   identity,
			ResourceId: getActivityResourceId(workflowID, activityID),
		}
	}

	// Only respond with canceled if allowed
	if cancelAllowed {
		var canceledErr *CanceledError
		if errors.As(err, &canceledErr) {
			return &workflowservice.RespondActivityTaskCanceledByIdRequest{
				Namespace:  namespace,
				WorkflowId: workflowID,
				RunId:      runID,
				ActivityId: activityID,
				Details:    convertErrDetailsToPayloads(canceledErr.details, dataConverter),
				Identity:   identity,
				ResourceId: getActivityResourceId(workflowID, activityID),
			}
		}
		if errors.Is(err, context.Canceled) {
			return &workflowservice.RespondActivityTaskCanceledByIdRequest{
				Namespace:  namespace,
				WorkflowId: workflowID,
				RunId:      runID,
				ActivityId: activityID,
				Identity:   identity,
				ResourceId: getActivityResourceId(workflowID, activityID),
			}
		}
	}

	// If a canceled error is returned but it wasn't allowed, we have to wrap in
	// an unexpected-cancel application error
	if _, isCanceledErr := err.(*CanceledError); isCanceledErr {
		err = fmt.Errorf("unexpected activity cancel error: %w", err)
	}

	return &workflowservice.RespondActivityTaskFailedByIdRequest{
		Namespace:  namespace,
		WorkflowId: workflowID,
		RunId:      runID,
		ActivityId: activityID,
		Failure:    failureConverter.ErrorToFailure(err),
		Identity:   identity,
		ResourceId: getActivityResourceId(workflowID, activityID),
	}
}

func (wft *workflowTask) isEmpty() bool {
	return wft.task == nil
}

func (wft *workflowTask) scaleDecision() (pollerScaleDecision, bool) {
	if wft.task == nil || wft.task.PollerScalingDecision == nil {
		return pollerScaleDecision{}, false
	}
	return pollerScaleDecision{
		pollRequestDeltaSuggestion: int(wft.task.PollerScalingDecision.PollRequestDeltaSuggestion),
	}, true
}

func (at *activityTask) isEmpty() bool {
	return at.task == nil
}

func (at *activityTask) scaleDecision() (pollerScaleDecision, bool) {
	if at.task == nil || at.task.PollerScalingDecision == nil {
		return pollerScaleDecision{}, false
	}
	return pollerScaleDecision{
		pollRequestDeltaSuggestion: int(at.task.PollerScalingDecision.PollRequestDeltaSuggestion),
	}, true
}

func (*localActivityTask) isEmpty() bool {
	return false
}

func (*localActivityTask) scaleDecision() (pollerScaleDecision, bool) {
	return pollerScaleDecision{}, false
}

func (*eagerWorkflowTask) isEmpty() bool {
	return false
}

func (*eagerWorkflowTask) scaleDecision() (pollerScaleDecision, bool) {
	return pollerScaleDecision{}, false
}

func (nt *nexusTask) isEmpty() bool {
	return nt.task == nil
}

func (nt *nexusTask) scaleDecision() (pollerScaleDecision, bool) {
	if nt.task == nil || nt.task.PollerScalingDecision == nil {
		return pollerScaleDecision{}, false
	}
	return pollerScaleDecision{
		pollRequestDeltaSuggestion: int(nt.task.PollerScalingDecision.PollRequestDeltaSuggestion),
	}, true
}

// commandAwarePayloadVisitor is a wrapper around a PayloadVisitor that adds command-specific context information
type commandAwarePayloadVisitor struct {
	innerVisitor PayloadVisitor
	workflowInfo *WorkflowInfo
}

var _ PayloadVisitorWithContextHook = (*commandAwarePayloadVisitor)(nil)

func (v *commandAwarePayloadVisitor) Visit(ctx *proxy.VisitPayloadsContext, payload []*commonpb.Payload) ([]*commonpb.Payload, error) {
	if v.innerVisitor == nil {
		return payload, nil
	}
	return v.innerVisitor.Visit(ctx, payload)
}

func (v *commandAwarePayloadVisitor) ContextHook(ctx context.Context, msg proto.Message) (context.Context, error) {
	switch attrs := msg.(type) {
	case *commandpb.StartChildWorkflowExecutionCommandAttributes:
		ctx = extstore.WithStorageTarget(ctx, converter.StorageDriverWorkflowInfo{
			Namespace:    v.workflowInfo.Namespace,
			WorkflowType: attrs.WorkflowType.GetName(),
			WorkflowID:   attrs.WorkflowId,
		})
	case *commandpb.SignalExternalWorkflowExecutionCommandAttributes:
		ctx = extstore.WithStorageTarget(ctx, converter.StorageDriverWorkflowInfo{
			Namespace:  v.workflowInfo.Namespace,
			WorkflowID: attrs.Execution.GetWorkflowId(),
			RunID:      attrs.Execution.GetRunId(),
		})
	case *commandpb.ContinueAsNewWorkflowExecutionCommandAttributes:
		// The new run keeps the same workflow ID. WorkflowType comes from the
		// command if specified (type change), otherwise falls back to the current
		// type already in context. RunID is omitted — the new run hasn't started.
		wfType := attrs.WorkflowType.GetName()
		if wfType == "" {
			wfType = v.workflowInfo.WorkflowType.Name
		}
		ctx = extstore.WithStorageTarget(ctx, converter.StorageDriverWorkflowInfo{
			Namespace:    v.workflowInfo.Namespace,
			WorkflowID:   v.workflowInfo.WorkflowExecution.ID,
			WorkflowType: wfType,
		})
	case *commandpb.CompleteWorkflowExecutionCommandAttributes:
		// Set target to parent context if not a continue-as-new workflow
		if v.workflowInfo.ParentWorkflowExecution != nil && v.workflowInfo.ContinuedExecutionRunID == "" {
			ns := v.workflowInfo.ParentWorkflowNamespace
			if ns == "" {
				ns = v.workflowInfo.Namespace
			}
			ctx = extstore.WithStorageTarget(ctx, converter.StorageDriverWorkflowInfo{
				Namespace:  ns,
				WorkflowID: v.workflowInfo.ParentWorkflowExecution.ID,
				RunID:      v.workflowInfo.ParentWorkflowExecution.RunID,
			})
		}
	}

	if innerVisitorWithHook, ok := v.innerVisitor.(PayloadVisitorWithContextHook); ok {
		return innerVisitorWithHook.ContextHook(ctx, msg)
	}

	return ctx, nil
}
