package main

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"slices"
	"strings"
	"time"
)

// Binary is one Go binary and the module information read from it.
type Binary struct {
	Path string
	Info *debug.BuildInfo
}

// SPDX is the part of an SPDX 2.3 JSON document this program writes.
type SPDX struct {
	Version       string         `json:"spdxVersion"`
	DataLicense   string         `json:"dataLicense"`
	ID            string         `json:"SPDXID"`
	Name          string         `json:"name"`
	Namespace     string         `json:"documentNamespace"`
	CreationInfo  CreationInfo   `json:"creationInfo"`
	Packages      []Package      `json:"packages"`
	Relationships []Relationship `json:"relationships"`
}

// CreationInfo says when and by what the document was made.
type CreationInfo struct {
	Created  string   `json:"created"`
	Creators []string `json:"creators"`
}

// Package is a binary or a Go module.
type Package struct {
	ID               string        `json:"SPDXID"`
	Name             string        `json:"name"`
	Version          string        `json:"versionInfo,omitempty"`
	Download         string        `json:"downloadLocation"`
	FilesAnalyzed    bool          `json:"filesAnalyzed"`
	Checksums        []Checksum    `json:"checksums,omitempty"`
	ExternalRefs     []ExternalRef `json:"externalRefs,omitempty"`
	Comment          string        `json:"comment,omitempty"`
	PrimaryPurpose   string        `json:"primaryPackagePurpose,omitempty"`
	LicenseConcluded string        `json:"licenseConcluded"`
	LicenseDeclared  string        `json:"licenseDeclared"`
	CopyrightText    string        `json:"copyrightText"`
}

// Checksum is a digest of a package.
type Checksum struct {
	Algorithm string `json:"algorithm"`
	Value     string `json:"checksumValue"`
}

// ExternalRef names a package in another scheme: a purl for a Go module.
type ExternalRef struct {
	Category string `json:"referenceCategory"`
	Type     string `json:"referenceType"`
	Locator  string `json:"referenceLocator"`
}

// Relationship links two elements of the document.
type Relationship struct {
	From string `json:"spdxElementId"`
	Type string `json:"relationshipType"`
	To   string `json:"relatedSpdxElement"`
}

// Document describes the binaries: each is a package that CONTAINS the modules linked into
// it; a module linked into several binaries appears once. The namespace is derived from the
// content, so the same binaries give the same document.
func Document(name string, created time.Time, bins []Binary) SPDX {
	doc := SPDX{Version: "SPDX-2.3", DataLicense: "CC0-1.0", ID: "SPDXRef-DOCUMENT", Name: name,
		CreationInfo: CreationInfo{Created: created.UTC().Format(time.RFC3339), Creators: []string{"Tool: bursar-sbom"}}}
	modules := map[string]Package{}
	h := sha256.New()
	for _, b := range bins {
		bin := binaryPackage(b)
		doc.Packages = append(doc.Packages, bin)
		doc.Relationships = append(doc.Relationships, Relationship{"SPDXRef-DOCUMENT", "DESCRIBES", bin.ID})
		for _, m := range append([]*debug.Module{&b.Info.Main}, b.Info.Deps...) {
			m = resolved(m)
			p := modulePackage(m)
			modules[p.ID] = p
			doc.Relationships = append(doc.Relationships, Relationship{bin.ID, "CONTAINS", p.ID})
			fmt.Fprintln(h, bin.Name, m.Path, m.Version, m.Sum)
		}
	}
	for _, id := range slices.Sorted(maps.Keys(modules)) { // binaries first, then modules by id
		doc.Packages = append(doc.Packages, modules[id])
	}
	doc.Namespace = "https://github.com/bursar-dev/bursar/spdx/" + name + "-" + hex.EncodeToString(h.Sum(nil))[:16]
	return doc
}

// resolved is the module actually linked: the replacement when there is one.
func resolved(m *debug.Module) *debug.Module {
	if m.Replace != nil {
		return m.Replace
	}
	return m
}

func binaryPackage(b Binary) Package {
	var settings []string
	for _, s := range b.Info.Settings {
		settings = append(settings, s.Key+"="+s.Value)
	}
	name := filepath.Base(b.Path)
	return Package{ID: "SPDXRef-Binary-" + spdxID(name), Name: name, Version: b.Info.Main.Version,
		Download: "NOASSERTION", PrimaryPurpose: "APPLICATION", LicenseConcluded: "NOASSERTION",
		LicenseDeclared: "NOASSERTION", CopyrightText: "NOASSERTION",
		Comment: "built with " + b.Info.GoVersion + "; " + strings.Join(settings, " ")}
}

func modulePackage(m *debug.Module) Package {
	p := Package{ID: "SPDXRef-Module-" + spdxID(m.Path+"@"+m.Version), Name: m.Path, Version: m.Version,
		Download: "NOASSERTION", PrimaryPurpose: "LIBRARY", LicenseConcluded: "NOASSERTION",
		LicenseDeclared: "NOASSERTION", CopyrightText: "NOASSERTION",
		ExternalRefs: []ExternalRef{{"PACKAGE-MANAGER", "purl", "pkg:golang/" + m.Path + "@" + m.Version}}}
	if m.Version != "" && m.Version != "(devel)" {
		p.Download = "https://proxy.golang.org/" + strings.ToLower(m.Path) + "/@v/" + m.Version + ".zip"
	}
	if m.Sum != "" {
		p.Comment = "go.sum " + m.Sum
	}
	return p
}

var notID = regexp.MustCompile(`[^A-Za-z0-9.-]+`)

// spdxID makes s fit an SPDX identifier (letters, digits, '.', '-').
func spdxID(s string) string { return notID.ReplaceAllString(s, "-") }
