// A small JSON document model: parse (bounded), build, serialize.
//
// AssemblyScript has no JSON of its own. This one is made for the ABI:
// it parses UTF-8 bytes as they come from the host, keeps each number's
// text exactly as written (so 12345678901234567890123 or 0.1000000000000000055
// go back out unchanged), keeps object members in order, and writes UTF-8
// straight into a ByteWriter. Parsing refuses nesting deeper than
// MAX_DEPTH instead of exhausting the stack, and never reads outside the
// bytes it was given.

import { ByteWriter, utf8, utf8SequenceLength } from "./bytes";

/** The deepest nesting of arrays and objects a document may have. */
export const MAX_DEPTH: i32 = 128;

/** The kinds of JSON value. */
export enum JsonKind {
  Null = 0,
  Bool = 1,
  Number = 2,
  String = 3,
  Array = 4,
  Object = 5,
}

// Objects with more members than this get a Map from key to position.
const INDEX_AFTER: i32 = 8;

/**
 * Json is one JSON value. Build values with the static constructors
 * (Json.obj(), Json.str("…"), …) or parse them with Json.parse; read them
 * with the typed getters, which answer null (or the default you give)
 * when the value is not of the kind asked for.
 *
 * A Json is mutable and owned by whoever holds it: a value that a Call
 * gave you (arguments, state, an input response) is valid for that
 * invocation only.
 */
export class Json {
  /** What kind of value this is. */
  readonly kind: JsonKind;
  private flag: bool = false; // Bool
  private text: string = ""; // String: the value; Number: its JSON text
  private items: Array<Json> | null = null; // Array items, Object values
  private names: Array<string> | null = null; // Object keys, in order
  private index: Map<string, i32> | null = null; // Object key -> position

  constructor(kind: JsonKind) {
    this.kind = kind;
    if (kind == JsonKind.Array || kind == JsonKind.Object) this.items = new Array<Json>();
    if (kind == JsonKind.Object) this.names = new Array<string>();
  }

  // ---- construction ----

  /** The JSON null. */
  static null(): Json {
    return new Json(JsonKind.Null);
  }

  /** true or false. */
  static bool(b: bool): Json {
    const v = new Json(JsonKind.Bool);
    v.flag = b;
    return v;
  }

  /** A string. */
  static str(s: string): Json {
    const v = new Json(JsonKind.String);
    v.text = s;
    return v;
  }

  /** An integer. */
  static int(n: i64): Json {
    const v = new Json(JsonKind.Number);
    v.text = n.toString();
    return v;
  }

  /** A number; NaN and infinities, which JSON cannot say, become null. */
  static num(x: f64): Json {
    if (!isFinite(x)) return Json.null();
    if (x == Math.floor(x) && Math.abs(x) < 9007199254740992.0) return Json.int(<i64>x);
    const v = new Json(JsonKind.Number);
    v.text = x.toString();
    return v;
  }

  /** An empty array. */
  static arr(): Json {
    return new Json(JsonKind.Array);
  }

  /** An empty object. */
  static obj(): Json {
    return new Json(JsonKind.Object);
  }

  /** An array of strings. */
  static strings(values: string[]): Json {
    const a = Json.arr();
    for (let i = 0; i < values.length; i++) a.push(Json.str(values[i]));
    return a;
  }

  /** A string, or null when s is null. */
  static strOrNull(s: string | null): Json {
    return s === null ? Json.null() : Json.str(s);
  }

  // ---- parsing ----

  /** Why the last parse failed ("" after a success). */
  static error: string = "";

  /**
   * Parses one JSON text (whitespace around it allowed). Returns null,
   * with the reason in Json.error, when it is not valid JSON or nests
   * deeper than MAX_DEPTH.
   */
  static parse(text: string): Json | null {
    const b = utf8(text);
    return Json.parseUTF8(changetype<usize>(b), b.byteLength);
  }

  /** Like parse, for n bytes of UTF-8 at ptr (which must stay alive). */
  static parseUTF8(ptr: usize, n: i32): Json | null {
    const p = new Parser(ptr, n);
    const v = p.document();
    Json.error = v === null ? p.error : "";
    return v;
  }

  // ---- reading ----

