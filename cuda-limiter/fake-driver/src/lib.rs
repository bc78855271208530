//! grus-fake-cuda: a fake CUDA driver and NVML in one shared library, so grus-cuda-limiter can be
//! tested without a GPU. Linked (or symlinked) as `libcuda.so.1` and `libnvidia-ml.so.1`, it
//! exports the driver functions the limiter hooks and simulates devices:
//!
//! - memory: each device has `FAKE_CUDA_MEMORY` bytes (default 16 GiB) and refuses more;
//! - kernels: one queue per device, a kernel of `b` blocks occupies the device for exactly
//!   `b * FAKE_CUDA_BLOCK_NS` ns (default 10 µs) after the previous one; a launch returns at once
//!   unless more than `QUEUE_NS` of work is queued (a real GPU's bounded launch queue);
//! - NVML: a process's utilization is the share of the sampled span its kernels occupied.
//!
//! MIG: `fakeSetMig(device, "1g.10gb@0,3g.40gb@4")` (not an NVML function) puts a device in MIG
//! mode with those GPU instances (profile at first memory slice; an empty list: MIG mode, no
//! instance), which NVML's MIG calls then report (`nvmlDeviceGetMigMode`, the MIG device
//! handles, their GPU instances' placements, names and UUIDs).
//!
//! `fakeBusyNs(device, pid, from, to)` (not a CUDA function) returns the time the kernels of
//! `pid` occupied the device between two `CLOCK_MONOTONIC` instants, so a test measures achieved
//! utilization from the deterministic device clock.
//!
//! Memory is per process. The kernel timelines are too, unless `FAKE_CUDA_SHARED_DEVICES` names
//! a file: then every process using that file runs its kernels on the same devices, one queue
//! each, as processes of several containers share a real GPU.

#![allow(non_snake_case, clippy::missing_safety_doc)]

use std::cell::Cell;
use std::collections::HashMap;
use std::ffi::{c_char, c_int, c_uint, c_void, CStr};
use std::sync::{Mutex, MutexGuard, OnceLock};
use std::time::Duration;

type CUresult = c_int;
const SUCCESS: CUresult = 0;
const INVALID_VALUE: CUresult = 1;
const OUT_OF_MEMORY: CUresult = 2;
const INVALID_DEVICE: CUresult = 101;
const NOT_FOUND: CUresult = 500;
const QUEUE_NS: u64 = 20_000_000;

struct Device {
    total: u64,
    used: u64,
}

/// A kernel on a device's timeline (CLOCK_MONOTONIC ns).
#[repr(C)]
#[derive(Clone, Copy)]
struct Kernel {
    pid: u32,
    _pad: u32,
    start: u64,
    end: u64,
}

const RING: usize = 1 << 16;

/// One device's kernel queue: the latest `RING` kernels, in launch (and so start) order.
#[repr(C)]
struct Timeline {
    busy_until: u64,
    count: u64,
    ring: [Kernel; RING],
}

impl Timeline {
    /// Time the kernels of `pid` (of everyone for `None`) occupied the device in [from, to).
    fn busy(&self, pid: Option<u32>, from: u64, to: u64) -> u64 {
        let mut total = 0;
        for i in (self.count.saturating_sub(RING as u64)..self.count).rev() {
            let k = self.ring[i as usize % RING];
            // One queue: ends grow with starts, so nothing older overlaps either.
            if k.end <= from {
                break;
            }
            if pid.is_none_or(|p| p == k.pid) {
                total += k.end.min(to).saturating_sub(k.start.max(from));
            }
        }
        total
    }

    fn pids(&self, from: u64) -> Vec<u32> {
        let mut pids = Vec::new();
        for i in (self.count.saturating_sub(RING as u64)..self.count).rev() {
            let k = self.ring[i as usize % RING];
            if k.end <= from {
                break;
            }
            if !pids.contains(&k.pid) {
                pids.push(k.pid);
            }
        }
        pids
    }
}

/// The timelines of all devices: in this process's memory, or in a file shared by processes.
struct Timelines {
    map: *mut Timeline,
    fd: c_int,
}

// Only used under the `Fake` mutex (and the file lock when shared).
unsafe impl Send for Timelines {}

