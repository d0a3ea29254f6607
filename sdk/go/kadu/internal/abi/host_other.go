//go:build !wasip1

package abi

import (
	"os"
	"sync/atomic"
)

// Outside a wasm guest there are no host imports: a test installs a fake
// host (kadutest does), and without one the guest behaves as a bundle whose
// operator set no config, whose logs go to stderr, and which is never
// invoked.

var installed atomic.Pointer[hostBox]

type hostBox struct{ h Host }

// Current returns the installed host, or one that has no invocation.
func Current() Host {
	if b := installed.Load(); b != nil {
		return b.h
	}
	return none{}
}

// Install makes h the host Current returns until restore is called. Tests
// that install hosts must not run in parallel with each other: the guest,
// like a wasm instance, has one host at a time.
func Install(h Host) (restore func()) {
	prev := installed.Swap(&hostBox{h: h})
	return func() { installed.Store(prev) }
}

// none is the host outside Kadu and outside tests.
type none struct{}

const notInKadu = "kadu: not running inside Kadu: build with GOOS=wasip1 GOARCH=wasm -buildmode=c-shared, or test with kadutest"

func (none) InputRead([]byte) int32           { panic(notInKadu) }
func (none) OutputWrite([]byte) int32         { panic(notInKadu) }
func (none) API(string, string, []byte) int64 { panic(notInKadu) }
func (none) APIRead([]byte) int32             { panic(notInKadu) }
func (none) CallerInfo([]byte) int32          { panic(notInKadu) }
func (none) ConfigGet(string, []byte) int32   { return -1 }
func (none) Log(_ int32, msg []byte)          { _, _ = os.Stderr.Write(append(msg, '\n')) }
