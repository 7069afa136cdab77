package pricing

import (
	"testing"
)

// TestTablesNameCanonicalGPUs catches a table entry that names a GPU missing from the canonical
// list, which lookup would otherwise turn into a silent "unknown".
func TestTablesNameCanonicalGPUs(t *testing.T) {
	tables := map[string]map[string]string{
		"gcp": gcpAccelerators, "lambda": lambdaModels, "runpod": runpodIDs, "skypilot": skypilotNames,
	}
	for accel := range gcpDescriptions {
		if _, ok := GCPAccelerator(gcpDescriptions[accel]); !ok {
			t.Errorf("gcp description %q maps to unknown accelerator %q", accel, gcpDescriptions[accel])
		}
	}
	for name, accel := range skypilotGCPAccelerators {
		if _, ok := GCPAccelerator(accel); !ok {
			t.Errorf("skypilot gcp %q maps to unknown accelerator %q", name, accel)
		}
	}
	for name, table := range tables {
		for k, v := range table {
			if _, ok := Canonical(v); !ok {
				t.Errorf("%s table: %q maps to non-canonical %q", name, k, v)
			}
		}
	}
	for k, v := range vastNames {
		if _, split := memorySplit[v]; split {
			continue
		}
		if _, ok := Canonical(v); !ok {
			t.Errorf("vast table: %q maps to non-canonical %q", k, v)
		}
	}
	for fam, f := range awsFamilies {
		if _, ok := Canonical(f.gpu); !ok {
			t.Errorf("aws family %s: non-canonical %q", fam, f.gpu)
		}
	}
	for sku, s := range azureSKUs {
		if _, ok := Canonical(s.gpu); !ok {
			t.Errorf("azure %s: non-canonical %q", sku, s.gpu)
		}
	}
	for m, s := range gcpMachines {
		if _, ok := GCPAccelerator(s.accel); !ok {
			t.Errorf("gcp machine %s: unknown accelerator %q", m, s.accel)
		}
	}
}

func TestAWSInstance(t *testing.T) {
	tests := []struct {
		name      string
		in        string
		wantGPU   string
		wantCount int
		wantOK    bool
	}{
		{name: "p5 H100", in: "p5.48xlarge", wantGPU: "H100-80GB", wantCount: 8, wantOK: true},
		{name: "p5en H200", in: "p5en.48xlarge", wantGPU: "H200-141GB", wantCount: 8, wantOK: true},
		{name: "p4d A100 40GB", in: "p4d.24xlarge", wantGPU: "A100-40GB", wantCount: 8, wantOK: true},
		{name: "p4de A100 80GB", in: "p4de.24xlarge", wantGPU: "A100-80GB", wantCount: 8, wantOK: true},
		{name: "g5 12xlarge has 4", in: "g5.12xlarge", wantGPU: "A10G", wantCount: 4, wantOK: true},
		{name: "g6 L4", in: "g6.xlarge", wantGPU: "L4", wantCount: 1, wantOK: true},
		{name: "g4dn metal", in: "g4dn.metal", wantGPU: "T4", wantCount: 8, wantOK: true},
		{name: "p3dn V100 32GB", in: "p3dn.24xlarge", wantGPU: "V100-32GB", wantCount: 8, wantOK: true},
		{name: "unknown size", in: "p5.2xlarge", wantOK: false},
		{name: "cpu type", in: "m5.large", wantOK: false},
		{name: "no dot", in: "p5", wantOK: false},
		{name: "ml asic is not a gpu", in: "inf1.xlarge", wantOK: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := AWSInstance(tt.in)
			if ok != tt.wantOK || got.GPU.Name != tt.wantGPU || got.Count != tt.wantCount {
				t.Fatalf("AWSInstance(%q) = %+v, %v; want %s x%d, %v", tt.in, got, ok, tt.wantGPU, tt.wantCount, tt.wantOK)
			}
		})
	}
	if what, ok := AWSNotGPU("dl1.24xlarge"); !ok || what == "" {
		t.Errorf("AWSNotGPU(dl1.24xlarge) = %q, %v; want an accelerator name", what, ok)
	}
	for _, it := range AWSInstanceTypes() {
		if _, ok := AWSInstance(it); !ok {
			t.Errorf("AWSInstanceTypes lists %s, which AWSInstance does not map", it)
		}
	}
}

