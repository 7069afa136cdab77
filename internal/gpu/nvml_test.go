//go:build linux && cgo && nvml

package gpu

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxh100"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/server"
)

// mockDGXH100 is go-nvml's DGX H100 (8 x H100 80GB HBM3) with the telemetry calls the server
// mock leaves unset filled in per GPU; unsupported, when set, makes power unsupported on GPU 7.
func mockDGXH100(t testing.TB, unsupported bool) *server.Server {
	t.Helper()
	srv := dgxh100.New()
	for i, d := range srv.Devices {
		dev := d.(*server.Device)
		dev.GetUtilizationRatesFunc = func() (nvml.Utilization, nvml.Return) {
			return nvml.Utilization{Gpu: uint32(10 * i), Memory: uint32(5 * i)}, nvml.SUCCESS
		}
		dev.GetPowerUsageFunc = func() (uint32, nvml.Return) {
			if unsupported && i == 7 {
				return 0, nvml.ERROR_NOT_SUPPORTED
			}
			return uint32(300_000 + 1000*i), nvml.SUCCESS
		}
		dev.GetTemperatureFunc = func(nvml.TemperatureSensors) (uint32, nvml.Return) {
			return uint32(40 + i), nvml.SUCCESS
		}
		used := uint64(i) << 30
		dev.GetMemoryInfoFunc = func() (nvml.Memory, nvml.Return) {
			return nvml.Memory{Total: dev.MemoryInfo.Total, Used: used, Free: dev.MemoryInfo.Total - used}, nvml.SUCCESS
		}
	}
	return srv
}

func TestNVMLReaderReadsTheMockedDGXH100(t *testing.T) {
	r, err := OpenNVMLWith(mockDGXH100(t, true))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	stats, err := r.Read(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(stats) != 8 {
		t.Fatalf("read %d gpus, want 8", len(stats))
	}
	seen := map[string]bool{}
	for i, s := range stats {
		wantPower := float64(300 + i)
		if i == 7 {
			wantPower = 0 // unsupported reads as absent, not as a failed GPU
		}
		if s.Index != i || s.Name != "NVIDIA H100 80GB HBM3" || s.MemoryTotal != 85899345920 ||
			s.MemoryUsed != uint64(i)<<30 || s.UtilizationPct != float64(10*i) || s.PowerW != wantPower ||
			s.TemperatureC != float64(40+i) || !strings.HasPrefix(s.UUID, "GPU-") || seen[s.UUID] {
			t.Errorf("gpu %d = %+v", i, s)
		}
		seen[s.UUID] = true
	}
}

func TestNVMLReaderSkipsAFailingGPU(t *testing.T) {
	srv := mockDGXH100(t, false)
	srv.Devices[3].(*server.Device).GetTemperatureFunc = func(nvml.TemperatureSensors) (uint32, nvml.Return) {
		return 0, nvml.ERROR_GPU_IS_LOST
	}
	r, err := OpenNVMLWith(srv)
	if err != nil {
		t.Fatal(err)
	}
	stats, err := r.Read(context.Background())
	if len(stats) != 7 || err == nil || !strings.Contains(err.Error(), "reading gpu 3") {
		t.Fatalf("read %d gpus, error %v; want 7 and an error naming gpu 3", len(stats), err)
	}
}

func TestOpenNVMLWithoutDriverIsUnavailable(t *testing.T) {
	tests := []struct {
		name            string
		ret             nvml.Return
		wantUnavailable bool
	}{
		{name: "library not found", ret: nvml.ERROR_LIBRARY_NOT_FOUND, wantUnavailable: true},
		{name: "driver not loaded", ret: nvml.ERROR_DRIVER_NOT_LOADED, wantUnavailable: true},
		{name: "driver and library mismatch", ret: nvml.ERROR_LIB_RM_VERSION_MISMATCH},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := dgxh100.New()
			srv.InitFunc = func() nvml.Return { return tt.ret }
			_, err := OpenNVMLWith(srv)
			if err == nil || errors.Is(err, ErrUnavailable) != tt.wantUnavailable {
				t.Fatalf("OpenNVMLWith() = %v, want unavailable=%v", err, tt.wantUnavailable)
			}
		})
	}
}

// TestRealNVML runs against this machine's NVML. Without a driver it checks that opening fails
// cleanly as ErrUnavailable; with BURSAR_NVML=1 it must succeed and prints the samples as JSON.
func TestRealNVML(t *testing.T) {
	r, err := OpenNVML()
	if os.Getenv("BURSAR_NVML") != "1" {
		if err == nil {
			r.Close()
			t.Skip("NVML is present; set BURSAR_NVML=1 to read the real GPUs")
		}
		if !errors.Is(err, ErrUnavailable) {
			t.Fatalf("OpenNVML() without a driver = %v, want ErrUnavailable", err)
		}
		return
	}
	if err != nil {
		t.Fatalf("BURSAR_NVML=1 but NVML did not open: %v", err)
	}
	defer r.Close()
	stats, err := r.Read(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	pub := &recorder{}
	c, err := New(Config{Location: "real", Node: "real"}, Deps{Publisher: pub, Now: time.Now})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Collect(context.Background(), r); err != nil {
		t.Fatal(err)
	}
	out, _ := json.MarshalIndent(map[string]any{"stats": stats, "samples": pub.Events()}, "", "  ")
	t.Logf("real NVML:\n%s", out)
	if len(stats) == 0 {
		t.Fatal("NVML opened but reported no GPUs")
	}
}
