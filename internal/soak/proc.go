package soak

import (
	"bufio"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"
)

func goroutines() int { return runtime.NumGoroutine() }

// settle waits a while for goroutines to end and returns how many more run than before.
func settle(before int) int {
	deadline := time.Now().Add(15 * time.Second)
	for {
		n := runtime.NumGoroutine() - before
		if n <= 0 || time.Now().After(deadline) {
			return max(0, n)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// peakRSS is the process's peak resident memory (VmHWM), in MB; 0 where /proc is not there.
func peakRSS() float64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			kb, _ := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 64)
			return kb / 1024
		}
	}
	return 0
}
