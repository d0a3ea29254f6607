//! A small JSON value type with a bounded parser and a compact writer.
//!
//! A bundle has no crates (serde is not available to a std-only guest), so
//! the SDK brings its own: [`Value`] is a JSON document as a tree,
//! [`parse`] reads one, and `Display` (`value.to_string()`) writes one.
//!
//! - Numbers keep their original text ([`Number`]), so a number read and
//!   written again is the same number, whatever its size or precision.
//! - Objects keep their members in order, duplicates included
//!   ([`Map`] is a `Vec` of pairs); [`Value::get`] answers the *last*
//!   member of a name, as the host's own decoder does.
//! - The parser refuses nesting deeper than [`MAX_DEPTH`], invalid UTF-8,
//!   raw control characters in strings and anything after the document: a
//!   hostile input gives a [`ParseError`], never a crash. A lone surrogate
//!   escape (`"\ud800"`) becomes U+FFFD, as in Go.
//!
//! Build values with the [`json!`](crate::json!) macro or `From`:
//!
//! ```
//! use kadu::json::{self, Value};
//! let v = kadu::json!({"id": "tsk_1", "tags": ["a", "b"], "cost": 12, "done": null});
//! assert_eq!(v["tags"][1].as_str(), Some("b"));
//! assert_eq!(v.to_string(), r#"{"id":"tsk_1","tags":["a","b"],"cost":12,"done":null}"#);
//! assert_eq!(json::parse(&v.to_string()).unwrap(), v);
//! ```

use std::fmt;
use std::ops::Index;

mod parse;

pub use parse::{parse, parse_bytes, ParseError};

/// The deepest nesting of arrays and objects [`parse`] accepts. The
/// invocation wraps a tool's arguments in three levels, so arguments may
/// nest 125 deep.
pub const MAX_DEPTH: usize = 128;

/// An object's members, in order. Use [`Value::get`] to look a name up.
pub type Map = Vec<(String, Value)>;

/// A JSON value.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    Null,
    Bool(bool),
    Number(Number),
    String(String),
    Array(Vec<Value>),
    Object(Map),
}

/// A JSON number, kept as its text (always valid JSON number syntax).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Number(String);

impl Number {
    /// The number's JSON text, e.g. `"12"` or `"1.5e-3"`.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The number as an `i64` when it is an integer in range. `2`, `2.0`
    /// and `2e0` are all 2 (JSON Schema counts them as integers).
    pub fn as_i64(&self) -> Option<i64> {
        if let Ok(n) = self.0.parse::<i64>() {
            return Some(n);
        }
        let f = self.as_f64();
        // Integers beyond 2^53 are not exact as f64: refuse them.
        if f.fract() == 0.0 && f.abs() <= 9_007_199_254_740_992.0 {
            return Some(f as i64);
        }
        None
    }

    /// The number as a `u64` when it is a non-negative integer in range.
    pub fn as_u64(&self) -> Option<u64> {
        if let Ok(n) = self.0.parse::<u64>() {
            return Some(n);
        }
        self.as_i64().and_then(|n| u64::try_from(n).ok())
    }

    /// The number as the nearest `f64` (infinite when it is out of range).
    pub fn as_f64(&self) -> f64 {
        self.0.parse().unwrap_or(f64::NAN)
    }

    /// A number for `f`, or `None` when `f` is NaN or infinite (JSON has
    /// neither). The text is the shortest that reads back as `f`.
    pub fn from_f64(f: f64) -> Option<Number> {
        if f.is_finite() {
            Some(Number(format!("{:?}", f)))
        } else {
            None
        }
    }
}

impl fmt::Display for Number {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

macro_rules! number_from_int {
    ($($t:ty)*) => {$(
        impl From<$t> for Number {
            fn from(n: $t) -> Number { Number(n.to_string()) }
        }
        impl From<$t> for Value {
            fn from(n: $t) -> Value { Value::Number(Number::from(n)) }
        }
    )*};
}
number_from_int!(i8 i16 i32 i64 isize u8 u16 u32 u64 usize);

static NULL: Value = Value::Null;

impl Value {
    /// An empty object.
    pub fn object() -> Value {
        Value::Object(Map::new())
    }

