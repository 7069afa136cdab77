package main

import (
	"archive/tar"
	"crypto/md5"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/validate"
)

// dynamicBinary is a binary of this machine linked against the C library, as the NVML
// collector is.
func dynamicBinary(t *testing.T) string {
	p, err := exec.LookPath("ls")
	if err != nil {
		t.Skip("no ls on this machine")
	}
	return p
}

func options(t *testing.T) Options {
	dir := t.TempDir()
	ca := filepath.Join(dir, "ca.crt")
	if err := os.WriteFile(ca, []byte("-----BEGIN CERTIFICATE-----\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return Options{Tag: "ghcr.io/bursar-dev/bursar:v0.0.0-test", Layout: filepath.Join(dir, "layout"),
		Tarball: filepath.Join(dir, "image.tar"), Binaries: []string{dynamicBinary(t), os.Args[0]}, CACerts: ca,
		Version: "v0.0.0-test", Created: time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)}
}

// TestImageRunsAsNonRootWithWhatItsBinariesLoad: the image is valid OCI, runs as 65532, and its
// file system holds the binaries, the libraries they link against, the user and /tmp.
func TestImageRunsAsNonRootWithWhatItsBinariesLoad(t *testing.T) {
	o := options(t)
	if err := Build(o); err != nil {
		t.Fatal(err)
	}
	idx, err := layout.ImageIndexFromPath(o.Layout)
	if err != nil {
		t.Fatal(err)
	}
	m, err := idx.IndexManifest()
	if err != nil || len(m.Manifests) != 1 {
		t.Fatalf("layout index: %v, %v", m, err)
	}
	img, err := idx.Image(m.Manifests[0].Digest)
	if err != nil {
		t.Fatal(err)
	}
	if err := validate.Image(img); err != nil {
		t.Fatalf("not a valid image: %v", err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if cf.Config.User != "65532:65532" || cf.OS != "linux" {
		t.Errorf("config user %q os %q, want 65532:65532 on linux", cf.Config.User, cf.OS)
	}
	fs := files(t, mutate.Extract(img))
	ls := "/usr/local/bin/" + filepath.Base(o.Binaries[0])
	for _, want := range []string{ls, "/etc/passwd", "/etc/ssl/certs/ca-certificates.crt", "/tmp"} {
		if _, ok := fs[want]; !ok {
			t.Errorf("the image lacks %s", want)
		}
	}
	if h := fs[ls]; h.Mode&0o111 == 0 {
		t.Errorf("%s is not executable: %o", ls, h.Mode)
	}
	if h := fs["/tmp"]; h.Mode&0o1777 != 0o1777 {
		t.Errorf("/tmp mode %o, want 1777", h.Mode)
	}
	libc := false
	for p, h := range fs {
		libc = libc || strings.Contains(p, "libc.so") && h.Typeflag == tar.TypeReg
	}
	if !libc {
		t.Error("the image lacks the C library ls links against")
	}
	if _, err := tarball.ImageFromPath(o.Tarball, nil); err != nil {
		t.Errorf("the tarball does not load: %v", err)
	}
}

func TestImageIsTheSameForTheSameFiles(t *testing.T) {
	o := options(t)
	a, err := Image(o)
	if err != nil {
		t.Fatal(err)
	}
	b, err := Image(o)
	if err != nil {
		t.Fatal(err)
	}
	da, _ := a.Digest()
	db, _ := b.Digest()
	if da != db {
		t.Errorf("two builds of the same files: %s and %s", da, db)
	}
}

func TestImageRefusesWhatItCannotCarry(t *testing.T) {
	script := filepath.Join(t.TempDir(), "run.sh")
	if err := os.WriteFile(script, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name string
		bins []string
		want string
	}{
		{"no binaries", nil, "name the binaries"},
		{"not an ELF binary", []string{script}, "want a Linux ELF binary"},
		{"missing", []string{script + ".gone"}, "run.sh.gone"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			o := options(t)
			o.Binaries = tt.bins
			if _, err := Image(o); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Image = %v, want an error containing %q", err, tt.want)
			}
		})
	}
}

// files reads a flattened image file system: path -> header.
func files(t *testing.T, rc io.ReadCloser) map[string]*tar.Header {
	t.Helper()
	defer rc.Close()
	out := map[string]*tar.Header{}
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		out["/"+strings.TrimSuffix(strings.TrimPrefix(h.Name, "./"), "/")] = h
	}
}

