package main

import "syscall"

// childProcAttr kills a server when the harness dies without stopping it
// (a signal it cannot catch, a panic), so that no server outlives a run.
func childProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
