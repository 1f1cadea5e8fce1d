// Command worker hosts steward's workflows and a share of the global action
// pool: it polls the shared task queue for workflow tasks and for actions,
// running at most --pool-size actions at once. Run more of them, on more
// machines, to scale out.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/worker"
	"go.uber.org/zap"

	"github.com/steward-sh/steward/activities"
	"github.com/steward-sh/steward/internal/driver"
	"github.com/steward-sh/steward/internal/driver/stub"
	"github.com/steward-sh/steward/internal/telemetry"
	"github.com/steward-sh/steward/internal/temporalclient"
	"github.com/steward-sh/steward/workflows"
)

func main() {
	address := flag.String("address", temporalclient.AddressFromEnv(), "Temporal frontend address (env TEMPORAL_ADDRESS)")
	namespace := flag.String("namespace", "default", "Temporal namespace")
	poolSize := flag.Int("pool-size", 10, "actions this process runs at once (its share of the global pool)")
	logLevel := flag.String("log-level", "info", "log level: debug, info, warn, error")
	flag.Parse()
	if *poolSize < 1 {
		fmt.Fprintln(os.Stderr, "worker: --pool-size must be >= 1")
		os.Exit(2)
	}
	if err := run(*address, *namespace, *poolSize, *logLevel); err != nil {
		fmt.Fprintln(os.Stderr, "worker:", err)
		os.Exit(1)
	}
}

func run(address, namespace string, poolSize int, logLevel string) error {
	zl, err := telemetry.NewLogger(logLevel)
	if err != nil {
		return err
	}
	defer zl.Sync() //nolint:errcheck
	c, err := temporalclient.Dial(address, namespace, telemetry.NewSDKLogger(zl))
	if err != nil {
		return err
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	err = temporalclient.EnsureSearchAttributes(ctx, c, namespace)
	cancel()
	if err != nil {
		return err
	}

	stubDriver := stub.New(temporalclient.ExitNotifier(c), zl)
	defer stubDriver.Close()
	acts := &activities.Activities{Drivers: map[string]driver.Driver{"stub": stubDriver}}

	w := worker.New(c, workflows.TaskQueue, worker.Options{
		MaxConcurrentActivityExecutionSize: poolSize,
		// Actions go through the task queue, the pool shared by all workers.
		DisableEagerActivities: true,
		// Let in-flight actions finish (or see their cancellation) on shutdown.
		WorkerStopTimeout: 10 * time.Second,
	})
	w.RegisterWorkflow(workflows.WorkerWorkflow)
	w.RegisterWorkflow(workflows.SupervisorWorkflow)
	w.RegisterActivityWithOptions(acts, activity.RegisterOptions{Name: activities.Prefix})
	zl.Info("steward worker starting", zap.String("address", address), zap.String("namespace", namespace),
		zap.String("taskQueue", workflows.TaskQueue), zap.Int("poolSize", poolSize))
	// Run returns on SIGINT or SIGTERM, after stopping the worker gracefully.
	if err := w.Run(worker.InterruptCh()); err != nil {
		return err
	}
	zl.Info("steward worker stopped")
	return nil
}
