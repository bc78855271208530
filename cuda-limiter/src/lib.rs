//! grus-cuda-limiter: an LD_PRELOAD library that intercepts the CUDA driver API in a container
//! holding a `grus.io/gpu-milli` share and enforces the share's memory and compute limits.
//!
//! The policy is pure and tested on its own (`config`, `accounting`, `pacing`); `region` maps the
//! shared accounting table and locks it; `hooks` is the thin FFI layer that the dynamic linker
//! sees; `nvml` measures utilization. See README.md for how it fits together.

pub mod accounting;
pub mod config;
pub mod cuda;
mod hooks;
pub mod log;
mod nvml;
pub mod pacing;
pub mod region;
