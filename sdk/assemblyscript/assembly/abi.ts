// The host imports of module "kadu" (sdk/ABI.md §6), as the host declares
// them: every pointer and length is an i32 offset and byte count into this
// module's memory. The guest owns every buffer; the host reads or writes
// it only during the call.
//
// These are the raw imports: bundles use the wrappers in host.ts (through
// Call, config, log) instead.

// @ts-ignore: decorator
@external("kadu", "input_read")
export declare function input_read(buf: usize, cap: i32): i32;

// @ts-ignore: decorator
@external("kadu", "output_write")
export declare function output_write(ptr: usize, len: i32): i32;

// @ts-ignore: decorator
@external("kadu", "api")
export declare function api(
  methodPtr: usize, methodLen: i32,
  pathPtr: usize, pathLen: i32,
  bodyPtr: usize, bodyLen: i32,
): i64;

// @ts-ignore: decorator
@external("kadu", "api_read")
export declare function api_read(buf: usize, cap: i32): i32;

// @ts-ignore: decorator
@external("kadu", "caller_info")
export declare function caller_info(buf: usize, cap: i32): i32;

// @ts-ignore: decorator
@external("kadu", "config_get")
export declare function config_get(keyPtr: usize, keyLen: i32, buf: usize, cap: i32): i32;

// @ts-ignore: decorator
@external("kadu", "log")
export declare function log(level: i32, ptr: usize, len: i32): void;

// WASI preview 1, for what AssemblyScript's standard library would import
// from "env" (which the host refuses): randomness and the clock.

// @ts-ignore: decorator
@external("wasi_snapshot_preview1", "random_get")
export declare function random_get(buf: usize, len: usize): u16;

// @ts-ignore: decorator
@external("wasi_snapshot_preview1", "clock_time_get")
export declare function clock_time_get(clockId: u32, precision: u64, time: usize): u16;