  isNull(): bool { return this.kind == JsonKind.Null; }
  isBool(): bool { return this.kind == JsonKind.Bool; }
  isNumber(): bool { return this.kind == JsonKind.Number; }
  isString(): bool { return this.kind == JsonKind.String; }
  isArray(): bool { return this.kind == JsonKind.Array; }
  isObject(): bool { return this.kind == JsonKind.Object; }

  /** The boolean, or def when this is not a boolean. */
  asBool(def: bool = false): bool {
    return this.kind == JsonKind.Bool ? this.flag : def;
  }

  /** The string, or null when this is not a string. */
  asString(): string | null {
    return this.kind == JsonKind.String ? this.text : null;
  }

  /** The number, or NaN when this is not a number. */
  asF64(): f64 {
    return this.kind == JsonKind.Number ? parseFloat(this.text) : NaN;
  }

  /**
   * The number as an integer, or def when this is not a number or not an
   * integer that fits in an i64 (1e2 is 100; 2.5 is def).
   */
  asI64(def: i64 = 0): i64 {
    if (this.kind != JsonKind.Number) return def;
    const t = this.text;
    let plain = true;
    for (let i = 0; i < t.length; i++) {
      const c = t.charCodeAt(i);
      if (c == 0x2e || c == 0x65 || c == 0x45) { plain = false; break; } // . e E
    }
    if (plain) return parseInteger(t, def);
    const x = parseFloat(t);
    if (x != Math.floor(x) || !(Math.abs(x) < 9223372036854775808.0)) return def;
    return <i64>x;
  }

  /** The JSON text of a number ("" for other kinds): exactly as parsed. */
  numberText(): string {
    return this.kind == JsonKind.Number ? this.text : "";
  }

  /** How many items an array, or members an object, has; 0 otherwise. */
  get length(): i32 {
    const items = this.items;
    return items === null ? 0 : items.length;
  }

  /** Item i of an array, or the value of member i of an object; null when out of range. */
  at(i: i32): Json | null {
    const items = this.items;
    if (items === null || i < 0 || i >= items.length) return null;
    return unchecked(items[i]);
  }

  /** The key of member i of an object; null when out of range. */
  keyAt(i: i32): string | null {
    const names = this.names;
    if (names === null || i < 0 || i >= names.length) return null;
    return unchecked(names[i]);
  }

  /** Whether an object has member key. */
  has(key: string): bool {
    return this.find(key) >= 0;
  }

  /** Member key of an object, or null. */
  get(key: string): Json | null {
    const i = this.find(key);
    return i < 0 ? null : unchecked(this.items![i]);
  }

  /** Member key when it is a string, else null. */
  getString(key: string): string | null {
    const v = this.get(key);
    return v === null ? null : v.asString();
  }

  /** Member key when it is an integer number (see asI64), else def. */
  getI64(key: string, def: i64 = 0): i64 {
    const v = this.get(key);
    return v === null ? def : v.asI64(def);
  }

  /** Member key when it is a number, else def. */
  getF64(key: string, def: f64 = NaN): f64 {
    const v = this.get(key);
    return v === null || !v.isNumber() ? def : v.asF64();
  }

  /** Member key when it is a boolean, else def. */
  getBool(key: string, def: bool = false): bool {
    const v = this.get(key);
    return v === null ? def : v.asBool(def);
  }

  /** Member key when it is an object, else null. */
  getObject(key: string): Json | null {
    const v = this.get(key);
    return v !== null && v.isObject() ? v : null;
  }

  /** Member key when it is an array, else null. */
  getArray(key: string): Json | null {
    const v = this.get(key);
    return v !== null && v.isArray() ? v : null;
  }

  // ---- building ----

  /** Sets member key of an object (replacing one of the same key) and returns this. */
  set(key: string, value: Json): Json {
    if (this.kind != JsonKind.Object) abort("kadu: Json.set on a value that is not an object");
    const i = this.find(key);
    if (i >= 0) {
      this.items![i] = value;
      return this;
    }
    const names = this.names!;
    names.push(key);
    this.items!.push(value);
    let index = this.index;
    if (index !== null) {
      index.set(key, names.length - 1);
    } else if (names.length > INDEX_AFTER) {
      index = new Map<string, i32>();
      for (let k = 0; k < names.length; k++) index.set(unchecked(names[k]), k);
      this.index = index;
    }
    return this;
  }

