package kubeenv

import "syscall"

// childAttr kills a control-plane process when the test binary dies without running its
// cleanups (a timeout's panic, a kill), so that no etcd or API server outlives it.
func childAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
