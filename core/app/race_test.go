//go:build race

package app

// raceEnabled: the race detector multiplies the Go heap's memory, so
// bounds on the process's resident memory do not hold under it.
const raceEnabled = true