  /** set(key, Json.str(s)). */
  setString(key: string, s: string): Json { return this.set(key, Json.str(s)); }
  /** set(key, Json.int(n)). */
  setInt(key: string, n: i64): Json { return this.set(key, Json.int(n)); }
  /** set(key, Json.bool(b)). */
  setBool(key: string, b: bool): Json { return this.set(key, Json.bool(b)); }
  /** set(key, Json.null()). */
  setNull(key: string): Json { return this.set(key, Json.null()); }

  /** Removes member key of an object; reports whether it was there. */
  remove(key: string): bool {
    const i = this.find(key);
    if (i < 0) return false;
    this.names!.splice(i, 1);
    this.items!.splice(i, 1);
    this.index = null;
    const names = this.names!;
    if (names.length > INDEX_AFTER) {
      const index = new Map<string, i32>();
      for (let k = 0; k < names.length; k++) index.set(unchecked(names[k]), k);
      this.index = index;
    }
    return true;
  }

  /** Appends value to an array and returns this. */
  push(value: Json): Json {
    if (this.kind != JsonKind.Array) abort("kadu: Json.push on a value that is not an array");
    this.items!.push(value);
    return this;
  }

  // ---- writing ----

  /** The compact JSON text. */
  toString(): string {
    const w = new ByteWriter();
    this.write(w);
    return w.toString();
  }

  /** Appends the compact JSON text, as UTF-8, to w. */
  write(w: ByteWriter): void {
    writeValue(w, this, 0);
  }

  /** s as a JSON string literal, quotes included. */
  static quote(s: string): string {
    const w = new ByteWriter(s.length + 2);
    writeString(w, s);
    return w.toString();
  }

  private find(key: string): i32 {
    if (this.kind != JsonKind.Object) return -1;
    const index = this.index;
    if (index !== null) return index.has(key) ? index.get(key) : -1;
    const names = this.names!;
    for (let i = 0; i < names.length; i++) {
      if (unchecked(names[i]) == key) return i;
    }
    return -1;
  }

  /** @internal Used by the parser: a number whose text was checked. */
  static numberOf(text: string): Json {
    const v = new Json(JsonKind.Number);
    v.text = text;
    return v;
  }
}

/** Parses a decimal integer text ("-12"), or returns def when it does not fit in an i64. */
function parseInteger(t: string, def: i64): i64 {
  let i = 0;
  const neg = t.length > 0 && t.charCodeAt(0) == 0x2d;
  if (neg) i = 1;
  if (i >= t.length) return def;
  // Accumulate negatively: i64's range reaches one further below zero.
  let v: i64 = 0;
  for (; i < t.length; i++) {
    const d = <i64>(t.charCodeAt(i) - 0x30);
    if (d < 0 || d > 9) return def;
    if (v < (i64.MIN_VALUE + d) / 10) return def;
    v = v * 10 - d;
  }
  if (!neg) {
    if (v == i64.MIN_VALUE) return def;
    return -v;
  }
  return v;
}

// ---- writer ----

// Cycles are a bug in the bundle (a value set inside itself); past this
// depth the writer stops with a message instead of overflowing the stack.
const MAX_WRITE_DEPTH: i32 = 1024;

function writeValue(w: ByteWriter, v: Json, depth: i32): void {
  switch (v.kind) {
    case JsonKind.Null:
      w.ascii("null");
      return;
    case JsonKind.Bool:
      w.ascii(v.asBool() ? "true" : "false");
      return;
    case JsonKind.Number:
      w.ascii(v.numberText());
      return;
    case JsonKind.String:
      writeString(w, v.asString()!);
      return;
  }
  if (depth >= MAX_WRITE_DEPTH) abort("kadu: a Json value nests deeper than 1024 levels (does it contain itself?)");
  const n = v.length;
  if (v.kind == JsonKind.Array) {
    w.byte(0x5b); // [
    for (let i = 0; i < n; i++) {
      if (i > 0) w.byte(0x2c);
      writeValue(w, v.at(i)!, depth + 1);
    }
    w.byte(0x5d);
    return;
  }
  w.byte(0x7b); // {
  for (let i = 0; i < n; i++) {
    if (i > 0) w.byte(0x2c);
    writeString(w, v.keyAt(i)!);
    w.byte(0x3a);
    writeValue(w, v.at(i)!, depth + 1);
  }
  w.byte(0x7d);
}

const HEX = "0123456789abcdef";

