package pgtest

import "syscall"

// serverProcAttr runs the postmaster as cred and has the kernel send it
// SIGQUIT (immediate shutdown) if the test process dies first.
func serverProcAttr(cred *syscall.Credential) *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Credential: cred, Pdeathsig: syscall.SIGQUIT}
}
