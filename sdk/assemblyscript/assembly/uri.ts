// Percent-encoding for API paths and queries, and decoding for template
// variables (RFC 3986).

import { ByteWriter, decodeUTF8, utf8 } from "./bytes";

const HEX_UPPER = "0123456789ABCDEF";

function unreserved(c: u32): bool {
  return (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a) || (c >= 0x30 && c <= 0x39) ||
    c == 0x2d || c == 0x2e || c == 0x5f || c == 0x7e; // - . _ ~
}

function encode(s: string): string {
  const b = utf8(s);
  const n = b.byteLength;
  const w = new ByteWriter(n + 8);
  for (let i = 0; i < n; i++) {
    const c = <u32>load<u8>(changetype<usize>(b) + <usize>i);
    if (unreserved(c)) {
      w.byte(<u8>c);
    } else {
      w.byte(0x25); // %
      w.byte(<u8>HEX_UPPER.charCodeAt(c >> 4));
      w.byte(<u8>HEX_UPPER.charCodeAt(c & 15));
    }
  }
  return w.toString();
}

/**
 * Encodes s as one path segment: everything but letters, digits and
 * - . _ ~ is percent-encoded as UTF-8, so "a/b c" is "a%2Fb%20c". Use it
 * for every id put in a path: an id with "/" or "?" in it must not
 * reach another route.
 */
export function encodePathSegment(s: string): string {
  return encode(s);
}

/** Encodes s as a query parameter value ("a b&c" is "a%20b%26c"). */
export function encodeQueryValue(s: string): string {
  return encode(s);
}

function hexValue(c: u32): i32 {
  if (c >= 0x30 && c <= 0x39) return <i32>(c - 0x30);
  if (c >= 0x61 && c <= 0x66) return <i32>(c - 0x61 + 10);
  if (c >= 0x41 && c <= 0x46) return <i32>(c - 0x41 + 10);
  return -1;
}

/**
 * Decodes %XX escapes (as UTF-8; invalid sequences become U+FFFD).
 * Returns null when a "%" is not followed by two hex digits.
 */
export function decodePercent(s: string): string | null {
  if (!s.includes("%")) return s;
  const b = utf8(s);
  const n = b.byteLength;
  const src = changetype<usize>(b);
  const w = new ByteWriter(n);
  for (let i = 0; i < n; i++) {
    const c = <u32>load<u8>(src + <usize>i);
    if (c != 0x25) {
      w.byte(<u8>c);
      continue;
    }
    if (i + 2 >= n) return null;
    const hi = hexValue(load<u8>(src + <usize>(i + 1)));
    const lo = hexValue(load<u8>(src + <usize>(i + 2)));
    if (hi < 0 || lo < 0) return null;
    w.byte(<u8>((hi << 4) | lo));
    i += 2;
  }
  return decodeUTF8(w.ptr, w.length);
}
