// Package release builds the worker and starter of an earlier commit of this
// repository: the release whose trees an upgrade must keep running
// (integration/upgrade_test.go, the bench's upgrade step).
package release

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// Last is the commit of the last release whose trees need nothing but
// `starter upgrade` (docs/upgrading.md).
const Last = "5b9cb0e"

// SignedV1 is the last commit whose starter signs specs with version 1
// signatures (internal/admission): its signed trees must keep running on
// hosts of this build, and a re-sign under version 2 restart nothing.
const SignedV1 = "e734e32"

// JobsV1 is the last commit whose jobs' workflows are of version 1 (runs
// that await an exit signal and keep a memo): its jobs must keep running
// on this build, and `starter upgrade` bring them to version 2.
const JobsV1 = "a647b97"

// Build extracts commit from the repository at repo (`git archive`: the
// checkout is untouched) into dir and builds its worker and starter there.
func Build(repo, commit, dir string) (worker, starter string, err error) {
	if out, err := exec.Command("git", "-C", repo, "cat-file", "-e", commit+"^{commit}").CombinedOutput(); err != nil {
		return "", "", fmt.Errorf("commit %s is not in the history of %s (a shallow clone?): %v %s", commit, repo, err, out)
	}
	src := filepath.Join(dir, "src")
	if err := os.MkdirAll(src, 0o755); err != nil {
		return "", "", err
	}
	if out, err := exec.Command("bash", "-c", fmt.Sprintf("git -C %q archive %s | tar -x -C %q", repo, commit, src)).CombinedOutput(); err != nil {
		return "", "", fmt.Errorf("git archive %s: %v: %s", commit, err, out)
	}
	for _, b := range []string{"worker", "starter"} {
		cmd := exec.Command("go", "build", "-o", filepath.Join(dir, b), "./"+b)
		cmd.Dir = src
		if out, err := cmd.CombinedOutput(); err != nil {
			return "", "", fmt.Errorf("build %s at %s: %v: %s", b, commit, err, out)
		}
	}
	return filepath.Join(dir, "worker"), filepath.Join(dir, "starter"), nil
}
