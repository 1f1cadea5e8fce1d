package deploy

import (
	"archive/tar"
	"compress/gzip"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// buildPackages runs tools/dist (make dist) into a temporary directory with
// the binaries of make build, and returns it.
func buildPackages(t *testing.T) string {
	t.Helper()
	bin, err := filepath.Abs(filepath.Join(root, "bin"))
	require.NoError(t, err)
	for _, b := range []string{"worker", "starter"} {
		if _, err := os.Stat(filepath.Join(bin, b)); err != nil {
			t.Skipf("no %s in bin/ (make build makes it; make test does)", b)
		}
	}
	repo, err := filepath.Abs(root)
	require.NoError(t, err)
	out := t.TempDir()
	cmd := exec.Command("go", "run", ".", "-root", repo, "-bin", bin, "-out", out, "-version", "1.2.3")
	cmd.Dir = filepath.Join(repo, "tools", "dist")
	b, err := cmd.CombinedOutput()
	require.NoError(t, err, string(b))
	return out
}

// make dist writes a .deb, an .rpm and a tarball; the .deb installs the
// binaries, the unit, the configuration as conffiles and the directories
// with modes that fit what they hold, and what it unpacks runs.
func TestPackagesHoldWhatAHostNeeds(t *testing.T) {
	out := buildPackages(t)
	debs, _ := filepath.Glob(filepath.Join(out, "*.deb"))
	rpms, _ := filepath.Glob(filepath.Join(out, "*.rpm"))
	tars, _ := filepath.Glob(filepath.Join(out, "*.tar.gz"))
	require.Len(t, debs, 1)
	require.Len(t, rpms, 1)
	require.Len(t, tars, 1)

	// The tarball: the same layout.
	f, err := os.Open(tars[0])
	require.NoError(t, err)
	defer f.Close()
	gz, err := gzip.NewReader(f)
	require.NoError(t, err)
	tr := tar.NewReader(gz)
	modes := map[string]int64{}
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		require.NoError(t, err)
		modes[strings.TrimSuffix(h.Name, "/")] = h.Mode
	}
	for name, mode := range map[string]int64{
		"usr/bin/steward": 0o755, "usr/bin/steward-worker": 0o755, "usr/lib/systemd/system/steward-worker.service": 0o644,
		"etc/steward/worker.yaml": 0o644, "etc/steward/policy.yaml": 0o600, "var/lib/steward": 0o700, "var/log/steward": 0o750,
	} {
		require.Equal(t, mode, modes[name], name)
	}

	dpkg, err := exec.LookPath("dpkg-deb")
	if err != nil {
		t.Skip("no dpkg-deb to read the .deb with")
	}
	info, err := exec.Command(dpkg, "-f", debs[0], "Package", "Version", "Architecture").Output()
	require.NoError(t, err)
	require.Contains(t, string(info), "Package: steward")
	require.Contains(t, string(info), "Version: 1.2.3")
	conffiles, err := exec.Command(dpkg, "-I", debs[0], "conffiles").Output()
	require.NoError(t, err)
	require.Equal(t, []string{"/etc/steward/policy.yaml", "/etc/steward/worker.yaml"}, sortedLines(string(conffiles)), "an upgrade never overwrites them")
	listing, err := exec.Command(dpkg, "-c", debs[0]).Output()
	require.NoError(t, err)
	for _, want := range []string{
		"-rwxr-xr-x root/root", "./usr/bin/steward-worker",
		"drwx------ root/root", "./var/lib/steward/",
		"drwxr-x--- root/adm", "./var/log/steward/",
		"-rw------- root/root", "./etc/steward/policy.yaml",
		"./lib/systemd/system/steward-worker.service",
	} {
		require.Contains(t, string(listing), want)
	}
	r := t.TempDir()
	b, err := exec.Command(dpkg, "-x", debs[0], r).CombinedOutput()
	require.NoError(t, err, string(b))
	unit, err := os.ReadFile(filepath.Join(r, "lib/systemd/system/steward-worker.service"))
	require.NoError(t, err)
	want, err := os.ReadFile(unitPath)
	require.NoError(t, err)
	require.Equal(t, string(want), string(unit))
	for _, run := range [][]string{{"usr/bin/steward-worker", "--version"}, {"usr/bin/steward", "version"}} {
		b, err := exec.Command(filepath.Join(r, run[0]), run[1:]...).CombinedOutput()
		require.NoError(t, err, string(b))
		require.NotEmpty(t, strings.TrimSpace(string(b)))
	}
	// The installed configuration is one the worker takes.
	b, err = exec.Command(filepath.Join(r, "usr/bin/steward-worker"), "--config", filepath.Join(r, "etc/steward/worker.yaml"), "--pool-size", "0").CombinedOutput()
	require.Error(t, err)
	require.Contains(t, string(b), "--pool-size must be >= 1", "the file parsed, then the flag's own check ran: %s", b)
	for s, want := range map[string]string{"postinst": "try-restart steward-worker.service", "prerm": "stop steward-worker.service", "postrm": "rm -rf /var/lib/steward"} {
		script, err := exec.Command(dpkg, "-I", debs[0], s).Output()
		require.NoError(t, err, s)
		require.Contains(t, string(script), want, s)
	}
}

func sortedLines(s string) []string {
	var out []string
	for _, l := range strings.Split(strings.TrimSpace(s), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
	}
	slices.Sort(out)
	return out
}
