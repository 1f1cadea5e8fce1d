package internal

// All code in this file is private to the package.

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"golang.org/x/time/rate"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"go.temporal.io/sdk/internal/common/retry"

	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/internal/common/backoff"
	"go.temporal.io/sdk/internal/common/metrics"
	internallog "go.temporal.io/sdk/internal/log"
	"go.temporal.io/sdk/log"
)

const (
	retryPollOperationInitialInterval         = 200 * time.Millisecond
	retryPollOperationMaxInterval             = 10 * time.Second
	retryPollResourceExhaustedInitialInterval = time.Second
	retryPollResourceExhaustedMaxInterval     = 10 * time.Second
	// How long the same poll task error can remain suppressed
	lastPollTaskErrSuppressTime     = 1 * time.Minute
	pollerAutoscalingReportInterval = 100 * time.Millisecond
)

var (
	pollOperationRetryPolicy         = createPollRetryPolicy()
	pollResourceExhaustedRetryPolicy = createPollResourceExhaustedRetryPolicy()
	retryLongPollGracePeriod         = 2 * time.Minute
	errStop                          = errors.New("worker stopping")
	// ErrWorkerStopped is returned when the worker is stopped
	//
	// Exposed as: [go.temporal.io/sdk/worker.ErrWorkerShutdown]
	ErrWorkerShutdown = errors.New("worker is now shutdown")
)

type (
	// ResultHandler that returns result
	ResultHandler func(result *commonpb.Payloads, err error)
	// LocalActivityResultHandler that returns local activity result
	LocalActivityResultHandler func(lar *LocalActivityResultWrapper)

	// LocalActivityResultWrapper contains the result of a local activity
	LocalActivityResultWrapper struct {
		Err     error
		Result  *commonpb.Payloads
		Attempt int32
		Backoff time.Duration
	}

	LocalActivityMarkerParams struct {
		Summary string
	}

	ExecuteNexusOperationParams struct {
		client           NexusClient
		operation        string
		input            *commonpb.Payload
		options          NexusOperationOptions
		nexusHeader      map[string]string
		dataConverter    converter.DataConverter
		failureConverter converter.FailureConverter
	}
)

// NewExecuteNexusOperationParams builds a parameters struct for
// WorkflowEnvironment.ExecuteNexusOperation. Exposed so that non-Go SDKs
// (e.g. roadrunner-temporal proxying for PHP) can populate the struct from
// outside the `internal` package — the fields themselves stay unexported to
// keep the SDK free to evolve them.
func NewExecuteNexusOperationParams(
	client NexusClient,
	operation string,
	input *commonpb.Payload,
	options NexusOperationOptions,
	nexusHeader map[string]string,
) ExecuteNexusOperationParams {
	return ExecuteNexusOperationParams{
		client:      client,
		operation:   operation,
		input:       input,
		options:     options,
		nexusHeader: nexusHeader,
	}
}