    pub fn is_null(&self) -> bool {
        matches!(self, Value::Null)
    }

    pub fn as_bool(&self) -> Option<bool> {
        match self {
            Value::Bool(b) => Some(*b),
            _ => None,
        }
    }

    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::String(s) => Some(s),
            _ => None,
        }
    }

    /// See [`Number::as_i64`].
    pub fn as_i64(&self) -> Option<i64> {
        match self {
            Value::Number(n) => n.as_i64(),
            _ => None,
        }
    }

    /// See [`Number::as_u64`].
    pub fn as_u64(&self) -> Option<u64> {
        match self {
            Value::Number(n) => n.as_u64(),
            _ => None,
        }
    }

    pub fn as_f64(&self) -> Option<f64> {
        match self {
            Value::Number(n) => Some(n.as_f64()),
            _ => None,
        }
    }

    pub fn as_array(&self) -> Option<&Vec<Value>> {
        match self {
            Value::Array(a) => Some(a),
            _ => None,
        }
    }

    pub fn as_array_mut(&mut self) -> Option<&mut Vec<Value>> {
        match self {
            Value::Array(a) => Some(a),
            _ => None,
        }
    }

    pub fn as_object(&self) -> Option<&Map> {
        match self {
            Value::Object(m) => Some(m),
            _ => None,
        }
    }

    pub fn as_object_mut(&mut self) -> Option<&mut Map> {
        match self {
            Value::Object(m) => Some(m),
            _ => None,
        }
    }

    /// The last member named `key` of an object; `None` when there is none
    /// or `self` is not an object.
    pub fn get(&self, key: &str) -> Option<&Value> {
        self.as_object()?
            .iter()
            .rev()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v)
    }

    /// Like [`get`](Value::get), mutably.
    pub fn get_mut(&mut self, key: &str) -> Option<&mut Value> {
        self.as_object_mut()?
            .iter_mut()
            .rev()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v)
    }

    /// Sets member `key` of an object: replaces the last member of that
    /// name, or appends one. A `Null` becomes an empty object first.
    ///
    /// # Panics
    ///
    /// When `self` is neither an object nor `Null` (a bug in the bundle).
    pub fn insert(&mut self, key: impl Into<String>, value: impl Into<Value>) {
        if self.is_null() {
            *self = Value::object();
        }
        let key = key.into();
        let value = value.into();
        match self {
            Value::Object(m) => match m.iter_mut().rev().find(|(k, _)| *k == key) {
                Some(slot) => slot.1 = value,
                None => m.push((key, value)),
            },
            other => panic!("kadu::json: insert({:?}) into a {}", key, other.kind()),
        }
    }

    /// Removes every member named `key` of an object and returns the last.
    pub fn remove(&mut self, key: &str) -> Option<Value> {
        let m = self.as_object_mut()?;
        let mut last = None;
        let mut i = 0;
        while i < m.len() {
            if m[i].0 == key {
                last = Some(m.remove(i).1);
            } else {
                i += 1;
            }
        }
        last
    }

    /// Appends to an array. A `Null` becomes an empty array first.
    ///
    /// # Panics
    ///
    /// When `self` is neither an array nor `Null` (a bug in the bundle).
    pub fn push(&mut self, value: impl Into<Value>) {
        if self.is_null() {
            *self = Value::Array(Vec::new());
        }
        match self {
            Value::Array(a) => a.push(value.into()),
            other => panic!("kadu::json: push onto a {}", other.kind()),
        }
    }

    /// "null", "boolean", "number", "string", "array" or "object".
    pub fn kind(&self) -> &'static str {
        match self {
            Value::Null => "null",
            Value::Bool(_) => "boolean",
            Value::Number(_) => "number",
            Value::String(_) => "string",
            Value::Array(_) => "array",
            Value::Object(_) => "object",
        }
    }

    /// Appends the value's compact JSON text to `out`.
    pub fn write_to(&self, out: &mut String) {
        match self {
            Value::Null => out.push_str("null"),
            Value::Bool(true) => out.push_str("true"),
            Value::Bool(false) => out.push_str("false"),
            Value::Number(n) => out.push_str(&n.0),
            Value::String(s) => write_string(s, out),
            Value::Array(a) => {
                out.push('[');
                for (i, v) in a.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    v.write_to(out);
                }
                out.push(']');
            }
            Value::Object(m) => {
                out.push('{');
                for (i, (k, v)) in m.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    write_string(k, out);
                    out.push(':');
                    v.write_to(out);
                }
                out.push('}');
            }
        }
    }
}

