package plugin

import (
	"fmt"
	"math"
	"syscall"
)

// region is the address range of one linear memory: reserved whole up to
// the bundle's memory limit (PROT_NONE, so it costs address space, not
// memory), committed as the guest grows. Not safe for concurrent use:
// linearMemory serialises it.
type region struct {
	max       uint64
	b         []byte // the whole reservation; nil when reserving failed
	committed uint64
	heap      []byte // fallback when the reservation failed
}

func newRegion(maxBytes uint64) region {
	r := region{max: maxBytes}
	if maxBytes == 0 || maxBytes > math.MaxInt {
		return r // nothing to reserve, or more than this platform's int: the Go-slice fallback
	}
	b, err := syscall.Mmap(-1, 0, int(maxBytes), syscall.PROT_NONE,
		syscall.MAP_PRIVATE|syscall.MAP_ANON|syscall.MAP_NORESERVE)
	if err == nil {
		r.b = b
	}
	return r
}

// commit makes the first size bytes usable and returns them. Pages never
// move: wazero's compiled code may keep the address.
func (r *region) commit(size uint64) ([]byte, error) {
	if size > r.max {
		return nil, fmt.Errorf("%d bytes over the %d-byte limit", size, r.max)
	}
	if r.b == nil {
		return r.heapCommit(size), nil
	}
	if size > r.committed {
		if err := syscall.Mprotect(r.b[r.committed:size], syscall.PROT_READ|syscall.PROT_WRITE); err != nil {
			return nil, err
		}
		r.committed = size
	}
	return r.b[:size:size], nil
}

// heapCommit grows a Go slice, as wazero does without an allocator.
func (r *region) heapCommit(size uint64) []byte {
	if size > uint64(len(r.heap)) {
		r.heap = append(r.heap, make([]byte, size-uint64(len(r.heap)))...)
	}
	return r.heap[:size:size]
}

// discard gives the committed pages back to the operating system; reads
// see zeros afterwards. For a module closed under a running call.
func (r *region) discard() {
	if r.b != nil && r.committed > 0 {
		_ = syscall.Madvise(r.b[:r.committed], syscall.MADV_DONTNEED)
	}
}

// unmap releases the reservation. The memory must not be used afterwards.
func (r *region) unmap() {
	if r.b != nil {
		_ = syscall.Munmap(r.b)
		r.b = nil
	}
	r.heap = nil
}