function writeEscape(w: ByteWriter, c: u32): void {
  w.reserve(6);
  w.byte(0x5c);
  w.byte(0x75); // \u
  w.byte(<u8>HEX.charCodeAt((c >> 12) & 15));
  w.byte(<u8>HEX.charCodeAt((c >> 8) & 15));
  w.byte(<u8>HEX.charCodeAt((c >> 4) & 15));
  w.byte(<u8>HEX.charCodeAt(c & 15));
}

// Writes the escape for an ASCII byte that needs one, or the byte itself.
function writeASCIIEscaped(w: ByteWriter, c: u32): void {
  if (c == 0x22) { w.byte(0x5c); w.byte(0x22); return; }
  if (c == 0x5c) { w.byte(0x5c); w.byte(0x5c); return; }
  if (c >= 0x20) { w.byte(<u8>c); return; }
  switch (c) {
    case 0x08: w.byte(0x5c); w.byte(0x62); return; // \b
    case 0x0c: w.byte(0x5c); w.byte(0x66); return; // \f
    case 0x0a: w.byte(0x5c); w.byte(0x6e); return; // \n
    case 0x0d: w.byte(0x5c); w.byte(0x72); return; // \r
    case 0x09: w.byte(0x5c); w.byte(0x74); return; // \t
  }
  writeEscape(w, c);
}

/**
 * Writes s as a JSON string literal in UTF-8. A lone surrogate (which
 * UTF-8 cannot carry) is written as its \u escape, so the value survives.
 */
export function writeString(w: ByteWriter, s: string): void {
  const n = s.length;
  const src = changetype<usize>(s);
  w.reserve(n + 2);
  w.byte(0x22);
  for (let i = 0; i < n; i++) {
    const c = <u32>load<u16>(src + (<usize>i << 1));
    if (c < 0x80) {
      writeASCIIEscaped(w, c);
    } else if (c >= 0xd800 && c < 0xe000) {
      if (c < 0xdc00 && i + 1 < n) {
        const d = <u32>load<u16>(src + (<usize>(i + 1) << 1));
        if (d >= 0xdc00 && d < 0xe000) {
          w.codePoint(0x10000 + ((c - 0xd800) << 10) + (d - 0xdc00));
          i++;
          continue;
        }
      }
      writeEscape(w, c);
    } else {
      w.codePoint(c);
    }
  }
  w.byte(0x22);
}

/**
 * Writes n bytes of UTF-8 at ptr as a JSON string literal: the way a
 * result carries JSON it already wrote as its text, without decoding it.
 */
export function writeStringUTF8(w: ByteWriter, ptr: usize, n: i32): void {
  w.reserve(n + 2);
  w.byte(0x22);
  let run = 0; // start of the bytes not yet copied
  for (let i = 0; i < n; i++) {
    const c = <u32>load<u8>(ptr + <usize>i);
    if (c == 0x22 || c == 0x5c || c < 0x20) {
      w.raw(ptr + <usize>run, i - run);
      writeASCIIEscaped(w, c);
      run = i + 1;
    }
  }
  w.raw(ptr + <usize>run, n - run);
  w.byte(0x22);
}

// ---- parser ----

class Parser {
  pos: i32 = 0;
  error: string = "";
  // UTF-16 scratch for strings with escapes, reused within one parse.
  scratch: ArrayBuffer = new ArrayBuffer(0);

  constructor(public ptr: usize, public end: i32) {}

  document(): Json | null {
    this.space();
    const v = this.value(0);
    if (v === null) return null;
    this.space();
    if (this.pos < this.end) return this.fail("text after the value");
    return v;
  }

  private fail(why: string): Json | null {
    if (this.error.length == 0) this.error = why + " at byte " + this.pos.toString();
    return null;
  }

  private peek(): u32 {
    return this.pos < this.end ? <u32>load<u8>(this.ptr + <usize>this.pos) : 0xffffffff;
  }

  private space(): void {
    while (this.pos < this.end) {
      const c = load<u8>(this.ptr + <usize>this.pos);
      if (c != 0x20 && c != 0x0a && c != 0x0d && c != 0x09) return;
      this.pos++;
    }
  }

  private literal(word: string, v: Json): Json | null {
    const n = word.length;
    if (this.pos + n > this.end) return this.fail("invalid literal");
    for (let i = 0; i < n; i++) {
      if (<u32>load<u8>(this.ptr + <usize>(this.pos + i)) != <u32>word.charCodeAt(i)) return this.fail("invalid literal");
    }
    this.pos += n;
    return v;
  }

