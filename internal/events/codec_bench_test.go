package events

import (
	"encoding/json"
	"testing"
	"time"
)

// BenchmarkDecode measures Decode on what Encode writes, for each type, beside the general path
// (the two-pass decode through encoding/json that Decode was before) in the same run.
func BenchmarkDecode(b *testing.B) {
	for _, e := range samples() {
		data, err := Encode(e)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(string(e.EventType()), func(b *testing.B) {
			b.ReportAllocs()
			var total time.Duration
			for b.Loop() {
				start := time.Now()
				if _, err := Decode(data); err != nil {
					b.Fatal(err)
				}
				total += time.Since(start)
			}
			base := perOp(b.N, func() {
				if _, err := decodeGeneral(data); err != nil {
					b.Fatal(err)
				}
			})
			ours := float64(total.Nanoseconds()) / float64(b.N)
			b.ReportMetric(base, "general_ns/event")
			b.ReportMetric(ours, "decode_ns/event")
			b.ReportMetric(base/ours, "speedup")
		})
	}
}

// BenchmarkEncode measures Encode beside Validate plus json.Marshal, what it was, in the same run.
func BenchmarkEncode(b *testing.B) {
	for _, e := range samples() {
		b.Run(string(e.EventType()), func(b *testing.B) {
			b.ReportAllocs()
			var total time.Duration
			for b.Loop() {
				start := time.Now()
				if _, err := Encode(e); err != nil {
					b.Fatal(err)
				}
				total += time.Since(start)
			}
			base := perOp(b.N, func() {
				if err := Validate(e); err != nil {
					b.Fatal(err)
				}
				if _, err := json.Marshal(e); err != nil {
					b.Fatal(err)
				}
			})
			ours := float64(total.Nanoseconds()) / float64(b.N)
			b.ReportMetric(base, "marshal_ns/event")
			b.ReportMetric(ours, "encode_ns/event")
			b.ReportMetric(base/ours, "speedup")
		})
	}
}

// perOp runs f n times and returns the mean nanoseconds per run.
func perOp(n int, f func()) float64 {
	start := time.Now()
	for range n {
		f()
	}
	return float64(time.Since(start).Nanoseconds()) / float64(n)
}
