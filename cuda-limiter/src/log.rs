//! Owns the limiter's logging: lines on stderr prefixed with the library name and pid, filtered
//! by `GRUS_CUDA_LOG` (off, error, warn, info, debug; default warn). No logging framework: the
//! library lives inside arbitrary applications and must not touch their global logger.

use std::sync::atomic::{AtomicU8, Ordering};

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
#[repr(u8)]
pub enum Level {
    Off = 0,
    Error = 1,
    Warn = 2,
    Info = 3,
    Debug = 4,
}

static LEVEL: AtomicU8 = AtomicU8::new(Level::Warn as u8);

/// Parses `GRUS_CUDA_LOG`; anything unknown means the default, warn.
pub fn parse_level(value: Option<&str>) -> Level {
    match value.map(|v| v.trim().to_ascii_lowercase()).as_deref() {
        Some("off" | "none" | "0") => Level::Off,
        Some("error") => Level::Error,
        Some("info") => Level::Info,
        Some("debug" | "trace") => Level::Debug,
        _ => Level::Warn,
    }
}

pub fn set_level(level: Level) {
    LEVEL.store(level as u8, Ordering::Relaxed);
}

pub fn enabled(level: Level) -> bool {
    level != Level::Off && level as u8 <= LEVEL.load(Ordering::Relaxed)
}

pub fn write(level: Level, message: std::fmt::Arguments<'_>) {
    use std::io::Write;
    let line = format!("[grus-cuda-limiter {} {:?}] {message}\n", std::process::id(), level);
    // One write call per line so lines of several processes do not interleave.
    let _ = std::io::stderr().lock().write_all(line.as_bytes());
}

#[macro_export]
macro_rules! log {
    ($level:ident, $($arg:tt)*) => {
        if $crate::log::enabled($crate::log::Level::$level) {
            $crate::log::write($crate::log::Level::$level, format_args!($($arg)*));
        }
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels() {
        assert_eq!(parse_level(Some("DEBUG")), Level::Debug);
        assert_eq!(parse_level(Some("off")), Level::Off);
        assert_eq!(parse_level(None), Level::Warn);
        assert_eq!(parse_level(Some("loud")), Level::Warn);
        assert!(Level::Error < Level::Debug);
    }
}