/// Writes `s` as a JSON string: quotes, backslashes and control characters
/// escaped, everything else as UTF-8.
pub fn write_string(s: &str, out: &mut String) {
    out.reserve(s.len() + 2);
    out.push('"');
    let mut start = 0;
    for (i, b) in s.bytes().enumerate() {
        let esc = match b {
            b'"' => "\\\"",
            b'\\' => "\\\\",
            b'\n' => "\\n",
            b'\r' => "\\r",
            b'\t' => "\\t",
            0x08 => "\\b",
            0x0c => "\\f",
            0..=0x1f => "",
            _ => continue,
        };
        out.push_str(&s[start..i]);
        if esc.is_empty() {
            out.push_str(&format!("\\u{:04x}", b));
        } else {
            out.push_str(esc);
        }
        start = i + 1;
    }
    out.push_str(&s[start..]);
    out.push('"');
}

/// Compact JSON: `value.to_string()` is the text to send.
impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut s = String::new();
        self.write_to(&mut s);
        f.write_str(&s)
    }
}

/// `v["key"]` and `v[0]` give `Null` for anything missing, so lookups
/// chain: `v["data"][0]["id"].as_str()`.
impl Index<&str> for Value {
    type Output = Value;
    fn index(&self, key: &str) -> &Value {
        self.get(key).unwrap_or(&NULL)
    }
}

impl Index<usize> for Value {
    type Output = Value;
    fn index(&self, i: usize) -> &Value {
        self.as_array().and_then(|a| a.get(i)).unwrap_or(&NULL)
    }
}

impl From<bool> for Value {
    fn from(b: bool) -> Value {
        Value::Bool(b)
    }
}

/// NaN and infinities (which JSON cannot write) become `Null`.
impl From<f64> for Value {
    fn from(f: f64) -> Value {
        Number::from_f64(f).map_or(Value::Null, Value::Number)
    }
}

impl From<f32> for Value {
    fn from(f: f32) -> Value {
        Value::from(f as f64)
    }
}

impl From<Number> for Value {
    fn from(n: Number) -> Value {
        Value::Number(n)
    }
}

impl From<&str> for Value {
    fn from(s: &str) -> Value {
        Value::String(s.to_owned())
    }
}

impl From<String> for Value {
    fn from(s: String) -> Value {
        Value::String(s)
    }
}

impl From<&String> for Value {
    fn from(s: &String) -> Value {
        Value::String(s.clone())
    }
}

impl From<&Value> for Value {
    fn from(v: &Value) -> Value {
        v.clone()
    }
}

/// `None` is `Null`.
impl<T: Into<Value>> From<Option<T>> for Value {
    fn from(o: Option<T>) -> Value {
        o.map_or(Value::Null, Into::into)
    }
}

impl<T: Into<Value>> From<Vec<T>> for Value {
    fn from(v: Vec<T>) -> Value {
        Value::Array(v.into_iter().map(Into::into).collect())
    }
}

impl<T: Clone + Into<Value>> From<&[T]> for Value {
    fn from(v: &[T]) -> Value {
        Value::Array(v.iter().cloned().map(Into::into).collect())
    }
}

impl std::str::FromStr for Value {
    type Err = ParseError;
    fn from_str(s: &str) -> Result<Value, ParseError> {
        parse(s)
    }
}

