package main

import (
	"archive/tar"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// The tarball held a header for every directory above its files (lib/,
// var/, var/log/, etc/, usr/, 0755): unpacked at / as documented, tar
// replaced a merged-/usr host's /lib link by a directory holding only
// systemd/ (every dynamically linked program broken) and made Ubuntu's
// /var/log 0755. Only steward's own directories may have headers.
func TestTarball_HoldsNoSystemDirectory(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"starter", "worker"} {
		if err := os.WriteFile(filepath.Join(dir, f), []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	name := filepath.Join(dir, "s.tar.gz")
	if err := tarball(name, layout(root, dir, "/usr/lib/systemd/system")); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	own := map[string]bool{"var/lib/steward/": true, "var/log/steward/": true}
	tr := tar.NewReader(gz)
	var files int
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case h.Typeflag == tar.TypeDir && !own[h.Name]:
			t.Errorf("the tarball has a header for %s, a directory that is not steward's", h.Name)
		case h.Name == "lib/systemd/system/steward-worker.service":
			t.Errorf("the unit is under lib/, a link on merged-/usr hosts")
		case h.Typeflag == tar.TypeReg:
			files++
		}
	}
	if files != 5 {
		t.Errorf("%d files in the tarball, want the layout's 5", files)
	}
}
