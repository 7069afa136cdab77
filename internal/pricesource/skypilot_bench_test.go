package pricesource

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// skyBenchTypes are real AWS GPU instance types; each generated row is one of them in its own
// zone, so that every row is a distinct offer, as in a real catalog.
var skyBenchTypes = []struct {
	name, accel string
	count       int
	price       float64
}{
	{"p5.48xlarge", "H100", 8, 98.32}, {"p4d.24xlarge", "A100", 8, 32.77}, {"p4de.24xlarge", "A100-80GB", 8, 40.96},
	{"g5.xlarge", "A10G", 1, 1.006}, {"g6.xlarge", "L4", 1, 0.8048}, {"g4dn.xlarge", "T4", 1, 0.526},
	{"p3.2xlarge", "V100", 1, 3.06}, {"g6e.xlarge", "L40S", 1, 1.861},
}

// writeSkyRows writes a SkyPilot catalog of about size bytes to w, rows shaped like the real
// file's (GpuInfo column included), and stops early when w fails.
func writeSkyRows(w io.Writer, size int64) error {
	bw := bufio.NewWriterSize(w, 1<<16)
	n, _ := fmt.Fprint(bw, "InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,Price,SpotPrice,Region,AvailabilityZone,GpuInfo\n")
	written := int64(n)
	for i := 0; written < size; i++ {
		t := skyBenchTypes[i%len(skyBenchTypes)]
		n, err := fmt.Fprintf(bw, "%s,%s,%d.0,8,32,%.4f,%.4f,us-east-%d,use%d-az%d,"+
			"\"{'Gpus': [{'Name': '%s', 'Manufacturer': 'NVIDIA', 'Count': %d.0, 'MemoryInfo': {'SizeInMiB': 81920}}]}\"\n",
			t.name, t.accel, t.count, t.price, t.price/3, i/len(skyBenchTypes)%20, i/len(skyBenchTypes), i%7, t.accel, t.count)
		if err != nil {
			return err
		}
		written += int64(n)
	}
	return bw.Flush()
}

// peakHeap samples the live heap until stop is called, and returns the highest sample above
// the heap at its start.
func peakHeap() (stop func() uint64) {
	runtime.GC()
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	read := func() uint64 { metrics.Read(sample); return sample[0].Value.Uint64() }
	base := read()
	var peak atomic.Uint64
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			if v := read(); v > peak.Load() {
				peak.Store(v)
			}
			select {
			case <-done:
				return
			case <-tick.C:
			}
		}
	}()
	return func() uint64 {
		close(done)
		<-finished
		if v := read(); v > peak.Load() {
			peak.Store(v)
		}
		if peak.Load() < base {
			return 0
		}
		return peak.Load() - base
	}
}

// BenchmarkSkyPilotMemory measures the peak live heap of a SkyPilot fetch (peak-heap-MiB) and
// what it allocated (alloc-MiB/op). Before streaming and the cap, a 200 MB catalog peaked at
// 2.9 GB; now a 200 MB file is refused before it is read, a 200 MB pipe is cut off at the cap
// and a file under the cap costs its offers, not its rows.
func BenchmarkSkyPilotMemory(b *testing.B) {
	dir := b.TempDir()
	const over, under = 200 << 20, 48 << 20
	big, small := filepath.Join(dir, "aws_vms.csv"), filepath.Join(dir, "small", "aws_vms.csv")
	for path, size := range map[string]int64{big: over, small: under} {
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			b.Fatal(err)
		}
		f, err := os.Create(path)
		if err != nil {
			b.Fatal(err)
		}
		if err := writeSkyRows(f, size); err != nil {
			b.Fatal(err)
		}
		f.Close()
	}
	fifo := filepath.Join(dir, "pipe", "aws_vms.csv")
	_ = os.MkdirAll(filepath.Dir(fifo), 0o700)
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		b.Fatal(err)
	}
	tests := []struct {
		name    string
		path    string
		feed    bool // write 200 MB into the pipe while it is read
		wantErr Kind
	}{
		{name: "200MB file over the cap", path: big, wantErr: KindTooLarge},
		{name: "200MB pipe over the cap", path: fifo, feed: true, wantErr: KindTooLarge},
		{name: "48MB file under the cap", path: small},
	}
	for _, tt := range tests {
		b.Run(tt.name, func(b *testing.B) {
			var peak, alloc uint64
			for range b.N {
				if tt.feed {
					go feedPipe(tt.path, over)
				}
				var before, after runtime.MemStats
				runtime.ReadMemStats(&before)
				stop := peakHeap()
				cat, err := (&SkyPilotFiles{Paths: []string{tt.path}}).Fetch(context.Background(), at)
				peak = max(peak, stop())
				runtime.ReadMemStats(&after)
				alloc += after.TotalAlloc - before.TotalAlloc
				if got := KindOf(err); (tt.wantErr == "") != (err == nil) || (err != nil && got != tt.wantErr) {
					b.Fatalf("err = %v (kind %s), want kind %q", err, got, tt.wantErr)
				}
				if err == nil {
					b.ReportMetric(float64(len(cat.Offers)), "offers")
				}
			}
			b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
			b.ReportMetric(float64(alloc)/float64(b.N)/(1<<20), "alloc-MiB/op")
		})
	}
}

// feedPipe writes size bytes of catalog into a named pipe until the reader hangs up.
func feedPipe(path string, size int64) {
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return
	}
	defer f.Close()
	if err := writeSkyRows(f, size); err != nil && !errors.Is(err, syscall.EPIPE) {
		return
	}
}
