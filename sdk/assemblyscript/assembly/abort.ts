// What AssemblyScript's standard library imports from "env" (which the
// host refuses), provided by the guest instead. The bundle's asconfig.json
// points the compiler at them (see ../asconfig.json):
//
//   --use abort=~lib/@kobana/kadu-sdk/assembly/abort/kaduAbort
//   --use trace=~lib/@kobana/kadu-sdk/assembly/abort/kaduTrace
//   --use seed=~lib/@kobana/kadu-sdk/assembly/abort/kaduSeed

import * as abi from "./abi";

// A static buffer, so that reporting an abort allocates nothing: the
// abort may come from the allocator itself.
const MESSAGE_CAP: i32 = 4096;
const message = memory.data(MESSAGE_CAP);
let aborting = false;

// Appends the UTF-16 string s as UTF-8 at message+n, within the cap.
function put(n: i32, s: string | null): i32 {
  if (s === null) return n;
  const src = changetype<usize>(s);
  const len = s.length;
  for (let i = 0; i < len; i++) {
    let c = <u32>load<u16>(src + (<usize>i << 1));
    if (c >= 0xd800 && c < 0xe000) c = 0xfffd; // enough for a log line
    const size = c < 0x80 ? 1 : c < 0x800 ? 2 : 3;
    if (n + size > MESSAGE_CAP) return n;
    const p = message + <usize>n;
    if (size == 1) {
      store<u8>(p, <u8>c);
    } else if (size == 2) {
      store<u8>(p, <u8>(0xc0 | (c >> 6)));
      store<u8>(p, <u8>(0x80 | (c & 0x3f)), 1);
    } else {
      store<u8>(p, <u8>(0xe0 | (c >> 12)));
      store<u8>(p, <u8>(0x80 | ((c >> 6) & 0x3f)), 1);
      store<u8>(p, <u8>(0x80 | (c & 0x3f)), 2);
    }
    n += size;
  }
  return n;
}

function putNumber(n: i32, v: u32): i32 {
  let digits: u32 = 1;
  for (let x = v; x >= 10; x /= 10) digits++;
  if (n + <i32>digits > MESSAGE_CAP) return n;
  for (let i: i32 = <i32>digits - 1, x = v; i >= 0; i--, x /= 10) {
    store<u8>(message + <usize>(n + i), <u8>(0x30 + x % 10));
  }
  return n + <i32>digits;
}

/**
 * abort(): `throw new Error(…)`, a failed assert, an out-of-range index,
 * the SDK's own checks. Logs the message and where at level error, then
 * traps: the host counts a fault, discards the instance and answers the
 * client -32603 without the message.
 */
export function kaduAbort(msg: string | null = null, fileName: string | null = null, line: u32 = 0, column: u32 = 0): void {
  if (!aborting) {
    aborting = true;
    let n = put(0, "abort: ");
    n = put(n, msg === null ? "(no message)" : msg);
    if (fileName !== null) {
      n = put(n, " (");
      n = put(n, fileName);
      n = put(n, ":");
      n = putNumber(n, line);
      n = put(n, ":");
      n = putNumber(n, column);
      n = put(n, ")");
    }
    abi.log(3, message, n);
  }
  unreachable();
}

/** trace(): logged at level debug with its numbers. */
export function kaduTrace(msg: string, n: i32 = 0, a0: f64 = 0, a1: f64 = 0, a2: f64 = 0, a3: f64 = 0, a4: f64 = 0): void {
  let s = "trace: " + msg;
  if (n > 0) s += " " + a0.toString();
  if (n > 1) s += " " + a1.toString();
  if (n > 2) s += " " + a2.toString();
  if (n > 3) s += " " + a3.toString();
  if (n > 4) s += " " + a4.toString();
  const b = String.UTF8.encode(s);
  abi.log(0, changetype<usize>(b), b.byteLength);
}

/** seed(): Math.random's seed, from the host's random bytes (WASI random_get). */
export function kaduSeed(): f64 {
  const buf = memory.data(8);
  abi.random_get(buf, 8);
  return <f64>(load<u64>(buf) >> 11); // 53 random bits, never NaN
}