type (

	// WorkflowEnvironment Represents the environment for workflow.
	// Should only be used within the scope of workflow definition.
	WorkflowEnvironment interface {
		AsyncActivityClient
		LocalActivityClient
		WorkflowTimerClient
		SideEffect(f func() (*commonpb.Payloads, error), callback ResultHandler, summary string)
		GetVersion(changeID string, minSupported, maxSupported Version) Version
		WorkflowInfo() *WorkflowInfo
		TypedSearchAttributes() SearchAttributes
		Complete(result *commonpb.Payloads, err error)
		RegisterCancelHandler(handler func())
		RequestCancelChildWorkflow(namespace, workflowID string)
		RequestCancelExternalWorkflow(namespace, workflowID, runID string, callback ResultHandler)
		ExecuteChildWorkflow(params ExecuteWorkflowParams, callback ResultHandler, startedHandler func(r WorkflowExecution, e error))
		ExecuteNexusOperation(params ExecuteNexusOperationParams, callback func(*commonpb.Payload, error), startedHandler func(token string, e error)) int64
		RequestCancelNexusOperation(seq int64)
		AbandonNexusOperation(seq int64)
		GetLogger() log.Logger
		GetMetricsHandler() metrics.Handler
		// Must be called before WorkflowDefinition.Execute returns
		RegisterSignalHandler(
			handler func(name string, input *commonpb.Payloads, header *commonpb.Header) error,
		)
		SignalExternalWorkflow(
			namespace string,
			workflowID string,
			runID string,
			signalName string,
			input *commonpb.Payloads,
			arg any,
			header *commonpb.Header,
			childWorkflowOnly bool,
			callback ResultHandler,
		)
		RegisterQueryHandler(
			handler func(queryType string, queryArgs *commonpb.Payloads, header *commonpb.Header) (*commonpb.Payloads, error),
		)
		RegisterUpdateHandler(
			handler func(string, string, *commonpb.Payloads, *commonpb.Header, UpdateCallbacks),
		)
		IsReplaying() bool
		MutableSideEffect(id string, f func() any, equals func(a, b any) bool, summary string) converter.EncodedValue
		GetDataConverter() converter.DataConverter
		GetFailureConverter() converter.FailureConverter
		AddSession(sessionInfo *SessionInfo)
		RemoveSession(sessionID string)
		GetContextPropagators() []ContextPropagator
		UpsertSearchAttributes(attributes map[string]any) error
		UpsertTypedSearchAttributes(attributes SearchAttributes) error
		UpsertMemo(memoMap map[string]any) error
		GetRegistry() *registry
		// QueueUpdate request of type name
		QueueUpdate(name string, f func())
		// HandleQueuedUpdates unblocks all queued updates of type name
		HandleQueuedUpdates(name string)
		// DrainUnhandledUpdates unblocks all updates, meant to be used to drain
		// all unhandled updates at the end of a workflow task
		// returns true if any update was unblocked
		DrainUnhandledUpdates() bool
		// TryUse returns true if this flag may currently be used.
		TryUse(flag sdkFlag) bool
		GenerateSequence() int64
		// GetRandomStream returns a deterministic PRNG, memoized per name for the life of the workflow run.
		GetRandomStream(name string) WorkflowRandomStream
	}

	// WorkflowDefinitionFactory factory for creating WorkflowDefinition instances.
	WorkflowDefinitionFactory interface {
		// NewWorkflowDefinition must return a new instance of WorkflowDefinition on each call.
		NewWorkflowDefinition() WorkflowDefinition
	}

	// WorkflowDefinition wraps the code that can execute a workflow.
	WorkflowDefinition interface {
		// Execute implementation must be asynchronous.
		Execute(env WorkflowEnvironment, header *commonpb.Header, input *commonpb.Payloads)
		// OnWorkflowTaskStarted is called for each non timed out startWorkflowTask event.
		// Executed after all history events since the previous commands are applied to WorkflowDefinition
		// Application level code must be executed from this function only.
		// Execute call as well as callbacks called from WorkflowEnvironment functions can only schedule callbacks
		// which can be executed from OnWorkflowTaskStarted().
		OnWorkflowTaskStarted(deadlockDetectionTimeout time.Duration)
		// StackTrace of all coroutines owned by the Dispatcher instance.
		StackTrace() string
		// Close destroys all coroutines without waiting for their completion
		Close()
	}

	// scalableTaskPoller is the reusable poller plus its concurrency-control
	// configuration. It does not represent a goroutine or a single poll attempt;
	// baseWorker may invoke taskPoller concurrently from multiple poll loops.
	scalableTaskPoller struct {
		taskPollerType      string
		autoscalingBalancer *workflowAutoscalingBalancer
		pollKind            enumspb.TaskQueueKind

		// pollerCount is the number of fixed poll loops to start. There may be fewer
		// active polls due to limited slots or rate limiting.
		pollerCount       int
		taskPoller        taskPoller
		pollerAutoscaler  *pollerAutoscaler
		autoscalingRunner *autoscalingTaskPollerRunner
	}

	// baseWorkerOptions options to configure base worker.
	baseWorkerOptions struct {
		pollerRate                   int
		slotSupplier                 SlotSupplier
		maxTaskPerSecond             float64
		taskPollers                  []scalableTaskPoller
		taskProcessor                taskProcessor
		workerType                   string
		identity                     string
		buildId                      string
		deploymentOptions            WorkerDeploymentOptions
		logger                       log.Logger
		stopTimeout                  time.Duration
		fatalErrCb                   func(error)
		noRepoll                     *atomic.Bool
		backgroundContextCancel      context.CancelCauseFunc
		metricsHandler               metrics.Handler
		sessionTokenBucket           *sessionTokenBucket
		slotReservationData          slotReservationData
		isInternalWorker             bool
		workerPollCompleteOnShutdown *atomic.Bool
	}

	// baseWorker that wraps worker activities.
	baseWorker struct {
		options         baseWorkerOptions
		isWorkerStarted bool
		// stopCh is created by newBaseWorker and closed by baseWorker.Stop().
		// It is internal to baseWorker and stops its poller, dispatcher, autoscaler,
		// and throttling/backoff loops.
		stopCh               chan struct{}
		stopWG               sync.WaitGroup // The WaitGroup for stopping existing routines.
		pollLimiter          *rate.Limiter
		taskLimiter          *rate.Limiter
		limiterContext       context.Context
		limiterContextCancel func()
		// taskLimiterContext stays live during shutdown drain so already-polled
		// tasks still respect the dispatch rate after poll-side waits are
		// canceled via limiterContext.
		taskLimiterContext       context.Context
		taskLimiterContextCancel func()
		retrier                  *backoff.ConcurrentRetrier // Service errors back off retrier
		logger                   log.Logger
		metricsHandler           metrics.Handler

		slotSupplier           *trackingSlotSupplier
		taskQueueCh            chan eagerOrPolledTask
		eagerTaskQueueCh       chan eagerTask
		fatalErrCb             func(error)
		sessionTokenBucket     *sessionTokenBucket
		lastPollTaskErrMessage string
		lastPollTaskErrStarted time.Time
		lastPollTaskErrLock    sync.Mutex

		noRepoll *atomic.Bool
		pollerWG sync.WaitGroup
	}

	eagerOrPolledTask interface {
		getTask() taskForWorker
		getPermit() *SlotPermit
	}

	polledTask struct {
		task   taskForWorker
		permit *SlotPermit
	}

	eagerTask struct {
		// task to process.
		task   taskForWorker
		permit *SlotPermit
	}

	pollerAutoscalerOptions struct {
		initialPollerCount        int
		maxPollerCount            int
		minPollerCount            int
		logger                    log.Logger
		targetChangedCallback     func(int64)
		serverSupportsAutoscaling *atomic.Bool
	}

	pollerAutoscaler struct {
		minPollerCount            int
		maxPollerCount            int
		logger                    log.Logger
		target                    atomic.Int64
		targetChangedCallback     func(int64)
		targetChangedMu           sync.Mutex
		everSawScalingDecision    atomic.Bool
		serverSupportsAutoscaling *atomic.Bool
		ingestedThisPeriod        atomic.Int64
		ingestedLastPeriod        atomic.Int64
		scaleUpAllowed            atomic.Bool
	}

	autoscalingTaskPollerRunner struct {
		autoscaler       *pollerAutoscaler
		pollerGroups     *pollerGroupManager
		workflowBalancer *workflowAutoscalingBalancer
		pollKind         enumspb.TaskQueueKind
		wakeCh           chan struct{}
		activeMu         sync.Mutex
		// active counts admitted logical poll attempts, not supporting goroutines.
		active int
	}

	// autoscalingPollAdmission holds all reservations for one poll attempt.
	autoscalingPollAdmission struct {
		runner     *autoscalingTaskPollerRunner
		groupLease pollerGroupLease
	}
)

