//go:build !linux

package chdb

// keepGoSignals runs fn. The package is built for Linux, where libchdb ships; elsewhere the
// signal handlers are left to the library.
func keepGoSignals(fn func()) { fn() }
