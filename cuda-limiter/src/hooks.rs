//! Owns the FFI surface the dynamic linker sees: the exported CUDA driver functions, `dlsym` and
//! `cuGetProcAddress[_v2]`, and the process state behind them. Thin: each hook reads its
//! arguments, asks the pure policy (`accounting`, `pacing`) and calls the real driver.
//!
//! How calls reach the hooks: a program linked to libcuda finds these exports first (LD_PRELOAD);
//! a program that `dlopen`s libcuda and looks symbols up gets them from the `dlsym` hook; the CUDA
//! runtime (and so PyTorch, TensorFlow, JAX) asks `cuGetProcAddress`, whose hook swaps the driver's
//! pointer for the hook's. The real function is the driver's own, found by `dlsym` on the handle
//! the program used, `RTLD_NEXT`, or `libcuda.so.1`.

use std::collections::HashMap;
use std::ffi::{c_char, c_int, c_uint, c_void, CStr};
use std::path::PathBuf;
use std::sync::atomic::{AtomicPtr, AtomicU8, Ordering};
use std::sync::{Mutex, MutexGuard, OnceLock};

use crate::accounting::{self, mem_info, OverLimit};
use crate::config::{self, Limits, MAX_DEVICES};
use crate::cuda::*;
use crate::log;
use crate::nvml::Nvml;
use crate::pacing::{launch_cost, Controller, TokenBucket};
use crate::region::{self, Region};

type DlsymFn = unsafe extern "C" fn(*mut c_void, *const c_char) -> *mut c_void;

/// glibc's own `dlsym`, found by version so this library's export is skipped.
fn real_dlsym() -> DlsymFn {
    static REAL: OnceLock<usize> = OnceLock::new();
    let p = *REAL.get_or_init(|| {
        for version in [c"GLIBC_2.34", c"GLIBC_2.2.5", c"GLIBC_2.17"] {
            let p = unsafe { libc::dlvsym(libc::RTLD_NEXT, c"dlsym".as_ptr(), version.as_ptr()) };
            if !p.is_null() {
                return p as usize;
            }
        }
        0
    });
    assert!(p != 0, "grus-cuda-limiter: glibc dlsym not found");
    unsafe { std::mem::transmute::<usize, DlsymFn>(p) }
}

/// The hooked symbols: (exported name, name asked of `cuGetProcAddress`, first CUDA version
/// whose `cuGetProcAddress` answers with this variant, per-thread-default-stream variant).
const HOOKS: &[(&str, &str, c_int, bool)] = &[
    ("cuMemAlloc_v2", "cuMemAlloc", 3020, false),
    ("cuMemAllocPitch_v2", "cuMemAllocPitch", 3020, false),
    ("cuMemAllocManaged", "cuMemAllocManaged", 0, false),
    ("cuMemAllocAsync", "cuMemAllocAsync", 0, false),
    ("cuMemAllocAsync_ptsz", "cuMemAllocAsync", 0, true),
    ("cuMemAllocFromPoolAsync", "cuMemAllocFromPoolAsync", 0, false),
    ("cuMemAllocFromPoolAsync_ptsz", "cuMemAllocFromPoolAsync", 0, true),
    ("cuMemFree_v2", "cuMemFree", 3020, false),
    ("cuMemFreeAsync", "cuMemFreeAsync", 0, false),
    ("cuMemFreeAsync_ptsz", "cuMemFreeAsync", 0, true),
    ("cuArrayCreate_v2", "cuArrayCreate", 3020, false),
    ("cuArray3DCreate_v2", "cuArray3DCreate", 3020, false),
    ("cuArrayDestroy", "cuArrayDestroy", 0, false),
    ("cuMipmappedArrayCreate", "cuMipmappedArrayCreate", 0, false),
    ("cuMipmappedArrayDestroy", "cuMipmappedArrayDestroy", 0, false),
    ("cuMemCreate", "cuMemCreate", 0, false),
    ("cuMemRelease", "cuMemRelease", 0, false),
    ("cuMemGetInfo_v2", "cuMemGetInfo", 3020, false),
    ("cuLaunchKernel", "cuLaunchKernel", 0, false),
    ("cuLaunchKernel_ptsz", "cuLaunchKernel", 0, true),
    ("cuLaunchKernelEx", "cuLaunchKernelEx", 0, false),
    ("cuLaunchKernelEx_ptsz", "cuLaunchKernelEx", 0, true),
    ("cuLaunchCooperativeKernel", "cuLaunchCooperativeKernel", 0, false),
    ("cuLaunchCooperativeKernel_ptsz", "cuLaunchCooperativeKernel", 0, true),
    ("cuGetProcAddress", "cuGetProcAddress", 0, false),
    ("cuGetProcAddress_v2", "cuGetProcAddress", 12000, false),
    ("cuDeviceTotalMem_v2", "cuDeviceTotalMem", 3020, false),
];

