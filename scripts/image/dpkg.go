package main

import (
	"crypto/md5" //nolint:gosec // dpkg's md5sums format, not a security check
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path"
	"slices"
	"strings"
)

// The image's C library and loader are copied from the build machine, not installed by a
// package manager, so scanners (Trivy, Grype, Syft) would not see them or their versions.
// Distroless images solve the same problem by writing one dpkg status record per package under
// /var/lib/dpkg/status.d/ (NAME, and NAME.md5sums listing its files), which these scanners
// read; the image does the same for each Debian package a carried library comes from.
const statusDir = "/var/lib/dpkg/status.d"

// Package is an installed Debian package, as dpkg-query describes it.
type Package struct {
	Name, Version, Arch, Source, SourceVersion string
	Maintainer, MultiArch, Section, Priority   string
	InstalledSize, Homepage, Summary           string
}

// Dpkg answers which installed package a file belongs to and what that package is; DpkgQuery
// asks the build machine's dpkg.
type Dpkg interface {
	Owner(file string) (string, error) // "" when no package owns it
	Package(name string) (Package, error)
}

// packageRecords returns status.d records for the packages the carried libraries come from.
// A library is looked up under each name it has in the image (dpkg knows /lib/x86_64-linux-gnu/
// libc.so.6, which a merged /usr resolves to /usr/lib/...). A library no package owns is an
// error: the image would carry code no scanner can version.
func packageRecords(libs []File, d Dpkg) ([]File, error) {
	names := map[string][]string{} // real path -> every path naming it
	for _, f := range libs {
		switch {
		case f.Link != "":
			names[f.Link] = append(names[f.Link], f.Path)
		case f.From != "":
			names[f.Path] = append([]string{f.Path}, names[f.Path]...)
		}
	}
	owned := map[string][]File{}
	for _, f := range libs {
		if f.From == "" {
			continue
		}
		pkg, err := ownerOf(d, names[f.Path])
		if err != nil {
			return nil, err
		}
		owned[pkg] = append(owned[pkg], f)
	}
	var out []File
	for _, name := range slices.Sorted(maps.Keys(owned)) {
		p, err := d.Package(name)
		if err != nil {
			return nil, err
		}
		sums, err := md5sums(owned[name])
		if err != nil {
			return nil, err
		}
		out = append(out, File{Path: path.Join(statusDir, p.Name), Data: statusRecord(p), Mode: 0o644},
			File{Path: path.Join(statusDir, p.Name+".md5sums"), Data: sums, Mode: 0o644})
	}
	return out, nil
}

func ownerOf(d Dpkg, paths []string) (string, error) {
	for _, p := range paths {
		pkg, err := d.Owner(p)
		if err != nil {
			return "", err
		}
		if pkg != "" {
			return pkg, nil
		}
	}
	return "", fmt.Errorf("no Debian package owns %s: the image would carry a library no scanner can see "+
		"(install it from a package, or build with -dpkg=false and record it in the SBOM yourself)", strings.Join(paths, " or "))
}

// statusRecord is p's stanza as dpkg's status file holds it. Scanners match advisories by the
// source package and version, so Source carries the version when it differs from the binary's.
func statusRecord(p Package) []byte {
	var b strings.Builder
	field := func(k, v string) {
		if v != "" {
			fmt.Fprintf(&b, "%s: %s\n", k, v)
		}
	}
	field("Package", p.Name)
	field("Status", "install ok installed")
	field("Priority", p.Priority)
	field("Section", p.Section)
	field("Installed-Size", p.InstalledSize)
	field("Maintainer", p.Maintainer)
	field("Architecture", p.Arch)
	field("Multi-Arch", p.MultiArch)
	src := p.Source
	if src != "" && p.SourceVersion != "" && p.SourceVersion != p.Version {
		src += " (" + p.SourceVersion + ")"
	}
	if src != p.Name {
		field("Source", src)
	}
	field("Version", p.Version)
	field("Homepage", p.Homepage)
	field("Description", p.Summary)
	return []byte(b.String())
}

// md5sums lists files as dpkg's NAME.md5sums does: "md5  path", the path without its leading /.
func md5sums(files []File) ([]byte, error) {
	var b strings.Builder
	for _, f := range files {
		data, err := os.ReadFile(f.From)
		if err != nil {
			return nil, err
		}
		fmt.Fprintf(&b, "%x  %s\n", md5.Sum(data), strings.TrimPrefix(f.Path, "/")) //nolint:gosec // see above
	}
	return []byte(b.String()), nil
}

// DpkgQuery asks the build machine's dpkg-query.
type DpkgQuery struct{}

var _ Dpkg = DpkgQuery{}

// ErrNoDpkg says the build machine has no dpkg-query to ask.
var ErrNoDpkg = errors.New("dpkg-query not found: build on Debian or Ubuntu so the C library is recorded as a package " +
	"(/var/lib/dpkg/status.d) that scanners can version, or pass -dpkg=false to build an image they cannot")

func (DpkgQuery) Owner(file string) (string, error) {
	out, err := exec.Command("dpkg-query", "-S", file).Output()
	var exit *exec.ExitError
	if errors.As(err, &exit) && exit.ExitCode() == 1 { // "no path found matching pattern"
		return "", nil
	}
	if errors.Is(err, exec.ErrNotFound) {
		return "", ErrNoDpkg
	}
	if err != nil {
		return "", fmt.Errorf("dpkg-query -S %s: %w", file, err)
	}
	return parseOwner(string(out), file)
}

// packageFormat is what DpkgQuery.Package asks dpkg-query -W for: one field per line.
var packageFormat = strings.Join([]string{"${Package}", "${Version}", "${Architecture}", "${source:Package}",
	"${source:Version}", "${Maintainer}", "${Multi-Arch}", "${Section}", "${Priority}", "${Installed-Size}",
	"${Homepage}", "${binary:Summary}"}, `\n`) + `\n`

func (DpkgQuery) Package(name string) (Package, error) {
	out, err := exec.Command("dpkg-query", "-W", "-f="+packageFormat, name).Output()
	if err != nil {
		return Package{}, fmt.Errorf("dpkg-query -W %s: %w", name, err)
	}
	return parsePackage(string(out), name)
}
