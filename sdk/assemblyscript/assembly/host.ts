// The host imports wrapped for AssemblyScript values: buffers the guest
// allocates, sized the way each import asks (sdk/ABI.md §6).

import * as abi from "./abi";
import { ByteWriter, decodeUTF8, utf8 } from "./bytes";

/** Reads this invocation's input of n bytes; null when the host does not give n bytes. */
export function readInput(n: i32): ArrayBuffer | null {
  if (n < 0) return null;
  const buf = new ArrayBuffer(n);
  if (abi.input_read(changetype<usize>(buf), n) != n) return null;
  return buf;
}

/** Hands the output to the host; false when it is over the cap (the invocation then faults). */
export function writeOutput(w: ByteWriter): bool {
  return abi.output_write(w.ptr, w.length) == 0;
}

/** Writes one log message at level 0 (debug) … 3 (error). */
export function hostLog(level: i32, message: string): void {
  const b = utf8(message);
  abi.log(level, changetype<usize>(b), b.byteLength);
}

// caller_info and config_get write only when the buffer is big enough and
// return the length needed: ask once with a guess, again with the size.

/** The caller JSON, as UTF-8 bytes. */
export function callerInfo(): ArrayBuffer {
  let buf = new ArrayBuffer(256);
  const n = abi.caller_info(changetype<usize>(buf), buf.byteLength);
  if (n < 0) abort("kadu: caller_info returned " + n.toString());
  if (n > buf.byteLength) {
    buf = new ArrayBuffer(n);
    const m = abi.caller_info(changetype<usize>(buf), n);
    if (m != n) abort("kadu: the host changed caller_info from " + n.toString() + " to " + m.toString() + " bytes between two reads");
  }
  return buf.slice(0, n);
}

/** The operator's config value for key, or null when it is not set. */
export function configGet(key: string): string | null {
  const k = utf8(key);
  let buf = new ArrayBuffer(128);
  const n = abi.config_get(changetype<usize>(k), k.byteLength, changetype<usize>(buf), buf.byteLength);
  if (n < 0) return null;
  if (n > buf.byteLength) {
    buf = new ArrayBuffer(n);
    const m = abi.config_get(changetype<usize>(k), k.byteLength, changetype<usize>(buf), n);
    if (m != n) abort("kadu: the host changed config " + key + " from " + n.toString() + " to " + m.toString() + " bytes between two reads");
  }
  return decodeUTF8(changetype<usize>(buf), n);
}

/** One API request (bodyLen 0: no body): the status and the body's bytes. */
export function apiCall(method: string, path: string, bodyPtr: usize, bodyLen: i32): ApiAnswer {
  const m = utf8(method);
  const p = utf8(path);
  const r = abi.api(changetype<usize>(m), m.byteLength, changetype<usize>(p), p.byteLength, bodyPtr, bodyLen);
  const status = <i32>(r >> 32);
  const n = <i32>(<u32>r); // the length is unsigned; over 2 GiB cannot happen
  const buf = new ArrayBuffer(n < 0 ? 0 : n);
  if (n > 0) {
    const got = abi.api_read(changetype<usize>(buf), n);
    if (got != n) abort("kadu: api_read returned " + got.toString() + " for " + n.toString() + " bytes of " + method + " " + path);
  }
  return new ApiAnswer(status, buf);
}

export class ApiAnswer {
  constructor(public status: i32, public body: ArrayBuffer) {}
}

/** Unix time in milliseconds, from WASI's real-time clock. */
export function nowMillis(): i64 {
  const out = memory.data(8);
  if (abi.clock_time_get(0, 1000, out) != 0) return 0;
  return <i64>(load<u64>(out) / 1000000);
}

/** n random bytes from the host (crypto/rand). */
export function randomBytes(n: i32): ArrayBuffer {
  const buf = new ArrayBuffer(n);
  if (n > 0 && abi.random_get(changetype<usize>(buf), <usize>n) != 0) abort("kadu: random_get failed");
  return buf;
}
