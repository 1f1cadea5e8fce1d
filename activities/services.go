package activities

import (
	"context"
	"crypto/ed25519"
	"github.com/steward-sh/steward/internal/admission"

	"github.com/steward-sh/steward/internal/treestatus"
)

// ReadServicesName reads what a host tells of its process services: their
// usage and notify status (`starter status`, `starter top`).
const ReadServicesName = Prefix + "ReadServices"

// ReadServicesRequest names the services' workflows (none: every service
// the host runs).
type ReadServicesRequest struct {
	WorkflowIDs []string `json:"workflowIds,omitempty"`
	// Auth: as a log read's (ReadLogRequest.Auth).
	Auth *admission.ReadAuth `json:"auth,omitempty"`
}

// ServicesResult is what a host tells (Views), or, for a signed read, the
// same sealed to its reader (Sealed: JSON of Views).
type ServicesResult struct {
	Views  map[string]treestatus.HostView `json:"views,omitempty"`
	Sealed *admission.Sealed              `json:"sealed,omitempty"`
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
	// Trusted: as Logs.Trusted.
	Trusted []ed25519.PublicKey
}

// ReadServices returns what the host tells of each service asked, by
// workflow ID.
func (s *Services) ReadServices(_ context.Context, req ReadServicesRequest) (ServicesResult, error) {
	auth := req.Auth
	req.Auth = nil
	if err := authorizeRead(s.Trusted, "services", req, auth); err != nil {
		return ServicesResult{}, err
	}
	views := s.Host.Services(req.WorkflowIDs...)
	if auth == nil {
		return ServicesResult{Views: views}, nil
	}
	sealed, err := sealAnswer(auth, views)
	return ServicesResult{Sealed: sealed}, err
}