impl Timelines {
    fn open(count: usize) -> Timelines {
        let size = count.max(1) * std::mem::size_of::<Timeline>();
        let shared = std::env::var_os("FAKE_CUDA_SHARED_DEVICES");
        let fd = match &shared {
            Some(path) => {
                use std::os::unix::ffi::OsStrExt;
                let c = std::ffi::CString::new(path.as_bytes()).expect("path");
                let fd = unsafe { libc::open(c.as_ptr(), libc::O_RDWR | libc::O_CREAT | libc::O_CLOEXEC, 0o666) };
                assert!(fd >= 0, "fake driver: cannot open {path:?}");
                // Growing a file zero-fills it, which is an empty timeline; never shrink it.
                let mut st: libc::stat = unsafe { std::mem::zeroed() };
                unsafe { libc::fstat(fd, &mut st) };
                if (st.st_size as usize) < size {
                    unsafe { libc::ftruncate(fd, size as libc::off_t) };
                }
                fd
            }
            None => -1,
        };
        let (flags, map_fd) =
            if fd >= 0 { (libc::MAP_SHARED, fd) } else { (libc::MAP_PRIVATE | libc::MAP_ANONYMOUS, -1) };
        let ptr =
            unsafe { libc::mmap(std::ptr::null_mut(), size, libc::PROT_READ | libc::PROT_WRITE, flags, map_fd, 0) };
        assert!(ptr != libc::MAP_FAILED, "fake driver: cannot map the device timelines");
        Timelines { map: ptr.cast(), fd }
    }

    /// Runs `f` on device `index`'s timeline, holding the file lock when it is shared.
    fn with<R>(&self, index: usize, f: impl FnOnce(&mut Timeline) -> R) -> R {
        let lock = |kind: c_int| {
            if self.fd >= 0 {
                let mut fl: libc::flock = unsafe { std::mem::zeroed() };
                fl.l_type = kind as libc::c_short;
                fl.l_whence = libc::SEEK_SET as libc::c_short;
                fl.l_len = 1;
                while unsafe { libc::fcntl(self.fd, libc::F_SETLKW, &fl) } != 0 {}
            }
        };
        lock(libc::F_WRLCK);
        let result = f(unsafe { &mut *self.map.add(index) });
        lock(libc::F_UNLCK);
        result
    }
}

struct Fake {
    devices: Vec<Device>,
    timelines: Timelines,
    /// handle -> (device, bytes)
    allocations: HashMap<u64, (usize, u64)>,
    next: u64,
    block_ns: u64,
    /// Devices in MIG mode: their GPU instances as (profile, first memory slice, slices).
    mig: HashMap<usize, Vec<(String, u32, u32)>>,
}

fn env_u64(name: &str, default: u64) -> u64 {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

fn fake() -> MutexGuard<'static, Fake> {
    static FAKE: OnceLock<Mutex<Fake>> = OnceLock::new();
    FAKE.get_or_init(|| {
        let count = env_u64("FAKE_CUDA_DEVICES", 2) as usize;
        let total = env_u64("FAKE_CUDA_MEMORY", 16 << 30);
        Mutex::new(Fake {
            devices: (0..count).map(|_| Device { total, used: 0 }).collect(),
            timelines: Timelines::open(count),
            allocations: HashMap::new(),
            next: 0x7f00_0000_0000,
            block_ns: env_u64("FAKE_CUDA_BLOCK_NS", 10_000),
            mig: HashMap::new(),
        })
    })
    .lock()
    .unwrap_or_else(|p| p.into_inner())
}

fn now_ns() -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

thread_local! {
    static CURRENT: Cell<usize> = const { Cell::new(0) };
}

fn current() -> usize {
    CURRENT.with(|c| c.get())
}

fn allocate(device: usize, bytes: u64) -> Result<u64, CUresult> {
    let mut f = fake();
    let f = &mut *f;
    let dev = f.devices.get_mut(device).ok_or(INVALID_DEVICE)?;
    if bytes == 0 {
        return Err(INVALID_VALUE);
    }
    if dev.used.checked_add(bytes).is_none_or(|u| u > dev.total) {
        return Err(OUT_OF_MEMORY);
    }
    dev.used += bytes;
    let handle = f.next;
    f.next += bytes.div_ceil(4096).max(1) * 4096;
    f.allocations.insert(handle, (device, bytes));
    Ok(handle)
}

fn release(handle: u64) -> CUresult {
    let mut f = fake();
    match f.allocations.remove(&handle) {
        Some((device, bytes)) => {
            f.devices[device].used -= bytes;
            SUCCESS
        }
        None => INVALID_VALUE,
    }
}