/// The hook functions, in `HOOKS` order.
fn hook_ptrs() -> [*mut c_void; N] {
    [
        cuMemAlloc_v2 as *mut c_void,
        cuMemAllocPitch_v2 as *mut c_void,
        cuMemAllocManaged as *mut c_void,
        cuMemAllocAsync as *mut c_void,
        cuMemAllocAsync_ptsz as *mut c_void,
        cuMemAllocFromPoolAsync as *mut c_void,
        cuMemAllocFromPoolAsync_ptsz as *mut c_void,
        cuMemFree_v2 as *mut c_void,
        cuMemFreeAsync as *mut c_void,
        cuMemFreeAsync_ptsz as *mut c_void,
        cuArrayCreate_v2 as *mut c_void,
        cuArray3DCreate_v2 as *mut c_void,
        cuArrayDestroy as *mut c_void,
        cuMipmappedArrayCreate as *mut c_void,
        cuMipmappedArrayDestroy as *mut c_void,
        cuMemCreate as *mut c_void,
        cuMemRelease as *mut c_void,
        cuMemGetInfo_v2 as *mut c_void,
        cuLaunchKernel as *mut c_void,
        cuLaunchKernel_ptsz as *mut c_void,
        cuLaunchKernelEx as *mut c_void,
        cuLaunchKernelEx_ptsz as *mut c_void,
        cuLaunchCooperativeKernel as *mut c_void,
        cuLaunchCooperativeKernel_ptsz as *mut c_void,
        cuGetProcAddress as *mut c_void,
        cuGetProcAddress_v2 as *mut c_void,
        cuDeviceTotalMem_v2 as *mut c_void,
    ]
}

const N: usize = 27;
#[allow(clippy::declare_interior_mutable_const)]
const NULL: AtomicPtr<c_void> = AtomicPtr::new(std::ptr::null_mut());
/// The driver's function behind each hook, once found.
static REAL: [AtomicPtr<c_void>; N] = [NULL; N];
/// The handle a program looked a hooked symbol up with (its `dlopen` of libcuda).
static DRIVER: AtomicPtr<c_void> = AtomicPtr::new(std::ptr::null_mut());

fn hook_index(name: &[u8]) -> Option<usize> {
    HOOKS.iter().position(|(n, ..)| n.as_bytes() == name)
}

/// The driver's libcuda handle: the one the program used, else `libcuda.so.1`.
fn driver_handle() -> *mut c_void {
    let h = DRIVER.load(Ordering::Acquire);
    if !h.is_null() {
        return h;
    }
    let h = unsafe { libc::dlopen(c"libcuda.so.1".as_ptr(), libc::RTLD_LAZY | libc::RTLD_NOLOAD) };
    let h = if h.is_null() { unsafe { libc::dlopen(c"libcuda.so.1".as_ptr(), libc::RTLD_LAZY) } } else { h };
    if !h.is_null() {
        DRIVER.store(h, Ordering::Release);
    }
    h
}

/// The driver's own `name`, never one of our hooks.
fn driver_symbol(name: &CStr) -> *mut c_void {
    let ours = hook_index(name.to_bytes()).map(|i| hook_ptrs()[i]);
    for handle in [libc::RTLD_NEXT, driver_handle()] {
        if handle.is_null() {
            continue;
        }
        let p = unsafe { real_dlsym()(handle, name.as_ptr()) };
        if !p.is_null() && Some(p) != ours {
            return p;
        }
    }
    std::ptr::null_mut()
}

fn real(index: usize) -> *mut c_void {
    let p = REAL[index].load(Ordering::Acquire);
    if !p.is_null() {
        return p;
    }
    let name = std::ffi::CString::new(HOOKS[index].0).expect("static name");
    let p = driver_symbol(&name);
    if !p.is_null() {
        REAL[index].store(p, Ordering::Release);
    }
    p
}

/// The real function of hook `$index` as type `$ty`, or `CUDA_ERROR_NOT_FOUND` from the hook.
macro_rules! real_fn {
    ($index:expr, $ty:ty) => {{
        let p = real($index);
        if p.is_null() {
            crate::log!(Error, "driver function {} not found", HOOKS[$index].0);
            return CUDA_ERROR_NOT_FOUND;
        }
        unsafe { std::mem::transmute::<*mut c_void, $ty>(p) }
    }};
}

static DISABLED: AtomicU8 = AtomicU8::new(2);

