package main

import (
	"fmt"
	"strings"
)

// parseOwner reads `dpkg-query -S FILE`'s answer, "libc6:amd64: /lib/x86_64-linux-gnu/libc.so.6"
// (or "pkg1, pkg2: FILE" for a file two packages share, and "diversion by ..." lines), and returns
// the first package owning file exactly, without its architecture.
func parseOwner(out, file string) (string, error) {
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, "diversion ") {
			continue
		}
		pkgs, path, ok := strings.Cut(line, ": ")
		if !ok || path != file {
			continue
		}
		first, _, _ := strings.Cut(pkgs, ", ")
		name, _, _ := strings.Cut(strings.TrimSpace(first), ":")
		if !validName(name) {
			return "", fmt.Errorf("dpkg-query -S %s: %q is not a package name", file, name)
		}
		return name, nil
	}
	return "", fmt.Errorf("dpkg-query -S %s: no line names the file in %q", file, out)
}

// parsePackage reads dpkg-query -W -f=packageFormat's answer for name: its fields, one a line.
func parsePackage(out, name string) (Package, error) {
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != 12 {
		return Package{}, fmt.Errorf("dpkg-query -W %s: %d lines, want 12 (one package's fields): %q", name, len(lines), out)
	}
	p := Package{Name: lines[0], Version: lines[1], Arch: lines[2], Source: lines[3], SourceVersion: lines[4],
		Maintainer: lines[5], MultiArch: lines[6], Section: lines[7], Priority: lines[8], InstalledSize: lines[9],
		Homepage: lines[10], Summary: lines[11]}
	switch {
	case p.Name != name:
		return Package{}, fmt.Errorf("dpkg-query -W %s: answered for %q", name, p.Name)
	case p.Version == "" || p.Arch == "":
		return Package{}, fmt.Errorf("dpkg-query -W %s: no version or architecture: %q", name, out)
	}
	return p, nil
}

// validName says whether s is a Debian package name (Debian Policy 5.6.1: lower-case letters,
// digits, + - and ., at least two characters, starting with a letter or digit).
func validName(s string) bool {
	if len(s) < 2 {
		return false
	}
	for i, c := range s {
		alnum := c >= 'a' && c <= 'z' || c >= '0' && c <= '9'
		if !alnum && (i == 0 || !strings.ContainsRune("+-.", c)) {
			return false
		}
	}
	return true
}
