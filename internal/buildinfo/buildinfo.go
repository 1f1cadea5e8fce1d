// Package buildinfo names the build of steward a binary was made from: what
// `worker --version` and `starter version` print, and what every workflow
// records in its StewardBuild search attribute (the build of the worker
// that began its current run), so that `starter upgrade` can tell which
// workflows run older code.
//
// The build is the module's VCS revision as the go command stamps it into
// every binary built inside a git checkout (debug.ReadBuildInfo's
// vcs.revision, 12 characters): a worker and a starter built from one
// commit with a plain `go build` (no linker flags) name the same build.
// Where that is missing (GOFLAGS=-buildvcs=false, a test binary, a source
// tarball) or the tree had uncommitted changes, the source of steward's
// workflow code names it: the packages that make up a workflow's behaviour
// (workflows and the packages it runs: the cores, spec, activities, status)
// embed their own .go files and register them here (RegisterSource), and
// the build is "src-" and a hash of them (after the revision and "-dirty"
// for a changed tree). Every binary that links package workflows (the
// worker and the starter) registers the same packages, so both name the
// same build; it is never empty.
package buildinfo

import (
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"runtime/debug"
	"sort"
	"sync"
)

// ID is this binary's build.
func ID() string { return id() }

var id = sync.OnceValue(func() string {
	version, settings := "", []debug.BuildSetting(nil)
	if bi, ok := debug.ReadBuildInfo(); ok {
		version, settings = bi.Main.Version, bi.Settings
	}
	return fromSettings(version, settings, sourceHash())
})

var (
	sourcesMu sync.Mutex
	sources   = map[string]fs.FS{}
)

// RegisterSource adds a package's source files (an embed.FS of its own
// .go files) to what names a build without VCS information. Called from
// the init of each package of the workflow code, before ID is first used.
func RegisterSource(pkg string, files fs.FS) {
	sourcesMu.Lock()
	defer sourcesMu.Unlock()
	sources[pkg] = files
}

// sourceHash hashes the registered sources: package names, file names and
// contents, in order ("" when none is registered).
func sourceHash() string {
	sourcesMu.Lock()
	defer sourcesMu.Unlock()
	if len(sources) == 0 {
		return ""
	}
	pkgs := make([]string, 0, len(sources))
	for p := range sources {
		pkgs = append(pkgs, p)
	}
	sort.Strings(pkgs)
	h := sha256.New()
	for _, p := range pkgs {
		_ = fs.WalkDir(sources[p], ".", func(name string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return nil
			}
			b, err := fs.ReadFile(sources[p], name)
			if err != nil {
				return nil
			}
			h.Write([]byte(p + "/" + name + "\x00"))
			h.Write(b)
			h.Write([]byte{0})
			return nil
		})
	}
	return hex.EncodeToString(h.Sum(nil))[:12]
}

// fromSettings derives the build from a binary's module version, build
// settings and source hash (see the package comment).
func fromSettings(version string, settings []debug.BuildSetting, src string) string {
	var rev string
	dirty := false
	for _, s := range settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	switch {
	case rev != "" && !dirty:
		return rev
	case rev != "" && src != "":
		return rev + "-dirty-src-" + src
	case rev != "":
		return rev + "-dirty"
	case src != "":
		return "src-" + src
	case version != "" && version != "(devel)":
		return version
	}
	return "devel"
}
