package abi

import "unsafe"

// The imports of module "kadu" (sdk/ABI.md §6). A Go string parameter is
// lowered to (ptr i32, len i32), which is the ABI's (ptr, len) pair.

//go:wasmimport kadu input_read
func inputRead(buf unsafe.Pointer, capacity int32) int32

//go:wasmimport kadu output_write
func outputWrite(ptr unsafe.Pointer, n int32) int32

//go:wasmimport kadu api
func api(method string, path string, body unsafe.Pointer, bodyLen int32) int64

//go:wasmimport kadu api_read
func apiRead(buf unsafe.Pointer, capacity int32) int32

//go:wasmimport kadu caller_info
func callerInfo(buf unsafe.Pointer, capacity int32) int32

//go:wasmimport kadu config_get
func configGet(key string, buf unsafe.Pointer, capacity int32) int32

//go:wasmimport kadu log
func hostLog(level int32, ptr unsafe.Pointer, n int32)

// imports is the real host. Go's collector does not move heap objects, and
// a goroutine's stack cannot grow while it is inside a host call, so a
// slice's address stays valid for the duration of each call.
type imports struct{}

var _ Host = imports{}

// Current returns the host: in a wasm guest, always the real one.
func Current() Host { return imports{} }

func ptr(b []byte) unsafe.Pointer { return unsafe.Pointer(unsafe.SliceData(b)) }

func (imports) InputRead(buf []byte) int32 { return inputRead(ptr(buf), int32(len(buf))) }

func (imports) OutputWrite(b []byte) int32 { return outputWrite(ptr(b), int32(len(b))) }

func (imports) API(method, path string, body []byte) int64 {
	return api(method, path, ptr(body), int32(len(body)))
}

func (imports) APIRead(buf []byte) int32 { return apiRead(ptr(buf), int32(len(buf))) }

func (imports) CallerInfo(buf []byte) int32 { return callerInfo(ptr(buf), int32(len(buf))) }

func (imports) ConfigGet(key string, buf []byte) int32 {
	return configGet(key, ptr(buf), int32(len(buf)))
}

func (imports) Log(level int32, msg []byte) { hostLog(level, ptr(msg), int32(len(msg))) }

// Install exists so that tests and kadutest compile for wasip1 too; in a
// wasm guest the host is always the real one, and Install panics.
func Install(Host) (restore func()) {
	panic("kadu: a test host can only be installed in a native build (kadutest runs natively)")
}
