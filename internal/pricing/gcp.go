package pricing

import "strings"

// gcpDescriptions maps the model part of a Cloud Billing GPU SKU description (folded, with the
// market prefix, "nvidia", "tesla" and the " running in <place>" suffix removed) to a canonical GPU.
var gcpDescriptions = map[string]string{
	"a100":                "A100-40GB",
	"a100 80gb":           "A100-80GB",
	"h100 80gb":           "H100-80GB",
	"h100":                "H100-80GB",
	"h100 80gb mega":      "H100-80GB",
	"h100 mega 80gb":      "H100-80GB",
	"h100 80gb plus":      "H100-80GB",
	"h200 141gb":          "H200-141GB",
	"b200 (1 gpu slice)":  "B200",
	"b200":                "B200",
	"l4":                  "L4",
	"t4":                  "T4",
	"v100":                "V100-16GB",
	"p100":                "P100",
	"p4":                  "P4",
	"k80":                 "K80",
	"gb200 (1 gpu slice)": "GB200",
}

// gcpExcluded marks SKU descriptions that are not plain GPU capacity (workstation licences,
// reservations, sole-tenant premiums); they are skipped as excluded.
var gcpExcluded = []string{"virtual workstation", "vgpu", "reserved", "sole tenancy", "premium", "custom", "dws"}

// GCPDescription maps a Cloud Billing GPU SKU description such as "Spot Preemptible Nvidia Tesla
// A100 GPU running in Americas" to its GPU. excluded is true for descriptions that name GPUs but
// are not a price for GPU capacity (see gcpExcluded).
func GCPDescription(desc string) (g GPU, excluded, ok bool) {
	d := fold(desc)
	for _, x := range gcpExcluded {
		if strings.Contains(d, x) {
			return GPU{}, true, false
		}
	}
	if i := strings.Index(d, " running in "); i >= 0 {
		d = d[:i]
	}
	for _, p := range []string{"spot preemptible ", "preemptible ", "commitment v1: ", "commitment: "} {
		d = strings.TrimPrefix(d, p)
	}
	d = strings.TrimPrefix(d, "nvidia ")
	d = strings.TrimPrefix(d, "tesla ")
	d = strings.TrimSuffix(d, " gpu")
	g, ok = lookup(gcpDescriptions, d)
	return g, false, ok
}

// gcpAccelerators maps each canonical GPU sold on GCP to its Compute Engine accelerator type,
// used as the instance type of a price that covers the GPU alone.
var gcpAccelerators = map[string]string{
	"A100-40GB":  "nvidia-tesla-a100",
	"A100-80GB":  "nvidia-a100-80gb",
	"H100-80GB":  "nvidia-h100-80gb",
	"H200-141GB": "nvidia-h200-141gb",
	"B200":       "nvidia-b200",
	"GB200":      "nvidia-gb200",
	"L4":         "nvidia-l4",
	"T4":         "nvidia-tesla-t4",
	"V100-16GB":  "nvidia-tesla-v100",
	"P100":       "nvidia-tesla-p100",
	"P4":         "nvidia-tesla-p4",
	"K80":        "nvidia-tesla-k80",
}

// GCPAcceleratorType names the Compute Engine accelerator type of a canonical GPU.
func GCPAcceleratorType(gpu string) (string, bool) {
	t, ok := gcpAccelerators[gpu]
	return t, ok
}

// gcpMachines maps the GCP machine types that come with GPUs attached to their GPUs.
var gcpMachines = map[string]struct {
	gpu   string
	count int
}{
	"a2-highgpu-1g": {"A100-40GB", 1}, "a2-highgpu-2g": {"A100-40GB", 2},
	"a2-highgpu-4g": {"A100-40GB", 4}, "a2-highgpu-8g": {"A100-40GB", 8},
	"a2-megagpu-16g": {"A100-40GB", 16},
	"a2-ultragpu-1g": {"A100-80GB", 1}, "a2-ultragpu-2g": {"A100-80GB", 2},
	"a2-ultragpu-4g": {"A100-80GB", 4}, "a2-ultragpu-8g": {"A100-80GB", 8},
	"a3-highgpu-1g": {"H100-80GB", 1}, "a3-highgpu-2g": {"H100-80GB", 2},
	"a3-highgpu-4g": {"H100-80GB", 4}, "a3-highgpu-8g": {"H100-80GB", 8},
	"a3-megagpu-8g": {"H100-80GB", 8}, "a3-edgegpu-8g": {"H100-80GB", 8},
	"a3-ultragpu-8g": {"H200-141GB", 8},
	"a4-highgpu-8g":  {"B200", 8},
	"g2-standard-4":  {"L4", 1}, "g2-standard-8": {"L4", 1}, "g2-standard-12": {"L4", 1},
	"g2-standard-16": {"L4", 1}, "g2-standard-32": {"L4", 1}, "g2-standard-24": {"L4", 2},
	"g2-standard-48": {"L4", 4}, "g2-standard-96": {"L4", 8},
}

// GCPMachine maps a GCP machine type with attached GPUs (a2, a3, a4, g2) to them.
func GCPMachine(machineType string) (Instance, bool) {
	m, ok := gcpMachines[machineType]
	if !ok {
		return Instance{}, false
	}
	g, ok := Canonical(m.gpu)
	return Instance{GPU: g, Count: m.count}, ok
}
