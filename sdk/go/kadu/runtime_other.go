//go:build !wasip1

package kadu

// tuneRuntime leaves a native process (tests, kadutest) as it is.
func tuneRuntime() {}
