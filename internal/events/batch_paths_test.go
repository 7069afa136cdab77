package events

import (
	"fmt"
	"reflect"
	"testing"
	"time"
)

// plainBatch is a batch as Batches writes it: n GPU samples of one node.
func plainBatch(t testing.TB, n int) []byte {
	t.Helper()
	at := time.Date(2026, 11, 30, 6, 0, 0, 0, time.UTC)
	evs := make([]Event, n)
	for i := range evs {
		evs[i] = &GPUSample{Meta: Meta{At: at}, Location: "aws-use1", Node: "node-1", UUID: fmt.Sprintf("GPU-%d", i),
			Index: i, Model: "H100-80GB", UtilizationPct: 50, MemoryUsedBytes: 1 << 30, MemoryTotalBytes: 80 << 30,
			PowerW: 300, TemperatureC: 50}
	}
	msgs, err := Batches(evs, BatchLimits{})
	if err != nil || len(msgs) != 1 {
		t.Fatalf("Batches: %v, %d messages", err, len(msgs))
	}
	return msgs[0].Data
}

func TestDecodePlainBatchReadsWhatBatchesWrites(t *testing.T) {
	data := plainBatch(t, 4)
	plain := decodePlainBatch(data)
	general, err := decodeBatch(data)
	if plain == nil || err != nil || !reflect.DeepEqual(plain, general) {
		t.Fatalf("one pass read %v, the general path %v (%v)", plain, general, err)
	}
}

// FuzzBatchPaths holds the one-pass batch reader to the general one: whatever it accepts, the
// general path accepts and reads the same.
func FuzzBatchPaths(f *testing.F) {
	f.Add(plainBatch(f, 2))
	f.Add(plainBatch(f, 5))
	f.Add([]byte(`{"type":"batch","version":"1.0","id":"x","event_type":"gpu.sample","events":[{"a":"}"}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		plain := decodePlainBatch(data)
		if plain == nil {
			return
		}
		general, err := decodeBatch(data)
		if err != nil {
			t.Fatalf("one pass accepted what the general path refuses (%v): %q", err, data)
		}
		if !reflect.DeepEqual(plain, general) {
			t.Fatalf("one pass read %v, the general path %v, from %q", plain, general, data)
		}
	})
}

func BenchmarkDecodeAllBatch(b *testing.B) {
	data := plainBatch(b, 128)
	for _, p := range []struct {
		name   string
		decode func([]byte) ([]Event, error)
	}{{"DecodeAll", DecodeAll}, {"general", decodeBatch}} {
		b.Run(p.name, func(b *testing.B) {
			for b.Loop() {
				if _, err := p.decode(data); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*128), "ns/event")
		})
	}
}
