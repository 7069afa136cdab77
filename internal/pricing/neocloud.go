package pricing

import (
	"regexp"
	"strconv"
	"strings"
)

// lambdaModels maps Lambda's GPU model and memory in GB, as parsed from gpu_description
// ("H100 (80 GB SXM5)"), to a canonical GPU.
var lambdaModels = map[string]string{
	"b200 180": "B200", "gh200 96": "GH200", "h100 80": "H100-80GB",
	"a100 40": "A100-40GB", "a100 80": "A100-80GB", "a10 24": "A10", "a6000 48": "A6000",
	"v100 16": "V100-16GB", "v100 32": "V100-32GB", "quadro rtx 6000 24": "RTX6000",
	"rtx 6000 24": "RTX6000",
}

var lambdaDesc = regexp.MustCompile(`^\s*(.+?)\s*\(\s*(\d+)\s*GB\b[^)]*\)\s*$`)

// LambdaGPU maps a Lambda Cloud gpu_description such as "A100 (80 GB SXM4)" to its GPU.
func LambdaGPU(desc string) (GPU, bool) {
	m := lambdaDesc.FindStringSubmatch(desc)
	if m == nil {
		return GPU{}, false
	}
	return lookup(lambdaModels, fold(m[1])+" "+m[2])
}

// runpodIDs maps RunPod gpuTypes ids to canonical GPUs.
var runpodIDs = map[string]string{
	"nvidia h100 80gb hbm3": "H100-80GB", "nvidia h100 pcie": "H100-80GB", "nvidia h100 nvl": "H100-94GB",
	"nvidia h200": "H200-141GB", "nvidia b200": "B200",
	"nvidia a100-sxm4-80gb": "A100-80GB", "nvidia a100 80gb pcie": "A100-80GB",
	"nvidia l4": "L4", "nvidia l40s": "L40S", "nvidia l40": "L40", "nvidia a40": "A40",
	"nvidia rtx a6000": "A6000", "nvidia rtx a5000": "A5000", "nvidia rtx a4000": "A4000",
	"nvidia rtx 6000 ada generation": "RTX6000-Ada", "nvidia geforce rtx 4090": "RTX4090",
	"nvidia geforce rtx 3090": "RTX3090", "tesla v100-sxm2-16gb": "V100-16GB",
	"tesla v100-pcie-16gb": "V100-16GB", "tesla v100-sxm2-32gb": "V100-32GB",
	"amd instinct mi300x oam": "MI300X",
}

// RunPodGPU maps a RunPod gpuTypes id such as "NVIDIA H100 80GB HBM3" to its GPU.
func RunPodGPU(id string) (GPU, bool) { return lookup(runpodIDs, fold(id)) }

// vastNames maps Vast.ai gpu_name values to a GPU, or to a model whose memory size is read from
// the offer's gpu_ram (Vast sells both A100 and V100 memory sizes under one name).
var vastNames = map[string]string{
	"h100 sxm": "H100-80GB", "h100 pcie": "H100-80GB", "h100 nvl": "H100-94GB", "h200": "H200-141GB",
	"h200 nvl": "H200-141GB", "b200": "B200", "l4": "L4", "l40s": "L40S", "l40": "L40", "a10": "A10",
	"a40": "A40", "rtx a6000": "A6000", "a6000": "A6000", "rtx a5000": "A5000", "rtx a4000": "A4000",
	"rtx 6000ada": "RTX6000-Ada", "rtx 6000 ada": "RTX6000-Ada", "rtx 4090": "RTX4090",
	"rtx 3090": "RTX3090", "tesla t4": "T4", "tesla p100": "P100",
	"a100 sxm4": "A100", "a100 pcie": "A100", "a100x": "A100", "tesla v100": "V100",
}

// memorySplit names the canonical GPUs of a model sold in two memory sizes, split at a threshold.
var memorySplit = map[string]struct {
	small, large string
	thresholdGB  int
}{
	"A100": {"A100-40GB", "A100-80GB", 60},
	"V100": {"V100-16GB", "V100-32GB", 24},
}

// VastGPU maps a Vast.ai gpu_name and per-GPU RAM in MB to a GPU.
func VastGPU(name string, gpuRAMMB float64) (GPU, bool) {
	c, ok := vastNames[fold(name)]
	if !ok {
		return GPU{}, false
	}
	if s, split := memorySplit[c]; split {
		if gpuRAMMB <= 0 {
			return GPU{}, false
		}
		c = s.small
		if gpuRAMMB/1024 >= float64(s.thresholdGB) {
			c = s.large
		}
	}
	return Canonical(c)
}

// skypilotNames maps SkyPilot catalog AcceleratorName values to canonical GPUs. SkyPilot's bare
// "A100" and "V100" are the smaller memory sizes; the larger ones carry a suffix.
var skypilotNames = map[string]string{
	"A100": "A100-40GB", "A100-80GB": "A100-80GB", "A100-80GB-SXM": "A100-80GB",
	"H100": "H100-80GB", "H100-SXM": "H100-80GB", "H100-MEGA": "H100-80GB", "H100-NVL": "H100-94GB",
	"H200": "H200-141GB", "B200": "B200", "GB200": "GB200", "GH200": "GH200",
	"L4": "L4", "L40S": "L40S", "L40": "L40", "A10G": "A10G", "A10": "A10", "A40": "A40",
	"T4": "T4", "T4g": "T4G", "V100": "V100-16GB", "V100-32GB": "V100-32GB", "P100": "P100",
	"P4": "P4", "K80": "K80", "M60": "M60", "A6000": "A6000", "RTXA6000": "A6000",
	"A5000": "A5000", "RTXA5000": "A5000", "A4000": "A4000", "RTXA4000": "A4000",
	"RTX6000-Ada": "RTX6000-Ada", "RTX6000Ada": "RTX6000-Ada", "RTX6000": "RTX6000",
	"RTX4090": "RTX4090", "RTX3090": "RTX3090", "MI300X": "MI300X", "RadeonProV520": "V520",
}

// SkyPilotGPU maps a SkyPilot catalog AcceleratorName such as "A100-80GB" to its GPU.
func SkyPilotGPU(name string) (GPU, bool) { return lookup(skypilotNames, name) }

// SkyPilotNotGPU reports whether a SkyPilot AcceleratorName is an accelerator that is not a GPU
// (TPUs, Inferentia, Trainium, Gaudi), whose rows are skipped as not_gpu.
func SkyPilotNotGPU(name string) bool {
	n := strings.ToLower(name)
	for _, p := range []string{"tpu-", "inferentia", "trainium", "gaudi"} {
		if strings.HasPrefix(n, p) {
			return true
		}
	}
	return false
}

// ParseCount reads a GPU count written as "8", "8.0" or " 8 " (SkyPilot writes floats). A
// fractional or non-positive count returns false.
func ParseCount(s string) (int, bool) {
	f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil || f <= 0 || f != float64(int(f)) || f > 1<<16 {
		return 0, false
	}
	return int(f), true
}