/// The off switch, `GRUS_CUDA_LIMITER=off`, read without allocating (`dlsym` may run early).
fn disabled() -> bool {
    match DISABLED.load(Ordering::Relaxed) {
        2 => {
            let v = unsafe { libc::getenv(c"GRUS_CUDA_LIMITER".as_ptr()) };
            let off = !v.is_null() && config::disabled(unsafe { CStr::from_ptr(v) }.to_str().ok());
            DISABLED.store(u8::from(off), Ordering::Relaxed);
            off
        }
        v => v == 1,
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Kind {
    Memory,
    Array,
    Mipmapped,
    Physical,
}

struct Pacer {
    bucket: TokenBucket,
    controller: Controller,
}

struct State {
    limits: Limits,
    region: Option<Region>,
    /// (pid, slot): a forked child claims its own slot.
    me: Mutex<Option<(u32, usize)>>,
    allocations: Mutex<HashMap<(Kind, u64), (usize, u64)>>,
    pacers: Vec<Mutex<Option<Pacer>>>,
    nvml: Mutex<Option<Result<Nvml, ()>>>,
}

fn state() -> &'static State {
    static STATE: OnceLock<State> = OnceLock::new();
    STATE.get_or_init(|| {
        log::set_level(log::parse_level(std::env::var("GRUS_CUDA_LOG").ok().as_deref()));
        let limits = config::limits_from(|name| std::env::var(name).ok());
        for error in &limits.errors {
            crate::log!(Error, "bad limit {error}; failing closed");
        }
        let path = std::env::var_os("GRUS_CUDA_SHM").map(PathBuf::from).unwrap_or_else(|| region::DEFAULT_PATH.into());
        let region = match Region::open(&path) {
            Ok(region) => Some(region),
            Err(e) => {
                crate::log!(Error, "{e} ({}); allocations on memory-limited devices are refused", path.display());
                None
            }
        };
        for (i, device) in limits.devices.iter().enumerate().filter(|(_, d)| **d != Default::default()) {
            crate::log!(
                Info,
                "device {i}: memory limit {:?} bytes, SM limit {:?} %",
                device.memory_bytes,
                device.sm_percent
            );
        }
        State {
            limits,
            region,
            me: Mutex::new(None),
            allocations: Mutex::new(HashMap::new()),
            pacers: (0..MAX_DEVICES).map(|_| Mutex::new(None)).collect(),
            nvml: Mutex::new(None),
        }
    })
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn monotonic_ns() -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// The device of the calling thread's current context (0 when there is none).
fn current_device() -> usize {
    type CtxGetDevice = unsafe extern "C" fn(*mut CUdevice) -> CUresult;
    static FN: AtomicPtr<c_void> = AtomicPtr::new(std::ptr::null_mut());
    let mut p = FN.load(Ordering::Acquire);
    if p.is_null() {
        // Not cached while missing: the driver may be loaded later.
        p = driver_symbol(c"cuCtxGetDevice");
        if p.is_null() {
            return 0;
        }
        FN.store(p, Ordering::Release);
    }
    let f = unsafe { std::mem::transmute::<*mut c_void, CtxGetDevice>(p) };
    let mut device: CUdevice = 0;
    if unsafe { f(&mut device) } == CUDA_SUCCESS && device >= 0 {
        device as usize
    } else {
        0
    }
}

impl State {
    /// Runs `f` on the locked table with this process's slot; reclaims dead processes' slots
    /// first when `reclaim` (it reads /proc, so only on the paths that need it).
    fn with_table<R>(&self, reclaim: bool, f: impl FnOnce(&mut [accounting::Slot], usize) -> R) -> Option<R> {
        let region = self.region.as_ref()?;
        let mut table = match region.lock() {
            Ok(table) => table,
            Err(e) => {
                crate::log!(Error, "{e}");
                return None;
            }
        };
        if reclaim {
            for (pid, bytes) in accounting::reclaim(&mut table, region::process_alive) {
                crate::log!(Info, "reclaimed {bytes} bytes of exited process {pid}");
            }
        }
        let pid = std::process::id();
        let mut me = lock(&self.me);
        let slot = match *me {
            Some((p, slot)) if p == pid => slot,
            previous => {
                if previous.is_some() {
                    // Forked: the parent's allocations are the parent's.
                    lock(&self.allocations).clear();
                }
                let slot = accounting::claim_slot(&mut table, pid as i32, region::self_start_time())?;
                *me = Some((pid, slot));
                slot
            }
        };
        Some(f(&mut table, slot))
    }

    fn reserve(&self, device: usize, bytes: u64, limit: u64) -> Result<(), Option<OverLimit>> {
        let attempt = |reclaim| self.with_table(reclaim, |t, me| accounting::try_reserve(t, me, device, bytes, limit));
        match attempt(false) {
            Some(Ok(())) => Ok(()),
            // Over the limit: memory of exited processes may be what is in the way.
            Some(Err(_)) => attempt(true).ok_or(None)?.map_err(Some),
            None => Err(None),
        }
    }

    fn release(&self, device: usize, bytes: u64) {
        self.with_table(false, |t, me| accounting::release(t, me, device, bytes));
    }
}

/// The memory limit of `device`, when the limiter is on and the device has one.
fn memory_limit(device: usize) -> Option<u64> {
    if disabled() {
        return None;
    }
    state().limits.device(device).memory_bytes
}

/// An allocation of `bytes` on `device`: reserved against the share before the driver is asked,
/// so two processes cannot both pass the check; given back when the driver fails.
fn guarded_alloc(kind: Kind, device: usize, bytes: u64, call: impl FnOnce() -> (CUresult, u64)) -> CUresult {
    let Some(limit) = memory_limit(device) else { return call().0 };
    let st = state();
    if let Err(over) = st.reserve(device, bytes, limit) {
        match over {
            Some(o) => crate::log!(
                Warn,
                "out of memory on device {device}: {} bytes used + {} requested > limit {}",
                o.used,
                o.request,
                o.limit
            ),
            None => crate::log!(
                Error,
                "shared accounting region unavailable or full (or device {device} beyond the table); refusing {bytes} bytes"
            ),
        }
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    let (rc, handle) = call();
    if rc != CUDA_SUCCESS {
        st.release(device, bytes);
        return rc;
    }
    lock(&st.allocations).insert((kind, handle), (device, bytes));
    crate::log!(Debug, "{kind:?} {handle:#x}: {bytes} bytes on device {device}");
    rc
}

/// A release: the quota comes back once the driver freed the memory. The record leaves the map
/// before the driver is called: once freed, the handle may be handed out again at once to
/// another thread's allocation, whose record must not be the one removed here.
fn guarded_free(kind: Kind, handle: u64, call: impl FnOnce() -> CUresult) -> CUresult {
    if disabled() {
        return call();
    }
    let st = state();
    let entry = lock(&st.allocations).remove(&(kind, handle));
    let rc = call();
    if let Some((device, bytes)) = entry {
        if rc == CUDA_SUCCESS {
            st.release(device, bytes);
        } else {
            lock(&st.allocations).insert((kind, handle), (device, bytes));
        }
    }
    rc
}

/// Waits until the SM share of `device` allows a launch of `grid` blocks.
fn pace(device: usize, grid: [c_uint; 3]) {
    if disabled() {
        return;
    }
    let st = state();
    let Some(percent) = st.limits.device(device).sm_percent else { return };
    let Some(cell) = st.pacers.get(device) else { return };
    let cost = launch_cost(grid);
    let mut pacer = lock(cell);
    let now = monotonic_ns();
    let p = pacer.get_or_insert_with(|| Pacer {
        bucket: TokenBucket::new(now),
        controller: Controller::new(f64::from(percent) / 100.0, now),
    });
    if p.controller.window_over(now) {
        let utilization = measure(st, device);
        // NVML samples come less often than windows end: without one, the window goes on, so
        // the launches it counted meet the utilization they caused.
        if utilization.is_some() || p.controller.window_stale(now) {
            p.bucket.rate = p.controller.close_window(now, utilization, p.bucket.rate);
            crate::log!(Debug, "device {device}: utilization {utilization:?}, rate {:?} blocks/s", p.bucket.rate);
        }
    }
    let mut now = now;
    loop {
        match p.bucket.take(cost, now) {
            Ok(()) => break,
            Err(wait) => {
                std::thread::sleep(std::time::Duration::from_nanos(wait));
                now = monotonic_ns();
            }
        }
    }
    p.controller.consumed += cost;
}

/// Our container's utilization of `device` since the last call.
fn measure(st: &State, device: usize) -> Option<f64> {
    let mut nvml = lock(&st.nvml);
    let nvml = nvml.get_or_insert_with(|| {
        Nvml::open(real_dlsym()).map_err(|e| crate::log!(Error, "{e}: SM limits cannot be measured, not enforced"))
    });
    let nvml = nvml.as_mut().ok()?;
    let mut pids: Vec<i32> =
        st.with_table(false, |t, _| t.iter().filter(|s| s.pid != 0).map(|s| s.pid).collect()).unwrap_or_default();
    pids.push(std::process::id() as i32);
    nvml.utilization(device, device_uuid(device).as_deref(), &pids)
}

/// "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx" of CUDA device `ordinal`, as NVML names it.
fn device_uuid(ordinal: usize) -> Option<String> {
    type DeviceGet = unsafe extern "C" fn(*mut CUdevice, c_int) -> CUresult;
    type DeviceGetUuid = unsafe extern "C" fn(*mut [u8; 16], CUdevice) -> CUresult;
    let get = driver_symbol(c"cuDeviceGet");
    let mut uuid_fn = driver_symbol(c"cuDeviceGetUuid_v2");
    if uuid_fn.is_null() {
        uuid_fn = driver_symbol(c"cuDeviceGetUuid");
    }
    if get.is_null() || uuid_fn.is_null() {
        return None;
    }
    let (get, uuid_fn) = unsafe {
        (std::mem::transmute::<*mut c_void, DeviceGet>(get), std::mem::transmute::<*mut c_void, DeviceGetUuid>(uuid_fn))
    };
    let mut device: CUdevice = 0;
    let mut bytes = [0u8; 16];
    unsafe {
        if get(&mut device, ordinal as c_int) != CUDA_SUCCESS || uuid_fn(&mut bytes, device) != CUDA_SUCCESS {
            return None;
        }
    }
    let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    Some(format!("GPU-{}-{}-{}-{}-{}", &hex[0..8], &hex[8..12], &hex[12..16], &hex[16..20], &hex[20..32]))
}

// ---- the hooks -------------------------------------------------------------------------------

type AllocFn = unsafe extern "C" fn(*mut CUdeviceptr, usize) -> CUresult;
type AllocPitchFn = unsafe extern "C" fn(*mut CUdeviceptr, *mut usize, usize, usize, c_uint) -> CUresult;
type AllocManagedFn = unsafe extern "C" fn(*mut CUdeviceptr, usize, c_uint) -> CUresult;
type AllocAsyncFn = unsafe extern "C" fn(*mut CUdeviceptr, usize, CUstream) -> CUresult;
type AllocPoolFn = unsafe extern "C" fn(*mut CUdeviceptr, usize, CUmemoryPool, CUstream) -> CUresult;
type FreeFn = unsafe extern "C" fn(CUdeviceptr) -> CUresult;
type FreeAsyncFn = unsafe extern "C" fn(CUdeviceptr, CUstream) -> CUresult;
type ArrayCreateFn = unsafe extern "C" fn(*mut CUarray, *const ArrayDescriptor) -> CUresult;
type Array3dCreateFn = unsafe extern "C" fn(*mut CUarray, *const Array3dDescriptor) -> CUresult;
type HandleFn = unsafe extern "C" fn(*mut c_void) -> CUresult;
type MipmapCreateFn = unsafe extern "C" fn(*mut CUmipmappedArray, *const Array3dDescriptor, c_uint) -> CUresult;
type MemCreateFn =
    unsafe extern "C" fn(*mut CUmemGenericAllocationHandle, usize, *const MemAllocationPropHead, u64) -> CUresult;
type MemReleaseFn = unsafe extern "C" fn(CUmemGenericAllocationHandle) -> CUresult;
type MemGetInfoFn = unsafe extern "C" fn(*mut usize, *mut usize) -> CUresult;
type LaunchFn = unsafe extern "C" fn(
    CUfunction,
    c_uint,
    c_uint,
    c_uint,
    c_uint,
    c_uint,
    c_uint,
    c_uint,
    CUstream,
    *mut *mut c_void,
    *mut *mut c_void,
) -> CUresult;
type LaunchExFn =
    unsafe extern "C" fn(*const LaunchConfigHead, CUfunction, *mut *mut c_void, *mut *mut c_void) -> CUresult;
type LaunchCoopFn = unsafe extern "C" fn(
    CUfunction,
    c_uint,
    c_uint,
    c_uint,
    c_uint,
    c_uint,
    c_uint,
    c_uint,
    CUstream,
    *mut *mut c_void,
) -> CUresult;
type GetProcFn = unsafe extern "C" fn(*const c_char, *mut *mut c_void, c_int, u64) -> CUresult;
type GetProcV2Fn = unsafe extern "C" fn(*const c_char, *mut *mut c_void, c_int, u64, *mut c_int) -> CUresult;

unsafe fn read_ptr<T: Copy + Default>(p: *const T) -> T {
    if p.is_null() {
        T::default()
    } else {
        unsafe { *p }
    }
}

fn alloc_with(kind: Kind, dptr: *mut CUdeviceptr, bytes: usize, call: impl FnOnce() -> CUresult) -> CUresult {
    guarded_alloc(kind, current_device(), bytes as u64, || {
        let rc = call();
        (rc, unsafe { read_ptr(dptr) })
    })
}

#[no_mangle]
pub unsafe extern "C" fn cuMemAlloc_v2(dptr: *mut CUdeviceptr, bytes: usize) -> CUresult {
    let f = real_fn!(0, AllocFn);
    alloc_with(Kind::Memory, dptr, bytes, || unsafe { f(dptr, bytes) })
}

#[no_mangle]
pub unsafe extern "C" fn cuMemAllocPitch_v2(
    dptr: *mut CUdeviceptr,
    pitch: *mut usize,
    width: usize,
    height: usize,
    element: c_uint,
) -> CUresult {
    let f = real_fn!(1, AllocPitchFn);
    let device = current_device();
    let estimate = (width as u64).saturating_mul(height as u64);
    let rc = guarded_alloc(Kind::Memory, device, estimate, || {
        let rc = unsafe { f(dptr, pitch, width, height, element) };
        (rc, unsafe { read_ptr(dptr) })
    });
    if rc != CUDA_SUCCESS || memory_limit(device).is_none() {
        return rc;
    }
    // The pitch (row padding) is only known now: account for it, or undo the allocation.
    let padding = (unsafe { read_ptr(pitch) } as u64).saturating_mul(height as u64).saturating_sub(estimate);
    if padding == 0 {
        return rc;
    }
    let st = state();
    let handle = unsafe { read_ptr(dptr) };
    let limit = memory_limit(device).unwrap_or(0);
    if st.reserve(device, padding, limit).is_ok() {
        if let Some(entry) = lock(&st.allocations).get_mut(&(Kind::Memory, handle)) {
            entry.1 += padding;
        }
        return rc;
    }
    unsafe { cuMemFree_v2(handle) };
    crate::log!(Warn, "out of memory on device {device}: pitched allocation with padding over the limit");
    CUDA_ERROR_OUT_OF_MEMORY
}

#[no_mangle]
pub unsafe extern "C" fn cuMemAllocManaged(dptr: *mut CUdeviceptr, bytes: usize, flags: c_uint) -> CUresult {
    let f = real_fn!(2, AllocManagedFn);
    alloc_with(Kind::Memory, dptr, bytes, || unsafe { f(dptr, bytes, flags) })
}

#[no_mangle]
pub unsafe extern "C" fn cuMemAllocAsync(dptr: *mut CUdeviceptr, bytes: usize, stream: CUstream) -> CUresult {
    let f = real_fn!(3, AllocAsyncFn);
    alloc_with(Kind::Memory, dptr, bytes, || unsafe { f(dptr, bytes, stream) })
}

#[no_mangle]
pub unsafe extern "C" fn cuMemAllocAsync_ptsz(dptr: *mut CUdeviceptr, bytes: usize, stream: CUstream) -> CUresult {
    let f = real_fn!(4, AllocAsyncFn);
    alloc_with(Kind::Memory, dptr, bytes, || unsafe { f(dptr, bytes, stream) })
}

#[no_mangle]
pub unsafe extern "C" fn cuMemAllocFromPoolAsync(
    dptr: *mut CUdeviceptr,
    bytes: usize,
    pool: CUmemoryPool,
    stream: CUstream,
) -> CUresult {
    let f = real_fn!(5, AllocPoolFn);
    alloc_with(Kind::Memory, dptr, bytes, || unsafe { f(dptr, bytes, pool, stream) })
}

#[no_mangle]
pub unsafe extern "C" fn cuMemAllocFromPoolAsync_ptsz(
    dptr: *mut CUdeviceptr,
    bytes: usize,
    pool: CUmemoryPool,
    stream: CUstream,
) -> CUresult {
    let f = real_fn!(6, AllocPoolFn);
    alloc_with(Kind::Memory, dptr, bytes, || unsafe { f(dptr, bytes, pool, stream) })
}

#[no_mangle]
pub unsafe extern "C" fn cuMemFree_v2(dptr: CUdeviceptr) -> CUresult {
    let f = real_fn!(7, FreeFn);
    guarded_free(Kind::Memory, dptr, || unsafe { f(dptr) })
}

#[no_mangle]
pub unsafe extern "C" fn cuMemFreeAsync(dptr: CUdeviceptr, stream: CUstream) -> CUresult {
    let f = real_fn!(8, FreeAsyncFn);
    guarded_free(Kind::Memory, dptr, || unsafe { f(dptr, stream) })
}

#[no_mangle]
pub unsafe extern "C" fn cuMemFreeAsync_ptsz(dptr: CUdeviceptr, stream: CUstream) -> CUresult {
    let f = real_fn!(9, FreeAsyncFn);
    guarded_free(Kind::Memory, dptr, || unsafe { f(dptr, stream) })
}

#[no_mangle]
pub unsafe extern "C" fn cuArrayCreate_v2(array: *mut CUarray, desc: *const ArrayDescriptor) -> CUresult {
    let f = real_fn!(10, ArrayCreateFn);
    if desc.is_null() || array.is_null() {
        return unsafe { f(array, desc) };
    }
    let d = unsafe { *desc };
    let bytes = array_bytes(d.width, d.height, 0, d.format, d.num_channels);
    guarded_alloc(Kind::Array, current_device(), bytes, || {
        let rc = unsafe { f(array, desc) };
        (rc, unsafe { *array } as u64)
    })
}

#[no_mangle]
pub unsafe extern "C" fn cuArray3DCreate_v2(array: *mut CUarray, desc: *const Array3dDescriptor) -> CUresult {
    let f = real_fn!(11, Array3dCreateFn);
    if desc.is_null() || array.is_null() {
        return unsafe { f(array, desc) };
    }
    let d = unsafe { *desc };
    let bytes = array_bytes(d.width, d.height, d.depth, d.format, d.num_channels);
    guarded_alloc(Kind::Array, current_device(), bytes, || {
        let rc = unsafe { f(array, desc) };
        (rc, unsafe { *array } as u64)
    })
}

#[no_mangle]
pub unsafe extern "C" fn cuArrayDestroy(array: CUarray) -> CUresult {
    let f = real_fn!(12, HandleFn);
    guarded_free(Kind::Array, array as u64, || unsafe { f(array) })
}

#[no_mangle]
pub unsafe extern "C" fn cuMipmappedArrayCreate(
    array: *mut CUmipmappedArray,
    desc: *const Array3dDescriptor,
    levels: c_uint,
) -> CUresult {
    let f = real_fn!(13, MipmapCreateFn);
    if desc.is_null() || array.is_null() {
        return unsafe { f(array, desc, levels) };
    }
    let bytes = mipmapped_bytes(unsafe { &*desc }, levels);
    guarded_alloc(Kind::Mipmapped, current_device(), bytes, || {
        let rc = unsafe { f(array, desc, levels) };
        (rc, unsafe { *array } as u64)
    })
}

#[no_mangle]
pub unsafe extern "C" fn cuMipmappedArrayDestroy(array: CUmipmappedArray) -> CUresult {
    let f = real_fn!(14, HandleFn);
    guarded_free(Kind::Mipmapped, array as u64, || unsafe { f(array) })
}

#[no_mangle]
pub unsafe extern "C" fn cuMemCreate(
    handle: *mut CUmemGenericAllocationHandle,
    bytes: usize,
    prop: *const MemAllocationPropHead,
    flags: u64,
) -> CUresult {
    let f = real_fn!(15, MemCreateFn);
    if prop.is_null() || handle.is_null() {
        return unsafe { f(handle, bytes, prop, flags) };
    }
    let p = unsafe { *prop };
    // Physical memory is placed where the property says, not on the current context's device.
    let device = if p.location_type == CU_MEM_LOCATION_TYPE_DEVICE && p.location_id >= 0 {
        p.location_id as usize
    } else {
        return unsafe { f(handle, bytes, prop, flags) };
    };
    guarded_alloc(Kind::Physical, device, bytes as u64, || {
        let rc = unsafe { f(handle, bytes, prop, flags) };
        (rc, unsafe { *handle })
    })
}

#[no_mangle]
pub unsafe extern "C" fn cuMemRelease(handle: CUmemGenericAllocationHandle) -> CUresult {
    let f = real_fn!(16, MemReleaseFn);
    guarded_free(Kind::Physical, handle, || unsafe { f(handle) })
}

#[no_mangle]
pub unsafe extern "C" fn cuMemGetInfo_v2(free: *mut usize, total: *mut usize) -> CUresult {
    let f = real_fn!(17, MemGetInfoFn);
    let rc = unsafe { f(free, total) };
    let device = current_device();
    let Some(limit) = memory_limit(device) else { return rc };
    if rc != CUDA_SUCCESS || free.is_null() || total.is_null() {
        return rc;
    }
    let used = state().with_table(true, |t, _| accounting::used_on(t, device)).unwrap_or(limit);
    let (f_bytes, t_bytes) = mem_info(limit, used, unsafe { *free } as u64);
    unsafe {
        *free = f_bytes as usize;
        *total = t_bytes as usize;
    }
    rc
}

type TotalMemFn = unsafe extern "C" fn(*mut usize, CUdevice) -> CUresult;

/// The device's total memory, as the share sees it: the limit.
#[no_mangle]
pub unsafe extern "C" fn cuDeviceTotalMem_v2(bytes: *mut usize, device: CUdevice) -> CUresult {
    let f = real_fn!(26, TotalMemFn);
    let rc = unsafe { f(bytes, device) };
    if rc != CUDA_SUCCESS || bytes.is_null() || device < 0 {
        return rc;
    }
    if let Some(limit) = memory_limit(device as usize) {
        unsafe { *bytes = (*bytes).min(limit as usize) };
    }
    rc
}

macro_rules! launch_hook {
    ($name:ident, $index:expr) => {
        #[no_mangle]
        pub unsafe extern "C" fn $name(
            f: CUfunction,
            gx: c_uint,
            gy: c_uint,
            gz: c_uint,
            bx: c_uint,
            by: c_uint,
            bz: c_uint,
            shared: c_uint,
            stream: CUstream,
            params: *mut *mut c_void,
            extra: *mut *mut c_void,
        ) -> CUresult {
            let real = real_fn!($index, LaunchFn);
            pace(current_device(), [gx, gy, gz]);
            unsafe { real(f, gx, gy, gz, bx, by, bz, shared, stream, params, extra) }
        }
    };
}

launch_hook!(cuLaunchKernel, 18);
launch_hook!(cuLaunchKernel_ptsz, 19);

macro_rules! launch_ex_hook {
    ($name:ident, $index:expr) => {
        #[no_mangle]
        pub unsafe extern "C" fn $name(
            config: *const LaunchConfigHead,
            f: CUfunction,
            params: *mut *mut c_void,
            extra: *mut *mut c_void,
        ) -> CUresult {
            let real = real_fn!($index, LaunchExFn);
            if !config.is_null() {
                pace(current_device(), unsafe { (*config).grid });
            }
            unsafe { real(config, f, params, extra) }
        }
    };
}

launch_ex_hook!(cuLaunchKernelEx, 20);
launch_ex_hook!(cuLaunchKernelEx_ptsz, 21);

macro_rules! launch_coop_hook {
    ($name:ident, $index:expr) => {
        #[no_mangle]
        pub unsafe extern "C" fn $name(
            f: CUfunction,
            gx: c_uint,
            gy: c_uint,
            gz: c_uint,
            bx: c_uint,
            by: c_uint,
            bz: c_uint,
            shared: c_uint,
            stream: CUstream,
            params: *mut *mut c_void,
        ) -> CUresult {
            let real = real_fn!($index, LaunchCoopFn);
            pace(current_device(), [gx, gy, gz]);
            unsafe { real(f, gx, gy, gz, bx, by, bz, shared, stream, params) }
        }
    };
}

launch_coop_hook!(cuLaunchCooperativeKernel, 22);
launch_coop_hook!(cuLaunchCooperativeKernel_ptsz, 23);

/// The hook standing in for the driver function `found`, answered by `cuGetProcAddress` for
/// `symbol`: matched by address first (exact whatever the version rules), by name otherwise.
fn substitute(symbol: *const c_char, found: *mut c_void, version: c_int, flags: u64) -> *mut c_void {
    if found.is_null() || disabled() {
        return found;
    }
    let hooks = hook_ptrs();
    if hooks.contains(&found) {
        // Already ours (a driver whose own lookups are interposed): never make a hook its own real.
        return found;
    }
    for (i, hook) in hooks.iter().enumerate() {
        if real(i) == found {
            return *hook;
        }
    }
    if symbol.is_null() {
        return found;
    }
    let name = unsafe { CStr::from_ptr(symbol) }.to_bytes();
    match hook_by_name(name, version, flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM != 0) {
        Some(i) => {
            REAL[i].compare_exchange(std::ptr::null_mut(), found, Ordering::AcqRel, Ordering::Acquire).ok();
            hooks[i]
        }
        None => found,
    }
}

/// The hook `cuGetProcAddress(name, version, flags)` stands for: the newest variant the version
/// gets, the per-thread-stream one when asked for and hooked.
fn hook_by_name(name: &[u8], version: c_int, ptds: bool) -> Option<usize> {
    let candidates = || HOOKS.iter().enumerate().filter(|(_, h)| h.1.as_bytes() == name && h.2 <= version);
    let has_ptds = candidates().any(|(_, h)| h.3);
    candidates().filter(|(_, h)| h.3 == (ptds && has_ptds)).max_by_key(|(_, h)| h.2).map(|(i, _)| i)
}

#[no_mangle]
pub unsafe extern "C" fn cuGetProcAddress(
    symbol: *const c_char,
    pfn: *mut *mut c_void,
    version: c_int,
    flags: u64,
) -> CUresult {
    let f = real_fn!(24, GetProcFn);
    let rc = unsafe { f(symbol, pfn, version, flags) };
    if rc == CUDA_SUCCESS && !pfn.is_null() {
        unsafe { *pfn = substitute(symbol, *pfn, version, flags) };
    }
    rc
}

#[no_mangle]
pub unsafe extern "C" fn cuGetProcAddress_v2(
    symbol: *const c_char,
    pfn: *mut *mut c_void,
    version: c_int,
    flags: u64,
    status: *mut c_int,
) -> CUresult {
    let f = real_fn!(25, GetProcV2Fn);
    let rc = unsafe { f(symbol, pfn, version, flags, status) };
    if rc == CUDA_SUCCESS && !pfn.is_null() {
        unsafe { *pfn = substitute(symbol, *pfn, version, flags) };
    }
    rc
}

/// `dlsym`: the driver's hooked symbols come back as the hooks; everything else unchanged.
#[no_mangle]
pub unsafe extern "C" fn dlsym(handle: *mut c_void, symbol: *const c_char) -> *mut c_void {
    let found = unsafe { real_dlsym()(handle, symbol) };
    if found.is_null() || symbol.is_null() || disabled() {
        return found;
    }
    let name = unsafe { CStr::from_ptr(symbol) }.to_bytes();
    if !name.starts_with(b"cu") {
        return found;
    }
    let Some(i) = hook_index(name) else { return found };
    let hook = hook_ptrs()[i];
    if found != hook {
        // The program's own handle on the driver: remember it to find the other functions.
        if handle != libc::RTLD_DEFAULT && handle != libc::RTLD_NEXT {
            DRIVER.compare_exchange(std::ptr::null_mut(), handle, Ordering::AcqRel, Ordering::Acquire).ok();
        }
        REAL[i].compare_exchange(std::ptr::null_mut(), found, Ordering::AcqRel, Ordering::Acquire).ok();
    }
    hook
}

#[cfg(test)]
mod tests {
    use super::*;

    fn named(i: Option<usize>) -> Option<&'static str> {
        i.map(|i| HOOKS[i].0)
    }

    #[test]
    fn proc_address_names_map_to_versioned_hooks() {
        assert_eq!(named(hook_by_name(b"cuMemAlloc", 12000, false)), Some("cuMemAlloc_v2"));
        assert_eq!(named(hook_by_name(b"cuMemAlloc", 3000, false)), None, "the v1 entry point is not hooked");
        assert_eq!(named(hook_by_name(b"cuLaunchKernel", 12000, true)), Some("cuLaunchKernel_ptsz"));
        assert_eq!(named(hook_by_name(b"cuLaunchKernel", 12000, false)), Some("cuLaunchKernel"));
        assert_eq!(named(hook_by_name(b"cuMemAlloc", 12000, true)), Some("cuMemAlloc_v2"), "no ptsz variant");
        assert_eq!(named(hook_by_name(b"cuGetProcAddress", 12000, false)), Some("cuGetProcAddress_v2"));
        assert_eq!(named(hook_by_name(b"cuGetProcAddress", 11000, false)), Some("cuGetProcAddress"));
        assert_eq!(named(hook_by_name(b"cuInit", 12000, false)), None);
    }

    #[test]
    fn the_hook_table_is_complete() {
        assert_eq!(HOOKS.len(), N);
        let ptrs = hook_ptrs();
        for (i, (name, ..)) in HOOKS.iter().enumerate() {
            assert_eq!(hook_index(name.as_bytes()), Some(i));
            assert!(!ptrs[i].is_null());
            assert!(ptrs[..i].iter().all(|p| *p != ptrs[i]), "{name} has its own function");
        }
    }
}
