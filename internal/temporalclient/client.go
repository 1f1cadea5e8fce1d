// Package temporalclient holds what the worker and the starter both need of
// a Temporal client: dialing with steward's defaults, registering steward's
// search attributes, and pushing exits to worker workflows.
package temporalclient

import (
	"context"
	"fmt"
	"os"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/operatorservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/log"

	"github.com/steward-sh/steward/internal/driver"
	"github.com/steward-sh/steward/workflows"
)

// DefaultAddress is the frontend address when neither --address nor
// TEMPORAL_ADDRESS says otherwise.
const DefaultAddress = "localhost:7233"

// AddressFromEnv returns TEMPORAL_ADDRESS or DefaultAddress.
func AddressFromEnv() string {
	if a := os.Getenv("TEMPORAL_ADDRESS"); a != "" {
		return a
	}
	return DefaultAddress
}

// Dial connects to the frontend at address, in namespace. metrics may be nil.
func Dial(address, namespace string, logger log.Logger, metrics client.MetricsHandler) (client.Client, error) {
	c, err := client.Dial(client.Options{HostPort: address, Namespace: namespace, Logger: logger, MetricsHandler: metrics})
	if err != nil {
		return nil, fmt.Errorf("cannot reach Temporal at %s (namespace %s): %w", address, namespace, err)
	}
	return c, nil
}

// EnsureSearchAttributes registers steward's custom search attributes
// (Keyword) on the namespace, adding only those that are missing: it is safe
// to call at every start, from every process.
func EnsureSearchAttributes(ctx context.Context, c client.Client, namespace string) error {
	resp, err := c.OperatorService().ListSearchAttributes(ctx, &operatorservice.ListSearchAttributesRequest{Namespace: namespace})
	if err != nil {
		return fmt.Errorf("list search attributes: %w", err)
	}
	missing := map[string]enumspb.IndexedValueType{}
	for _, name := range workflows.SearchAttributeNames {
		if _, ok := resp.GetCustomAttributes()[name]; !ok {
			missing[name] = enumspb.INDEXED_VALUE_TYPE_KEYWORD
		}
	}
	if len(missing) == 0 {
		return nil
	}
	_, err = c.OperatorService().AddSearchAttributes(ctx, &operatorservice.AddSearchAttributesRequest{Namespace: namespace, SearchAttributes: missing})
	if err != nil {
		// Another process may have added them first.
		again, lerr := c.OperatorService().ListSearchAttributes(ctx, &operatorservice.ListSearchAttributesRequest{Namespace: namespace})
		if lerr == nil {
			ok := true
			for name := range missing {
				if _, there := again.GetCustomAttributes()[name]; !there {
					ok = false
				}
			}
			if ok {
				return nil
			}
		}
		return fmt.Errorf("add search attributes: %w", err)
	}
	return nil
}

// ExitNotifier pushes a driver's exit report to the worker workflow as the
// `exit` signal.
func ExitNotifier(c client.Client) driver.Notifier {
	return driver.NotifierFunc(func(ctx context.Context, workflowID string, e driver.Exit) error {
		return c.SignalWorkflow(ctx, workflowID, "", workflows.SignalExit, e)
	})
}