  private value(depth: i32): Json | null {
    const c = this.peek();
    if (c == 0x7b) return this.object(depth + 1); // {
    if (c == 0x5b) return this.array(depth + 1); // [
    if (c == 0x22) {
      const s = this.string();
      return s === null ? null : Json.str(s);
    }
    if (c == 0x74) return this.literal("true", Json.bool(true));
    if (c == 0x66) return this.literal("false", Json.bool(false));
    if (c == 0x6e) return this.literal("null", Json.null());
    if (c == 0x2d || (c >= 0x30 && c <= 0x39)) return this.number();
    if (c == 0xffffffff) return this.fail("unexpected end of JSON");
    return this.fail("unexpected character");
  }

  private object(depth: i32): Json | null {
    if (depth > MAX_DEPTH) return this.fail("nested deeper than " + MAX_DEPTH.toString() + " levels");
    this.pos++; // {
    const o = Json.obj();
    this.space();
    if (this.peek() == 0x7d) {
      this.pos++;
      return o;
    }
    while (true) {
      if (this.peek() != 0x22) return this.fail("expected a member name");
      const key = this.string();
      if (key === null) return null;
      this.space();
      if (this.peek() != 0x3a) return this.fail("expected ':'");
      this.pos++;
      this.space();
      const v = this.value(depth);
      if (v === null) return null;
      o.set(key, v); // a repeated key: the last one wins, as in Go
      this.space();
      const c = this.peek();
      this.pos++;
      if (c == 0x7d) return o;
      if (c != 0x2c) {
        this.pos--;
        return this.fail("expected ',' or '}'");
      }
      this.space();
    }
  }

  private array(depth: i32): Json | null {
    if (depth > MAX_DEPTH) return this.fail("nested deeper than " + MAX_DEPTH.toString() + " levels");
    this.pos++; // [
    const a = Json.arr();
    this.space();
    if (this.peek() == 0x5d) {
      this.pos++;
      return a;
    }
    while (true) {
      const v = this.value(depth);
      if (v === null) return null;
      a.push(v);
      this.space();
      const c = this.peek();
      this.pos++;
      if (c == 0x5d) return a;
      if (c != 0x2c) {
        this.pos--;
        return this.fail("expected ',' or ']'");
      }
      this.space();
    }
  }

  private digits(): i32 {
    const start = this.pos;
    while (this.pos < this.end) {
      const c = load<u8>(this.ptr + <usize>this.pos);
      if (c < 0x30 || c > 0x39) break;
      this.pos++;
    }
    return this.pos - start;
  }

  private number(): Json | null {
    const start = this.pos;
    if (this.peek() == 0x2d) this.pos++;
    const first = this.peek();
    if (first == 0x30) {
      this.pos++;
    } else if (first >= 0x31 && first <= 0x39) {
      this.digits();
    } else {
      return this.fail("invalid number");
    }
    if (this.peek() == 0x2e) {
      this.pos++;
      if (this.digits() == 0) return this.fail("invalid number");
    }
    const e = this.peek();
    if (e == 0x65 || e == 0x45) {
      this.pos++;
      const sign = this.peek();
      if (sign == 0x2b || sign == 0x2d) this.pos++;
      if (this.digits() == 0) return this.fail("invalid number");
    }
    // ASCII only: one UTF-16 unit per byte.
    const text = String.UTF8.decodeUnsafe(this.ptr + <usize>start, <usize>(this.pos - start));
    return Json.numberOf(text);
  }

  private hex4(): i32 {
    if (this.pos + 4 > this.end) return -1;
    let v = 0;
    for (let i = 0; i < 4; i++) {
      const c = <i32>load<u8>(this.ptr + <usize>(this.pos + i));
      let d: i32;
      if (c >= 0x30 && c <= 0x39) d = c - 0x30;
      else if (c >= 0x61 && c <= 0x66) d = c - 0x61 + 10;
      else if (c >= 0x41 && c <= 0x46) d = c - 0x41 + 10;
      else return -1;
      v = (v << 4) | d;
    }
    this.pos += 4;
    return v;
  }

