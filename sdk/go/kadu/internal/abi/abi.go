// Package abi is the kadu v1 host interface as the Go guest sees it
// (sdk/ABI.md §6), and the hook through which the wasm exports reach the
// bundle that kadu.Register installed.
//
// It owns: the Host interface, the wasip1 implementation of it over
// //go:wasmimport functions, and, in native builds, the slot a test host
// (kadutest) is installed in.
//
// It must not: know MCP or the manifest (package kadu does), or keep a
// pointer into guest memory past a host call (there is no such thing on the
// guest side: every buffer is a Go slice the guest owns).
package abi

import "sync/atomic"

// Host is the host side of kadu v1. Each method is one host import; slices
// are the guest's buffers, valid only for the call.
//
// In a wasm guest there is one Host, the real one, and calls are
// sequential. Natively (tests), the Host is whatever kadutest installed.
type Host interface {
	// InputRead copies the invocation's input into buf when it fits and
	// returns its length, or returns -1.
	InputRead(buf []byte) int32
	// OutputWrite sets the invocation's output; 0, or -1 over the cap.
	OutputWrite(b []byte) int32
	// API performs an API request as the caller and returns
	// (status << 32) | response length.
	API(method, path string, body []byte) int64
	// APIRead copies the last API response body into buf when it fits and
	// returns its length, or returns -1.
	APIRead(buf []byte) int32
	// CallerInfo returns the length of the caller JSON, written to buf
	// only when it fits.
	CallerInfo(buf []byte) int32
	// ConfigGet returns -1 for an absent key, else the value's length,
	// written to buf only when it fits.
	ConfigGet(key string, buf []byte) int32
	// Log writes one message at level 0 (debug) … 3 (error).
	Log(level int32, msg []byte)
}

// Guest is what the exports call: the bundle kadu.Register built.
type Guest interface {
	// Describe serves kadu_describe and returns its status.
	Describe(h Host, inLen int32) int32
	// Handle serves kadu_handle and returns its status.
	Handle(h Host, inLen int32) int32
}

// registered is written once, by kadu.Register during package
// initialisation (in wasm: inside _initialize), and read by every export.
var registered atomic.Pointer[guestBox]

type guestBox struct{ g Guest }

// Register installs g as the module's bundle. It reports false, installing
// nothing, when a bundle is already registered: a module is one bundle.
func Register(g Guest) bool {
	return registered.CompareAndSwap(nil, &guestBox{g: g})
}

// Registered returns the installed bundle, or nil when kadu.Register was
// never called.
func Registered() Guest {
	if b := registered.Load(); b != nil {
		return b.g
	}
	return nil
}
