//go:build !linux

package main

import "syscall"

// childProcAttr: without a parent-death signal, stopAll is what stops the
// servers.
func childProcAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{} }
