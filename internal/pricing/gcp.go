package pricing

import "strings"

// gcpDescriptions maps the model part of a Cloud Billing GPU SKU description (folded, with the
// market prefix, "nvidia", "tesla" and the " running in <place>" suffix removed) to the Compute
// Engine accelerator type it prices. A3 Mega has its own accelerator type and price.
var gcpDescriptions = map[string]string{
	"a100":                "nvidia-tesla-a100",
	"a100 80gb":           "nvidia-a100-80gb",
	"h100 80gb":           "nvidia-h100-80gb",
	"h100":                "nvidia-h100-80gb",
	"h100 80gb mega":      "nvidia-h100-mega-80gb",
	"h100 mega 80gb":      "nvidia-h100-mega-80gb",
	"h100 80gb plus":      "nvidia-h100-mega-80gb",
	"h200 141gb":          "nvidia-h200-141gb",
	"b200 (1 gpu slice)":  "nvidia-b200",
	"b200":                "nvidia-b200",
	"gb200 (1 gpu slice)": "nvidia-gb200",
	"l4":                  "nvidia-l4",
	"t4":                  "nvidia-tesla-t4",
	"v100":                "nvidia-tesla-v100",
	"p100":                "nvidia-tesla-p100",
	"p4":                  "nvidia-tesla-p4",
	"k80":                 "nvidia-tesla-k80",
}

// gcpAccelerators maps each Compute Engine accelerator type to its canonical GPU.
var gcpAccelerators = map[string]string{
	"nvidia-tesla-a100":     "A100-40GB",
	"nvidia-a100-80gb":      "A100-80GB",
	"nvidia-h100-80gb":      "H100-80GB",
	"nvidia-h100-mega-80gb": "H100-80GB",
	"nvidia-h200-141gb":     "H200-141GB",
	"nvidia-b200":           "B200",
	"nvidia-gb200":          "GB200",
	"nvidia-l4":             "L4",
	"nvidia-tesla-t4":       "T4",
	"nvidia-tesla-v100":     "V100-16GB",
	"nvidia-tesla-p100":     "P100",
	"nvidia-tesla-p4":       "P4",
	"nvidia-tesla-k80":      "K80",
}

// skypilotGCPAccelerators maps SkyPilot's GCP AcceleratorName values to accelerator types.
var skypilotGCPAccelerators = map[string]string{
	"A100": "nvidia-tesla-a100", "A100-80GB": "nvidia-a100-80gb", "H100": "nvidia-h100-80gb",
	"H100-MEGA": "nvidia-h100-mega-80gb", "H200": "nvidia-h200-141gb", "B200": "nvidia-b200",
	"GB200": "nvidia-gb200", "L4": "nvidia-l4", "T4": "nvidia-tesla-t4", "V100": "nvidia-tesla-v100",
	"P100": "nvidia-tesla-p100", "P4": "nvidia-tesla-p4", "K80": "nvidia-tesla-k80",
}

// gcpExcluded marks SKU descriptions that are not plain GPU capacity (workstation licences,
// reservations, sole-tenant premiums); they are skipped as excluded.
var gcpExcluded = []string{"virtual workstation", "vgpu", "reserved", "sole tenancy", "premium", "custom", "dws"}

// GCPDescription maps a Cloud Billing GPU SKU description such as "Spot Preemptible Nvidia Tesla
// A100 GPU running in Americas" to the accelerator type it prices and its GPU. excluded is true
// for descriptions that name GPUs but are not a price for GPU capacity (see gcpExcluded).
func GCPDescription(desc string) (accel string, g GPU, excluded, ok bool) {
	d := fold(desc)
	for _, x := range gcpExcluded {
		if strings.Contains(d, x) {
			return "", GPU{}, true, false
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
	accel, ok = gcpDescriptions[d]
	if !ok {
		return "", GPU{}, false, false
	}
	g, ok = GCPAccelerator(accel)
	return accel, g, false, ok
}

// GCPAccelerator maps a Compute Engine accelerator type such as "nvidia-h100-80gb" to its GPU.
func GCPAccelerator(accel string) (GPU, bool) { return lookup(gcpAccelerators, accel) }

// SkyPilotGCPAccelerator maps a SkyPilot GCP AcceleratorName to the accelerator type.
func SkyPilotGCPAccelerator(name string) (string, bool) {
	a, ok := skypilotGCPAccelerators[name]
	return a, ok
}

// gcpMachines maps the GCP machine types that come with GPUs attached to their accelerators.
var gcpMachines = map[string]struct {
	accel string
	count int
}{
	"a2-highgpu-1g": {"nvidia-tesla-a100", 1}, "a2-highgpu-2g": {"nvidia-tesla-a100", 2},
	"a2-highgpu-4g": {"nvidia-tesla-a100", 4}, "a2-highgpu-8g": {"nvidia-tesla-a100", 8},
	"a2-megagpu-16g": {"nvidia-tesla-a100", 16},
	"a2-ultragpu-1g": {"nvidia-a100-80gb", 1}, "a2-ultragpu-2g": {"nvidia-a100-80gb", 2},
	"a2-ultragpu-4g": {"nvidia-a100-80gb", 4}, "a2-ultragpu-8g": {"nvidia-a100-80gb", 8},
	"a3-highgpu-1g": {"nvidia-h100-80gb", 1}, "a3-highgpu-2g": {"nvidia-h100-80gb", 2},
	"a3-highgpu-4g": {"nvidia-h100-80gb", 4}, "a3-highgpu-8g": {"nvidia-h100-80gb", 8},
	"a3-edgegpu-8g": {"nvidia-h100-80gb", 8}, "a3-megagpu-8g": {"nvidia-h100-mega-80gb", 8},
	"a3-ultragpu-8g": {"nvidia-h200-141gb", 8},
	"a4-highgpu-8g":  {"nvidia-b200", 8},
	"g2-standard-4":  {"nvidia-l4", 1}, "g2-standard-8": {"nvidia-l4", 1}, "g2-standard-12": {"nvidia-l4", 1},
	"g2-standard-16": {"nvidia-l4", 1}, "g2-standard-32": {"nvidia-l4", 1}, "g2-standard-24": {"nvidia-l4", 2},
	"g2-standard-48": {"nvidia-l4", 4}, "g2-standard-96": {"nvidia-l4", 8},
}

// GCPMachine maps a GCP machine type with attached GPUs (a2, a3, a4, g2) to its accelerator
// type and count.
func GCPMachine(machineType string) (accel string, count int, ok bool) {
	m, ok := gcpMachines[machineType]
	return m.accel, m.count, ok
}
