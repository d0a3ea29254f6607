package plugin

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/kobana/kadu/core/api/routeclass"
	"github.com/kobana/kadu/core/auth"
	"github.com/kobana/kadu/core/plugin/internal/route"
)

// Validate checks the bundle at path offline, as Reload would, without a
// pinned hash or a dispatcher: it compiles the module, runs kadu_describe
// under the default limits and validates the manifest. routes is the
// operator's grant; nil skips the check that the manifest's routes are
// within it. It is what `kadu plugins validate FILE` runs.
//
// Cross-bundle checks (unique tool names) need the other bundles and are
// left to Reload.
func Validate(ctx context.Context, path string, routes []string) (*Manifest, error) {
	return validateBundle(ctx, path, routes, "")
}

// ValidateModule is Validate for a module held in memory (a bundle built
// into the binary); label names it in errors. cacheDir, when not empty,
// keeps the compiled module for the next call; a cache that cannot be
// opened is not used.
func ValidateModule(ctx context.Context, label string, wasm []byte, routes []string, cacheDir string) (*Manifest, error) {
	if wasm == nil {
		wasm = []byte{}
	}
	if cacheDir != "" && os.MkdirAll(cacheDir, 0o700) != nil {
		cacheDir = "" // a read-only home: compile every time
	}
	return validateModule(ctx, label, wasm, routes, cacheDir)
}

// validateBundle is Validate with an optional compilation cache directory.
func validateBundle(ctx context.Context, path string, routes []string, cacheDir string) (*Manifest, error) {
	return validateModule(ctx, path, nil, routes, cacheDir)
}

// validateModule validates module, or the file at path when module is nil.
func validateModule(ctx context.Context, path string, module []byte, routes []string, cacheDir string) (*Manifest, error) {
	r, err := New(ctx, &Options{Dispatcher: refuseDispatch{}, CacheDir: cacheDir})
	if err != nil {
		return nil, err
	}
	defer r.Close(context.Background())
	cfg := BundleConfig{Name: "validate", Path: path, Wasm: module, Routes: routes}.withDefaults()
	var grant []route.Pattern // nil: no grant to check against
	if routes != nil {
		grant = make([]route.Pattern, 0, len(routes)) // empty: a grant of nothing
	}
	var errs []error
	for i, s := range routes {
		g, err := route.Parse(s)
		if err != nil {
			errs = append(errs, fmt.Errorf("routes[%d]: %w", i, err))
		}
		grant = append(grant, g)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	wasm, sum, err := cfg.module()
	if err != nil {
		return nil, err
	}
	v := &version{reg: r, cfg: cfg, sha: sum, grant: grant, classes: routeclass.New(), id: path, drained: make(chan struct{}),
		breaker: breaker{policy: r.set.quarantine}, log: r.set.log}
	man, err := r.compileAndDescribe(ctx, v, wasm)
	if err != nil {
		return nil, err
	}
	v.close()
	return man.m, nil
}

// refuseDispatch is the dispatcher of an offline validation: kadu_describe
// cannot call the API anyway.
type refuseDispatch struct{}

func (refuseDispatch) Dispatch(context.Context, *auth.Principal, string, string, []byte) (int, []byte) {
	return 503, []byte(`{"status":503,"errors":[{"code":"unavailable","title":"Unavailable","detail":"No API during validation.","param":null,"hint":""}]}`)
}
