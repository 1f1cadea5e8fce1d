// Command dist builds steward's packages (`make dist`): a tarball, a .deb
// and an .rpm of the starter (/usr/bin/steward), the worker
// (/usr/bin/steward-worker), its systemd unit, its configuration files
// (/etc/steward/worker.yaml and policy.yaml, which an upgrade never
// overwrites) and its state and log directories, with nfpm.
//
// It is a module of its own (tools/dist): nfpm's dependencies stay out of
// steward's.
package main

import (
	"archive/tar"
	"compress/gzip"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/goreleaser/nfpm/v2"
	_ "github.com/goreleaser/nfpm/v2/deb" // the packagers register themselves
	"github.com/goreleaser/nfpm/v2/files"
	_ "github.com/goreleaser/nfpm/v2/rpm"
)

// entry is one thing a package installs.
type entry struct {
	src, dst string // src "": a directory
	mode     os.FileMode
	kind     string // "", files.TypeConfigNoReplace, files.TypeDir
}

// layout is what every package installs; unitDir is where the distribution
// keeps system units.
func layout(root, bin, unitDir string) []entry {
	return []entry{
		{filepath.Join(bin, "starter"), "/usr/bin/steward", 0o755, ""},
		{filepath.Join(bin, "worker"), "/usr/bin/steward-worker", 0o755, ""},
		{filepath.Join(root, "deploy/systemd/steward-worker.service"), unitDir + "/steward-worker.service", 0o644, ""},
		{filepath.Join(root, "deploy/package/worker.yaml"), "/etc/steward/worker.yaml", 0o644, files.TypeConfigNoReplace},
		// The policy may name secrets' paths: readable by root only.
		{filepath.Join(root, "deploy/package/policy.yaml"), "/etc/steward/policy.yaml", 0o600, files.TypeConfigNoReplace},
		// Process records and signed revisions: the worker's alone.
		{"", "/var/lib/steward", 0o700, files.TypeDir},
		// The services' output: root and the adm group (as /var/log).
		{"", "/var/log/steward", 0o750, files.TypeDir},
	}
}

func main() {
	root := flag.String("root", ".", "the repository")
	bin := flag.String("bin", "bin", "where the built worker and starter are")
	out := flag.String("out", "dist", "where the packages go")
	version := flag.String("version", "", "the packages' version (default: 0.0.N, N the commits on HEAD)")
	arch := flag.String("arch", runtime.GOARCH, "the binaries' architecture (GOARCH)")
	flag.Parse()
	if err := run(*root, *bin, *out, *version, *arch); err != nil {
		fmt.Fprintln(os.Stderr, "dist:", err)
		os.Exit(1)
	}
}

