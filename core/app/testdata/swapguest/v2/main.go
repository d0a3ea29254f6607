// Command v2 is version 2.0.0 of core/app's test bundle "swap" (see
// package swap).
package main

import "github.com/kobana/kadu/core/app/testdata/swapguest/internal/swap"

// A c-shared module never runs main: the bundle registers from init.
func init() { swap.Register("2.0.0") }

func main() {}
