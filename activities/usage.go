package activities

import (
	"context"

	"github.com/steward-sh/steward/internal/treestatus"
)

// ReadUsageName reads what the process services of a host use (`starter
// status`, `starter top`).
const ReadUsageName = Prefix + "ReadUsage"

// ReadUsageRequest names the services' workflows (none: every service the
// host runs).
type ReadUsageRequest struct {
	WorkflowIDs []string `json:"workflowIds,omitempty"`
}

// UsageSampler is what the host's process driver samples (process.Driver).
type UsageSampler interface {
	Usage(wfIDs ...string) map[string]treestatus.Usage
}

// Usage answers from the samples the host's worker takes every
// --usage-interval: a read costs no sample, and a service not sampled yet
// (started since the last sample) is left out. It runs on the host's task
// queue only: a process is seen on the host that runs it.
type Usage struct {
	Sampler UsageSampler
}

// ReadUsage returns the last sample of each service asked, by workflow ID.
func (u *Usage) ReadUsage(_ context.Context, req ReadUsageRequest) (map[string]treestatus.Usage, error) {
	return u.Sampler.Usage(req.WorkflowIDs...), nil
}