func TestAzureSKU(t *testing.T) {
	tests := []struct {
		name      string
		in        string
		wantGPU   string
		wantCount int
		wantOK    bool
		wantMaybe bool
		wantFrac  bool
	}{
		{name: "A100 v4", in: "Standard_NC24ads_A100_v4", wantGPU: "A100-80GB", wantCount: 1, wantOK: true, wantMaybe: true},
		{name: "ND H100", in: "Standard_ND96isr_H100_v5", wantGPU: "H100-80GB", wantCount: 8, wantOK: true, wantMaybe: true},
		{name: "NC H100 NVL", in: "Standard_NC80adis_H100_v5", wantGPU: "H100-94GB", wantCount: 2, wantOK: true, wantMaybe: true},
		{name: "ND A100 40GB", in: "Standard_ND96asr_v4", wantGPU: "A100-40GB", wantCount: 8, wantOK: true, wantMaybe: true},
		{name: "V100", in: "Standard_NC6s_v3", wantGPU: "V100-16GB", wantCount: 1, wantOK: true, wantMaybe: true},
		{name: "fractional A10", in: "Standard_NV6ads_A10_v5", wantMaybe: true, wantFrac: true},
		{name: "unknown N series", in: "Standard_NC999_X1", wantMaybe: true},
		{name: "cpu size", in: "Standard_D14"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := AzureSKU(tt.in)
			if ok != tt.wantOK || got.GPU.Name != tt.wantGPU || got.Count != tt.wantCount {
				t.Fatalf("AzureSKU(%q) = %+v, %v; want %s x%d, %v", tt.in, got, ok, tt.wantGPU, tt.wantCount, tt.wantOK)
			}
			if m := AzureMaybeGPU(tt.in); m != tt.wantMaybe {
				t.Errorf("AzureMaybeGPU = %v, want %v", m, tt.wantMaybe)
			}
			if f := AzureFractional(tt.in); f != tt.wantFrac {
				t.Errorf("AzureFractional = %v, want %v", f, tt.wantFrac)
			}
		})
	}
}

func TestGCPDescription(t *testing.T) {
	tests := []struct {
		name         string
		in           string
		wantGPU      string
		wantAccel    string
		wantExcluded bool
		wantOK       bool
	}{
		{name: "A100 on demand", in: "Nvidia Tesla A100 GPU running in Americas", wantGPU: "A100-40GB", wantAccel: "nvidia-tesla-a100", wantOK: true},
		{name: "A100 spot", in: "Spot Preemptible Nvidia Tesla A100 GPU running in Americas", wantGPU: "A100-40GB", wantOK: true},
		{name: "A100 80GB", in: "Nvidia A100 80GB GPU running in Americas", wantGPU: "A100-80GB", wantOK: true},
		{name: "H100", in: "Nvidia H100 80GB GPU running in Iowa", wantGPU: "H100-80GB", wantOK: true},
		{name: "H100 mega", in: "Nvidia H100 80GB Mega GPU running in Iowa", wantGPU: "H100-80GB", wantAccel: "nvidia-h100-mega-80gb", wantOK: true},
		{name: "H200", in: "Nvidia H200 141GB GPU running in Belgium", wantGPU: "H200-141GB", wantOK: true},
		{name: "B200 slice", in: "Nvidia B200 (1 gpu slice) running in Iowa", wantGPU: "B200", wantOK: true},
		{name: "L4 commitment", in: "Commitment v1: Nvidia L4 GPU running in Americas", wantGPU: "L4", wantOK: true},
		{name: "T4", in: "Nvidia Tesla T4 GPU running in Americas", wantGPU: "T4", wantOK: true},
		{name: "workstation", in: "Nvidia L4 GPU Virtual Workstation running in Americas", wantExcluded: true},
		{name: "unknown model", in: "Nvidia Z9000 GPU running in Americas"},
		{name: "cpu sku", in: "A2 Instance Core running in Americas"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			accel, got, excl, ok := GCPDescription(tt.in)
			if tt.wantAccel != "" && accel != tt.wantAccel {
				t.Errorf("accelerator = %q, want %q", accel, tt.wantAccel)
			}
			if ok != tt.wantOK || excl != tt.wantExcluded || got.Name != tt.wantGPU {
				t.Fatalf("GCPDescription(%q) = %q, %v, %v; want %q, %v, %v", tt.in, got.Name, excl, ok,
					tt.wantGPU, tt.wantExcluded, tt.wantOK)
			}
		})
	}
}

