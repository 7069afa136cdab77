package main

import (
	"archive/tar"
	"bytes"
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// File is one entry of a layer: a file copied From the build machine, a file of Data, a
// directory (Dir) or a symbolic link (Link).
type File struct {
	Path string
	From string
	Data []byte
	Dir  bool
	Link string
	Mode int64
	UID  int
}

const passwd = "root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n"
const group = "root:x:0:\nnonroot:x:65532:\n"

// libDirs are where the loader looks for a library by name (Debian's multiarch paths first).
var libDirs = []string{"/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib64", "/usr/lib64", "/lib", "/usr/lib"}

// baseFiles are the users, certificates, directories and shared libraries every program needs.
func baseFiles(o Options) ([]File, error) {
	files := []File{
		{Path: "/etc/passwd", Data: []byte(passwd), Mode: 0o644},
		{Path: "/etc/group", Data: []byte(group), Mode: 0o644},
		{Path: "/etc/nsswitch.conf", Data: []byte("hosts: files dns\n"), Mode: 0o644},
		{Path: "/tmp", Dir: true, Mode: 0o1777},
		{Path: "/home/nonroot", Dir: true, Mode: 0o755, UID: NonRoot},
	}
	if o.CACerts != "" {
		files = append(files, File{Path: "/etc/ssl/certs/ca-certificates.crt", From: o.CACerts, Mode: 0o644})
	}
	libs, err := sharedLibraries(o.Binaries)
	if err != nil {
		return nil, err
	}
	files = append(files, libs...)
	if o.Dpkg == nil {
		return files, nil
	}
	records, err := packageRecords(libs, o.Dpkg)
	if err != nil {
		return nil, err
	}
	rel, err := osRelease(o.OSRelease)
	if err != nil {
		return nil, err
	}
	return append(append(files, records...), File{Path: "/etc/os-release", Data: rel, Mode: 0o644}), nil
}

// sharedLibraries lists the ELF interpreter and every library the binaries need, and what those
// need, each at its real path with the names the loader asks for as links to it. A static
// binary needs none.
func sharedLibraries(binaries []string) ([]File, error) {
	seen := map[string]bool{}
	var out []File
	queue := slices.Clone(binaries)
	for len(queue) > 0 {
		bin := queue[0]
		queue = queue[1:]
		f, err := elf.Open(bin)
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w (want a Linux ELF binary)", bin, err)
		}
		needed, err := f.ImportedLibraries()
		interp := interpreter(f)
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("reading the libraries %s needs: %w", bin, err)
		}
		var paths []string
		if interp != "" {
			paths = append(paths, interp)
		}
		for _, lib := range needed {
			p, err := findLibrary(lib)
			if err != nil {
				return nil, fmt.Errorf("%s needs %s: %w", bin, lib, err)
			}
			paths = append(paths, p)
		}
		for _, p := range paths {
			if seen[p] {
				continue
			}
			seen[p] = true
			real, err := filepath.EvalSymlinks(p)
			if err != nil {
				return nil, err
			}
			if real != p {
				out = append(out, File{Path: p, Link: real})
			}
			if !seen[real] {
				seen[real] = true
				out = append(out, File{Path: real, From: real, Mode: 0o755})
				queue = append(queue, real)
			}
		}
	}
	return out, nil
}

func interpreter(f *elf.File) string {
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			b, err := io.ReadAll(p.Open())
			if err == nil {
				return strings.TrimRight(string(b), "\x00")
			}
		}
	}
	return ""
}

func findLibrary(lib string) (string, error) {
	if strings.Contains(lib, "/") {
		return lib, nil
	}
	for _, d := range libDirs {
		p := path.Join(d, lib)
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	return "", errors.New("not found in " + strings.Join(libDirs, ", "))
}

// layer packs files into a tar layer, parents first, every entry dated at created, so the same
// files make the same layer.
func layer(files []File, created time.Time) (v1.Layer, error) {
	var b bytes.Buffer
	tw := tar.NewWriter(&b)
	dirs := map[string]bool{"/": true}
	for _, f := range files {
		for _, d := range parents(f.Path) {
			if !dirs[d] && !slices.ContainsFunc(files, func(g File) bool { return g.Dir && g.Path == d }) {
				dirs[d] = true
				if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: strings.TrimPrefix(d, "/") + "/",
					Mode: 0o755, ModTime: created, Format: tar.FormatPAX}); err != nil {
					return nil, err
				}
			}
		}
		if err := writeEntry(tw, f, created); err != nil {
			return nil, err
		}
		if f.Dir {
			dirs[f.Path] = true
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	data := b.Bytes()
	return tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil })
}

func writeEntry(tw *tar.Writer, f File, created time.Time) error {
	h := &tar.Header{Name: strings.TrimPrefix(f.Path, "/"), Mode: f.Mode, Uid: f.UID, Gid: f.UID, ModTime: created, Format: tar.FormatPAX}
	switch {
	case f.Dir:
		h.Typeflag, h.Name = tar.TypeDir, h.Name+"/"
		return tw.WriteHeader(h)
	case f.Link != "":
		h.Typeflag, h.Linkname, h.Mode = tar.TypeSymlink, f.Link, 0o777
		return tw.WriteHeader(h)
	}
	data := f.Data
	if f.From != "" {
		var err error
		if data, err = os.ReadFile(f.From); err != nil {
			return err
		}
	}
	h.Typeflag, h.Size = tar.TypeReg, int64(len(data))
	if err := tw.WriteHeader(h); err != nil {
		return err
	}
	_, err := tw.Write(data)
	return err
}

// parents are the directories above p, outermost first: /a/b/c -> /a, /a/b.
func parents(p string) []string {
	var out []string
	for d := path.Dir(p); d != "/" && d != "."; d = path.Dir(d) {
		out = append([]string{d}, out...)
	}
	return out
}
