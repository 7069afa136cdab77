package main

import (
	"archive/tar"
	"errors"
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
