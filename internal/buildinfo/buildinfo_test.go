package buildinfo

import (
	"io/fs"
	"runtime/debug"
	"testing"
	"testing/fstest"

	"github.com/stretchr/testify/require"
)

func TestTheBuildIsTheRevisionElseTheSourceElseTheVersion(t *testing.T) {
	rev := []debug.BuildSetting{{Key: "vcs.revision", Value: "5b9cb0e0123456789abcdef"}, {Key: "vcs.modified", Value: "false"}}
	require.Equal(t, "5b9cb0e01234", fromSettings("(devel)", rev, "abc"))
	dirty := append(rev[:1:1], debug.BuildSetting{Key: "vcs.modified", Value: "true"})
	require.Equal(t, "5b9cb0e01234-dirty-src-abc", fromSettings("(devel)", dirty, "abc"), "a changed tree: its source tells builds apart")
	require.Equal(t, "5b9cb0e01234-dirty", fromSettings("(devel)", dirty, ""))
	require.Equal(t, "src-abc", fromSettings("(devel)", nil, "abc"), "GOFLAGS=-buildvcs=false: no revision")
	require.Equal(t, "v1.2.3", fromSettings("v1.2.3", nil, ""), "go install module@v1.2.3 has no VCS stamp")
	require.Equal(t, "devel", fromSettings("(devel)", nil, ""))
	require.NotEmpty(t, ID())
}

// The source hash is the same whatever order packages register in, and
// changes with any file's content.
func TestTheSourceHashFollowsTheContentNotTheOrder(t *testing.T) {
	a := fstest.MapFS{"a.go": {Data: []byte("package a")}}
	b := fstest.MapFS{"b.go": {Data: []byte("package b")}}
	sourcesMu.Lock()
	saved := sources
	sources = map[string]fs.FS{}
	sourcesMu.Unlock()
	t.Cleanup(func() { sourcesMu.Lock(); sources = saved; sourcesMu.Unlock() })

	RegisterSource("x/b", b)
	RegisterSource("x/a", a)
	one := sourceHash()
	sources = map[string]fs.FS{}
	RegisterSource("x/a", a)
	RegisterSource("x/b", b)
	require.Equal(t, one, sourceHash())
	RegisterSource("x/b", fstest.MapFS{"b.go": {Data: []byte("package b // changed")}})
	require.NotEqual(t, one, sourceHash())
}
