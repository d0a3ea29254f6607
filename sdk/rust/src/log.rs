//! Logging through the host (sdk/ABI.md §6 `log`), and the panic hook.

use crate::abi;

/// A log level of the host.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    Debug = 0,
    Info = 1,
    Warn = 2,
    Error = 3,
}

impl Level {
    /// The level of the ABI's number; any other number is `Info`, as the
    /// host takes it.
    pub fn from_i64(n: i64) -> Level {
        match n {
            0 => Level::Debug,
            2 => Level::Warn,
            3 => Level::Error,
            _ => Level::Info,
        }
    }
}

/// Writes one message to the host's log, which adds the bundle, its
/// version, the organisation and the request id, cuts a message at 4 KiB
/// and rate-limits per instance. Log identifiers and decisions, never
/// secrets, file contents or execution output.
///
/// The macros [`debug!`](crate::debug!), [`info!`](crate::info!),
/// [`warn!`](crate::warn!) and [`error!`](crate::error!) format and log.
pub fn log(level: Level, message: &str) {
    abi::log(level as i32, message.as_bytes());
}

/// Logs a formatted message at level debug: `kadu::debug!("page {}", n)`.
#[macro_export]
macro_rules! debug {
    ($($arg:tt)+) => { $crate::log($crate::Level::Debug, &::std::format!($($arg)+)) };
}

/// Logs a formatted message at level info: `kadu::info!("{} tasks", n)`.
#[macro_export]
macro_rules! info {
    ($($arg:tt)+) => { $crate::log($crate::Level::Info, &::std::format!($($arg)+)) };
}

/// Logs a formatted message at level warn.
#[macro_export]
macro_rules! warn {
    ($($arg:tt)+) => { $crate::log($crate::Level::Warn, &::std::format!($($arg)+)) };
}

/// Logs a formatted message at level error.
#[macro_export]
macro_rules! error {
    ($($arg:tt)+) => { $crate::log($crate::Level::Error, &::std::format!($($arg)+)) };
}

/// Installs, once per instance, a panic hook that logs the panic's message
/// and place at level error. A wasm32 guest cannot unwind: after the hook
/// the panic aborts, which traps, so the host counts a fault and discards
/// the instance — the right end for a bug.
pub(crate) fn install_panic_hook() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        std::panic::set_hook(Box::new(|info| {
            let payload = info.payload();
            let msg = payload
                .downcast_ref::<&str>()
                .copied()
                .or_else(|| payload.downcast_ref::<String>().map(String::as_str))
                .unwrap_or("(no message)");
            let text = match info.location() {
                Some(at) => format!("panic: {} (at {}:{})", msg, at.file(), at.line()),
                None => format!("panic: {}", msg),
            };
            log(Level::Error, &text);
        }));
    });
}