  // Reserves room for n more UTF-16 units after w units in the scratch.
  private room(w: i32, n: i32): usize {
    const need = (<i64>w + <i64>n) << 1;
    const cap = this.scratch.byteLength;
    if (need > <i64>cap) {
      let grown = <i64>cap * 2;
      if (grown < need) grown = need;
      if (grown < 64) grown = 64;
      const next = new ArrayBuffer(<i32>grown);
      memory.copy(changetype<usize>(next), changetype<usize>(this.scratch), <usize>w << 1);
      this.scratch = next;
    }
    return changetype<usize>(this.scratch);
  }

  // Parses a string at '"' and returns its value; null on error.
  private string(): string | null {
    this.pos++; // "
    const ptr = this.ptr;
    let w: i32 = 0; // UTF-16 units written to the scratch
    while (true) {
      if (this.pos >= this.end) {
        this.fail("unterminated string");
        return null;
      }
      const c = <u32>load<u8>(ptr + <usize>this.pos);
      if (c == 0x22) {
        this.pos++;
        return String.UTF16.decodeUnsafe(changetype<usize>(this.scratch), <usize>w << 1);
      }
      if (c < 0x20) {
        this.fail("control character in a string");
        return null;
      }
      if (c < 0x80 && c != 0x5c) {
        // A run of plain ASCII.
        let n = 1;
        while (this.pos + n < this.end) {
          const d = <u32>load<u8>(ptr + <usize>(this.pos + n));
          if (d == 0x22 || d == 0x5c || d < 0x20 || d >= 0x80) break;
          n++;
        }
        const dst = this.room(w, n);
        for (let i = 0; i < n; i++) {
          store<u16>(dst + (<usize>(w + i) << 1), <u16>load<u8>(ptr + <usize>(this.pos + i)));
        }
        w += n;
        this.pos += n;
        continue;
      }
      if (c == 0x5c) {
        this.pos++;
        const e = this.peek();
        this.pos++;
        let unit: i32;
        switch (e) {
          case 0x22: unit = 0x22; break;
          case 0x5c: unit = 0x5c; break;
          case 0x2f: unit = 0x2f; break;
          case 0x62: unit = 0x08; break;
          case 0x66: unit = 0x0c; break;
          case 0x6e: unit = 0x0a; break;
          case 0x72: unit = 0x0d; break;
          case 0x74: unit = 0x09; break;
          case 0x75: {
            unit = this.hex4();
            if (unit < 0) {
              this.fail("invalid \\u escape");
              return null;
            }
            break;
          }
          default: {
            this.pos--;
            this.fail("invalid escape");
            return null;
          }
        }
        // A \u escape of a surrogate is kept as that UTF-16 unit: two
        // escapes of a pair make the character, a lone one is written
        // back as the same escape.
        store<u16>(this.room(w, 1) + (<usize>w << 1), <u16>unit);
        w++;
        continue;
      }
      // A multi-byte UTF-8 sequence; an invalid byte becomes U+FFFD.
      const size = utf8SequenceLength(ptr, this.pos, this.end);
      const dst = this.room(w, 2);
      if (size == 0) {
        store<u16>(dst + (<usize>w << 1), 0xfffd);
        w++;
        this.pos++;
        continue;
      }
      const p = ptr + <usize>this.pos;
      let cp: u32;
      if (size == 2) {
        cp = ((c & 0x1f) << 6) | (<u32>load<u8>(p, 1) & 0x3f);
      } else if (size == 3) {
        cp = ((c & 0x0f) << 12) | ((<u32>load<u8>(p, 1) & 0x3f) << 6) | (<u32>load<u8>(p, 2) & 0x3f);
      } else {
        cp = ((c & 0x07) << 18) | ((<u32>load<u8>(p, 1) & 0x3f) << 12) |
          ((<u32>load<u8>(p, 2) & 0x3f) << 6) | (<u32>load<u8>(p, 3) & 0x3f);
      }
      if (cp >= 0x10000) {
        cp -= 0x10000;
        store<u16>(dst + (<usize>w << 1), <u16>(0xd800 + (cp >> 10)));
        store<u16>(dst + (<usize>(w + 1) << 1), <u16>(0xdc00 + (cp & 0x3ff)));
        w += 2;
      } else {
        store<u16>(dst + (<usize>w << 1), <u16>cp);
        w++;
      }
      this.pos += size;
    }
    return null; // not reached
  }
}
