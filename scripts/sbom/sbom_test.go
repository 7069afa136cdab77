package main

import (
	"bytes"
	"encoding/json"
	"os"
	"runtime/debug"
	"strings"
	"testing"
	"time"
)

func TestDocumentDescribesEachBinaryAndItsModulesOnce(t *testing.T) {
	shared := &debug.Module{Path: "github.com/nats-io/nats.go", Version: "v1.55.0", Sum: "h1:abc="}
	info := func(main string, deps ...*debug.Module) *debug.BuildInfo {
		return &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: "github.com/bursar-dev/bursar", Version: main},
			Deps: deps, Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "0cf6c41"}}}
	}
	replaced := &debug.Module{Path: "example.com/old", Version: "v1.0.0", Replace: &debug.Module{Path: "example.com/new", Version: "v1.1.0"}}
	at := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	bins := []Binary{{"bin/arbiter", info("v1.2.3", shared, replaced)}, {"bin/report", info("v1.2.3", shared)}}
	doc := Document("bursar-v1.2.3-linux-amd64", at, bins)
	if doc.Version != "SPDX-2.3" || doc.CreationInfo.Created != "2026-12-01T00:00:00Z" {
		t.Errorf("header = %s %s", doc.Version, doc.CreationInfo.Created)
	}
	if doc.Packages[0].Name != "arbiter" || doc.Packages[1].Name != "report" {
		t.Errorf("packages start %s, %s; want the binaries first", doc.Packages[0].Name, doc.Packages[1].Name)
	}
	names := map[string]int{}
	for _, p := range doc.Packages {
		names[p.Name]++
	}
	for name, want := range map[string]int{"arbiter": 1, "report": 1, "github.com/bursar-dev/bursar": 1,
		"github.com/nats-io/nats.go": 1, "example.com/new": 1, "example.com/old": 0} {
		if names[name] != want {
			t.Errorf("package %s appears %d times, want %d", name, names[name], want)
		}
	}
	contains := 0
	for _, r := range doc.Relationships {
		if r.Type == "CONTAINS" {
			contains++
		}
	}
	if contains != 5 { // arbiter: main, nats, new; report: main, nats
		t.Errorf("%d CONTAINS relationships, want 5", contains)
	}
	if again := Document("bursar-v1.2.3-linux-amd64", at, bins); again.Namespace != doc.Namespace {
		t.Error("the same binaries gave another namespace")
	}
}

// TestRunReadsARealBinary reads this test binary's own module information, as it reads a
// release binary's.
func TestRunReadsARealBinary(t *testing.T) {
	var b bytes.Buffer
	if err := run(&b, "self", "2026-12-01T00:00:00Z", []string{os.Args[0]}); err != nil {
		t.Fatal(err)
	}
	var doc SPDX
	if err := json.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Packages) < 2 || !strings.HasPrefix(doc.Packages[0].Comment, "built with go") {
		t.Errorf("document = %+v", doc.Packages)
	}
}

func TestRunRefusesWhatIsNotAGoBinary(t *testing.T) {
	notGo := t.TempDir() + "/script.sh"
	if err := os.WriteFile(notGo, []byte("#!/bin/sh\necho hi\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name, created string
		args          []string
		want          string
	}{
		{"no binaries", "", nil, "name the binaries"},
		{"not a Go binary", "", []string{notGo}, "is it a Go binary?"},
		{"missing file", "", []string{notGo + ".gone"}, "script.sh.gone"},
		{"bad time", "yesterday", []string{os.Args[0]}, "want RFC 3339"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := run(&bytes.Buffer{}, "x", tt.created, tt.args)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("run = %v, want an error containing %q", err, tt.want)
			}
		})
	}
}
