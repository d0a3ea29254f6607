package kadu

import "runtime/debug"

// gcPercent is the collector's GOGC in a guest. Go's smallest heap goal is
// 4 MiB × GOGC/100: at the default of 100 a pooled instance's heap grows
// to 4 MiB of garbage before the first collection, and linear memory never
// shrinks. A call makes a few KiB of garbage over a live heap of a few
// hundred KiB, so a collection is cheap and rare even at 25.
const gcPercent = 25

// tuneRuntime sets the collector for a guest; Register calls it, inside
// _initialize.
func tuneRuntime() { debug.SetGCPercent(gcPercent) }
