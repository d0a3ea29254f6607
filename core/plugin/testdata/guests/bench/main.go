//go:build wasip1

// Command bench is the cheapest possible bundle, for measuring what the
// host costs per call: no JSON library and no allocation per call (so no
// garbage to collect, and no runtime.Gosched needed). "noop" answers at
// once; "api" makes one api() round trip first.
package main

import (
	"bytes"
	"unsafe"
)

//go:wasmimport kadu input_read
func inputRead(buf unsafe.Pointer, capacity int32) int32

//go:wasmimport kadu output_write
func outputWrite(ptr unsafe.Pointer, n int32) int32

//go:wasmimport kadu api
func apiCall(mPtr unsafe.Pointer, mLen int32, pPtr unsafe.Pointer, pLen int32, bPtr unsafe.Pointer, bLen int32) int64

//go:wasmimport kadu api_read
func apiRead(buf unsafe.Pointer, capacity int32) int32

func main() {}

var (
	in       [64 << 10]byte
	resp     [64 << 10]byte
	method   = []byte("GET")
	path     = []byte("/api/v1/tasks?limit=1")
	apiTool  = []byte(`"name":"api"`)
	manifest = []byte(`{"abi":"kadu/v1","name":"bench","version":"1.0.0","tools":[` +
		`{"name":"noop","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":true},"access":{"min_role":"viewer","scope":"read"}},` +
		`{"name":"api","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":true},"access":{"min_role":"viewer","scope":"read"}}],` +
		`"routes":["GET /api/v1/tasks"]}`)
	result = []byte(`{"content":[{"type":"text","text":"ok"}]}`)
)

//go:wasmexport kadu_abi_v1
func abiV1() {}

//go:wasmexport kadu_describe
func describe(n int32) int32 {
	outputWrite(unsafe.Pointer(&manifest[0]), int32(len(manifest)))
	return 0
}

//go:wasmexport kadu_handle
func handle(n int32) int32 {
	if inputRead(unsafe.Pointer(&in[0]), int32(len(in))) != n {
		return 2
	}
	if bytes.Contains(in[:n], apiTool) {
		r := apiCall(unsafe.Pointer(&method[0]), int32(len(method)), unsafe.Pointer(&path[0]), int32(len(path)), nil, 0)
		if r>>32 != 200 || apiRead(unsafe.Pointer(&resp[0]), int32(len(resp))) != int32(uint32(r)) {
			return 2
		}
	}
	outputWrite(unsafe.Pointer(&result[0]), int32(len(result)))
	return 0
}
