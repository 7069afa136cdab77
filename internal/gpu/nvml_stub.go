//go:build !linux || !cgo || !nvml

package gpu

import "fmt"

// NVMLBuilt says this binary reads GPUs through NVML. go-nvml is cgo, and its headers make every
// plain `go build`, `go vet` and `go install` print deprecation warnings, so NVML is built only
// with -tags nvml (make build does); this build has none.
const NVMLBuilt = false

// OpenNVML reports ErrUnavailable: this binary was built without NVML.
func OpenNVML() (Reader, error) {
	return nil, fmt.Errorf("built without NVML: %w; %s", ErrUnavailable, BuildHint)
}
