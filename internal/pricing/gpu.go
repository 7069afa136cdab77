package pricing

import "strings"

// GPU is a canonical accelerator model: one name per model and memory size, so that an A100 with
// 40 GB and one with 80 GB are different things to the planner, while SXM and PCIe boards of the
// same model and memory are the same.
type GPU struct {
	Name     string
	MemoryGB int // per GPU
	Vendor   string
}

// gpus lists every canonical GPU. Memory is per GPU as the providers sell it (an AWS p2 "K80"
// is one of the board's two 12 GB dies).
var gpus = []GPU{
	{"B200", 180, "nvidia"},
	{"GB200", 186, "nvidia"},
	{"GH200", 96, "nvidia"},
	{"H200-141GB", 141, "nvidia"},
	{"H100-80GB", 80, "nvidia"},
	{"H100-94GB", 94, "nvidia"}, // H100 NVL
	{"A100-40GB", 40, "nvidia"},
	{"A100-80GB", 80, "nvidia"},
	{"L40S", 48, "nvidia"},
	{"L40", 48, "nvidia"},
	{"L4", 24, "nvidia"},
	{"A10G", 24, "nvidia"},
	{"A10", 24, "nvidia"},
	{"A40", 48, "nvidia"},
	{"A6000", 48, "nvidia"},
	{"A5000", 24, "nvidia"},
	{"A4000", 16, "nvidia"},
	{"RTX6000-Ada", 48, "nvidia"},
	{"RTX6000", 24, "nvidia"},
	{"RTX4090", 24, "nvidia"},
	{"RTX3090", 24, "nvidia"},
	{"T4", 16, "nvidia"},
	{"T4G", 16, "nvidia"},
	{"V100-16GB", 16, "nvidia"},
	{"V100-32GB", 32, "nvidia"},
	{"P100", 16, "nvidia"},
	{"P4", 8, "nvidia"},
	{"K80", 12, "nvidia"},
	{"M60", 8, "nvidia"},
	{"MI300X", 192, "amd"},
	{"V520", 8, "amd"}, // Radeon Pro V520 (AWS g4ad)
}

var gpuByName = func() map[string]GPU {
	m := make(map[string]GPU, len(gpus))
	for _, g := range gpus {
		m[g.Name] = g
	}
	return m
}()

// Canonical returns the canonical GPU of that exact name.
func Canonical(name string) (GPU, bool) {
	g, ok := gpuByName[name]
	return g, ok
}

// GPUs returns every canonical GPU, in a stable order.
func GPUs() []GPU { return append([]GPU(nil), gpus...) }

// lookup maps a provider's name through table to a canonical GPU. A table entry naming a GPU
// that is not canonical is a programming error, caught by the table tests.
func lookup(table map[string]string, name string) (GPU, bool) {
	c, ok := table[name]
	if !ok {
		return GPU{}, false
	}
	return Canonical(c)
}

// fold normalizes a provider's free-text name for table lookup: lower case, single spaces.
func fold(s string) string {
	return strings.Join(strings.Fields(strings.ToLower(s)), " ")
}