func (h ResultHandler) wrap(callback ResultHandler) ResultHandler {
	return func(result *commonpb.Payloads, err error) {
		callback(result, err)
		h(result, err)
	}
}

func (t *polledTask) getTask() taskForWorker {
	return t.task
}
func (t *polledTask) getPermit() *SlotPermit {
	return t.permit
}
func (t *eagerTask) getTask() taskForWorker {
	return t.task
}
func (t *eagerTask) getPermit() *SlotPermit {
	return t.permit
}

// SetRetryLongPollGracePeriod sets the amount of time a long poller retries on
// fatal errors before it actually fails. For test use only,
// not safe to call with a running worker.
func SetRetryLongPollGracePeriod(period time.Duration) {
	retryLongPollGracePeriod = period
}

func getRetryLongPollGracePeriod() time.Duration {
	return retryLongPollGracePeriod
}

func createPollRetryPolicy() backoff.RetryPolicy {
	policy := backoff.NewExponentialRetryPolicy(retryPollOperationInitialInterval)
	policy.SetMaximumInterval(retryPollOperationMaxInterval)

	// NOTE: We don't use expiration interval since we don't use retries from retrier class.
	// We use it to calculate next backoff. We have additional layer that is built on poller
	// in the worker layer for to add some middleware for any poll retry that includes
	// (a) rate limiting across pollers (b) back-off across pollers when server is busy
	policy.SetExpirationInterval(retry.UnlimitedInterval) // We don't ever expire
	return policy
}

func createPollResourceExhaustedRetryPolicy() backoff.RetryPolicy {
	policy := backoff.NewExponentialRetryPolicy(retryPollResourceExhaustedInitialInterval)
	policy.SetMaximumInterval(retryPollResourceExhaustedMaxInterval)
	policy.SetExpirationInterval(retry.UnlimitedInterval)
	return policy
}

func newBaseWorker(
	options baseWorkerOptions,
) *baseWorker {
	// A worker outside an aggregate owns its polling-stop flag. Aggregate
	// workers supply one shared flag for every remote-task polling loop.
	if options.noRepoll == nil {
		options.noRepoll = &atomic.Bool{}
	}
	ctx, cancel := context.WithCancel(context.Background())
	taskLimiterCtx, taskLimiterCancel := context.WithCancel(context.Background())
	logger := log.With(options.logger, tagWorkerType, options.workerType)
	if heartbeatHandler, isHeartbeat := options.metricsHandler.(*heartbeatMetricsHandler); isHeartbeat {
		options.metricsHandler = heartbeatHandler.forWorker(options.workerType)
	}
	metricsHandler := options.metricsHandler.WithTags(metrics.WorkerTags(options.workerType))
	tss := newTrackingSlotSupplier(options.slotSupplier, trackingSlotSupplierOptions{
		logger:         logger,
		metricsHandler: metricsHandler,
		workerBuildId:  options.buildId,
		workerIdentity: options.identity,
	})
	bw := &baseWorker{
		options:        options,
		stopCh:         make(chan struct{}),
		taskLimiter:    rate.NewLimiter(rate.Limit(options.maxTaskPerSecond), 1),
		retrier:        backoff.NewConcurrentRetrier(pollOperationRetryPolicy),
		logger:         logger,
		metricsHandler: metricsHandler,

		slotSupplier: tss,
		// No buffer, so pollers are only able to poll for new tasks after the previous one is
		// dispatched.
		taskQueueCh: make(chan eagerOrPolledTask),
		// Allow enough capacity so that eager dispatch will not block. There's an upper limit of
		// 2k pending activities so this channel never needs to be larger than that.
		eagerTaskQueueCh: make(chan eagerTask, 2000),
		fatalErrCb:       options.fatalErrCb,
		noRepoll:         options.noRepoll,

		limiterContext:           ctx,
		limiterContextCancel:     cancel,
		taskLimiterContext:       taskLimiterCtx,
		taskLimiterContextCancel: taskLimiterCancel,
		sessionTokenBucket:       options.sessionTokenBucket,
	}
	// Set secondary retrier as resource exhausted
	bw.retrier.SetSecondaryRetryPolicy(pollResourceExhaustedRetryPolicy)
	if options.pollerRate > 0 {
		bw.pollLimiter = rate.NewLimiter(rate.Limit(options.pollerRate), 1)
	}
	bw.validatePollers(options.taskPollers)

	return bw
}

// initializeTaskPollers must be called at most once and before Start().
func (bw *baseWorker) initializeTaskPollers(taskPollers []scalableTaskPoller) {
	if bw.options.taskPollers != nil {
		panic("task pollers already initialized")
	}
	bw.options.taskPollers = taskPollers
	bw.validatePollers(taskPollers)
}

