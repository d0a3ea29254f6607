package wire

import "unsafe"

// A guest runs under the host's per-call deadline, which makes wazero call
// out of the compiled code at every loop iteration (about 0.1 µs each, ten
// times the loop's own work). The scanners therefore look at eight bytes
// per iteration wherever a run of ordinary bytes is likely (inside
// strings), with the word tricks below, and fall back to one byte at a
// time around the bytes that matter.

const (
	ones  = 0x0101010101010101
	highs = 0x8080808080808080
)

// load8 reads b[i:i+8] as a little-endian word: one i64.load in wasm. The
// caller checks that eight bytes are there.
func load8(b []byte, i int) uint64 {
	_ = b[i+7]
	return *(*uint64)(unsafe.Pointer(&b[i]))
}

// zeroBytes has the high bit set in (at least) the lowest byte of x that
// is zero, and is 0 when no byte is zero.
func zeroBytes(x uint64) uint64 { return (x - ones) & ^x & highs }

// stringStops reports whether any byte of x ends a plain run inside a JSON
// string: a quote, a backslash or a control character.
func stringStops(x uint64) bool {
	return zeroBytes(x^(ones*'"'))|zeroBytes(x^(ones*'\\'))|((x-ones*0x20)&^x&highs) != 0
}

// escapeStops reports whether any byte of x is one AppendString or plain
// must look at: what stringStops reports, or a byte that is not ASCII.
func escapeStops(x uint64) bool { return stringStops(x) || x&highs != 0 }