// TestImageRecordsItsCLibraryAsAPackage: built with the build machine's dpkg, the image (read
// back from its tarball, as a scanner reads it) holds a status.d record for libc6 with the
// version dpkg-query gives, its architecture, and an md5sums file listing the C library and the
// loader with their checksums in the image; /etc/os-release names the distribution.
func TestImageRecordsItsCLibraryAsAPackage(t *testing.T) {
	if _, err := exec.LookPath("dpkg-query"); err != nil {
		t.Skip("no dpkg-query: not a Debian build machine")
	}
	version, err := exec.Command("dpkg-query", "-W", "-f=${Version}", "libc6").Output()
	if err != nil {
		t.Skipf("libc6 is not installed here (%v)", err)
	}
	o := options(t)
	o.Dpkg, o.OSRelease = DpkgQuery{}, "/etc/os-release"
	if err := Build(o); err != nil {
		t.Fatal(err)
	}
	img, err := tarball.ImageFromPath(o.Tarball, nil)
	if err != nil {
		t.Fatal(err)
	}
	fs := contents(t, mutate.Extract(img))
	rec := fs["/var/lib/dpkg/status.d/libc6"]
	for _, want := range []string{"Package: libc6\n", "Version: " + string(version) + "\n", "Architecture: amd64\n", "Source: glibc"} {
		if !strings.Contains(rec, want) {
			t.Errorf("status.d/libc6 lacks %q:\n%s", want, rec)
		}
	}
	sums := fs["/var/lib/dpkg/status.d/libc6.md5sums"]
	var libc, loader bool
	for _, line := range strings.Split(strings.TrimSpace(sums), "\n") {
		sum, p, ok := strings.Cut(line, "  ")
		if !ok {
			t.Fatalf("md5sums line %q is not \"md5  path\"", line)
		}
		data, found := fs["/"+p]
		if !found || fmt.Sprintf("%x", md5.Sum([]byte(data))) != sum {
			t.Errorf("md5sums lists %s (%s): in the image %v, or its checksum differs", p, sum, found)
		}
		libc = libc || strings.Contains(p, "libc.so")
		loader = loader || strings.Contains(p, "ld-linux")
	}
	if !libc || !loader {
		t.Errorf("libc6.md5sums lacks the C library (%v) or the loader (%v):\n%s", libc, loader, sums)
	}
	if rel := fs["/etc/os-release"]; !strings.Contains(rel, "ID=") || !strings.Contains(rel, "VERSION_ID=") {
		t.Errorf("/etc/os-release lacks ID or VERSION_ID:\n%s", rel)
	}
}

// TestImageRefusesALibraryNoPackageOwns: a library dpkg does not know would be invisible to
// scanners; recording packages refuses it, naming it.
func TestImageRefusesALibraryNoPackageOwns(t *testing.T) {
	if _, err := exec.LookPath("dpkg-query"); err != nil {
		t.Skip("no dpkg-query: not a Debian build machine")
	}
	lib := filepath.Join(t.TempDir(), "libown.so.1")
	if err := os.WriteFile(lib, []byte("\x7fELF"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := packageRecords([]File{{Path: lib, From: lib, Mode: 0o755}}, DpkgQuery{})
	if err == nil || !strings.Contains(err.Error(), "no Debian package owns "+lib) {
		t.Fatalf("packageRecords = %v, want an error naming %s", err, lib)
	}
}

// contents reads a flattened image file system's regular files: path -> content.
func contents(t *testing.T, rc io.ReadCloser) map[string]string {
	t.Helper()
	defer rc.Close()
	out := map[string]string{}
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		if h.Typeflag == tar.TypeReg {
			b, err := io.ReadAll(tr)
			if err != nil {
				t.Fatal(err)
			}
			out["/"+strings.TrimPrefix(h.Name, "./")] = string(b)
		}
	}
}

// TestScannerSeesTheCLibrary: a real scanner, Syft (not installed by default: go install
// github.com/anchore/syft/cmd/syft@v1.57.2), finds libc6 in the image at the version dpkg-query
// gives, as a Debian package. (On the image built without the status.d records, as before, it
// listed no Debian package at all.)
func TestScannerSeesTheCLibrary(t *testing.T) {
	syft, err := exec.LookPath("syft")
	if err != nil {
		t.Skip("syft is not installed (go install github.com/anchore/syft/cmd/syft@v1.57.2)")
	}
	version, err := exec.Command("dpkg-query", "-W", "-f=${Version}", "libc6").Output()
	if err != nil {
		t.Skipf("no libc6 from dpkg here (%v)", err)
	}
	o := options(t)
	o.Dpkg, o.OSRelease = DpkgQuery{}, "/etc/os-release"
	if err := Build(o); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(syft, "scan", "oci-dir:"+o.Layout, "-o", "json", "-q").Output()
	if err != nil {
		t.Fatalf("syft: %v", err)
	}
	var sbom struct {
		Artifacts []struct{ Name, Version, Type, PURL string }
	}
	if err := json.Unmarshal(out, &sbom); err != nil {
		t.Fatalf("syft -o json: %v", err)
	}
	var found []string
	for _, a := range sbom.Artifacts {
		if a.Type == "deb" {
			found = append(found, a.Name+" "+a.Version+" "+a.PURL)
			if a.Name == "libc6" && a.Version == string(version) {
				return
			}
		}
	}
	t.Errorf("syft found no libc6 %s among the Debian packages %v", version, found)
}
