//go:build !linux

package pgtest

import "syscall"

// serverProcAttr runs the postmaster as cred. Outside Linux there is no
// parent-death signal: a killed test process leaves its server running.
func serverProcAttr(cred *syscall.Credential) *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Credential: cred}
}
