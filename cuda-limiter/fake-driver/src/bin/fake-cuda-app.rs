//! A CUDA "application" for the limiter's tests: it `dlopen`s `libcuda.so.1` as the CUDA runtime
//! does and runs the operations named on its command line, printing one line per result.
//! Functions come from `dlsym` on the driver's handle (`--via dlsym`, the default), from
//! `cuGetProcAddress` (`--via procaddr`), or from the global scope as a program linked to libcuda
//! finds them (`--via global`).
//!
//! Operations: `dev:N`, `alloc:SIZE`, `managed:SIZE`, `async:SIZE`, `pool:SIZE`, `pitch:W:H`,
//! `array:W:H`, `array3d:W:H:D`, `mipmap:W:H:LEVELS`, `create:SIZE` (cuMemCreate on the current
//! device), `free` (the latest live allocation), `info` (cuMemGetInfo), `total` (cuDeviceTotalMem), `ready`, `sleep`,
//! `pace:SECONDS:BLOCKS` (launch kernels for that long after a one-second warm-up and report
//! the device time our kernels took within that span), `lock:PATH` (take the limiter's region lock and sleep).
//! SIZE is bytes with an optional k/m/g suffix.

// Each transmuted function pointer's type is written on the binding it goes to.
#![allow(clippy::missing_transmute_annotations)]

use std::ffi::{c_char, c_int, c_uint, c_void, CString};
use std::io::Write;

type R = c_int;

struct Cuda {
    /// The handle symbols are looked up with: the driver's, or `RTLD_DEFAULT` (`--via global`).
    handle: *mut c_void,
    get_proc: Option<unsafe extern "C" fn(*const c_char, *mut *mut c_void, c_int, u64) -> R>,
}

impl Cuda {
    fn open(via: &str) -> Cuda {
        // `global` resolves like a program linked to libcuda: through the global scope, where
        // LD_PRELOAD comes first.
        let global = via == "global";
        let scope = if global { libc::RTLD_GLOBAL } else { libc::RTLD_LOCAL };
        let handle = unsafe { libc::dlopen(c"libcuda.so.1".as_ptr(), libc::RTLD_NOW | scope) };
        assert!(!handle.is_null(), "cannot dlopen libcuda.so.1");
        let handle = if global { libc::RTLD_DEFAULT } else { handle };
        let mut cuda = Cuda { handle, get_proc: None };
        if via == "procaddr" {
            let p = cuda.dlsym("cuGetProcAddress");
            cuda.get_proc = Some(unsafe { std::mem::transmute::<*mut c_void, _>(p) });
        }
        cuda
    }

    fn dlsym(&self, name: &str) -> *mut c_void {
        let c = CString::new(name).unwrap();
        let p = unsafe { libc::dlsym(self.handle, c.as_ptr()) };
        assert!(!p.is_null(), "no symbol {name}");
        p
    }

    /// `exported` is the driver's symbol, `base` the name `cuGetProcAddress` knows it by.
    fn get(&self, exported: &str, base: &str) -> *mut c_void {
        match self.get_proc {
            Some(get_proc) => {
                let c = CString::new(base).unwrap();
                let mut p = std::ptr::null_mut();
                let rc = unsafe { get_proc(c.as_ptr(), &mut p, 12040, 0) };
                assert!(rc == 0 && !p.is_null(), "cuGetProcAddress({base}) = {rc}");
                p
            }
            None => self.dlsym(exported),
        }
    }
}

macro_rules! f {
    ($cuda:expr, $exported:literal, $base:literal, $ty:ty) => {{
        #[allow(unused_unsafe)]
        let f = unsafe { std::mem::transmute::<*mut c_void, $ty>($cuda.get($exported, $base)) };
        f
    }};
}

fn size(s: &str) -> u64 {
    let (digits, unit) = s.split_at(s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len()));
    let n: u64 = digits.parse().expect("size");
    n << match unit {
        "" => 0,
        "k" => 10,
        "m" => 20,
        "g" => 30,
        _ => panic!("unit {unit}"),
    }
}

fn now_ns() -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

fn say(line: String) {
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{line}");
    let _ = out.flush();
}

type Launch = unsafe extern "C" fn(
    *mut c_void,
    c_uint,
    c_uint,
    c_uint,
    c_uint,
    c_uint,
    c_uint,
    c_uint,
    *mut c_void,
    *mut *mut c_void,
    *mut *mut c_void,
) -> R;

