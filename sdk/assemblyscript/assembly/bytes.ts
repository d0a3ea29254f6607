// UTF-8 bytes: a growable output buffer, and decoding to strings.
//
// AssemblyScript strings are UTF-16; everything that crosses the ABI is
// UTF-8. The writer encodes as it goes, so a result is encoded once, and
// JSON string escaping happens in the same pass (json.ts).

/** ByteWriter is a growable UTF-8 buffer; `bytes` holds `length` bytes. */
export class ByteWriter {
  bytes: ArrayBuffer;
  length: i32 = 0;

  constructor(capacity: i32 = 256) {
    this.bytes = new ArrayBuffer(capacity > 16 ? capacity : 16);
  }

  /** Address of the first byte; valid until the next write. */
  get ptr(): usize {
    return changetype<usize>(this.bytes);
  }

  /** Makes room for n more bytes. */
  reserve(n: i32): void {
    const need = <i64>this.length + <i64>n;
    if (need > 0x7fffffff) abort("kadu: buffer over 2 GiB");
    const cap = this.bytes.byteLength;
    if (need <= <i64>cap) return;
    let grown = <i64>cap * 2;
    if (grown < need) grown = need;
    if (grown > 0x7fffffff) grown = 0x7fffffff;
    const next = new ArrayBuffer(<i32>grown);
    memory.copy(changetype<usize>(next), changetype<usize>(this.bytes), <usize>this.length);
    this.bytes = next;
  }

  byte(b: u8): void {
    this.reserve(1);
    store<u8>(this.ptr + <usize>this.length, b);
    this.length++;
  }

  /** Appends an ASCII-only string (no encoding needed). */
  ascii(s: string): void {
    const n = s.length;
    this.reserve(n);
    const dst = this.ptr + <usize>this.length;
    const src = changetype<usize>(s);
    for (let i = 0; i < n; i++) store<u8>(dst + <usize>i, <u8>load<u16>(src + (<usize>i << 1)));
    this.length += n;
  }

  /** Appends n bytes from ptr. */
  raw(ptr: usize, n: i32): void {
    this.reserve(n);
    memory.copy(this.ptr + <usize>this.length, ptr, <usize>n);
    this.length += n;
  }

  /** Appends s as UTF-8; a lone surrogate becomes U+FFFD. */
  utf8(s: string): void {
    const n = s.length;
    this.reserve(n);
    const src = changetype<usize>(s);
    for (let i = 0; i < n; i++) {
      let c = <u32>load<u16>(src + (<usize>i << 1));
      if (c >= 0xd800 && c < 0xe000) {
        if (c < 0xdc00 && i + 1 < n) {
          const d = <u32>load<u16>(src + (<usize>(i + 1) << 1));
          if (d >= 0xdc00 && d < 0xe000) {
            this.codePoint(0x10000 + ((c - 0xd800) << 10) + (d - 0xdc00));
            i++;
            continue;
          }
        }
        c = 0xfffd;
      }
      this.codePoint(c);
    }
  }

  /** Appends one code point as UTF-8. */
  codePoint(c: u32): void {
    this.reserve(4);
    const p = this.ptr + <usize>this.length;
    if (c < 0x80) {
      store<u8>(p, <u8>c);
      this.length += 1;
    } else if (c < 0x800) {
      store<u8>(p, <u8>(0xc0 | (c >> 6)));
      store<u8>(p, <u8>(0x80 | (c & 0x3f)), 1);
      this.length += 2;
    } else if (c < 0x10000) {
      store<u8>(p, <u8>(0xe0 | (c >> 12)));
      store<u8>(p, <u8>(0x80 | ((c >> 6) & 0x3f)), 1);
      store<u8>(p, <u8>(0x80 | (c & 0x3f)), 2);
      this.length += 3;
    } else {
      store<u8>(p, <u8>(0xf0 | (c >> 18)));
      store<u8>(p, <u8>(0x80 | ((c >> 12) & 0x3f)), 1);
      store<u8>(p, <u8>(0x80 | ((c >> 6) & 0x3f)), 2);
      store<u8>(p, <u8>(0x80 | (c & 0x3f)), 3);
      this.length += 4;
    }
  }

