package chdb

import (
	"syscall"
	"unsafe"
)

// goSignals are the signals whose handlers the Go runtime needs (stack growth and nil checks on
// SIGSEGV, async preemption on SIGURG, crash reports on the rest) and that libchdb resets or
// replaces: chdb_set_signal_handlers_enabled(0) and chdb_connect put SIG_DFL on the deadly ones.
var goSignals = []syscall.Signal{
	syscall.SIGABRT, syscall.SIGSEGV, syscall.SIGILL, syscall.SIGBUS, syscall.SIGSYS,
	syscall.SIGFPE, syscall.SIGTSTP, syscall.SIGTRAP, syscall.SIGURG,
}

// kernelSigaction is the kernel's struct sigaction on linux/amd64 and arm64, kept opaque.
type kernelSigaction [4]uint64

// keepGoSignals runs fn and then puts back the handlers the Go runtime had installed, so that a
// Go panic still panics after libchdb opens instead of landing in a C handler.
func keepGoSignals(fn func()) {
	saved := make([]kernelSigaction, len(goSignals))
	for i, sig := range goSignals {
		rtSigaction(sig, nil, &saved[i])
	}
	defer func() {
		for i, sig := range goSignals {
			rtSigaction(sig, &saved[i], nil)
		}
	}()
	fn()
}

func rtSigaction(sig syscall.Signal, act, old *kernelSigaction) {
	const sigsetSize = 8
	syscall.RawSyscall6(syscall.SYS_RT_SIGACTION, uintptr(sig),
		uintptr(unsafe.Pointer(act)), uintptr(unsafe.Pointer(old)), sigsetSize, 0, 0)
}