/// Builds a [`Value`] from JSON-like syntax; values are any expression
/// with a `From` into `Value` (`&str`, `String`, integers, `f64`, `bool`,
/// `Option<T>`, `Vec<T>`, `Value`, `&Value`), or nested `{…}`, `[…]` and
/// `null`. Keys are string literals or parenthesised expressions.
///
/// ```
/// let id = "tsk_1";
/// let v = kadu::json!({"id": id, "n": 2 + 3, (format!("k{}", 1)): [true, null, -1.5]});
/// assert_eq!(v.to_string(), r#"{"id":"tsk_1","n":5,"k1":[true,null,-1.5]}"#);
/// ```
///
/// Each token of the literal costs a level of macro recursion: a very
/// large literal may need `#![recursion_limit = "256"]` in the bundle.
#[macro_export]
macro_rules! json {
    (null) => { $crate::json::Value::Null };
    ([]) => { $crate::json::Value::Array(::std::vec::Vec::new()) };
    ([ $($tt:tt)+ ]) => { $crate::json::Value::Array($crate::__json_array!([] $($tt)+)) };
    ({}) => { $crate::json::Value::Object(::std::vec::Vec::new()) };
    ({ $($tt:tt)+ }) => { $crate::json::Value::Object($crate::__json_object!([] $($tt)+)) };
    ($other:expr) => { $crate::json::Value::from($other) };
}

/// Munches the elements of `json!([...])`: tokens up to each top-level comma.
#[doc(hidden)]
#[macro_export]
macro_rules! __json_array {
    (@elem [$($done:expr),*] [$($cur:tt)+] , $($rest:tt)*) => {
        $crate::__json_array!([$($done,)* $crate::json!($($cur)+)] $($rest)*)
    };
    (@elem [$($done:expr),*] [$($cur:tt)*] $next:tt $($rest:tt)*) => {
        $crate::__json_array!(@elem [$($done),*] [$($cur)* $next] $($rest)*)
    };
    (@elem [$($done:expr),*] [$($cur:tt)+]) => {
        $crate::__json_array!([$($done,)* $crate::json!($($cur)+)])
    };
    ([$($done:expr),*]) => { ::std::vec![$($done),*] };
    ([$($done:expr),*] $($rest:tt)+) => { $crate::__json_array!(@elem [$($done),*] [] $($rest)+) };
}