  /** The bytes written so far, decoded. */
  toString(): string {
    return decodeUTF8(this.ptr, this.length);
  }
}

/** UTF-8 encoding of s (a lone surrogate becomes U+FFFD). */
export function utf8(s: string): ArrayBuffer {
  return String.UTF8.encode(s, false, String.UTF8.ErrorMode.REPLACE);
}

/**
 * Decodes n bytes of UTF-8 at ptr. Invalid sequences (overlong forms,
 * surrogates, truncated or stray bytes) become U+FFFD, one per bad byte,
 * as Go's encoding/json does, so a string never holds what the bytes did
 * not say.
 */
export function decodeUTF8(ptr: usize, n: i32): string {
  if (n <= 0) return "";
  // At most one UTF-16 unit per byte.
  const out = new ArrayBuffer(n << 1);
  const dst = changetype<usize>(out);
  let w: i32 = 0;
  let i: i32 = 0;
  while (i < n) {
    const b0 = <u32>load<u8>(ptr + <usize>i);
    if (b0 < 0x80) {
      store<u16>(dst + (<usize>w << 1), <u16>b0);
      w++;
      i++;
      continue;
    }
    const size = utf8SequenceLength(ptr, i, n);
    if (size == 0) {
      store<u16>(dst + (<usize>w << 1), 0xfffd);
      w++;
      i++;
      continue;
    }
    let c: u32;
    if (size == 2) {
      c = ((b0 & 0x1f) << 6) | (load<u8>(ptr + <usize>i + 1) & 0x3f);
    } else if (size == 3) {
      c = ((b0 & 0x0f) << 12) | ((<u32>load<u8>(ptr + <usize>i + 1) & 0x3f) << 6) | (load<u8>(ptr + <usize>i + 2) & 0x3f);
    } else {
      c = ((b0 & 0x07) << 18) | ((<u32>load<u8>(ptr + <usize>i + 1) & 0x3f) << 12) |
        ((<u32>load<u8>(ptr + <usize>i + 2) & 0x3f) << 6) | (load<u8>(ptr + <usize>i + 3) & 0x3f);
    }
    if (c >= 0x10000) {
      c -= 0x10000;
      store<u16>(dst + (<usize>w << 1), <u16>(0xd800 + (c >> 10)));
      store<u16>(dst + (<usize>(w + 1) << 1), <u16>(0xdc00 + (c & 0x3ff)));
      w += 2;
    } else {
      store<u16>(dst + (<usize>w << 1), <u16>c);
      w++;
    }
    i += size;
  }
  return String.UTF16.decodeUnsafe(dst, <usize>w << 1);
}

/**
 * Length of the well-formed UTF-8 sequence at ptr[i] (a byte >= 0x80),
 * or 0 when it is not one (RFC 3629: no overlong forms, no surrogates,
 * nothing above U+10FFFF).
 */
export function utf8SequenceLength(ptr: usize, i: i32, n: i32): i32 {
  const b0 = <u32>load<u8>(ptr + <usize>i);
  let size: i32;
  let lo: u32 = 0x80;
  let hi: u32 = 0xbf;
  if (b0 >= 0xc2 && b0 <= 0xdf) {
    size = 2;
  } else if (b0 >= 0xe0 && b0 <= 0xef) {
    size = 3;
    if (b0 == 0xe0) lo = 0xa0;
    else if (b0 == 0xed) hi = 0x9f;
  } else if (b0 >= 0xf0 && b0 <= 0xf4) {
    size = 4;
    if (b0 == 0xf0) lo = 0x90;
    else if (b0 == 0xf4) hi = 0x8f;
  } else {
    return 0;
  }
  if (i + size > n) return 0;
  const b1 = <u32>load<u8>(ptr + <usize>i + 1);
  if (b1 < lo || b1 > hi) return 0;
  for (let k = 2; k < size; k++) {
    const b = <u32>load<u8>(ptr + <usize>(i + k));
    if (b < 0x80 || b > 0xbf) return 0;
  }
  return size;
}
