//go:build linux && cgo && nvml

package main

import (
	"testing"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxh100"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/server"

	"github.com/bursar-dev/bursar/internal/gpu"
)

// mockGPUs opens go-nvml's mocked DGX H100 (8 x H100 80GB), with the telemetry calls the mock
// leaves unset answered, so a test collector samples real NVML code paths without a driver.
func mockGPUs(t *testing.T) (open func() (gpu.Reader, error), gpus int) {
	t.Helper()
	srv := dgxh100.New()
	for i, d := range srv.Devices {
		dev := d.(*server.Device)
		dev.GetUtilizationRatesFunc = func() (nvml.Utilization, nvml.Return) {
			return nvml.Utilization{Gpu: uint32(10 * i)}, nvml.SUCCESS
		}
		dev.GetPowerUsageFunc = func() (uint32, nvml.Return) { return 300_000, nvml.SUCCESS }
		dev.GetTemperatureFunc = func(nvml.TemperatureSensors) (uint32, nvml.Return) { return 40, nvml.SUCCESS }
		dev.GetMemoryInfoFunc = func() (nvml.Memory, nvml.Return) {
			return nvml.Memory{Total: dev.MemoryInfo.Total, Free: dev.MemoryInfo.Total}, nvml.SUCCESS
		}
	}
	return func() (gpu.Reader, error) { return gpu.OpenNVMLWith(srv) }, len(srv.Devices)
}
