package gpu

import (
	"math"
	"strings"

	"github.com/bursar-dev/bursar/internal/pricing"
)

// Model maps NVML's board name and memory to Bursar's canonical GPU name (pricing's catalog), so
// that samples join with the offers the arbiter prices: "NVIDIA H100 80GB HBM3" is "H100-80GB",
// "NVIDIA A100-SXM4-40GB" is "A100-40GB". A board the catalog does not know keeps NVML's name.
func Model(name string, memoryBytes uint64) string {
	model, memGB := parseBoardName(name)
	if model == "" {
		return name
	}
	if memGB != "" {
		if g, ok := pricing.Canonical(model + "-" + memGB); ok {
			return g.Name
		}
	}
	if g, ok := pricing.Canonical(model); ok {
		return g.Name
	}
	if g, ok := closestByMemory(model, float64(memoryBytes)/(1<<30)); ok {
		return g.Name
	}
	return name
}

// parseBoardName splits a board name into its model ("H100", "RTX4090") and the memory size
// it states, if any ("80GB").
func parseBoardName(name string) (model, memGB string) {
	fields := strings.FieldsFunc(name, func(r rune) bool { return r == ' ' || r == '-' })
	for i := 0; i < len(fields); i++ {
		f := strings.ToUpper(fields[i])
		switch {
		case f == "NVIDIA" || f == "TESLA" || f == "GEFORCE" || f == "QUADRO":
		case strings.HasSuffix(f, "GB") && strings.Trim(f[:len(f)-2], "0123456789") == "":
			memGB = f
		case model == "" && f == "RTX" && i+1 < len(fields):
			model = f + strings.ToUpper(fields[i+1])
			i++
		case model == "":
			model = f
		}
	}
	return model, memGB
}

// closestByMemory picks the catalog variant of model whose memory is nearest to memGiB, within
// 10 %: NVML reports usable memory, a little under the marketed size.
func closestByMemory(model string, memGiB float64) (pricing.GPU, bool) {
	var best pricing.GPU
	bestGap := math.Inf(1)
	for _, g := range pricing.GPUs() {
		if !strings.HasPrefix(g.Name, model+"-") {
			continue
		}
		gap := math.Abs(float64(g.MemoryGB) - memGiB)
		if gap < bestGap && gap <= 0.1*float64(g.MemoryGB) {
			best, bestGap = g, gap
		}
	}
	return best, bestGap < math.Inf(1)
}
