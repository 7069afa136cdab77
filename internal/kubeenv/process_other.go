//go:build !linux

package kubeenv

import "syscall"

// childAttr has nothing to set where the kernel cannot signal a child on its parent's death.
func childAttr() *syscall.SysProcAttr { return nil }
