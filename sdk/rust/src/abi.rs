//! The host imports of kadu v1 (sdk/ABI.md §6) and safe wrappers over them.
//!
//! Ownership: every buffer passed to the host is a `Vec` or slice on the
//! guest's heap, owned by the SDK. The host reads or writes it only during
//! the call and keeps no pointer, so each buffer is an ordinary Rust value
//! before and after; nothing the host gives survives the export call unless
//! the SDK copied it into a value the handler owns.
//!
//! Outside wasm32 (unit tests run natively) there is no host: `config_get`
//! reports every key absent, `log` writes to stderr, and the rest panic.

#[cfg(target_arch = "wasm32")]
mod imports {
    #[link(wasm_import_module = "kadu")]
    extern "C" {
        pub fn input_read(buf: *mut u8, cap: i32) -> i32;
        pub fn output_write(ptr: *const u8, len: i32) -> i32;
        pub fn api(
            method_ptr: *const u8,
            method_len: i32,
            path_ptr: *const u8,
            path_len: i32,
            body_ptr: *const u8,
            body_len: i32,
        ) -> i64;
        pub fn api_read(buf: *mut u8, cap: i32) -> i32;
        pub fn caller_info(buf: *mut u8, cap: i32) -> i32;
        pub fn config_get(key_ptr: *const u8, key_len: i32, buf: *mut u8, cap: i32) -> i32;
        pub fn log(level: i32, ptr: *const u8, len: i32);
    }
}

#[cfg(not(target_arch = "wasm32"))]
#[allow(clippy::missing_safety_doc)]
mod imports {
    const NOT_IN_KADU: &str = "kadu: not running inside Kadu: build the bundle for wasm32-wasi";
    pub unsafe fn input_read(_: *mut u8, _: i32) -> i32 {
        panic!("{}", NOT_IN_KADU)
    }
    pub unsafe fn output_write(_: *const u8, _: i32) -> i32 {
        panic!("{}", NOT_IN_KADU)
    }
    pub unsafe fn api(_: *const u8, _: i32, _: *const u8, _: i32, _: *const u8, _: i32) -> i64 {
        panic!("{}", NOT_IN_KADU)
    }
    pub unsafe fn api_read(_: *mut u8, _: i32) -> i32 {
        panic!("{}", NOT_IN_KADU)
    }
    pub unsafe fn caller_info(_: *mut u8, _: i32) -> i32 {
        panic!("{}", NOT_IN_KADU)
    }
    pub unsafe fn config_get(_: *const u8, _: i32, _: *mut u8, _: i32) -> i32 {
        -1
    }
    pub unsafe fn log(_: i32, ptr: *const u8, len: i32) {
        let msg = std::slice::from_raw_parts(ptr, len as usize);
        eprintln!("{}", String::from_utf8_lossy(msg));
    }
}

/// A length as the ABI's i32. Nothing a guest holds in a 4 GiB memory can
/// be longer than i32::MAX and still be accepted by the host, so a longer
/// one is a bug: panic (a fault) rather than pass a wrong length.
fn len32(n: usize) -> i32 {
    i32::try_from(n).expect("kadu: buffer longer than i32::MAX")
}

/// Reads this invocation's input of `len` bytes (input_read).
pub(crate) fn input(len: usize) -> Option<Vec<u8>> {
    let mut buf = vec![0u8; len];
    // SAFETY: buf is valid for writes of buf.len() bytes during the call.
    let n = unsafe { imports::input_read(buf.as_mut_ptr(), len32(buf.len())) };
    if n < 0 || n as usize != len {
        return None;
    }
    Some(buf)
}

/// Sets the invocation's output (output_write); false when the host
/// refused it for size, which makes the invocation a fault.
pub(crate) fn output(bytes: &[u8]) -> bool {
    // SAFETY: bytes is valid for reads of its length during the call.
    unsafe { imports::output_write(bytes.as_ptr(), len32(bytes.len())) == 0 }
}

/// Performs one API request as the caller (api) and reads its body
/// (api_read): (status, body).
pub(crate) fn api(method: &str, path: &str, body: &[u8]) -> (u16, Vec<u8>) {
    // SAFETY: the three slices are valid for reads during the call.
    let r = unsafe {
        imports::api(
            method.as_ptr(),
            len32(method.len()),
            path.as_ptr(),
            len32(path.len()),
            body.as_ptr(),
            len32(body.len()),
        )
    } as u64;
    let status = u16::try_from(r >> 32).unwrap_or(u16::MAX);
    let len = (r & 0xffff_ffff) as usize;
    let mut buf = vec![0u8; len];
    if len > 0 {
        // SAFETY: buf is valid for writes of len bytes during the call.
        let n = unsafe { imports::api_read(buf.as_mut_ptr(), len32(len)) };
        assert!(
            n >= 0 && n as usize == len,
            "kadu: api_read returned {} for a body of {} bytes",
            n,
            len
        );
    }
    (status, buf)
}

/// The caller's description (caller_info), as JSON bytes.
pub(crate) fn caller_info() -> Vec<u8> {
    // SAFETY (closure): buf is valid for writes of its length.
    read_sized(256, |buf| unsafe {
        imports::caller_info(buf.as_mut_ptr(), len32(buf.len()))
    })
    .unwrap_or_default()
}

/// The operator's config value for key (config_get), or None when absent.
pub(crate) fn config(key: &str) -> Option<Vec<u8>> {
    // SAFETY (closure): key and buf are valid for the call.
    read_sized(128, |buf| unsafe {
        imports::config_get(
            key.as_ptr(),
            len32(key.len()),
            buf.as_mut_ptr(),
            len32(buf.len()),
        )
    })
}

/// Writes one log message (log).
pub(crate) fn log(level: i32, msg: &[u8]) {
    // SAFETY: msg is valid for reads of its length during the call.
    unsafe { imports::log(level, msg.as_ptr(), len32(msg.len())) }
}

/// Calls a host function that writes only when the buffer is large enough
/// and returns the length needed (caller_info, config_get): first with
/// `guess` bytes, then again with exactly the length it asked for. A
/// negative answer is None.
fn read_sized(guess: usize, mut read: impl FnMut(&mut [u8]) -> i32) -> Option<Vec<u8>> {
    let mut buf = vec![0u8; guess];
    let n = read(&mut buf);
    if n < 0 {
        return None;
    }
    let n = n as usize;
    if n > buf.len() {
        buf = vec![0u8; n];
        let m = read(&mut buf);
        assert!(
            m >= 0 && m as usize == n,
            "kadu: the host changed its answer from {} to {} bytes between two reads",
            n,
            m
        );
    }
    buf.truncate(n);
    Some(buf)
}

#[cfg(test)]
mod tests {
    use super::read_sized;

    #[test]
    fn read_sized_grows_to_the_length_asked() {
        let value = vec![7u8; 1000];
        let mut calls = 0;
        let got = read_sized(16, |buf| {
            calls += 1;
            if buf.len() >= value.len() {
                buf[..value.len()].copy_from_slice(&value);
            }
            value.len() as i32
        });
        assert_eq!(got, Some(value.clone()));
        assert_eq!(calls, 2);
        assert_eq!(read_sized(16, |_| -1), None);
        assert_eq!(
            read_sized(16, |buf| {
                buf[..2].copy_from_slice(b"ok");
                2
            }),
            Some(b"ok".to_vec())
        );
    }
}