/// Munches the members of `json!({...})`: a key, a colon, then tokens up
/// to the next top-level comma.
#[doc(hidden)]
#[macro_export]
macro_rules! __json_object {
    (@val [$($done:expr),*] $key:tt [$($cur:tt)+] , $($rest:tt)*) => {
        $crate::__json_object!([$($done,)* (::std::string::String::from($key), $crate::json!($($cur)+))] $($rest)*)
    };
    (@val [$($done:expr),*] $key:tt [$($cur:tt)*] $next:tt $($rest:tt)*) => {
        $crate::__json_object!(@val [$($done),*] $key [$($cur)* $next] $($rest)*)
    };
    (@val [$($done:expr),*] $key:tt [$($cur:tt)+]) => {
        $crate::__json_object!([$($done,)* (::std::string::String::from($key), $crate::json!($($cur)+))])
    };
    ([$($done:expr),*]) => { ::std::vec![$($done),*] };
    ([$($done:expr),*] $key:tt : $($rest:tt)+) => {
        $crate::__json_object!(@val [$($done),*] $key [] $($rest)+)
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip(text: &str) -> String {
        parse(text)
            .unwrap_or_else(|e| panic!("parse({:?}): {}", text, e))
            .to_string()
    }

    #[test]
    fn round_trips_compact_documents_unchanged() {
        for text in [
            "null",
            "true",
            "false",
            "0",
            "-0",
            "12",
            "-1.5e-7",
            "1E400",
            "123456789012345678901234567890",
            "0.1000000000000000055511151231257827",
            r#""""#,
            r#""a\"b\\c\nd\u0001""#,
            "[]",
            "{}",
            r#"[1,[2,[3,{}]],"x"]"#,
            r#"{"b":1,"a":2,"b":3}"#,
            r#""héllo 😀 ☃""#,
        ] {
            assert_eq!(round_trip(text), text);
        }
    }

    #[test]
    fn normalises_escapes_and_space() {
        let cases = [
            (" { \"a\" : [ 1 , 2 ] } ", r#"{"a":[1,2]}"#),
            (r#""\u00e9\/\b\f\t""#, "\"é/\\b\\f\\t\""),
            (r#""\ud83d\ude00""#, "\"😀\""),
            (r#""\ud800""#, "\"\u{FFFD}\""),
            (r#""\udc00x""#, "\"\u{FFFD}x\""),
            (r#""\ud800\u0041""#, "\"\u{FFFD}A\""),
            ("\"\u{7f}\u{2028}\"", "\"\u{7f}\u{2028}\""),
        ];
        for (text, want) in cases {
            assert_eq!(round_trip(text), want, "input {:?}", text);
        }
    }

    #[test]
    fn numbers_convert_when_exact() {
        let n = |s: &str| parse(s).unwrap();
        assert_eq!(n("42").as_i64(), Some(42));
        assert_eq!(n("2.0").as_i64(), Some(2));
        assert_eq!(n("1e2").as_u64(), Some(100));
        assert_eq!(n("2.5").as_i64(), None);
        assert_eq!(n("-3").as_u64(), None);
        assert_eq!(n("18446744073709551615").as_u64(), Some(u64::MAX));
        assert_eq!(n("1e300").as_i64(), None);
        assert_eq!(n("0.5").as_f64(), Some(0.5));
        assert_eq!(Value::from(0.1).to_string(), "0.1");
        assert_eq!(
            Value::from(1e300).to_string().parse::<f64>().unwrap(),
            1e300
        );
        assert_eq!(Value::from(f64::NAN), Value::Null);
    }

    #[test]
    fn accessors_and_index() {
        let mut v = parse(r#"{"a":{"b":[10,"x"]},"d":1,"d":2}"#).unwrap();
        assert_eq!(v["a"]["b"][0].as_i64(), Some(10));
        assert_eq!(v["a"]["b"][1].as_str(), Some("x"));
        assert!(v["missing"][3]["deeper"].is_null());
        assert_eq!(v["d"].as_i64(), Some(2), "the last duplicate wins");
        v.insert("d", 3);
        assert_eq!(v.to_string(), r#"{"a":{"b":[10,"x"]},"d":1,"d":3}"#);
        assert_eq!(v.remove("d"), Some(Value::from(3)));
        v.insert("e", "new");
        v["a"].as_object().unwrap();
        assert_eq!(v.to_string(), r#"{"a":{"b":[10,"x"]},"e":"new"}"#);
        let mut list = Value::Null;
        list.push(1);
        list.push("two");
        assert_eq!(list.to_string(), r#"[1,"two"]"#);
    }

    #[test]
    fn json_macro_builds_values() {
        let name = String::from("ada");
        let tags = vec!["a", "b"];
        let maybe: Option<i64> = None;
        let inner = crate::json!({"k": [1, 2]});
        let v = crate::json!({
            "name": &name,
            "len": name.len() as u64 + 1,
            "neg": -1,
            "tags": tags,
            "none": maybe,
            "null": null,
            "nested": {"deeper": [true, false, {"x": 1.5}], "empty": {}, "list": []},
            "copy": &inner,
            (format!("dyn{}", 1)): "v",
        });
        assert_eq!(
            v.to_string(),
            r#"{"name":"ada","len":4,"neg":-1,"tags":["a","b"],"none":null,"null":null,"nested":{"deeper":[true,false,{"x":1.5}],"empty":{},"list":[]},"copy":{"k":[1,2]},"dyn1":"v"}"#
        );
        assert_eq!(
            crate::json!([1, "a", [null]]).to_string(),
            r#"[1,"a",[null]]"#
        );
        assert_eq!(crate::json!("s"), Value::from("s"));
    }

    #[test]
    fn escapes_control_characters() {
        let v = Value::from("\u{0}\u{1f}\"\\\r");
        assert_eq!(v.to_string(), r#""\u0000\u001f\"\\\r""#);
        assert_eq!(parse(&v.to_string()).unwrap(), v);
    }
}