func (bw *baseWorker) validatePollers(taskPollers []scalableTaskPoller) {
	if len(taskPollers) <= 1 {
		return
	}

	// Split workflow pollers must use one balancer so queue kinds cannot starve each other.
	balancer := taskPollers[0].autoscalingBalancer
	for _, taskWorker := range taskPollers[1:] {
		if taskWorker.autoscalingBalancer != balancer {
			panic(inconsistentPollerBalancerMessage)
		}
	}
	if balancer == nil {
		panic(missingPollerBalancerMessage)
	}
	for i := range taskPollers {
		runner := taskPollers[i].autoscalingRunner
		if runner == nil {
			continue
		}
		runner.workflowBalancer = balancer
		runner.pollKind = taskPollers[i].pollKind
	}
}

// Start creates the fixed control goroutines for polling, autoscaling, and
// dispatch. Autoscaling poll-attempt and task-processing goroutines are created
// dynamically while the worker is running.
func (bw *baseWorker) Start() {
	if bw.isWorkerStarted {
		return
	}

	bw.metricsHandler.Counter(metrics.WorkerStartCounter).Inc(1)

	for _, taskWorker := range bw.options.taskPollers {
		if taskWorker.autoscalingRunner != nil {
			// Autoscaling pollers are created with both a runner and an autoscaler.
			// The runner's manager opens polls under the current target.
			bw.stopWG.Add(1)
			bw.pollerWG.Add(1)
			go bw.runAutoscalingPoller(taskWorker)

			// The autoscaler's separate loop periodically refreshes scaling signals.
			bw.stopWG.Add(1)
			go func() {
				defer bw.stopWG.Done()
				taskWorker.pollerAutoscaler.run(bw.stopCh)
			}()
		} else {
			for i := 0; i < taskWorker.pollerCount; i++ {
				bw.stopWG.Add(1)
				bw.pollerWG.Add(1)
				go bw.runPoller(taskWorker)
			}
		}
	}

	// When all pollers have exited, close taskQueueCh so the dispatcher
	// knows no more polled tasks will arrive and can drain what remains.
	bw.stopWG.Go(func() {
		bw.pollerWG.Wait()
		close(bw.taskQueueCh)
	})

	bw.stopWG.Add(1)
	go bw.runTaskDispatcher()

	bw.stopWG.Add(1)
	go bw.runEagerTaskDispatcher()

	bw.isWorkerStarted = true
	traceLog(func() {
		bw.logger.Info("Started Worker",
			"MaxTaskPerSecond", bw.options.maxTaskPerSecond,
		)
	})
}

func (bw *baseWorker) isStop() bool {
	select {
	case <-bw.stopCh:
		return true
	default:
		return false
	}
}

func (bw *baseWorker) shouldDrainOnShutdown() bool {
	return bw.options.workerPollCompleteOnShutdown != nil && bw.options.workerPollCompleteOnShutdown.Load()
}

func (bw *baseWorker) runPoller(taskWorker scalableTaskPoller) {
	defer bw.stopWG.Done()
	defer bw.pollerWG.Done()
	bw.metricsHandler.Counter(metrics.PollerStartCounter).Inc(1)

	ctx, cancelfn := context.WithCancel(context.Background())
	defer cancelfn()
	reserveChan := make(chan *SlotPermit)

	for {
		if bw.noRepoll.Load() {
			return
		}
		bw.reserveSlotAsync(ctx, reserveChan, taskWorker)

		select {
		case <-bw.stopCh:
			return
		case permit := <-reserveChan:
			if permit == nil { // There was an error reserving a slot
				// Avoid spamming reserve hard in the event it's constantly failing
				if ctx.Err() == nil {
					time.Sleep(time.Second)
				}
				continue
			}
			if bw.noRepoll.Load() {
				bw.releaseSlot(permit, SlotReleaseReasonUnused)
				return
			}
			if bw.sessionTokenBucket != nil && !bw.sessionTokenBucket.waitForAvailableToken() {
				bw.releaseSlot(permit, SlotReleaseReasonUnused)
				return
			}
			// Fixed pollers do not target poller groups.
			bw.pollTask(taskWorker, permit, pollerGroupLease{})
		}
	}
}

// runAutoscalingPoller is the autoscaling counterpart to runPoller. runPoller is
// itself the long-lived poller: it reserves a slot, opens one poll RPC
// synchronously, and loops. The autoscaling path instead uses this goroutine as
// a manager: it waits for poll and queue-kind admission, reserves a slot, then
// spawns a short-lived goroutine for that poll RPC.
func (bw *baseWorker) runAutoscalingPoller(taskWorker scalableTaskPoller) {
	defer bw.stopWG.Done()
	defer bw.pollerWG.Done()

	ctx, cancelfn := context.WithCancel(context.Background())
	reserveChan := make(chan *SlotPermit)
	var pollWG sync.WaitGroup
	defer pollWG.Wait()
	defer cancelfn()

	for {
		if bw.noRepoll.Load() {
			return
		}
		admission, err := taskWorker.autoscalingRunner.acquire(bw.limiterContext)
		if err != nil {
			return
		}
		// A fatal poll can release capacity while this manager waits for it.
		// Return that capacity instead of opening a replacement poll.
		if bw.noRepoll.Load() {
			admission.release()
			return
		}

		bw.reserveSlotAsync(ctx, reserveChan, taskWorker)

		var permit *SlotPermit
		select {
		case <-bw.stopCh:
			admission.release()
			return
		case permit = <-reserveChan:
		}
		if permit == nil { // There was an error reserving a slot
			admission.release()
			// Avoid spamming reserve hard in the event it's constantly failing
			if ctx.Err() == nil {
				time.Sleep(time.Second)
			}
			continue
		}
		if bw.noRepoll.Load() {
			bw.releaseSlot(permit, SlotReleaseReasonUnused)
			admission.release()
			return
		}

		if bw.sessionTokenBucket != nil && !bw.sessionTokenBucket.waitForAvailableToken() {
			bw.releaseSlot(permit, SlotReleaseReasonUnused)
			admission.release()
			return
		}
		admission.start()
		pollWG.Add(1)
		bw.stopWG.Add(1)
		go func(slotPermit *SlotPermit) {
			defer bw.stopWG.Done()
			defer pollWG.Done()
			defer admission.finish()
			bw.pollTask(taskWorker, slotPermit, admission.groupLease)
		}(permit)
	}
}

