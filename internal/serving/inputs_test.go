package serving

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const demandHead = "minute,requests,input_tokens,output_tokens\n"

func TestParseDemand(t *testing.T) {
	d, err := ParseDemand("d.csv", strings.NewReader(demandHead+"0,1,10,600\n1,2,20,120.5\n"))
	if err != nil {
		t.Fatal(err)
	}
	if len(d.TokensPerS) != 2 || d.TokensPerS[0] != 10 || d.TokensPerS[1] != 120.5/60 {
		t.Errorf("tokens/s = %v, want [10 %v]", d.TokensPerS, 120.5/60)
	}
	if d.Peak() != 10 {
		t.Errorf("peak = %v, want 10", d.Peak())
	}
	if want := (Minute{Requests: 2, Input: 20, Output: 120.5}); d.First != 0 || len(d.Minutes) != 2 || d.Minutes[1] != want {
		t.Errorf("first %d, minutes %+v: want from 0, the second %+v", d.First, d.Minutes, want)
	}
	// A slice of a longer trace keeps its minute numbers.
	if d, err := ParseDemand("d.csv", strings.NewReader(demandHead+"360,1,10,600\n361,2,20,120.5\n")); err != nil || d.First != 360 {
		t.Errorf("a slice from minute 360: first %v, err %v", d, err)
	}
}

func TestParseDemandRefusesMalformed(t *testing.T) {
	for _, tc := range []struct{ name, in, wantIn string }{
		{"empty", "", "d.csv:1"},
		{"no rows", demandHead, "no minutes"},
		{"missing column", "minute,requests,input_tokens\n0,1,2\n", `lacks column "output_tokens"`},
		{"short row", demandHead + "0,1,2\n", "d.csv:2"},
		{"negative tokens", demandHead + "0,1,2,-3\n", "d.csv:2: malformed input: output_tokens"},
		{"NaN", demandHead + "0,1,2,NaN\n", "output_tokens"},
		{"gap", demandHead + "0,1,2,3\n2,1,2,3\n", "d.csv:3: malformed input: minute 2 follows minute 0"},
		{"backwards", demandHead + "5,1,2,3\n4,1,2,3\n", "d.csv:3: malformed input: minute 4 follows minute 5"},
		{"text minute", demandHead + "x,1,2,3\n", `minute = "x"`},
		{"bad quote", demandHead + "0,\"1,2,3\n", "d.csv:"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseDemand("d.csv", strings.NewReader(tc.in))
			if err == nil || !strings.Contains(err.Error(), tc.wantIn) {
				t.Fatalf("err = %v, want one containing %q", err, tc.wantIn)
			}
		})
	}
}

const profileHead = "model,hardware,tensor_parallel,prompt_size,output_tokens,tpot_slo_ms,best_batch_size,decode_tokens_per_s_per_replica\n"

func TestParseProfile(t *testing.T) {
	in := profileHead +
		"llama2-70b,a100-80gb,8,512,128,40,,\n" + // no batch meets 40 ms
		"llama2-70b,a100-80gb,8,512,128,50,8,172.2\n" +
		"llama2-70b,h100-80gb,8,512,128,50,32,828.6\n" +
		"llama2-70b,h100-80gb-pcap,8,512,128,50,32,828.6\n" + // power-capped: not a type to buy
		"llama2-70b,h100-80gb,8,1024,128,50,1,50\n" + // another size
		"bloom-176b,h100-80gb,8,512,128,50,1,21\n"
	p, err := ParseProfile("p.csv", strings.NewReader(in), DefaultProfileQuery())
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]Throughput{"A100-80GB": {172.2, 8}, "H100-80GB": {828.6, 8}}
	if len(p.Types) != 2 || p.Types["A100-80GB"] != want["A100-80GB"] || p.Types["H100-80GB"] != want["H100-80GB"] {
		t.Errorf("types = %v, want %v", p.Types, want)
	}
	if p.Fastest() != 828.6 {
		t.Errorf("fastest = %v", p.Fastest())
	}
	q := DefaultProfileQuery()
	q.TPOTms = 40
	if _, err := ParseProfile("p.csv", strings.NewReader(in), q); err == nil {
		t.Error("TPOT 40 ms: the only row has no rate; want an error")
	}
}

