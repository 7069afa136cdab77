// Command convert turns the MIT-licensed Bamboo spot traces (NSDI'23, github.com/uclasystem/bamboo)
// into the per-zone capacity traces the demo replays, in the replay's zone format
// ({"metadata":{"gap_seconds":60},"data":[...]}), one file per fleet location of
// examples/demo/bursar.yaml. Run it from the repository root:
//
//	go run ./examples/demo/convert -from ../shared/data/traces/bamboo/traces -out examples/demo/trace
//
// Each source counted the instances a training cluster held in one zone; the demo fleet is much
// smaller, so each count is scaled to the fleet's share of the zone (demo.Scale): at the trace's
// peak the fleet may hold -share instances there.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/bursar-dev/bursar/internal/demo"
)

// zones maps each source file to the fleet location whose spot capacity it becomes.
var zones = []struct {
	source, location string
	parse            func(io.Reader, string) ([]demo.Step, error)
}{
	{"p3-trace.csv", "aws-use1a", demo.ParseEventTrace},
	{"g4dn-trace.csv", "aws-usw2b", demo.ParseEventTrace},
	{"gcloud/a100x1-east1b.txt", "gcp-use1b", demo.ParseCountTrace},
	{"gcloud/v100x1-east1c.txt", "gcp-use1c", demo.ParseCountTrace},
}

func main() {
	from := flag.String("from", "../shared/data/traces/bamboo/traces", "Bamboo's traces folder")
	out := flag.String("out", "examples/demo/trace", "where to write one <location>.json per zone")
	share := flag.Int("share", 4, "instances the fleet may hold in a zone at the trace's peak")
	gap := flag.Duration("gap", time.Minute, "tick of the written traces")
	flag.Parse()
	if err := run(*from, *out, *share, *gap); err != nil {
		fmt.Fprintln(os.Stderr, "convert:", err)
		os.Exit(1)
	}
}

func run(from, out string, share int, gap time.Duration) error {
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	for _, z := range zones {
		f, err := os.Open(filepath.Join(from, z.source))
		if err != nil {
			return err
		}
		steps, err := z.parse(f, z.source)
		f.Close()
		if err != nil {
			return err
		}
		counts := demo.Scale(demo.Sample(steps, gap), share)
		data, err := demo.ZoneJSON(counts, gap)
		if err != nil {
			return err
		}
		dst := filepath.Join(out, z.location+".json")
		if err := os.WriteFile(dst, data, 0o644); err != nil {
			return err
		}
		fmt.Printf("%s -> %s: %d ticks of %v\n", z.source, dst, len(counts), gap)
	}
	return nil
}