func (bw *baseWorker) reserveSlotAsync(
	ctx context.Context,
	reserveChan chan<- *SlotPermit,
	taskWorker scalableTaskPoller,
) {
	bw.stopWG.Go(func() {
		reservationData := bw.slotReservationData(taskWorker)
		s, err := bw.slotSupplier.ReserveSlot(ctx, &reservationData)
		if err != nil {
			if !errors.Is(err, context.Canceled) {
				bw.logger.Error("Error while trying to reserve slot", "error", err)
				select {
				case reserveChan <- nil:
				case <-ctx.Done():
					return
				}
			}
			return
		}
		select {
		case reserveChan <- s:
		case <-ctx.Done():
			bw.releaseSlot(s, SlotReleaseReasonUnused)
		}
	})
}

func (bw *baseWorker) slotReservationData(taskWorker scalableTaskPoller) slotReservationData {
	data := bw.options.slotReservationData
	if kind, ok := taskQueueKindForPoller(taskWorker); ok {
		data.taskQueueKind = kind
	}
	return data
}

func taskQueueKindForPoller(taskWorker scalableTaskPoller) (enumspb.TaskQueueKind, bool) {
	if taskWorker.autoscalingRunner == nil {
		return enumspb.TASK_QUEUE_KIND_UNSPECIFIED, false
	}
	return taskQueueKindForAutoscalingPollerType(taskWorker.taskPollerType)
}

func taskQueueKindForAutoscalingPollerType(taskPollerType string) (enumspb.TaskQueueKind, bool) {
	switch taskPollerType {
	case metrics.PollerTypeWorkflowStickyTask:
		return enumspb.TASK_QUEUE_KIND_STICKY, true
	case metrics.PollerTypeWorkflowTask, metrics.PollerTypeActivityTask, metrics.PollerTypeNexusTask:
		return enumspb.TASK_QUEUE_KIND_NORMAL, true
	default:
		return enumspb.TASK_QUEUE_KIND_UNSPECIFIED, false
	}
}

func (bw *baseWorker) tryReserveSlot() *SlotPermit {
	if bw.isStop() {
		return nil
	}
	return bw.slotSupplier.TryReserveSlot(&bw.options.slotReservationData)
}

func (bw *baseWorker) releaseSlot(permit *SlotPermit, reason SlotReleaseReason) {
	bw.slotSupplier.ReleaseSlot(permit, reason)
}

func (bw *baseWorker) pushEagerTask(task eagerTask) {
	// Should always be non-blocking. Slots are reserved before requesting eager tasks.
	bw.eagerTaskQueueCh <- task
}

func (bw *baseWorker) getDeploymentOptions() WorkerDeploymentOptions {
	return bw.options.deploymentOptions
}

func (bw *baseWorker) processTaskAsync(eagerOrPolled eagerOrPolledTask) {
	bw.stopWG.Go(func() {

		task := eagerOrPolled.getTask()
		permit := eagerOrPolled.getPermit()

		if !task.isEmpty() {
			bw.slotSupplier.MarkSlotUsed(permit)
		}

		defer func() {
			bw.releaseSlot(permit, SlotReleaseReasonTaskProcessed)

			if p := recover(); p != nil {
				topLine := "base worker [panic]:"
				st := getStackTraceRaw(topLine, 7, 0)
				bw.logger.Error("Unhandled panic.",
					"PanicError", fmt.Sprintf("%v", p),
					"PanicStack", st)
			}
		}()
		err := bw.options.taskProcessor.ProcessTask(task)
		if err != nil {
			if isClientSideError(err) {
				bw.logger.Info("Task processing failed with client side error", tagError, err)
			} else {
				bw.logger.Info("Task processing failed with error", tagError, err)
			}
		}
	})
}

func (bw *baseWorker) runTaskDispatcher() {
	defer bw.stopWG.Done()

	if bw.shouldDrainOnShutdown() {
		for task := range bw.taskQueueCh {
			// For non-polled-task (local activity result as task or eager task),
			// we don't need to rate limit. Keep using the dispatch limiter during
			// shutdown drain so already-polled tasks still respect the worker's
			// configured task start rate.
			if _, isPolledTask := task.(*polledTask); isPolledTask {
				if bw.taskLimiter.Wait(bw.taskLimiterContext) != nil {
					bw.releaseSlot(task.getPermit(), SlotReleaseReasonUnused)
					// Pollers in drain mode send to taskQueueCh without a
					// stopCh escape hatch. Keep receiving and releasing any
					// remaining tasks so pollers can finish and taskQueueCh can
					// close even after we stop processing tasks.
					bw.discardTaskQueue()
					return
				}
			}
			bw.processTaskAsync(task)
		}
		return
	}

	for {
		select {
		case <-bw.stopCh:
			return
		case task, ok := <-bw.taskQueueCh:
			if !ok {
				return
			}
			if _, isPolledTask := task.(*polledTask); isPolledTask {
				if bw.taskLimiter.Wait(bw.limiterContext) != nil {
					if bw.isStop() {
						bw.releaseSlot(task.getPermit(), SlotReleaseReasonUnused)
						return
					}
				}
			}
			bw.processTaskAsync(task)
		}
	}
}