func TestParseProfileRefusesMalformed(t *testing.T) {
	for _, tc := range []struct{ name, in, wantIn string }{
		{"missing column", "model,hardware\nx,y\n", "lacks column"},
		{"text TP", profileHead + "llama2-70b,h100-80gb,eight,512,128,50,1,5\n", "p.csv:2: malformed input: tensor_parallel"},
		{"negative rate", profileHead + "llama2-70b,h100-80gb,8,512,128,50,1,-5\n", "p.csv:2"},
		{"zero rate", profileHead + "llama2-70b,h100-80gb,8,512,128,50,1,0\n", "serves nothing"},
		{"duplicate", profileHead + "llama2-70b,h100-80gb,8,512,128,50,1,5\nllama2-70b,h100-80gb,8,512,128,50,1,6\n", "p.csv:3"},
		{"nothing matches", profileHead + "bloom-176b,h100-80gb,8,512,128,50,1,5\n", "no row with a rate"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseProfile("p.csv", strings.NewReader(tc.in), DefaultProfileQuery())
			if err == nil || !strings.Contains(err.Error(), tc.wantIn) {
				t.Fatalf("err = %v, want one containing %q", err, tc.wantIn)
			}
		})
	}
}

const probeHead = "run_id,scheduled_at,status,zone,instances_requested,instances_created,capacity_exhausted_detected\n"

func TestParseProbes(t *testing.T) {
	in := probeHead + "r1,x,success,za,16,16,0\nr1,x,success,zb,16,7,9\nr2,x,success,za,16,8,8\nr2,x,success,zb,16,0,16\n"
	c, err := ParseProbes("p.csv", strings.NewReader(in), "H100-80GB")
	if err != nil {
		t.Fatal(err)
	}
	if len(c.GPUs) != 20 || strings.Join(c.Zones, ",") != "za,zb" {
		t.Fatalf("got %d minutes over %v, want 20 over [za zb]", len(c.GPUs), c.Zones)
	}
	// A replica of 8 GPUs takes 8 single-GPU units: 16 -> 2, 7 -> 0, 8 -> 1.
	for _, tc := range []struct{ t, z, want int }{{0, 0, 2}, {9, 1, 0}, {10, 0, 1}, {19, 1, 0}} {
		if got := c.Replicas(tc.t, tc.z, 8); got != tc.want {
			t.Errorf("minute %d zone %d: %d replicas, want %d", tc.t, tc.z, got, tc.want)
		}
	}
}

func TestParseProbesRefusesMalformed(t *testing.T) {
	for _, tc := range []struct{ name, in, wantIn string }{
		{"no rows", probeHead, "no probe rows"},
		{"missing column", "run_id,zone\nr1,za\n", `lacks column "instances_created"`},
		{"negative", probeHead + "r1,x,s,za,16,-1,0\n", "p.csv:2: malformed input: instances_created"},
		{"zone twice", probeHead + "r1,x,s,za,16,1,0\nr1,x,s,za,16,1,0\n", "p.csv:3: malformed input: zone za twice"},
		{"zone missing", probeHead + "r1,x,s,za,16,1,0\nr1,x,s,zb,16,1,0\nr2,x,s,za,16,1,0\n", "p.csv:5"},
		{"zone order", probeHead + "r1,x,s,za,16,1,0\nr1,x,s,zb,16,1,0\nr2,x,s,zb,16,1,0\n", "p.csv:4"},
		{"empty zone", probeHead + "r1,x,s,,16,1,0\n", "zone is empty"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseProbes("p.csv", strings.NewReader(tc.in), "H100-80GB")
			if err == nil || !strings.Contains(err.Error(), tc.wantIn) {
				t.Fatalf("err = %v, want one containing %q", err, tc.wantIn)
			}
		})
	}
}

const catalogHead = "InstanceType,vCPUs,MemoryGiB,AcceleratorName,AcceleratorCount,GpuInfo,Region,AvailabilityZone,Price,SpotPrice\n"