unsafe fn out<T>(p: *mut T, value: T) -> CUresult {
    if p.is_null() {
        return INVALID_VALUE;
    }
    unsafe { *p = value };
    SUCCESS
}

fn alloc_into(dptr: *mut u64, bytes: u64, device: usize) -> CUresult {
    if dptr.is_null() {
        return INVALID_VALUE;
    }
    match allocate(device, bytes) {
        Ok(h) => unsafe { out(dptr, h) },
        Err(rc) => rc,
    }
}

// ---- context and devices ---------------------------------------------------------------------

#[no_mangle]
pub extern "C" fn cuInit(_flags: c_uint) -> CUresult {
    drop(fake());
    SUCCESS
}

#[no_mangle]
pub unsafe extern "C" fn cuDeviceGetCount(count: *mut c_int) -> CUresult {
    let n = fake().devices.len() as c_int;
    unsafe { out(count, n) }
}

#[no_mangle]
pub unsafe extern "C" fn cuDeviceGet(device: *mut c_int, ordinal: c_int) -> CUresult {
    if ordinal < 0 || ordinal as usize >= fake().devices.len() {
        return INVALID_DEVICE;
    }
    unsafe { out(device, ordinal) }
}

fn uuid_bytes(device: c_int) -> [u8; 16] {
    let mut bytes = [0xab; 16];
    bytes[15] = device as u8;
    bytes
}

#[no_mangle]
pub unsafe extern "C" fn cuDeviceGetUuid(uuid: *mut [u8; 16], device: c_int) -> CUresult {
    unsafe { out(uuid, uuid_bytes(device)) }
}

#[no_mangle]
pub unsafe extern "C" fn cuDeviceGetUuid_v2(uuid: *mut [u8; 16], device: c_int) -> CUresult {
    unsafe { out(uuid, uuid_bytes(device)) }
}

/// Contexts are the device ordinal plus one.
#[no_mangle]
pub unsafe extern "C" fn cuDevicePrimaryCtxRetain(ctx: *mut *mut c_void, device: c_int) -> CUresult {
    if device < 0 || device as usize >= fake().devices.len() {
        return INVALID_DEVICE;
    }
    unsafe { out(ctx, (device as usize + 1) as *mut c_void) }
}

#[no_mangle]
pub extern "C" fn cuCtxSetCurrent(ctx: *mut c_void) -> CUresult {
    let device = (ctx as usize).saturating_sub(1);
    CURRENT.with(|c| c.set(device));
    SUCCESS
}

#[no_mangle]
pub unsafe extern "C" fn cuCtxGetDevice(device: *mut c_int) -> CUresult {
    unsafe { out(device, current() as c_int) }
}

#[no_mangle]
pub extern "C" fn cuCtxSynchronize() -> CUresult {
    let until = {
        let f = fake();
        if current() >= f.devices.len() {
            return INVALID_DEVICE;
        }
        f.timelines.with(current(), |t| t.busy_until)
    };
    let now = now_ns();
    if until > now {
        std::thread::sleep(Duration::from_nanos(until - now));
    }
    SUCCESS
}

// ---- memory ----------------------------------------------------------------------------------

#[no_mangle]
pub unsafe extern "C" fn cuMemAlloc_v2(dptr: *mut u64, bytes: usize) -> CUresult {
    alloc_into(dptr, bytes as u64, current())
}

#[no_mangle]
pub unsafe extern "C" fn cuMemAllocPitch_v2(
    dptr: *mut u64,
    pitch: *mut usize,
    width: usize,
    height: usize,
    _element: c_uint,
) -> CUresult {
    if pitch.is_null() {
        return INVALID_VALUE;
    }
    // Rows padded to 512 bytes, as real devices align them.
    let p = width.div_ceil(512) * 512;
    let rc = alloc_into(dptr, (p * height) as u64, current());
    if rc == SUCCESS {
        unsafe { *pitch = p };
    }
    rc
}

#[no_mangle]
pub unsafe extern "C" fn cuMemAllocManaged(dptr: *mut u64, bytes: usize, _flags: c_uint) -> CUresult {
    alloc_into(dptr, bytes as u64, current())
}

