//go:build !linux

package plugin

import "fmt"

// region is the storage of one linear memory: a Go slice grown as the
// guest grows, as wazero does without an allocator. Only Linux reserves an
// address range outside the Go heap (region_linux.go); elsewhere a closed
// instance's memory returns with the next garbage collection. Not safe for
// concurrent use: linearMemory serialises it.
type region struct {
	max  uint64
	heap []byte
}

func newRegion(maxBytes uint64) region { return region{max: maxBytes} }

func (r *region) commit(size uint64) ([]byte, error) {
	if size > r.max {
		return nil, fmt.Errorf("%d bytes over the %d-byte limit", size, r.max)
	}
	if size > uint64(len(r.heap)) {
		r.heap = append(r.heap, make([]byte, size-uint64(len(r.heap)))...)
	}
	return r.heap[:size:size], nil
}

func (r *region) discard() {}

func (r *region) unmap() { r.heap = nil }
