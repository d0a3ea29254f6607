//go:build wasip1

// Command faulty is the misbehaving test bundle: one tool per way a guest
// can fail, and one that works, to show the next call is unaffected.
package main

import (
	"strings"

	"github.com/kobana/kadu/core/plugin/testdata/guests/rawabi"
)

func main() {}

//go:wasmexport kadu_abi_v1
func abiV1() {}

var hoard [][]byte

//go:wasmexport kadu_describe
func describe(n int32) int32 {
	rawabi.Input(n)
	tool := func(name string) map[string]any {
		return map[string]any{"name": name, "description": "Faults: " + name, "inputSchema": rawabi.ObjectSchema,
			"annotations": map[string]bool{"readOnlyHint": true}, "access": rawabi.Access("viewer", "read")}
	}
	return rawabi.JSON(rawabi.StatusOK, map[string]any{
		"abi": "kadu/v1", "name": "faulty", "version": "0.1.0",
		"tools": []any{tool("ok"), tool("spin"), tool("hog"), tool("panic"), tool("big"), tool("garbage"),
			tool("bad_status"), tool("silent"), tool("bad_shape"), tool("forged_code"), tool("chatty")},
		"routes": []string{},
	})
}

//go:wasmexport kadu_handle
func handle(n int32) int32 {
	inv := rawabi.ReadInvocation(n)
	switch inv.Params.Name {
	case "spin":
		for {
		}
	case "hog":
		for {
			hoard = append(hoard, make([]byte, 1<<20))
		}
	case "panic":
		panic("guest panics on purpose")
	case "big":
		rawabi.Output(make([]byte, 2<<20))
		return rawabi.Return(rawabi.StatusOK)
	case "garbage":
		rawabi.Output([]byte("{not json"))
		return rawabi.Return(rawabi.StatusOK)
	case "bad_status":
		return rawabi.JSON(7, rawabi.Text("seven", nil))
	case "silent":
		return rawabi.Return(rawabi.StatusOK)
	case "bad_shape":
		return rawabi.JSON(rawabi.StatusOK, map[string]any{"content": "not a list"})
	case "forged_code":
		return rawabi.JSON(rawabi.StatusProtocol, map[string]any{"code": -32700, "message": "forged parse error"})
	case "chatty":
		for i := 0; i < 200; i++ {
			rawabi.Log(1, strings.Repeat("x", 10))
		}
		return rawabi.JSON(rawabi.StatusOK, rawabi.Text("said a lot", nil))
	}
	return rawabi.JSON(rawabi.StatusOK, rawabi.Text("ok", nil))
}