func run(root, bin, out, version, arch string) error {
	if !filepath.IsAbs(bin) {
		bin = filepath.Join(root, bin)
	}
	if version == "" {
		v, err := commitVersion(root)
		if err != nil {
			return err
		}
		version = v
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	for _, format := range []string{"deb", "rpm"} {
		unitDir := "/lib/systemd/system"
		if format == "rpm" {
			unitDir = "/usr/lib/systemd/system"
		}
		name, err := pkg(format, root, layout(root, bin, unitDir), version, arch, out)
		if err != nil {
			return fmt.Errorf("%s: %w", format, err)
		}
		fmt.Println(name)
	}
	name := filepath.Join(out, fmt.Sprintf("steward_%s_linux_%s.tar.gz", version, arch))
	// /usr/lib, not /lib: on a merged-/usr host /lib is a link, which tar
	// would replace by a directory of the tarball's (tarball).
	if err := tarball(name, layout(root, bin, "/usr/lib/systemd/system")); err != nil {
		return fmt.Errorf("tarball: %w", err)
	}
	fmt.Println(name)
	return nil
}

// commitVersion is 0.0.N, N the commits on HEAD: it grows with main, as a
// package upgrade wants.
func commitVersion(root string) (string, error) {
	n, err := gitOutput(root, "rev-list", "--count", "HEAD")
	if err != nil {
		return "", fmt.Errorf("version: %w (give -version)", err)
	}
	return "0.0." + n, nil
}

func pkg(format, root string, es []entry, version, arch, out string) (string, error) {
	scripts := filepath.Join(root, "deploy/package")
	info := &nfpm.Info{
		Name:        "steward",
		Arch:        arch,
		Platform:    "linux",
		Version:     version,
		Section:     "admin",
		Priority:    "optional",
		Maintainer:  "steward <steward@steward.sh>",
		Description: "Durable supervision trees on Temporal: a host's worker and the operator's CLI.",
		Vendor:      "steward",
		Homepage:    "https://github.com/steward-sh/steward",
		License:     "Apache-2.0",
		MTime:       time.Unix(0, 0).UTC(),
		Overridables: nfpm.Overridables{
			Scripts: nfpm.Scripts{
				PostInstall: filepath.Join(scripts, "postinstall.sh"),
				PreRemove:   filepath.Join(scripts, "preremove.sh"),
				PostRemove:  filepath.Join(scripts, "postremove.sh"),
			},
		},
	}
	for _, e := range es {
		c := &files.Content{Source: e.src, Destination: e.dst, Type: e.kind, FileInfo: &files.ContentFileInfo{Mode: e.mode, Owner: "root", Group: "root"}}
		if e.dst == "/var/log/steward" {
			c.FileInfo.Group = "adm"
		}
		info.Contents = append(info.Contents, c)
	}
	info = nfpm.WithDefaults(info)
	if err := nfpm.PrepareForPackager(info, format); err != nil {
		return "", err
	}
	p, err := nfpm.Get(format)
	if err != nil {
		return "", err
	}
	name := filepath.Join(out, p.ConventionalFileName(info))
	f, err := os.Create(name)
	if err != nil {
		return "", err
	}
	if err := p.Package(info, f); err != nil {
		f.Close()
		os.Remove(name)
		return "", err
	}
	return name, f.Close()
}

// tarball writes the layout as a .tar.gz to unpack at / (the maintainer
// scripts' work, enabling the unit, is the operator's). It holds a header
// for steward's own directories only, never for the system's above them
// (/lib, /var, /var/log, /etc, /usr): unpacked at /, tar replaces a link
// that stands where the archive has a directory (a merged-/usr host's /lib
// -> usr/lib: its loader and libc gone) and sets an existing directory's
// mode to the archive's (Ubuntu's /var/log, 0775 root:syslog, made 0755).
// tar makes a missing parent itself.
func tarball(name string, es []entry) error {
	f, err := os.Create(name)
	if err != nil {
		return err
	}
	defer f.Close()
	gz := gzip.NewWriter(f)
	tw := tar.NewWriter(gz)
	for _, e := range es {
		if e.src == "" {
			if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: strings.TrimPrefix(e.dst, "/") + "/", Mode: int64(e.mode), ModTime: time.Unix(0, 0)}); err != nil {
				return err
			}
			continue
		}
		src, err := os.Open(e.src)
		if err != nil {
			return err
		}
		st, err := src.Stat()
		if err != nil {
			src.Close()
			return err
		}
		err = tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: strings.TrimPrefix(e.dst, "/"), Mode: int64(e.mode), Size: st.Size(), ModTime: time.Unix(0, 0)})
		if err == nil {
			_, err = io.Copy(tw, src)
		}
		src.Close()
		if err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	if err := gz.Close(); err != nil {
		return err
	}
	return f.Close()
}

func gitOutput(root string, args ...string) (string, error) {
	cmd := exec.Command("git", append([]string{"-C", root}, args...)...)
	b, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("git %s: %w", strings.Join(args, " "), err)
	}
	return strings.TrimSpace(string(b)), nil
}