#[no_mangle]
pub unsafe extern "C" fn cuMemAllocAsync(dptr: *mut u64, bytes: usize, _stream: *mut c_void) -> CUresult {
    alloc_into(dptr, bytes as u64, current())
}

#[no_mangle]
pub unsafe extern "C" fn cuMemAllocFromPoolAsync(
    dptr: *mut u64,
    bytes: usize,
    _pool: *mut c_void,
    _stream: *mut c_void,
) -> CUresult {
    alloc_into(dptr, bytes as u64, current())
}

#[no_mangle]
pub extern "C" fn cuMemFree_v2(dptr: u64) -> CUresult {
    release(dptr)
}

#[no_mangle]
pub extern "C" fn cuMemFreeAsync(dptr: u64, _stream: *mut c_void) -> CUresult {
    release(dptr)
}

#[repr(C)]
pub struct Array3d {
    width: usize,
    height: usize,
    depth: usize,
    format: c_int,
    channels: c_uint,
    flags: c_uint,
}

fn texel_bytes(format: c_int, channels: c_uint) -> u64 {
    let per = match format {
        0x01 | 0x08 => 1,
        0x02 | 0x09 | 0x10 => 2,
        _ => 4,
    };
    per * u64::from(channels.max(1))
}

#[no_mangle]
pub unsafe extern "C" fn cuArrayCreate_v2(array: *mut u64, desc: *const [usize; 3]) -> CUresult {
    if desc.is_null() {
        return INVALID_VALUE;
    }
    // CUDA_ARRAY_DESCRIPTOR: width, height, then format and channels packed in the third word.
    let [w, h, packed] = unsafe { *desc };
    let (format, channels) = ((packed & 0xffff_ffff) as c_int, (packed >> 32) as c_uint);
    alloc_into(array, w.max(1) as u64 * h.max(1) as u64 * texel_bytes(format, channels), current())
}

#[no_mangle]
pub unsafe extern "C" fn cuArray3DCreate_v2(array: *mut u64, desc: *const Array3d) -> CUresult {
    if desc.is_null() {
        return INVALID_VALUE;
    }
    let d = unsafe { &*desc };
    let bytes = [d.width, d.height, d.depth].iter().map(|&x| x.max(1) as u64).product::<u64>()
        * texel_bytes(d.format, d.channels);
    alloc_into(array, bytes, current())
}

#[no_mangle]
pub extern "C" fn cuArrayDestroy(array: u64) -> CUresult {
    release(array)
}

#[no_mangle]
pub unsafe extern "C" fn cuMipmappedArrayCreate(array: *mut u64, desc: *const Array3d, levels: c_uint) -> CUresult {
    if desc.is_null() {
        return INVALID_VALUE;
    }
    let d = unsafe { &*desc };
    let (mut w, mut h, mut z) = (d.width.max(1) as u64, d.height.max(1) as u64, d.depth.max(1) as u64);
    let mut bytes = 0;
    for _ in 0..levels.max(1) {
        bytes += w * h * z * texel_bytes(d.format, d.channels);
        (w, h, z) = ((w / 2).max(1), (h / 2).max(1), (z / 2).max(1));
    }
    alloc_into(array, bytes, current())
}

#[no_mangle]
pub extern "C" fn cuMipmappedArrayDestroy(array: u64) -> CUresult {
    release(array)
}

#[no_mangle]
pub unsafe extern "C" fn cuMemCreate(handle: *mut u64, bytes: usize, prop: *const [c_int; 4], _flags: u64) -> CUresult {
    if prop.is_null() {
        return INVALID_VALUE;
    }
    let [_, _, location_type, id] = unsafe { *prop };
    if location_type != 1 || id < 0 {
        return INVALID_VALUE;
    }
    alloc_into(handle, bytes as u64, id as usize)
}

#[no_mangle]
pub extern "C" fn cuMemRelease(handle: u64) -> CUresult {
    release(handle)
}

#[no_mangle]
pub unsafe extern "C" fn cuDeviceTotalMem_v2(bytes: *mut usize, device: c_int) -> CUresult {
    let total = match fake().devices.get(device as usize) {
        Some(d) => d.total,
        None => return INVALID_DEVICE,
    };
    unsafe { out(bytes, total as usize) }
}

