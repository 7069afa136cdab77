package pricing

import "strings"

// Instance is what an instance type carries: its GPU model and how many.
type Instance struct {
	GPU   GPU
	Count int
}

// awsFamily is one AWS instance family: its GPU and the GPU count of each size. The price APIs
// carry no GPU model (the Price List has only a count and a memory string), so the model comes
// from this table, checked against the Price List's own count by the source.
type awsFamily struct {
	gpu   string
	sizes map[string]int
}

var awsFamilies = map[string]awsFamily{
	"p6-b200": {"B200", map[string]int{"48xlarge": 8}},
	"p5":      {"H100-80GB", map[string]int{"4xlarge": 1, "48xlarge": 8}},
	"p5e":     {"H200-141GB", map[string]int{"48xlarge": 8}},
	"p5en":    {"H200-141GB", map[string]int{"48xlarge": 8}},
	"p4d":     {"A100-40GB", map[string]int{"24xlarge": 8}},
	"p4de":    {"A100-80GB", map[string]int{"24xlarge": 8}},
	"p3":      {"V100-16GB", map[string]int{"2xlarge": 1, "8xlarge": 4, "16xlarge": 8}},
	"p3dn":    {"V100-32GB", map[string]int{"24xlarge": 8}},
	"p2":      {"K80", map[string]int{"xlarge": 1, "8xlarge": 8, "16xlarge": 16}},
	"g6e": {"L40S", map[string]int{"xlarge": 1, "2xlarge": 1, "4xlarge": 1, "8xlarge": 1,
		"16xlarge": 1, "12xlarge": 4, "24xlarge": 4, "48xlarge": 8}},
	"g6": {"L4", map[string]int{"xlarge": 1, "2xlarge": 1, "4xlarge": 1, "8xlarge": 1,
		"16xlarge": 1, "12xlarge": 4, "24xlarge": 4, "48xlarge": 8}},
	"gr6": {"L4", map[string]int{"4xlarge": 1, "8xlarge": 1}},
	"g5": {"A10G", map[string]int{"xlarge": 1, "2xlarge": 1, "4xlarge": 1, "8xlarge": 1,
		"16xlarge": 1, "12xlarge": 4, "24xlarge": 4, "48xlarge": 8}},
	"g5g": {"T4G", map[string]int{"xlarge": 1, "2xlarge": 1, "4xlarge": 1, "8xlarge": 1,
		"16xlarge": 2, "metal": 2}},
	"g4dn": {"T4", map[string]int{"xlarge": 1, "2xlarge": 1, "4xlarge": 1, "8xlarge": 1,
		"16xlarge": 1, "12xlarge": 4, "metal": 8}},
	"g4ad": {"V520", map[string]int{"xlarge": 1, "2xlarge": 1, "4xlarge": 1, "8xlarge": 2, "16xlarge": 4}},
	"g3":   {"M60", map[string]int{"4xlarge": 1, "8xlarge": 2, "16xlarge": 4}},
	"g3s":  {"M60", map[string]int{"xlarge": 1}},
}

// awsNotGPU lists AWS accelerated families that are not GPUs (ML ASICs): their rows are skipped
// as not_gpu rather than reported as unknown GPUs.
var awsNotGPU = map[string]string{
	"inf1": "AWS Inferentia", "inf2": "AWS Inferentia2", "trn1": "AWS Trainium",
	"trn1n": "AWS Trainium", "trn2": "AWS Trainium2", "dl1": "Habana Gaudi", "dl2q": "Qualcomm AI 100",
	"f1": "FPGA", "f2": "FPGA", "vt1": "Xilinx video transcoder",
}

// AWSInstance maps an EC2 instance type such as "p5.48xlarge" to its GPUs.
func AWSInstance(instanceType string) (Instance, bool) {
	family, size, ok := strings.Cut(instanceType, ".")
	if !ok {
		return Instance{}, false
	}
	f, ok := awsFamilies[family]
	if !ok {
		return Instance{}, false
	}
	n, ok := f.sizes[size]
	if !ok {
		return Instance{}, false
	}
	g, ok := Canonical(f.gpu)
	return Instance{GPU: g, Count: n}, ok
}

// AWSNotGPU reports whether an instance type belongs to an accelerated family that has no GPU,
// and names its accelerator.
func AWSNotGPU(instanceType string) (string, bool) {
	family, _, _ := strings.Cut(instanceType, ".")
	what, ok := awsNotGPU[family]
	return what, ok
}

// AWSInstanceTypes lists every instance type AWSInstance knows, for spot price queries.
func AWSInstanceTypes() []string {
	var out []string
	for fam, f := range awsFamilies {
		for size := range f.sizes {
			out = append(out, fam+"."+size)
		}
	}
	sortStrings(out)
	return out
}
