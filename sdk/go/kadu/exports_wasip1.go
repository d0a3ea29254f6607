package kadu

import (
	"runtime"

	"github.com/kobana/kadu/sdk/go/kadu/internal/abi"
)

// The guest exports of kadu v1 (sdk/ABI.md §4). Each calls
// runtime.Gosched before it returns: the Go scheduler runs only while an
// export is running, and without a yield the collector's background work
// never gets to run and the guest's memory grows without bound.

//go:wasmexport kadu_abi_v1
func kaduABIv1() {}

//go:wasmexport kadu_describe
func kaduDescribe(inLen int32) int32 {
	return export("kadu_describe", func(g abi.Guest, h abi.Host) int32 { return g.Describe(h, inLen) })
}

//go:wasmexport kadu_handle
func kaduHandle(inLen int32) int32 {
	return export("kadu_handle", func(g abi.Guest, h abi.Host) int32 { return g.Handle(h, inLen) })
}

func export(name string, f func(abi.Guest, abi.Host) int32) int32 {
	h := abi.Current()
	g := abi.Registered()
	status := statusFault
	if g == nil {
		logf(h, levelError, "%s: no bundle is registered: call kadu.Register from a func init in the bundle's main package", name)
	} else {
		status = f(g, h)
	}
	runtime.Gosched()
	return status
}