func (bw *baseWorker) discardTaskQueue() {
	for task := range bw.taskQueueCh {
		bw.releaseSlot(task.getPermit(), SlotReleaseReasonUnused)
	}
}

func (bw *baseWorker) runEagerTaskDispatcher() {
	defer bw.stopWG.Done()
	for {
		select {
		case <-bw.stopCh:
			// drain eager dispatch queue
			for len(bw.eagerTaskQueueCh) > 0 {
				eagerTask := <-bw.eagerTaskQueueCh
				bw.processTaskAsync(&eagerTask)
			}
			return
		case eagerTask := <-bw.eagerTaskQueueCh:
			bw.processTaskAsync(&eagerTask)
		}
	}
}

func (bw *baseWorker) pollTask(
	taskWorker scalableTaskPoller,
	slotPermit *SlotPermit,
	lease pollerGroupLease,
) {
	var err error
	var task taskForWorker
	didSendTask := false
	defer func() {
		if !didSendTask {
			bw.releaseSlot(slotPermit, SlotReleaseReasonUnused)
		}
	}()

	bw.retrier.Throttle(bw.stopCh)
	if bw.pollLimiter == nil || bw.pollLimiter.Wait(bw.limiterContext) == nil {
		// Shutdown or a fatal error may arrive while pacing holds this poll.
		// The deferred release returns its unused slot without polling.
		if bw.noRepoll.Load() {
			return
		}
		task, err = taskWorker.taskPoller.PollTask(lease)
		bw.logPollTaskError(err)
		if err != nil {
			// We retry "non retriable" errors while long polling for a while, because some proxies return
			// unexpected values causing unnecessary downtime.
			if isNonRetriableError(err) && bw.retrier.GetElapsedTime() > getRetryLongPollGracePeriod() {
				bw.logger.Error("Worker received non-retriable error. Shutting down.", tagError, err)
				if bw.fatalErrCb != nil {
					bw.fatalErrCb(err)
				}
				return
			}
			if taskWorker.pollerAutoscaler != nil {
				taskWorker.pollerAutoscaler.handleError(err)
			}
			// We use the secondary retrier on resource exhausted
			_, resourceExhausted := err.(*serviceerror.ResourceExhausted)
			bw.retrier.Failed(resourceExhausted)
		} else {
			bw.retrier.Succeeded()
		}
	}

	if task != nil {
		if taskWorker.pollerAutoscaler != nil {
			taskWorker.pollerAutoscaler.handleTask(task)
		}

		if bw.shouldDrainOnShutdown() {
			// The dispatcher is guaranteed to be alive: in drain mode it
			// only exits after taskQueueCh is closed, which happens after
			// all pollers finish.
			bw.taskQueueCh <- &polledTask{task: task, permit: slotPermit}
			didSendTask = true
		} else {
			select {
			case bw.taskQueueCh <- &polledTask{task: task, permit: slotPermit}:
				didSendTask = true
			case <-bw.stopCh:
			}
		}
	}
}

func (bw *baseWorker) logPollTaskError(err error) {
	// We do not want to log any errors after we were explicitly stopped
	select {
	case <-bw.stopCh:
		return
	default:
	}

	bw.lastPollTaskErrLock.Lock()
	defer bw.lastPollTaskErrLock.Unlock()
	// No error means reset the message and time
	if err == nil {
		bw.lastPollTaskErrMessage = ""
		bw.lastPollTaskErrStarted = time.Now()
		return
	}

	// Ignore connection loss on server shutdown. This helps with quiescing spurious error messages
	// upon server shutdown (where server is using the SDK).
	if bw.options.isInternalWorker {
		st, ok := status.FromError(err)
		if ok && st.Code() == codes.Unavailable && strings.Contains(st.Message(), "graceful_stop") {
			return
		}
	}

	// Log the error as warn if it doesn't match the last error seen or its over
	// the time since
	if err.Error() != bw.lastPollTaskErrMessage || time.Since(bw.lastPollTaskErrStarted) > lastPollTaskErrSuppressTime {
		bw.logger.Warn("Failed to poll for task.", tagError, err)
		bw.lastPollTaskErrMessage = err.Error()
		bw.lastPollTaskErrStarted = time.Now()
	}
}

func isNonRetriableError(err error) bool {
	if err == nil {
		return false
	}
	switch err.(type) {
	case *serviceerror.InvalidArgument,
		*serviceerror.NamespaceNotFound,
		*serviceerror.ClientVersionNotSupported:
		return true
	}
	return false
}

// Stop is a blocking call and cleans up all the resources associated with worker.
func (bw *baseWorker) Stop() {
	if !bw.isWorkerStarted {
		return
	}
	close(bw.stopCh)
	bw.limiterContextCancel()
	if bw.sessionTokenBucket != nil {
		bw.sessionTokenBucket.close()
	}

	// Wait for pollers, task dispatch, and task processing to complete, or until stopTimeout elapses.
	// The task dispatcher drains taskQueueCh after the closer goroutine
	// closes it when pollers finish.
	if success := awaitWaitGroup(&bw.stopWG, bw.options.stopTimeout); !success {
		traceLog(func() {
			bw.logger.Info("Worker graceful stop timed out.", "Stop timeout", bw.options.stopTimeout)
		})
	}
	bw.taskLimiterContextCancel()

	// Close context
	if bw.options.backgroundContextCancel != nil {
		bw.options.backgroundContextCancel(ErrWorkerShutdown)
	}

	bw.isWorkerStarted = false
}