#[no_mangle]
pub unsafe extern "C" fn cuMemGetInfo_v2(free: *mut usize, total: *mut usize) -> CUresult {
    let (used, all) = match fake().devices.get(current()) {
        Some(d) => (d.used, d.total),
        None => return INVALID_DEVICE,
    };
    unsafe {
        if out(free, (all - used) as usize) != SUCCESS {
            return INVALID_VALUE;
        }
        out(total, all as usize)
    }
}

// ---- kernels ---------------------------------------------------------------------------------

fn launch(grid: [c_uint; 3]) -> CUresult {
    let device = current();
    let wait = {
        let f = fake();
        if device >= f.devices.len() {
            return INVALID_DEVICE;
        }
        let blocks: u64 = grid.iter().map(|&g| u64::from(g.max(1))).product();
        let kernel = blocks * f.block_ns;
        f.timelines.with(device, |t| {
            let now = now_ns();
            let start = t.busy_until.max(now);
            let end = start + kernel;
            t.ring[t.count as usize % RING] = Kernel { pid: std::process::id(), _pad: 0, start, end };
            t.count += 1;
            t.busy_until = end;
            end.saturating_sub(now).saturating_sub(QUEUE_NS)
        })
    };
    if wait > 0 {
        std::thread::sleep(Duration::from_nanos(wait));
    }
    SUCCESS
}

#[no_mangle]
pub extern "C" fn cuLaunchKernel(
    _f: *mut c_void,
    gx: c_uint,
    gy: c_uint,
    gz: c_uint,
    _bx: c_uint,
    _by: c_uint,
    _bz: c_uint,
    _shared: c_uint,
    _stream: *mut c_void,
    _params: *mut *mut c_void,
    _extra: *mut *mut c_void,
) -> CUresult {
    launch([gx, gy, gz])
}

#[no_mangle]
pub unsafe extern "C" fn cuLaunchKernelEx(
    config: *const [c_uint; 6],
    _f: *mut c_void,
    _params: *mut *mut c_void,
    _extra: *mut *mut c_void,
) -> CUresult {
    if config.is_null() {
        return INVALID_VALUE;
    }
    let c = unsafe { *config };
    launch([c[0], c[1], c[2]])
}

#[no_mangle]
pub extern "C" fn cuLaunchCooperativeKernel(
    _f: *mut c_void,
    gx: c_uint,
    gy: c_uint,
    gz: c_uint,
    _bx: c_uint,
    _by: c_uint,
    _bz: c_uint,
    _shared: c_uint,
    _stream: *mut c_void,
    _params: *mut *mut c_void,
) -> CUresult {
    launch([gx, gy, gz])
}

/// Time the kernels of `pid` occupied `device` between `from` and `to` (CLOCK_MONOTONIC ns),
/// on the deterministic device clock.
#[no_mangle]
pub extern "C" fn fakeBusyNs(device: c_int, pid: u32, from: u64, to: u64) -> u64 {
    let f = fake();
    if device < 0 || device as usize >= f.devices.len() {
        return 0;
    }
    f.timelines.with(device as usize, |t| t.busy(Some(pid), from, to))
}

// ---- cuGetProcAddress ------------------------------------------------------------------------

