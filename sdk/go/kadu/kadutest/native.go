package kadutest

import (
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/kobana/kadu/sdk/go/kadu/internal/abi"
)

// nativeMu serialises native calls: like a wasm instance, the guest code
// in the test binary has one host at a time.
var nativeMu sync.Mutex

// Native returns the bundle registered in this test binary (by the init
// of the package under test), served by host h through the same code the
// wasm exports run. It reads and checks the manifest first, failing t on
// every rule of sdk/ABI.md §10 it breaks.
func Native(t testing.TB, h *Host) *Bundle {
	t.Helper()
	b := &Bundle{host: h, eng: nativeEngine{}}
	b.load(t)
	return b
}

type nativeEngine struct{}

func (nativeEngine) call(s *session) (status int32, trapped error) {
	nativeMu.Lock()
	defer nativeMu.Unlock()
	g := abi.Registered()
	if g == nil {
		return 0, errors.New("no bundle is registered: the package under test must call kadu.Register from a func init")
	}
	restore := abi.Install(s)
	defer restore()
	defer func() {
		if r := recover(); r != nil {
			trapped = fmt.Errorf("%v", r)
		}
	}()
	if s.phase == phaseDescribe {
		return g.Describe(s, int32(len(s.input))), nil
	}
	return g.Handle(s, int32(len(s.input))), nil
}
