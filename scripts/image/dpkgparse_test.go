package main

import (
	"strings"
	"testing"
)

func TestParseOwner(t *testing.T) {
	const libc = "/lib/x86_64-linux-gnu/libc.so.6"
	tests := []struct {
		name, out, want, wantErr string
	}{
		{name: "arch-qualified", out: "libc6:amd64: " + libc + "\n", want: "libc6"},
		{name: "plain", out: "libc6: " + libc + "\n", want: "libc6"},
		{name: "shared by two", out: "libc6:amd64, libc6-dev:amd64: " + libc + "\n", want: "libc6"},
		{name: "after a diversion", out: "diversion by foo from: " + libc + "\nlibc6:amd64: " + libc + "\n", want: "libc6"},
		{name: "another file only", out: "libc6:amd64: /lib/other.so\n", wantErr: "no line names the file"},
		{name: "empty", out: "", wantErr: "no line names the file"},
		{name: "not a name", out: "Libc 6: " + libc + "\n", wantErr: "not a package name"},
		{name: "no separator", out: "libc6 " + libc + "\n", wantErr: "no line names the file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseOwner(tt.out, libc)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("parseOwner = %q, %v; want an error containing %q", got, err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("parseOwner = %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}

func FuzzParseOwner(f *testing.F) {
	f.Add("libc6:amd64: /lib/libc.so.6\n", "/lib/libc.so.6")
	f.Add("a, b: /x\n", "/x")
	f.Fuzz(func(t *testing.T, out, file string) {
		name, err := parseOwner(out, file)
		if err == nil && !validName(name) {
			t.Fatalf("parseOwner(%q) = %q, not a package name", out, name)
		}
	})
}

// libc6Fields is what dpkg-query -W -f=packageFormat prints for libc6 (Debian 12).
var libc6Fields = []string{"libc6", "2.36-9+deb12u14", "amd64", "glibc", "2.36-9+deb12u14",
	"GNU Libc Maintainers <debian-glibc@lists.debian.org>", "same", "libs", "optional", "13001",
	"https://www.gnu.org/software/libc/libc.html", "GNU C Library: Shared libraries"}

func TestParsePackage(t *testing.T) {
	good := strings.Join(libc6Fields, "\n") + "\n"
	p, err := parsePackage(good, "libc6")
	if err != nil {
		t.Fatal(err)
	}
	if p.Name != "libc6" || p.Version != "2.36-9+deb12u14" || p.Arch != "amd64" || p.Source != "glibc" || p.Summary != libc6Fields[11] {
		t.Errorf("parsePackage = %+v", p)
	}
	for _, tt := range []struct{ name, out, pkg, wantErr string }{
		{"short", "libc6\n2.36\n", "libc6", "2 lines, want 12"},
		{"two packages", good + good, "libc6", "24 lines"},
		{"another package", good, "libc-bin", `answered for "libc6"`},
		{"no version", strings.Replace(good, "2.36-9+deb12u14\namd64", "\namd64", 1), "libc6", "no version"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := parsePackage(tt.out, tt.pkg); err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("parsePackage = %v, want an error containing %q", err, tt.wantErr)
			}
		})
	}
}

func FuzzParsePackage(f *testing.F) {
	f.Add(strings.Join(libc6Fields, "\n")+"\n", "libc6")
	f.Fuzz(func(t *testing.T, out, name string) {
		p, err := parsePackage(out, name)
		if err == nil && (p.Name != name || p.Version == "" || p.Arch == "") {
			t.Fatalf("parsePackage(%q) = %+v without a name, version or architecture", out, p)
		}
	})
}

// TestStatusRecord: the stanza carries what scanners match on (Package, Version, Architecture,
// Source with its version when it differs) and leaves out empty fields.
func TestStatusRecord(t *testing.T) {
	p, err := parsePackage(strings.Join(libc6Fields, "\n")+"\n", "libc6")
	if err != nil {
		t.Fatal(err)
	}
	rec := string(statusRecord(p))
	for _, want := range []string{"Package: libc6\n", "Status: install ok installed\n", "Version: 2.36-9+deb12u14\n",
		"Architecture: amd64\n", "Source: glibc\n", "Multi-Arch: same\n"} {
		if !strings.Contains(rec, want) {
			t.Errorf("record lacks %q:\n%s", want, rec)
		}
	}
	if !strings.HasPrefix(rec, "Package: ") {
		t.Errorf("record does not start with Package:\n%s", rec)
	}
	p.SourceVersion, p.Homepage = "2.36-9", ""
	rec = string(statusRecord(p))
	if !strings.Contains(rec, "Source: glibc (2.36-9)\n") || strings.Contains(rec, "Homepage") {
		t.Errorf("a binNMU's record should name its source version and no empty Homepage:\n%s", rec)
	}
	p.Source, p.SourceVersion = "libc6", p.Version
	if rec = string(statusRecord(p)); strings.Contains(rec, "Source:") {
		t.Errorf("a package that is its own source at the same version needs no Source:\n%s", rec)
	}
}

func TestParseOSRelease(t *testing.T) {
	good := "PRETTY_NAME=\"Debian GNU/Linux 12 (bookworm)\"\n# a comment\n\nID=debian\nVERSION_ID='12'\nHOME_URL=\"https://www.debian.org/\"\n"
	kv, err := parseOSRelease(good, "os-release")
	if err != nil {
		t.Fatal(err)
	}
	if kv["ID"] != "debian" || kv["VERSION_ID"] != "12" || kv["PRETTY_NAME"] != "Debian GNU/Linux 12 (bookworm)" {
		t.Errorf("parseOSRelease = %v", kv)
	}
	for _, tt := range []struct{ name, data, wantErr string }{
		{"no equals", "ID debian\n", "os-release:1: "},
		{"open quote", "ID=debian\nNAME=\"Debian\n", "os-release:2: NAME's value has no closing quote"},
		{"bare space", "NAME=Debian GNU\n", "needs quotes"},
		{"empty key", "=debian\n", "os-release:1:"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := parseOSRelease(tt.data, "os-release"); err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("parseOSRelease = %v, want an error containing %q", err, tt.wantErr)
			}
		})
	}
}

func FuzzParseOSRelease(f *testing.F) {
	f.Add("ID=debian\nVERSION_ID=\"12\"\n")
	f.Add("A='b c'\n# x\n")
	f.Fuzz(func(t *testing.T, data string) {
		kv, err := parseOSRelease(data, "f")
		if err != nil {
			return
		}
		for k := range kv {
			if k == "" || strings.ContainsAny(k, "\n=") {
				t.Fatalf("key %q from %q", k, data)
			}
		}
	})
}