fn proc_address(symbol: *const c_char, version: c_int) -> Option<*mut c_void> {
    if symbol.is_null() {
        return None;
    }
    let name = unsafe { CStr::from_ptr(symbol) }.to_str().ok()?;
    // Names are asked without the version suffix; versions before 3.2 would get the v1
    // functions, which this fake does not have.
    let p = match (name, version >= 3020) {
        ("cuMemAlloc", true) => cuMemAlloc_v2 as *mut c_void,
        ("cuMemAllocPitch", true) => cuMemAllocPitch_v2 as *mut c_void,
        ("cuMemFree", true) => cuMemFree_v2 as *mut c_void,
        ("cuMemGetInfo", true) => cuMemGetInfo_v2 as *mut c_void,
        ("cuDeviceTotalMem", true) => cuDeviceTotalMem_v2 as *mut c_void,
        ("cuArrayCreate", true) => cuArrayCreate_v2 as *mut c_void,
        ("cuArray3DCreate", true) => cuArray3DCreate_v2 as *mut c_void,
        ("cuMemAllocManaged", _) => cuMemAllocManaged as *mut c_void,
        ("cuMemAllocAsync", _) => cuMemAllocAsync as *mut c_void,
        ("cuMemAllocFromPoolAsync", _) => cuMemAllocFromPoolAsync as *mut c_void,
        ("cuMemFreeAsync", _) => cuMemFreeAsync as *mut c_void,
        ("cuArrayDestroy", _) => cuArrayDestroy as *mut c_void,
        ("cuMipmappedArrayCreate", _) => cuMipmappedArrayCreate as *mut c_void,
        ("cuMipmappedArrayDestroy", _) => cuMipmappedArrayDestroy as *mut c_void,
        ("cuMemCreate", _) => cuMemCreate as *mut c_void,
        ("cuMemRelease", _) => cuMemRelease as *mut c_void,
        ("cuLaunchKernel", _) => cuLaunchKernel as *mut c_void,
        ("cuLaunchKernelEx", _) => cuLaunchKernelEx as *mut c_void,
        ("cuLaunchCooperativeKernel", _) => cuLaunchCooperativeKernel as *mut c_void,
        ("cuCtxGetDevice", _) => cuCtxGetDevice as *mut c_void,
        ("cuCtxSetCurrent", _) => cuCtxSetCurrent as *mut c_void,
        ("cuCtxSynchronize", _) => cuCtxSynchronize as *mut c_void,
        ("cuDevicePrimaryCtxRetain", _) => cuDevicePrimaryCtxRetain as *mut c_void,
        ("cuInit", _) => cuInit as *mut c_void,
        ("cuGetProcAddress", _) => cuGetProcAddress as *mut c_void,
        _ => return None,
    };
    Some(p)
}

#[no_mangle]
pub unsafe extern "C" fn cuGetProcAddress(
    symbol: *const c_char,
    pfn: *mut *mut c_void,
    version: c_int,
    _flags: u64,
) -> CUresult {
    match proc_address(symbol, version) {
        Some(p) => unsafe { out(pfn, p) },
        None => NOT_FOUND,
    }
}

#[no_mangle]
pub unsafe extern "C" fn cuGetProcAddress_v2(
    symbol: *const c_char,
    pfn: *mut *mut c_void,
    version: c_int,
    _flags: u64,
    status: *mut c_int,
) -> CUresult {
    let found = proc_address(symbol, version);
    if !status.is_null() {
        unsafe { *status = if found.is_some() { 0 } else { 1 } };
    }
    match found {
        Some(p) => unsafe { out(pfn, p) },
        None => NOT_FOUND,
    }
}

// ---- NVML ------------------------------------------------------------------------------------

#[repr(C)]
pub struct ProcessSample {
    pid: c_uint,
    time_stamp: u64,
    sm_util: c_uint,
    mem_util: c_uint,
    enc_util: c_uint,
    dec_util: c_uint,
}

#[no_mangle]
pub extern "C" fn nvmlInit_v2() -> c_int {
    drop(fake());
    0
}

/// NVML handles are the device index plus one.
#[no_mangle]
pub unsafe extern "C" fn nvmlDeviceGetHandleByIndex_v2(index: c_uint, device: *mut *mut c_void) -> c_int {
    if index as usize >= fake().devices.len() {
        return 2;
    }
    unsafe { out(device, (index as usize + 1) as *mut c_void) }
}

#[no_mangle]
pub unsafe extern "C" fn nvmlDeviceGetHandleByUUID(uuid: *const c_char, device: *mut *mut c_void) -> c_int {
    if uuid.is_null() {
        return 2;
    }
    let text = unsafe { CStr::from_ptr(uuid) }.to_string_lossy().into_owned();
    let index = text.get(text.len().saturating_sub(2)..).and_then(|h| u8::from_str_radix(h, 16).ok());
    match index {
        Some(i) if text.starts_with("GPU-abababab-") => unsafe {
            nvmlDeviceGetHandleByIndex_v2(c_uint::from(i), device)
        },
        _ => 6, // NVML_ERROR_NOT_FOUND
    }
}

