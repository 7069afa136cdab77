//go:build !linux || !cgo || !nvml

package main

import (
	"testing"

	"github.com/bursar-dev/bursar/internal/gpu"
)

// mockGPUs: go-nvml's mock needs cgo and the nvml build tag; without them the collector runs as
// on a machine with no driver, and publishes no GPU samples.
func mockGPUs(t *testing.T) (open func() (gpu.Reader, error), gpus int) {
	t.Helper()
	return nil, 0
}
