package tick

import (
	"embed"

	"github.com/steward-sh/steward/internal/buildinfo"
)

// source is this package's own code: part of what names a build
// (internal/buildinfo) where the binary has no VCS information.
//
//go:embed *.go
var source embed.FS

func init() { buildinfo.RegisterSource("internal/tick", source) }