fn main() {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let via = match args.first().map(String::as_str) {
        Some("--via") => {
            let via = args.get(1).cloned().unwrap_or_default();
            args.drain(..2);
            via
        }
        _ => "dlsym".to_string(),
    };
    let cuda = Cuda::open(&via);
    let init: unsafe extern "C" fn(c_uint) -> R = unsafe { std::mem::transmute(cuda.dlsym("cuInit")) };
    unsafe { init(0) };
    let retain: unsafe extern "C" fn(*mut *mut c_void, c_int) -> R =
        unsafe { std::mem::transmute(cuda.dlsym("cuDevicePrimaryCtxRetain")) };
    let set_current: unsafe extern "C" fn(*mut c_void) -> R =
        unsafe { std::mem::transmute(cuda.dlsym("cuCtxSetCurrent")) };
    let mut device: c_int = 0;
    let set_device = |d: c_int| {
        let mut ctx = std::ptr::null_mut();
        assert_eq!(unsafe { retain(&mut ctx, d) }, 0);
        unsafe { set_current(ctx) };
    };
    set_device(0);
    // (kind, handle) of live allocations, newest last.
    let mut live: Vec<(&str, u64)> = Vec::new();
    for op in &args {
        let parts: Vec<&str> = op.split(':').collect();
        let mut handle: u64 = 0;
        let (kind, rc) = match parts[0] {
            "dev" => {
                device = parts[1].parse().unwrap();
                set_device(device);
                say(format!("dev {device}"));
                continue;
            }
            "alloc" => {
                let f = f!(cuda, "cuMemAlloc_v2", "cuMemAlloc", unsafe extern "C" fn(*mut u64, usize) -> R);
                ("mem", unsafe { f(&mut handle, size(parts[1]) as usize) })
            }
            "managed" => {
                let f = f!(
                    cuda,
                    "cuMemAllocManaged",
                    "cuMemAllocManaged",
                    unsafe extern "C" fn(*mut u64, usize, c_uint) -> R
                );
                ("mem", unsafe { f(&mut handle, size(parts[1]) as usize, 1) })
            }
            "async" => {
                let f = f!(
                    cuda,
                    "cuMemAllocAsync",
                    "cuMemAllocAsync",
                    unsafe extern "C" fn(*mut u64, usize, *mut c_void) -> R
                );
                ("mem", unsafe { f(&mut handle, size(parts[1]) as usize, std::ptr::null_mut()) })
            }
            "pool" => {
                let f = f!(
                    cuda,
                    "cuMemAllocFromPoolAsync",
                    "cuMemAllocFromPoolAsync",
                    unsafe extern "C" fn(*mut u64, usize, *mut c_void, *mut c_void) -> R
                );
                ("mem", unsafe { f(&mut handle, size(parts[1]) as usize, std::ptr::null_mut(), std::ptr::null_mut()) })
            }
            "pitch" => {
                let f = f!(
                    cuda,
                    "cuMemAllocPitch_v2",
                    "cuMemAllocPitch",
                    unsafe extern "C" fn(*mut u64, *mut usize, usize, usize, c_uint) -> R
                );
                let mut pitch = 0usize;
                ("mem", unsafe { f(&mut handle, &mut pitch, size(parts[1]) as usize, size(parts[2]) as usize, 4) })
            }
            "array" => {
                let f = f!(
                    cuda,
                    "cuArrayCreate_v2",
                    "cuArrayCreate",
                    unsafe extern "C" fn(*mut u64, *const [usize; 3]) -> R
                );
                // FLOAT (0x20), one channel: 4 bytes a texel.
                let desc = [size(parts[1]) as usize, size(parts[2]) as usize, 0x20usize | (1usize << 32)];
                ("array", unsafe { f(&mut handle, &desc) })
            }
            "array3d" | "mipmap" => {
                #[repr(C)]
                struct D(usize, usize, usize, c_int, c_uint, c_uint);
                let (w, h) = (size(parts[1]) as usize, size(parts[2]) as usize);
                if parts[0] == "array3d" {
                    let f = f!(
                        cuda,
                        "cuArray3DCreate_v2",
                        "cuArray3DCreate",
                        unsafe extern "C" fn(*mut u64, *const D) -> R
                    );
                    let desc = D(w, h, size(parts[3]) as usize, 0x20, 1, 0);
                    ("array", unsafe { f(&mut handle, &desc) })
                } else {
                    let f = f!(
                        cuda,
                        "cuMipmappedArrayCreate",
                        "cuMipmappedArrayCreate",
                        unsafe extern "C" fn(*mut u64, *const D, c_uint) -> R
                    );
                    let desc = D(w, h, 0, 0x20, 1, 0);
                    ("mipmap", unsafe { f(&mut handle, &desc, parts[3].parse().unwrap()) })
                }
            }
            "create" => {
                let f = f!(
                    cuda,
                    "cuMemCreate",
                    "cuMemCreate",
                    unsafe extern "C" fn(*mut u64, usize, *const [c_int; 8], u64) -> R
                );
                let prop: [c_int; 8] = [1, 0, 1, device, 0, 0, 0, 0];
                ("physical", unsafe { f(&mut handle, size(parts[1]) as usize, &prop, 0) })
            }
            "free" => {
                let (kind, h) = live.pop().expect("nothing to free");
                let rc = match kind {
                    "mem" => unsafe { f!(cuda, "cuMemFree_v2", "cuMemFree", unsafe extern "C" fn(u64) -> R)(h) },
                    "array" => unsafe {
                        f!(cuda, "cuArrayDestroy", "cuArrayDestroy", unsafe extern "C" fn(u64) -> R)(h)
                    },
                    "mipmap" => unsafe {
                        f!(cuda, "cuMipmappedArrayDestroy", "cuMipmappedArrayDestroy", unsafe extern "C" fn(u64) -> R)(
                            h,
                        )
                    },
                    _ => unsafe { f!(cuda, "cuMemRelease", "cuMemRelease", unsafe extern "C" fn(u64) -> R)(h) },
                };
                say(format!("free rc={rc}"));
                continue;
            }
            "info" => {
                let f = f!(cuda, "cuMemGetInfo_v2", "cuMemGetInfo", unsafe extern "C" fn(*mut usize, *mut usize) -> R);
                let (mut free, mut total) = (0usize, 0usize);
                let rc = unsafe { f(&mut free, &mut total) };
                say(format!("info rc={rc} free={free} total={total}"));
                continue;
            }
            "total" => {
                let f =
                    f!(cuda, "cuDeviceTotalMem_v2", "cuDeviceTotalMem", unsafe extern "C" fn(*mut usize, c_int) -> R);
                let mut total = 0usize;
                let rc = unsafe { f(&mut total, device) };
                say(format!("total rc={rc} bytes={total}"));
                continue;
            }
            "ready" => {
                say("ready".to_string());
                continue;
            }
            "sleep" => loop {
                std::thread::sleep(std::time::Duration::from_secs(3600));
            },
            "lock" => {
                let path = CString::new(parts[1]).unwrap();
                let fd = unsafe { libc::open(path.as_ptr(), libc::O_RDWR) };
                assert!(fd >= 0, "open {}", parts[1]);
                let mut fl: libc::flock = unsafe { std::mem::zeroed() };
                fl.l_type = libc::F_WRLCK as libc::c_short;
                fl.l_whence = libc::SEEK_SET as libc::c_short;
                fl.l_len = 1;
                assert_eq!(unsafe { libc::fcntl(fd, libc::F_SETLKW, &fl) }, 0);
                say("locked".to_string());
                loop {
                    std::thread::sleep(std::time::Duration::from_secs(3600));
                }
            }
            "pace" => {
                let seconds: f64 = parts[1].parse().unwrap();
                let blocks: c_uint = parts[2].parse().unwrap();
                let launch = f!(cuda, "cuLaunchKernel", "cuLaunchKernel", Launch);
                let sync: unsafe extern "C" fn() -> R = unsafe { std::mem::transmute(cuda.dlsym("cuCtxSynchronize")) };
                let busy: unsafe extern "C" fn(c_int, u32, u64, u64) -> u64 =
                    unsafe { std::mem::transmute(cuda.dlsym("fakeBusyNs")) };
                let null = std::ptr::null_mut();
                let run = |until: u64| {
                    let mut n = 0u64;
                    while now_ns() < until {
                        let rc = unsafe {
                            launch(null, blocks, 1, 1, 128, 1, 1, 0, null, std::ptr::null_mut(), std::ptr::null_mut())
                        };
                        assert_eq!(rc, 0);
                        n += 1;
                    }
                    n
                };
                // Warm-up: the limiter calibrates its rate from the first measurements.
                run(now_ns() + 1_000_000_000);
                let t0 = now_ns();
                let launches = run(t0 + (seconds * 1e9) as u64);
                let t1 = now_ns();
                // The device time our kernels took within the span, queued ones not counted.
                let busy_ns = unsafe { busy(device, std::process::id(), t0, t1) };
                unsafe { sync() };
                say(format!("pace busy_ns={busy_ns} elapsed_ns={} launches={launches}", t1 - t0));
                continue;
            }
            other => panic!("unknown operation {other}"),
        };
        if rc == 0 {
            live.push((kind, handle));
        }
        say(format!("{} rc={rc}", parts[0]));
    }
}