/// One sample per process that ran kernels since `last_seen` (µs; the last second when 0): the
/// percentage of that span its kernels occupied the device.
#[no_mangle]
pub unsafe extern "C" fn nvmlDeviceGetProcessUtilization(
    device: *mut c_void,
    samples: *mut ProcessSample,
    count: *mut c_uint,
    last_seen: u64,
) -> c_int {
    if count.is_null() {
        return 2;
    }
    let f = fake();
    let index = (device as usize).wrapping_sub(1);
    if index >= f.devices.len() {
        return 2;
    }
    let now = now_ns();
    let from = if last_seen == 0 { now.saturating_sub(1_000_000_000) } else { last_seen * 1000 };
    let span = now.saturating_sub(from).max(1);
    let found: Vec<(u32, u64)> = f.timelines.with(index, |t| {
        t.pids(from).into_iter().map(|pid| (pid, t.busy(Some(pid), from, now))).filter(|(_, b)| *b > 0).collect()
    });
    let capacity = unsafe { *count } as usize;
    unsafe { *count = found.len() as c_uint };
    if samples.is_null() || capacity < found.len() {
        return if found.is_empty() { 0 } else { 7 }; // NVML_ERROR_INSUFFICIENT_SIZE
    }
    for (i, (pid, busy)) in found.into_iter().enumerate() {
        let percent = (busy as f64 * 100.0 / span as f64).round().min(100.0) as c_uint;
        unsafe {
            *samples.add(i) =
                ProcessSample { pid, time_stamp: now / 1000, sm_util: percent, mem_util: 0, enc_util: 0, dec_util: 0 };
        }
    }
    0
}

/// The device's utilization over the last second, all processes together.
#[no_mangle]
pub unsafe extern "C" fn nvmlDeviceGetUtilizationRates(device: *mut c_void, rates: *mut [c_uint; 2]) -> c_int {
    let f = fake();
    let index = (device as usize).wrapping_sub(1);
    if index >= f.devices.len() {
        return 2;
    }
    let now = now_ns();
    let busy = f.timelines.with(index, |t| t.busy(None, now.saturating_sub(1_000_000_000), now));
    unsafe { out(rates, [(busy * 100 / 1_000_000_000) as c_uint, 0]) }
}

// ---- NVML: MIG --------------------------------------------------------------------------------

/// MIG device handles: `MIG_HANDLE + device * 16 + instance`; GPU instance handles the same
/// from `GI_HANDLE`. Device handles are small (index + 1), so the ranges never meet.
const MIG_HANDLE: usize = 0x1000;
const GI_HANDLE: usize = 0x2000;
const NVML_NOT_SUPPORTED: c_int = 3;
const NVML_NOT_FOUND: c_int = 6;
const NVML_INSUFFICIENT_SIZE: c_int = 7;

#[repr(C)]
pub struct GpuInstancePlacement {
    start: c_uint,
    size: c_uint,
}

#[repr(C)]
pub struct GpuInstanceInfo {
    device: *mut c_void,
    id: c_uint,
    profile_id: c_uint,
    placement: GpuInstancePlacement,
}

/// Memory slices of a profile name (`1g.10gb`): what an A100-80GB gives it.
fn slices_of(profile: &str) -> u32 {
    match profile.split('.').next() {
        Some("7g") => 8,
        Some("3g" | "4g") => 4,
        Some("2g") => 2,
        _ if profile.ends_with(".20gb") || profile.ends_with(".24gb") => 2,
        _ => 1,
    }
}

/// Test hook: puts `device` in MIG mode with the instances `spec` lists (`profile@start,...`).
#[no_mangle]
pub unsafe extern "C" fn fakeSetMig(device: c_int, spec: *const c_char) -> c_int {
    if spec.is_null() || device < 0 {
        return 2;
    }
    let text = unsafe { CStr::from_ptr(spec) }.to_string_lossy().into_owned();
    let mut instances = Vec::new();
    for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let Some((profile, start)) = part.split_once('@') else { return 2 };
        let Ok(start) = start.parse::<u32>() else { return 2 };
        instances.push((profile.to_string(), start, slices_of(profile)));
    }
    let mut f = fake();
    if device as usize >= f.devices.len() {
        return 2;
    }
    f.mig.insert(device as usize, instances);
    0
}

/// `(device, instance)` of a MIG device handle.
fn mig_of(handle: *mut c_void) -> Option<(usize, usize)> {
    let h = (handle as usize).checked_sub(MIG_HANDLE).filter(|h| *h < GI_HANDLE - MIG_HANDLE)?;
    Some((h / 16, h % 16))
}

fn device_of(handle: *mut c_void) -> Option<usize> {
    let index = (handle as usize).checked_sub(1)?;
    (index < fake().devices.len()).then_some(index)
}