// TestOnDemandPrice: a GCP node is the accelerator row plus its host rows, looked up in the zone
// and else in the zone's region (the catalog keeps one zone for regions priced alike).
func TestOnDemandPrice(t *testing.T) {
	in := catalogHead +
		"a3-highgpu-1g,26,234,,,,us-central1,us-central1-a,1.5,0.3\n" +
		",,,H100,8,,us-central1,us-central1-b,30,18\n" +
		",,,H100,8,,us-east4,us-east4-a,70,14\n" +
		"a2-ultragpu-8g,96,1360,,,,us-east4,us-east4-c,9,3\n" +
		",,,A100-80GB,8,,us-east4,us-east4-c,15,\n"
	rows, err := ParseCatalog("c.csv", strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		typ, zone string
		want      float64
		ok        bool
	}{
		{"H100-80GB", "us-central1-b", 30 + 8*1.5, true}, // host from us-central1-a
		{"H100-80GB", "us-east4-a", 0, false},            // no a3 host in us-east4
		{"A100-80GB", "us-east4-c", 24, true},
		{"A100-80GB", "us-central1-a", 0, false},
	} {
		got, ok := onDemandPrice(rows, gcpShapes[tc.typ], tc.zone)
		if ok != tc.ok || got != tc.want {
			t.Errorf("%s in %s = %v, %v; want %v, %v", tc.typ, tc.zone, got, ok, tc.want, tc.ok)
		}
	}
	if got := cheapestPerRegion(rows, gcpShapes["H100-80GB"], nil); strings.Join(got, ",") != "us-central1-b" {
		t.Errorf("H100 on-demand zones = %v, want [us-central1-b]", got)
	}
}

func TestParseCatalogRefusesMalformed(t *testing.T) {
	for _, tc := range []struct{ name, in, wantIn string }{
		{"missing column", "InstanceType,Price\nx,1\n", "lacks column"},
		{"neither", catalogHead + ",,,,,,r,z,1,\n", "c.csv:2: malformed input: neither"},
		{"no zone", catalogHead + "a,1,1,,,,r,,1,\n", "AvailabilityZone is empty"},
		{"bad price", catalogHead + "a,1,1,,,,r,z,-1,\n", "c.csv:2: malformed input: Price"},
		{"bad count", catalogHead + ",,,H100,8.5,,r,z,1,\n", "AcceleratorCount"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseCatalog("c.csv", strings.NewReader(tc.in))
			if err == nil || !strings.Contains(err.Error(), tc.wantIn) {
				t.Fatalf("err = %v, want one containing %q", err, tc.wantIn)
			}
		})
	}
}

func TestParseSpotQuote(t *testing.T) {
	q, err := ParseSpotQuote("q.json", []byte(`{"region":"us-east4","machine_type":"a3-highgpu-8g","price":14.85,"price_unit":"h","components":[]}`))
	if err != nil || q != (SpotQuote{"us-east4", "a3-highgpu-8g", 14.85}) {
		t.Fatalf("got %+v, %v", q, err)
	}
	for _, in := range []string{``, `[]`, `{"region":"r","machine_type":"m"}`, `{"region":"r","machine_type":"m","price":-1}`,
		`{"machine_type":"m","price":1}`, `{"region":"r","machine_type":"m","price":1,"price_unit":"mo"}`, `{"region":"r","machine_type":"m","price":1} {}`} {
		if _, err := ParseSpotQuote("q.json", []byte(in)); !errors.Is(err, ErrMalformedInput) {
			t.Errorf("%s: err = %v, want ErrMalformedInput", in, err)
		}
	}
}

// sharedData is ../shared/data from this package, or a skip where the workspace lacks it.
func sharedData(tb testing.TB) string {
	dir := filepath.Join("..", "..", DefaultData)
	if _, err := os.Stat(filepath.Join(dir, "serving")); err != nil {
		tb.Skipf("the serving inputs live in %s (../shared/data/serving beside the repository): %v", dir, err)
	}
	return dir
}

// TestLoadDefaults reads the benchmark's default inputs: the Splitwise profile's two types, one
// spot source per probed zone, on-demand in the probed regions, and the 16-replica peak scale.
func TestLoadDefaults(t *testing.T) {
	in, err := Load(Paths{Data: sharedData(t)})
	if err != nil {
		t.Fatal(err)
	}
	spot, od := 0, 0
	for _, s := range in.Sources {
		if s.Spot {
			spot++
		} else {
			od++
		}
	}
	if spot != len(in.Capacity.Zones) || od == 0 {
		t.Errorf("%d spot sources for %d zones, %d on-demand", spot, len(in.Capacity.Zones), od)
	}
	if got := in.Demand.Peak() * in.Scale / in.Profile.Fastest(); got < PeakReplicas-1e-9 || got > PeakReplicas+1e-9 {
		t.Errorf("peak needs %v fastest replicas, want %d", got, PeakReplicas)
	}
	w := in.Window(0, 30, 5)
	for i, s := range in.Sources {
		if s.Spot == (w.Capacity[0][i] == Unlimited) {
			t.Errorf("source %d (%s %s spot=%v): capacity %d", i, s.Type, s.Zone, s.Spot, w.Capacity[0][i])
		}
	}
	t.Logf("%s\n%s", in.Profile.Describe(), DescribeSources(in.Sources))
}
