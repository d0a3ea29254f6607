// The guest exports of kadu/v1 (sdk/ABI.md §4). WebAssembly exports come
// from the entry file only, so a bundle's entry file re-exports these:
//
//   export { kadu_abi_v1, kadu_describe, kadu_handle } from "@kobana/kadu-sdk/assembly/exports";
//
// Memory: bundles are built with the incremental runtime (the compiler's
// default, see ../asconfig.json), whose collector runs in small steps as a
// call allocates. An instance serves many calls, so what one call
// allocates must be reclaimed without anyone asking; and it must be
// reclaimable during the call too, because one call may allocate a lot
// (pages of API responses). The minimal runtime collects only when
// asked, with nothing on the stack (here: after each export returns),
// so one such call could reach the memory limit; the stub runtime never
// frees. memory_test.go measures it: the fixture's memory stays flat over
// 1000 mixed calls.

import { describe, handle } from "./dispatch";

/** The marker of ABI kadu/v1; never called. */
export function kadu_abi_v1(): void {}

/** Answers the manifest. */
export function kadu_describe(inLen: i32): i32 {
  return describe(inLen);
}

/** Serves one invocation. */
export function kadu_handle(inLen: i32): i32 {
  return handle(inLen);
}