func TestGCPMachine(t *testing.T) {
	tests := []struct {
		name      string
		in        string
		wantAccel string
		wantCount int
		wantOK    bool
	}{
		{name: "a2 highgpu", in: "a2-highgpu-8g", wantAccel: "nvidia-tesla-a100", wantCount: 8, wantOK: true},
		{name: "a2 ultragpu", in: "a2-ultragpu-1g", wantAccel: "nvidia-a100-80gb", wantCount: 1, wantOK: true},
		{name: "a3 highgpu", in: "a3-highgpu-1g", wantAccel: "nvidia-h100-80gb", wantCount: 1, wantOK: true},
		{name: "a3 mega", in: "a3-megagpu-8g", wantAccel: "nvidia-h100-mega-80gb", wantCount: 8, wantOK: true},
		{name: "g2 48", in: "g2-standard-48", wantAccel: "nvidia-l4", wantCount: 4, wantOK: true},
		{name: "cpu machine", in: "n2-standard-8"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			accel, n, ok := GCPMachine(tt.in)
			if ok != tt.wantOK || accel != tt.wantAccel || n != tt.wantCount {
				t.Fatalf("GCPMachine(%q) = %q, %d, %v", tt.in, accel, n, ok)
			}
		})
	}
}

func TestNeocloudGPUs(t *testing.T) {
	tests := []struct {
		name    string
		got     func() (GPU, bool)
		wantGPU string
		wantOK  bool
	}{
		{name: "lambda H100 SXM", got: func() (GPU, bool) { return LambdaGPU("H100 (80 GB SXM5)") }, wantGPU: "H100-80GB", wantOK: true},
		{name: "lambda A100 80", got: func() (GPU, bool) { return LambdaGPU("A100 (80 GB SXM4)") }, wantGPU: "A100-80GB", wantOK: true},
		{name: "lambda A100 40", got: func() (GPU, bool) { return LambdaGPU("A100 (40 GB PCIe)") }, wantGPU: "A100-40GB", wantOK: true},
		{name: "lambda A10", got: func() (GPU, bool) { return LambdaGPU("A10 (24 GB PCIe)") }, wantGPU: "A10", wantOK: true},
		{name: "lambda no memory", got: func() (GPU, bool) { return LambdaGPU("H100") }},
		{name: "lambda unknown", got: func() (GPU, bool) { return LambdaGPU("Z9 (7 GB)") }},
		{name: "runpod H100", got: func() (GPU, bool) { return RunPodGPU("NVIDIA H100 80GB HBM3") }, wantGPU: "H100-80GB", wantOK: true},
		{name: "runpod A100 SXM", got: func() (GPU, bool) { return RunPodGPU("NVIDIA A100-SXM4-80GB") }, wantGPU: "A100-80GB", wantOK: true},
		{name: "runpod H200", got: func() (GPU, bool) { return RunPodGPU("NVIDIA H200") }, wantGPU: "H200-141GB", wantOK: true},
		{name: "runpod unknown", got: func() (GPU, bool) { return RunPodGPU("NVIDIA Z9") }},
		{name: "vast H100", got: func() (GPU, bool) { return VastGPU("H100 SXM", 81559) }, wantGPU: "H100-80GB", wantOK: true},
		{name: "vast A100 80GB by ram", got: func() (GPU, bool) { return VastGPU("A100 SXM4", 81920) }, wantGPU: "A100-80GB", wantOK: true},
		{name: "vast A100 40GB by ram", got: func() (GPU, bool) { return VastGPU("A100 SXM4", 40960) }, wantGPU: "A100-40GB", wantOK: true},
		{name: "vast A100 no ram", got: func() (GPU, bool) { return VastGPU("A100 SXM4", 0) }},
		{name: "vast 4090", got: func() (GPU, bool) { return VastGPU("RTX 4090", 24564) }, wantGPU: "RTX4090", wantOK: true},
		{name: "skypilot A100", got: func() (GPU, bool) { return SkyPilotGPU("A100") }, wantGPU: "A100-40GB", wantOK: true},
		{name: "skypilot V100-32GB", got: func() (GPU, bool) { return SkyPilotGPU("V100-32GB") }, wantGPU: "V100-32GB", wantOK: true},
		{name: "skypilot tpu", got: func() (GPU, bool) { return SkyPilotGPU("tpu-v6e-8") }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g, ok := tt.got()
			if ok != tt.wantOK || g.Name != tt.wantGPU {
				t.Fatalf("got %q, %v; want %q, %v", g.Name, ok, tt.wantGPU, tt.wantOK)
			}
		})
	}
}

func TestParseCount(t *testing.T) {
	tests := []struct {
		name   string
		in     string
		want   int
		wantOK bool
	}{
		{name: "float", in: "8.0", want: 8, wantOK: true},
		{name: "int", in: " 2 ", want: 2, wantOK: true},
		{name: "fraction", in: "0.5"},
		{name: "zero", in: "0"},
		{name: "negative", in: "-1"},
		{name: "empty", in: ""},
		{name: "huge", in: "1e300"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := ParseCount(tt.in)
			if got != tt.want || ok != tt.wantOK {
				t.Fatalf("ParseCount(%q) = %d, %v", tt.in, got, ok)
			}
		})
	}
}
