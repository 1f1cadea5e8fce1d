package main

import (
	"os/user"
	"strings"

	"go.uber.org/zap"

	"github.com/steward-sh/steward/internal/admission"
)

// loadGuard reads --policy and --trusted-keys; a bad file is an error
// naming it, before this worker polls anything.
func loadGuard(policyFile, keyFiles string) (*admission.Guard, error) {
	g := &admission.Guard{}
	if policyFile != "" {
		p, err := admission.LoadPolicy(policyFile)
		if err != nil {
			return nil, err
		}
		g.Policy = p
	}
	if keyFiles != "" {
		var files []string
		for _, f := range strings.Split(keyFiles, ",") {
			if f = strings.TrimSpace(f); f != "" {
				files = append(files, f)
			}
		}
		keys, err := admission.LoadPublicKeys(files)
		if err != nil {
			return nil, err
		}
		g.Trusted = keys
	}
	return g, nil
}

// announceGuard says at start what this host runs: an open host runs any
// command a spec names, as this worker's user, for whoever may signal a
// workflow in the namespace.
func announceGuard(zl *zap.Logger, g *admission.Guard, host string) {
	if g.Open() {
		name := "this worker's user"
		if u, err := user.Current(); err == nil {
			name = u.Username
		}
		zl.Warn("no --policy and no --trusted-keys: any command a spec names will run on this host as "+name+
			" (whoever may signal a workflow in the namespace decides what runs; docs/security.md)", zap.String("host", host))
		return
	}
	fields := []zap.Field{zap.String("host", host)}
	if g.Policy != nil {
		fields = append(fields, zap.String("policy", g.Policy.File()), zap.Int("commands", len(g.Policy.Commands)))
		if r := g.Policy.Resolved(); len(r) > 0 {
			// The entries whose links the load followed, as they match.
			fields = append(fields, zap.Strings("commandsResolved", r))
		}
	}
	if len(g.Trusted) > 0 {
		ids := make([]string, len(g.Trusted))
		for i, k := range g.Trusted {
			ids[i] = admission.KeyID(k)
		}
		fields = append(fields, zap.Strings("trustedKeys", ids))
	}
	zl.Info("admission: this host runs only what its policy and keys allow", fields...)
}
