package app

// The heaviest end-to-end tests of this package (TestHotSwapOverHTTP,
// TestBundleFileBrokenWhileServing, TestMetricsEndToEnd,
// TestConformanceConfigServesFixtures, TestTrustedProxiesOverHTTP,
// TestFirstPartyBundlesServe) each serve the product with its Go bundles
// on a server, store and registry of their own, and call t.Parallel: go
// test runs them together once every serial test has finished, so that the
// package, the longest of `go test ./...`, keeps both cores busy at its
// end instead of one. Tests that measure the process (its heap, its
// resident memory: TestReloadLoopOverHTTPDoesNotLeak,
// TestPluginMemoryBudgetOverHTTP, the statement limits) stay serial, so
// nothing runs beside them. A test that changes process state (t.Setenv,
// the working directory, a global) must not be made parallel.
