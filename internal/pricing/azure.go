package pricing

import (
	"sort"
	"strings"
)

// azureSKUs maps an Azure armSkuName to its GPUs. The Retail Prices API carries no GPU fields, so
// this table (from Microsoft's size pages and the Resource SKUs API) is the only source of them.
var azureSKUs = map[string]struct {
	gpu   string
	count int
}{
	"Standard_NC24ads_A100_v4":   {"A100-80GB", 1},
	"Standard_NC48ads_A100_v4":   {"A100-80GB", 2},
	"Standard_NC96ads_A100_v4":   {"A100-80GB", 4},
	"Standard_ND96asr_v4":        {"A100-40GB", 8},
	"Standard_ND96amsr_A100_v4":  {"A100-80GB", 8},
	"Standard_ND96isr_H100_v5":   {"H100-80GB", 8},
	"Standard_ND96isr_H200_v5":   {"H200-141GB", 8},
	"Standard_NC40ads_H100_v5":   {"H100-94GB", 1},
	"Standard_NC80adis_H100_v5":  {"H100-94GB", 2},
	"Standard_NCC40ads_H100_v5":  {"H100-94GB", 1},
	"Standard_ND96isr_MI300X_v5": {"MI300X", 8},
	"Standard_NC4as_T4_v3":       {"T4", 1},
	"Standard_NC8as_T4_v3":       {"T4", 1},
	"Standard_NC16as_T4_v3":      {"T4", 1},
	"Standard_NC64as_T4_v3":      {"T4", 4},
	"Standard_NC6s_v3":           {"V100-16GB", 1},
	"Standard_NC12s_v3":          {"V100-16GB", 2},
	"Standard_NC24s_v3":          {"V100-16GB", 4},
	"Standard_NC24rs_v3":         {"V100-16GB", 4},
	"Standard_ND40rs_v2":         {"V100-32GB", 8},
	"Standard_NV36ads_A10_v5":    {"A10", 1},
	"Standard_NV36adms_A10_v5":   {"A10", 1},
	"Standard_NV72ads_A10_v5":    {"A10", 2},
}

// azureFractional lists sizes that sell a fraction of one GPU; an offer needs whole GPUs, so
// their rows are skipped as fractional_gpu.
var azureFractional = map[string]bool{
	"Standard_NV6ads_A10_v5": true, "Standard_NV12ads_A10_v5": true, "Standard_NV18ads_A10_v5": true,
}

// AzureSKU maps an Azure armSkuName such as "Standard_ND96isr_H100_v5" to its GPUs.
func AzureSKU(armSkuName string) (Instance, bool) {
	s, ok := azureSKUs[armSkuName]
	if !ok {
		return Instance{}, false
	}
	g, ok := Canonical(s.gpu)
	return Instance{GPU: g, Count: s.count}, ok
}

// AzureFractional reports whether an Azure size sells a fraction of a GPU.
func AzureFractional(armSkuName string) bool { return azureFractional[armSkuName] }

// AzureMaybeGPU reports whether an Azure size is in the N series, Azure's GPU families, so that a
// size missing from the table is reported as an unknown GPU instead of skipped as a CPU size.
func AzureMaybeGPU(armSkuName string) bool {
	return strings.HasPrefix(armSkuName, "Standard_N")
}

func sortStrings(s []string) { sort.Strings(s) }
