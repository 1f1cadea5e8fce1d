package activities

import (
	"context"

	"github.com/steward-sh/steward/internal/treestatus"
)

// ReadServicesName reads what a host tells of its process services: their
// usage and notify status (`starter status`, `starter top`).
const ReadServicesName = Prefix + "ReadServices"

// ReadServicesRequest names the services' workflows (none: every service
// the host runs).
type ReadServicesRequest struct {
	WorkflowIDs []string `json:"workflowIds,omitempty"`
}

// HostServices is what the host's process driver tells (process.Driver).
type HostServices interface {
	Services(wfIDs ...string) map[string]treestatus.HostView
}

// Services answers from what the host's worker already holds: the usage
// samples it takes every --usage-interval (a read costs no sample; a
// service not sampled yet has no usage) and the last STATUS= of each
// notify service. It runs on the host's task queue only: a process is
// seen on the host that runs it.
type Services struct {
	Host HostServices
}

// ReadServices returns what the host tells of each service asked, by
// workflow ID.
func (s *Services) ReadServices(_ context.Context, req ReadServicesRequest) (map[string]treestatus.HostView, error) {
	return s.Host.Services(req.WorkflowIDs...), nil
}