unsafe fn write_str(buf: *mut c_char, len: c_uint, s: &str) -> c_int {
    if buf.is_null() {
        return 2;
    }
    if s.len() + 1 > len as usize {
        return NVML_INSUFFICIENT_SIZE;
    }
    unsafe {
        std::ptr::copy_nonoverlapping(s.as_ptr(), buf.cast::<u8>(), s.len());
        *buf.add(s.len()) = 0;
    }
    0
}

#[no_mangle]
pub unsafe extern "C" fn nvmlDeviceGetMigMode(
    device: *mut c_void,
    current: *mut c_uint,
    pending: *mut c_uint,
) -> c_int {
    let Some(index) = device_of(device) else { return 2 };
    let mode = c_uint::from(fake().mig.contains_key(&index));
    unsafe {
        out(current, mode);
        out(pending, mode)
    }
}

#[no_mangle]
pub unsafe extern "C" fn nvmlDeviceGetMaxMigDeviceCount(device: *mut c_void, count: *mut c_uint) -> c_int {
    let Some(index) = device_of(device) else { return 2 };
    let n = if fake().mig.contains_key(&index) { 7 } else { 0 };
    unsafe { out(count, n) }
}

#[no_mangle]
pub unsafe extern "C" fn nvmlDeviceGetMigDeviceHandleByIndex(
    device: *mut c_void,
    index: c_uint,
    mig: *mut *mut c_void,
) -> c_int {
    let Some(d) = device_of(device) else { return 2 };
    let f = fake();
    let Some(instances) = f.mig.get(&d) else { return NVML_NOT_SUPPORTED };
    if index as usize >= instances.len() {
        return NVML_NOT_FOUND;
    }
    unsafe { out(mig, (MIG_HANDLE + d * 16 + index as usize) as *mut c_void) }
}

#[no_mangle]
pub unsafe extern "C" fn nvmlDeviceGetGpuInstanceId(mig: *mut c_void, id: *mut c_uint) -> c_int {
    let Some((_, i)) = mig_of(mig) else { return NVML_NOT_SUPPORTED };
    unsafe { out(id, i as c_uint) }
}

#[no_mangle]
pub unsafe extern "C" fn nvmlDeviceGetGpuInstanceById(device: *mut c_void, id: c_uint, gi: *mut *mut c_void) -> c_int {
    let Some(d) = device_of(device) else { return 2 };
    if fake().mig.get(&d).is_none_or(|v| id as usize >= v.len()) {
        return NVML_NOT_FOUND;
    }
    unsafe { out(gi, (GI_HANDLE + d * 16 + id as usize) as *mut c_void) }
}

#[no_mangle]
pub unsafe extern "C" fn nvmlGpuInstanceGetInfo(gi: *mut c_void, info: *mut GpuInstanceInfo) -> c_int {
    let Some(h) = (gi as usize).checked_sub(GI_HANDLE) else { return 2 };
    let (d, i) = (h / 16, h % 16);
    let f = fake();
    let Some(&(_, start, size)) = f.mig.get(&d).and_then(|v| v.get(i)) else { return NVML_NOT_FOUND };
    let value = GpuInstanceInfo {
        device: (d + 1) as *mut c_void,
        id: i as c_uint,
        profile_id: 0,
        placement: GpuInstancePlacement { start, size },
    };
    unsafe { out(info, value) }
}

#[no_mangle]
pub unsafe extern "C" fn nvmlDeviceGetName(device: *mut c_void, name: *mut c_char, len: c_uint) -> c_int {
    let text = match mig_of(device) {
        Some((d, i)) => match fake().mig.get(&d).and_then(|v| v.get(i)) {
            Some((profile, _, _)) => format!("NVIDIA A100-SXM4-80GB MIG {profile}"),
            None => return NVML_NOT_FOUND,
        },
        None if device_of(device).is_some() => "NVIDIA A100-SXM4-80GB".to_string(),
        None => return 2,
    };
    unsafe { write_str(name, len, &text) }
}

#[no_mangle]
pub unsafe extern "C" fn nvmlDeviceGetUUID(device: *mut c_void, uuid: *mut c_char, len: c_uint) -> c_int {
    let text = match (mig_of(device), device_of(device)) {
        (Some((d, i)), _) => format!("MIG-abababab-0000-0000-0000-0000000000{d:x}{i:x}"),
        (None, Some(d)) => format!("GPU-abababab-0000-0000-0000-0000000000{d:02x}"),
        (None, None) => return 2,
    };
    unsafe { write_str(uuid, len, &text) }
}
