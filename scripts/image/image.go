package main

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// NonRoot is the user and group the image runs as (distroless' "nonroot").
const NonRoot = 65532

// Options say what goes into the image and where it is written.
type Options struct {
	Tag      string
	Layout   string // OCI layout directory
	Tarball  string // optional docker/podman tarball
	Binaries []string
	CACerts  string
	Chdb     string
	Version  string
	Created  time.Time
	// Dpkg, when set, records the packages the carried libraries come from (dpkg.go), and
	// OSRelease (the build machine's /etc/os-release) says which distribution they are from.
	Dpkg      Dpkg
	OSRelease string
}

// Build assembles the image and writes it.
func Build(o Options) error {
	img, err := Image(o)
	if err != nil {
		return err
	}
	tag, err := name.NewTag(o.Tag)
	if err != nil {
		return fmt.Errorf("-tag %q: %w", o.Tag, err)
	}
	if err := os.RemoveAll(o.Layout); err != nil {
		return err
	}
	p, err := layout.Write(o.Layout, empty.Index)
	if err != nil {
		return fmt.Errorf("writing the OCI layout %s: %w", o.Layout, err)
	}
	if err := p.AppendImage(img, layout.WithAnnotations(map[string]string{
		"org.opencontainers.image.ref.name": tag.String()})); err != nil {
		return fmt.Errorf("writing the image into %s: %w", o.Layout, err)
	}
	if o.Tarball != "" {
		if err := tarball.WriteToFile(o.Tarball, tag, img); err != nil {
			return fmt.Errorf("writing %s: %w", o.Tarball, err)
		}
	}
	d, _ := img.Digest()
	fmt.Printf("image %s %s in %s\n", tag, d, o.Layout)
	return nil
}

// Image is the image itself: a base layer (users, certificates, /tmp, the libraries the
// binaries load), a layer of binaries, libchdb in a layer of its own when asked for, and a
// config that runs as NonRoot.
func Image(o Options) (v1.Image, error) {
	if len(o.Binaries) == 0 {
		return nil, fmt.Errorf("name the binaries to carry, e.g. bin-image/arbiter bin-image/collector bin-image/report")
	}
	base, err := baseFiles(o)
	if err != nil {
		return nil, err
	}
	var bins []File
	for _, b := range o.Binaries {
		bins = append(bins, File{Path: path.Join("/usr/local/bin", filepath.Base(b)), From: b, Mode: 0o755})
	}
	layers := [][]File{base, bins}
	env := []string{"PATH=/usr/local/bin:/usr/bin:/bin", "SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt", "HOME=/home/nonroot"}
	if o.Chdb != "" {
		layers = append(layers, []File{{Path: "/usr/local/lib/libchdb.so", From: o.Chdb, Mode: 0o644}})
		env = append(env, "BURSAR_CHDB_LIB=/usr/local/lib/libchdb.so")
	}
	img := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
	for i, files := range layers {
		l, err := layer(files, o.Created)
		if err != nil {
			return nil, fmt.Errorf("layer %d: %w", i, err)
		}
		if img, err = mutate.Append(img, mutate.Addendum{Layer: l, MediaType: types.OCILayer,
			History: v1.History{Created: v1.Time{Time: o.Created}, CreatedBy: "scripts/image"}}); err != nil {
			return nil, err
		}
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cf = cf.DeepCopy()
	cf.Architecture, cf.OS, cf.Created = "amd64", "linux", v1.Time{Time: o.Created}
	cf.Config = v1.Config{User: fmt.Sprintf("%d:%d", NonRoot, NonRoot), Env: env, WorkingDir: "/home/nonroot",
		Entrypoint: []string{"/usr/local/bin/arbiter"}, Cmd: []string{"--help"},
		Labels: map[string]string{
			"org.opencontainers.image.title":    "bursar",
			"org.opencontainers.image.source":   "https://github.com/bursar-dev/bursar",
			"org.opencontainers.image.version":  o.Version,
			"org.opencontainers.image.licenses": "Apache-2.0",
		}}
	return mutate.ConfigFile(img, cf)
}
