//go:build !linux || !cgo

package gpu

import "fmt"

// OpenNVML reports ErrUnavailable: NVML needs Linux and cgo, and this binary has neither.
func OpenNVML() (Reader, error) {
	return nil, fmt.Errorf("built without cgo or not on linux: %w", ErrUnavailable)
}