func newPollerAutoscaler(options pollerAutoscalerOptions) *pollerAutoscaler {
	logger := options.logger
	if logger == nil {
		logger = internallog.NewNopLogger()
	}
	serverSupportsAutoscaling := options.serverSupportsAutoscaling
	if serverSupportsAutoscaling == nil {
		serverSupportsAutoscaling = &atomic.Bool{}
	}
	psr := &pollerAutoscaler{
		maxPollerCount:            options.maxPollerCount,
		minPollerCount:            options.minPollerCount,
		logger:                    logger,
		targetChangedCallback:     options.targetChangedCallback,
		serverSupportsAutoscaling: serverSupportsAutoscaling,
	}
	psr.target.Store(int64(options.initialPollerCount))
	return psr
}

func (prh *pollerAutoscaler) handleTask(task taskForWorker) {
	if !task.isEmpty() {
		prh.ingestedThisPeriod.Add(1)
	}

	if sd, ok := task.scaleDecision(); ok {
		prh.everSawScalingDecision.Store(true)
		ds := sd.pollRequestDeltaSuggestion
		if ds > 0 {
			if prh.scaleUpAllowed.Load() {
				prh.updateTarget(func(target int64) int64 {
					return target + int64(ds)
				})
			}
		} else if ds < 0 {
			prh.updateTarget(func(target int64) int64 {
				return target + int64(ds)
			})
		}
	} else if task.isEmpty() && (prh.everSawScalingDecision.Load() || prh.serverSupportsAutoscaling.Load()) {
		// We want to avoid scaling down on empty polls if the server has never made any
		// scaling decisions - otherwise we might never scale up again. If the server
		// supports poller autoscaling, it's safe to scale down without having seen a
		// decision.
		prh.updateTarget(func(target int64) int64 {
			return target - 1
		})
	}
}

func (prh *pollerAutoscaler) updateTarget(f func(int64) int64) {
	target := prh.target.Load()
	newTarget := f(target)
	newTarget = int64(effectivePollerTarget(
		int(newTarget),
		prh.minPollerCount,
		prh.maxPollerCount,
		0,
	))
	for !prh.target.CompareAndSwap(target, newTarget) {
		target = prh.target.Load()
		newTarget = f(target)
		newTarget = int64(effectivePollerTarget(
			int(newTarget),
			prh.minPollerCount,
			prh.maxPollerCount,
			0,
		))
	}
	if prh.targetChangedCallback != nil {
		traceLog(func() {
			prh.logger.Debug("Updating poller autoscaler target", "target", int(newTarget))
		})
		prh.targetChangedMu.Lock()
		prh.targetChangedCallback(prh.target.Load())
		prh.targetChangedMu.Unlock()
	}
}

func (prh *pollerAutoscaler) handleError(err error) {
	// If we have never seen a scaling decision and the server doesn't support
	// poller autoscaling, we don't want to scale down on errors, because we
	// might never scale up again.
	if prh.everSawScalingDecision.Load() || prh.serverSupportsAutoscaling.Load() {
		_, resourceExhausted := err.(*serviceerror.ResourceExhausted)
		if resourceExhausted {
			prh.updateTarget(func(target int64) int64 {
				return target / 2
			})
		} else {
			prh.updateTarget(func(target int64) int64 {
				return target - 1
			})
		}
	}
}

func (prh *pollerAutoscaler) run(stopCh <-chan struct{}) {
	ticker := time.NewTicker(pollerAutoscalingReportInterval)
	// Here we periodically check if we should permit increasing the
	// poller count further. We do this by comparing the number of ingested items in the
	// current period with the number of ingested items in the previous period. If we
	// are successfully ingesting more items, then it makes sense to allow scaling up.
	// If we aren't, then we're probably limited by how fast we can process the tasks
	// and it's not worth increasing the poller count further.
	for {
		select {
		case <-ticker.C:
			prh.newPeriod()
		case <-stopCh:
			return
		}
	}
}

func (prh *pollerAutoscaler) newPeriod() {
	ingestedThisPeriod := prh.ingestedThisPeriod.Swap(0)
	ingestedLastPeriod := prh.ingestedLastPeriod.Swap(ingestedThisPeriod)
	prh.scaleUpAllowed.Store(float64(ingestedThisPeriod) >= float64(ingestedLastPeriod)*1.1)
}

func newAutoscalingTaskPollerRunner(
	autoscaler *pollerAutoscaler,
	pollerGroups *pollerGroupManager,
) *autoscalingTaskPollerRunner {
	runner := &autoscalingTaskPollerRunner{
		autoscaler:   autoscaler,
		pollerGroups: pollerGroups,
		wakeCh:       make(chan struct{}, 1),
	}
	autoscaler.targetChangedCallback = func(int64) { runner.signal() }
	return runner
}

