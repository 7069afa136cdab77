//go:build linux && cgo && nvml

package gpu

import (
	"context"
	"errors"
	"fmt"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
)

// NVMLReader reads GPUs through NVML. It is the only cgo-bound code here, kept to the calls
// the collector needs.
type NVMLReader struct {
	lib nvml.Interface
}

var _ Reader = (*NVMLReader)(nil)

// NVMLBuilt says this binary reads GPUs through NVML: it was built with -tags nvml.
const NVMLBuilt = true

// OpenNVML loads the system's NVML library and initializes it. Without the NVIDIA driver it
// returns an error wrapping ErrUnavailable.
func OpenNVML() (Reader, error) {
	r, err := OpenNVMLWith(nvml.New())
	if err != nil {
		return nil, err
	}
	return r, nil
}

// OpenNVMLWith initializes lib (the real library or go-nvml's mocks).
func OpenNVMLWith(lib nvml.Interface) (*NVMLReader, error) {
	switch ret := lib.Init(); ret {
	case nvml.SUCCESS:
		return &NVMLReader{lib: lib}, nil
	case nvml.ERROR_LIBRARY_NOT_FOUND, nvml.ERROR_DRIVER_NOT_LOADED, nvml.ERROR_NO_PERMISSION:
		return nil, fmt.Errorf("initializing nvml: %w (%w)", ErrUnavailable, ret)
	default:
		return nil, fmt.Errorf("initializing nvml: %w", ret)
	}
}

// Close shuts NVML down.
func (r *NVMLReader) Close() error {
	if ret := r.lib.Shutdown(); ret != nvml.SUCCESS {
		return fmt.Errorf("shutting down nvml: %w", ret)
	}
	return nil
}

// Read reads every GPU. NVML calls do not block on the GPU, so ctx is only checked between GPUs.
func (r *NVMLReader) Read(ctx context.Context) ([]Stat, error) {
	n, ret := r.lib.DeviceGetCount()
	if ret != nvml.SUCCESS {
		return nil, fmt.Errorf("counting gpus: %w", ret)
	}
	stats := make([]Stat, 0, n)
	var errs []error
	for i := range n {
		if err := ctx.Err(); err != nil {
			return stats, err
		}
		s, err := r.readDevice(i)
		if err != nil {
			errs = append(errs, fmt.Errorf("reading gpu %d: %w", i, err))
			continue
		}
		stats = append(stats, s)
	}
	return stats, errors.Join(errs...)
}

func (r *NVMLReader) readDevice(i int) (Stat, error) {
	dev, ret := r.lib.DeviceGetHandleByIndex(i)
	if ret != nvml.SUCCESS {
		return Stat{}, fmt.Errorf("getting handle: %w", ret)
	}
	s := Stat{Index: i}
	if s.UUID, ret = dev.GetUUID(); ret != nvml.SUCCESS {
		return Stat{}, fmt.Errorf("uuid: %w", ret)
	}
	if s.Name, ret = dev.GetName(); ret != nvml.SUCCESS {
		return Stat{}, fmt.Errorf("name: %w", ret)
	}
	mem, ret := dev.GetMemoryInfo()
	if ret != nvml.SUCCESS {
		return Stat{}, fmt.Errorf("memory: %w", ret)
	}
	s.MemoryUsed, s.MemoryTotal = mem.Used, mem.Total
	// The rest may be unsupported on some boards or under MIG: absent, not fatal.
	if u, ret := dev.GetUtilizationRates(); ret == nvml.SUCCESS {
		s.UtilizationPct = float64(u.Gpu)
	} else if ret != nvml.ERROR_NOT_SUPPORTED {
		return Stat{}, fmt.Errorf("utilization: %w", ret)
	}
	if mw, ret := dev.GetPowerUsage(); ret == nvml.SUCCESS {
		s.PowerW = float64(mw) / 1000
	} else if ret != nvml.ERROR_NOT_SUPPORTED {
		return Stat{}, fmt.Errorf("power: %w", ret)
	}
	if c, ret := dev.GetTemperature(nvml.TEMPERATURE_GPU); ret == nvml.SUCCESS {
		s.TemperatureC = float64(c)
	} else if ret != nvml.ERROR_NOT_SUPPORTED {
		return Stat{}, fmt.Errorf("temperature: %w", ret)
	}
	return s, nil
}
