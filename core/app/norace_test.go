//go:build !race

package app

// raceEnabled: see race_test.go.
const raceEnabled = false