func (r *autoscalingTaskPollerRunner) acquire(
	ctx context.Context,
) (autoscalingPollAdmission, error) {
	if r.workflowBalancer != nil {
		if err := r.workflowBalancer.waitForPollTurn(ctx, r.pollKind); err != nil {
			return autoscalingPollAdmission{}, err
		}
	}

	for {
		// Capture the store notification before evaluating admission. If the
		// snapshot changes during the evaluation, this channel is closed and the
		// runner immediately tries again instead of missing the update.
		var pollerGroupsChanged <-chan struct{}
		if r.workflowBalancer != nil && r.workflowBalancer.groupStore != nil {
			_, pollerGroupsChanged = r.workflowBalancer.groupStore.observe()
		} else if r.pollerGroups != nil {
			_, pollerGroupsChanged = r.pollerGroups.groupStore.observe()
		}
		r.activeMu.Lock()
		target := r.effectiveTarget()
		var lease pollerGroupLease
		var ok bool
		if r.active < target {
			ok = true
			if r.workflowBalancer == nil && r.pollerGroups != nil {
				lease = r.pollerGroups.reserve()
			}
		} else if r.workflowBalancer != nil {
			ok = r.workflowBalancer.hasCoverageGap(r.pollKind)
		} else if r.pollerGroups != nil {
			// Polls for removed groups, and ungrouped polls issued before groups
			// became known, still count as active. Let mandatory current coverage
			// temporarily exceed the autoscaling target while those polls drain.
			lease, ok = r.pollerGroups.tryReserveRequired()
		}
		if ok {
			r.active++
			r.activeMu.Unlock()
			if r.workflowBalancer != nil {
				var err error
				lease, err = r.workflowBalancer.acquire(ctx, r.pollKind)
				if err != nil {
					r.release()
					return autoscalingPollAdmission{}, err
				}
			}

			return autoscalingPollAdmission{runner: r, groupLease: lease}, nil
		}
		r.activeMu.Unlock()

		select {
		case <-ctx.Done():
			return autoscalingPollAdmission{}, ctx.Err()
		case <-r.wakeCh:
		case <-pollerGroupsChanged:
		}
	}
}

// start marks a workflow poll active after slot acquisition.
func (a autoscalingPollAdmission) start() {
	if a.runner.workflowBalancer == nil {
		return
	}

	a.runner.workflowBalancer.start(a.runner.pollKind)
}

// release frees resources reserved for a poll that never started.
func (a autoscalingPollAdmission) release() {
	a.groupLease.release()
	a.runner.release()
}

// finish frees resources held by a poll that started.
func (a autoscalingPollAdmission) finish() {
	if a.runner.workflowBalancer != nil {
		a.runner.workflowBalancer.releaseActivePoll(a.groupLease)
	} else {
		a.groupLease.release()
	}
	a.runner.release()
}

// effectiveTarget applies configured bounds and group coverage requirements to
// the autoscaler's current target.
func (r *autoscalingTaskPollerRunner) effectiveTarget() int {
	target := int(r.autoscaler.target.Load())
	requiredMin := 0
	if r.workflowBalancer != nil {
		requiredMin = r.workflowBalancer.requiredMin()
	} else if r.pollerGroups != nil {
		requiredMin = r.pollerGroups.requiredMin()
	}
	return effectivePollerTarget(
		target,
		r.autoscaler.minPollerCount,
		r.autoscaler.maxPollerCount,
		requiredMin,
	)
}

func effectivePollerTarget(current, configuredMin, configuredMax, requiredMin int) int {
	effectiveMin := max(configuredMin, requiredMin)
	effectiveMax := max(configuredMax, effectiveMin)

	if current < effectiveMin {
		return effectiveMin
	}
	if current > effectiveMax {
		return effectiveMax
	}
	return current
}

func (r *autoscalingTaskPollerRunner) release() {
	r.activeMu.Lock()
	r.active--
	r.activeMu.Unlock()
	r.wakeCapacityWaiter()
}

// signal handles target changes, which can unblock both admission layers:
// runner capacity and shared workflow queue-kind fairness.
func (r *autoscalingTaskPollerRunner) signal() {
	r.wakeCapacityWaiter()
	if r.workflowBalancer != nil {
		r.workflowBalancer.signal()
	}
}

func (r *autoscalingTaskPollerRunner) wakeCapacityWaiter() {
	select {
	case r.wakeCh <- struct{}{}:
	default:
	}
}

func (r *autoscalingTaskPollerRunner) activePolls() int {
	r.activeMu.Lock()
	defer r.activeMu.Unlock()
	return r.active
}

func newScalableTaskPoller(
	poller taskPoller,
	logger log.Logger,
	pollerBehavior PollerBehavior,
	taskPollerType string,
	serverSupportsAutoscaling *atomic.Bool,
	pollerGroups *pollerGroupManager,
) scalableTaskPoller {
	return newScalablePollerWithTarget(
		poller,
		logger,
		pollerBehavior,
		taskPollerType,
		serverSupportsAutoscaling,
		pollerGroups,
		nil,
	)
}

func newScalablePollerWithTarget(
	poller taskPoller,
	logger log.Logger,
	pollerBehavior PollerBehavior,
	taskPollerType string,
	serverSupportsAutoscaling *atomic.Bool,
	pollerGroups *pollerGroupManager,
	targetChanged func(int64),
) scalableTaskPoller {
	tw := scalableTaskPoller{
		taskPoller:     poller,
		taskPollerType: taskPollerType,
	}
	switch p := pollerBehavior.(type) {
	case *pollerBehaviorAutoscaling:
		tw.pollerAutoscaler = newPollerAutoscaler(pollerAutoscalerOptions{
			initialPollerCount:        p.initialNumberOfPollers,
			maxPollerCount:            p.maximumNumberOfPollers,
			minPollerCount:            p.minimumNumberOfPollers,
			logger:                    logger,
			serverSupportsAutoscaling: serverSupportsAutoscaling,
		})
		tw.autoscalingRunner = newAutoscalingTaskPollerRunner(tw.pollerAutoscaler, pollerGroups)
		tw.pollerAutoscaler.targetChangedCallback = func(target int64) {
			tw.autoscalingRunner.signal()
			if targetChanged != nil {
				targetChanged(target)
			}
		}
	case *pollerBehaviorSimpleMaximum:
		tw.pollerCount = p.maximumNumberOfPollers
	}
	return tw
}
