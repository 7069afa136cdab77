// Command sbom writes an SPDX 2.3 JSON software bill of materials for Go binaries, from the
// module information the Go linker stamps into each (what "go version -m" prints): the main
// module, every module linked in with its version and checksum, and the build settings. It runs
// offline, so "make release" needs no SBOM tool.
//
//	go run ./scripts/sbom -name bursar-v1.2.3-linux-amd64 bin/arbiter bin/collector bin/report > sbom.spdx.json
package main

import (
	"debug/buildinfo"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"time"
)

func main() {
	name := flag.String("name", "bursar", "the document's name, e.g. the archive it describes")
	created := flag.String("created", "", "creation time, RFC 3339 (default now; set it for a reproducible document)")
	flag.Parse()
	if err := run(os.Stdout, *name, *created, flag.Args()); err != nil {
		fmt.Fprintln(os.Stderr, "sbom:", err)
		os.Exit(1)
	}
}

func run(w io.Writer, name, created string, binaries []string) error {
	if len(binaries) == 0 {
		return fmt.Errorf("name the binaries to describe, e.g. sbom bin/arbiter bin/collector bin/report")
	}
	at := time.Now().UTC()
	if created != "" {
		t, err := time.Parse(time.RFC3339, created)
		if err != nil {
			return fmt.Errorf("-created %q: want RFC 3339, e.g. 2026-12-01T00:00:00Z", created)
		}
		at = t.UTC()
	}
	var infos []Binary
	for _, path := range binaries {
		bi, err := buildinfo.ReadFile(path)
		if err != nil {
			return fmt.Errorf("reading the module information of %s: %w (is it a Go binary?)", path, err)
		}
		infos = append(infos, Binary{Path: path, Info: bi})
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(Document(name, at, infos))
}
