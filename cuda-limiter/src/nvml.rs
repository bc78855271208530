//! Owns the utilization measurement: NVML (`libnvidia-ml.so.1`, opened at run time) reports
//! the SM utilization of each process on a device; the limiter sums that of its container's
//! processes. When none of the samples carries one of our pids (a pid namespace hides the host
//! pids NVML reports), it falls back to the whole device's utilization, which can only
//! overestimate ours: the pacing then errs on the side of the share.

use std::collections::BTreeMap;
use std::ffi::{c_char, c_int, c_uint, c_void, CString};

use crate::config::MAX_DEVICES;

type NvmlDevice = *mut c_void;
const NVML_SUCCESS: c_int = 0;
const NVML_ERROR_INSUFFICIENT_SIZE: c_int = 7;

#[repr(C)]
#[derive(Clone, Copy, Default)]
struct ProcessSample {
    pid: c_uint,
    time_stamp: u64,
    sm_util: c_uint,
    mem_util: c_uint,
    enc_util: c_uint,
    dec_util: c_uint,
}

#[repr(C)]
#[derive(Clone, Copy, Default)]
struct Utilization {
    gpu: c_uint,
    memory: c_uint,
}

type InitFn = unsafe extern "C" fn() -> c_int;
type ByUuidFn = unsafe extern "C" fn(*const c_char, *mut NvmlDevice) -> c_int;
type ByIndexFn = unsafe extern "C" fn(c_uint, *mut NvmlDevice) -> c_int;
type ProcessUtilFn = unsafe extern "C" fn(NvmlDevice, *mut ProcessSample, *mut c_uint, u64) -> c_int;
type UtilRatesFn = unsafe extern "C" fn(NvmlDevice, *mut Utilization) -> c_int;

/// The container's utilization (0..=1) from NVML's per-process samples (pid, instant, SM %):
/// at each sampling instant the SM percentages of our `pids` add up; the mean over instants is
/// the answer. `None` when no sample is ours (none at all, or pids from another namespace).
pub fn container_utilization(samples: impl Iterator<Item = (i32, u64, u32)>, pids: &[i32]) -> Option<f64> {
    let mut by_instant: BTreeMap<u64, u32> = BTreeMap::new();
    let mut ours_seen = false;
    for (pid, instant, sm) in samples {
        let entry = by_instant.entry(instant).or_default();
        if pids.contains(&pid) {
            *entry += sm;
            ours_seen = true;
        }
    }
    ours_seen.then(|| f64::from(by_instant.values().sum::<u32>()) / by_instant.len() as f64 / 100.0)
}

pub struct Nvml {
    by_uuid: Option<ByUuidFn>,
    by_index: ByIndexFn,
    process_util: ProcessUtilFn,
    util_rates: UtilRatesFn,
    devices: [Option<NvmlDevice>; MAX_DEVICES],
    last_seen: [u64; MAX_DEVICES],
}

// NVML handles are process-wide and NVML is thread-safe; the limiter uses it under a mutex.
unsafe impl Send for Nvml {}

impl Nvml {
    /// Opens NVML; `dlsym` is the real one (the limiter's own export would be found otherwise).
    pub fn open(dlsym: unsafe extern "C" fn(*mut c_void, *const c_char) -> *mut c_void) -> Result<Nvml, String> {
        let lib = unsafe { libc::dlopen(c"libnvidia-ml.so.1".as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL) };
        if lib.is_null() {
            return Err("cannot open libnvidia-ml.so.1".to_string());
        }
        let sym = |name: &str| {
            let c = CString::new(name).expect("static name");
            let p = unsafe { dlsym(lib, c.as_ptr()) };
            (!p.is_null()).then_some(p)
        };
        let need = |name: &str| sym(name).ok_or_else(|| format!("libnvidia-ml.so.1 lacks {name}"));
        unsafe {
            let init: InitFn = std::mem::transmute::<*mut c_void, InitFn>(need("nvmlInit_v2")?);
            let rc = init();
            if rc != NVML_SUCCESS {
                return Err(format!("nvmlInit_v2 failed: {rc}"));
            }
            Ok(Nvml {
                by_uuid: sym("nvmlDeviceGetHandleByUUID").map(|p| std::mem::transmute::<*mut c_void, ByUuidFn>(p)),
                by_index: std::mem::transmute::<*mut c_void, ByIndexFn>(need("nvmlDeviceGetHandleByIndex_v2")?),
                process_util: std::mem::transmute::<*mut c_void, ProcessUtilFn>(need(
                    "nvmlDeviceGetProcessUtilization",
                )?),
                util_rates: std::mem::transmute::<*mut c_void, UtilRatesFn>(need("nvmlDeviceGetUtilizationRates")?),
                devices: [None; MAX_DEVICES],
                last_seen: [0; MAX_DEVICES],
            })
        }
    }

    /// The NVML handle of CUDA device `ordinal`, found by UUID (CUDA and NVML may order devices
    /// differently), by index when the UUID is unknown.
    fn device(&mut self, ordinal: usize, uuid: Option<&str>) -> Option<NvmlDevice> {
        if let Some(handle) = *self.devices.get(ordinal)? {
            return Some(handle);
        }
        let mut handle: NvmlDevice = std::ptr::null_mut();
        let found = match (uuid, self.by_uuid) {
            (Some(uuid), Some(by_uuid)) => {
                let c = CString::new(uuid).ok()?;
                unsafe { by_uuid(c.as_ptr(), &mut handle) == NVML_SUCCESS }
            }
            _ => unsafe { (self.by_index)(ordinal as c_uint, &mut handle) == NVML_SUCCESS },
        };
        if !found {
            return None;
        }
        self.devices[ordinal] = Some(handle);
        Some(handle)
    }

    /// Our utilization of device `ordinal` (0..=1) since the previous call: the mean over NVML's
    /// sampling instants of the summed SM utilization of `pids`. `None` without a sample.
    pub fn utilization(&mut self, ordinal: usize, uuid: Option<&str>, pids: &[i32]) -> Option<f64> {
        let device = self.device(ordinal, uuid)?;
        let last = self.last_seen[ordinal];
        let mut count: c_uint = 0;
        let rc = unsafe { (self.process_util)(device, std::ptr::null_mut(), &mut count, last) };
        let mut samples = Vec::new();
        if (rc == NVML_ERROR_INSUFFICIENT_SIZE || rc == NVML_SUCCESS) && count > 0 {
            samples = vec![ProcessSample::default(); count as usize + 8];
            let mut n = samples.len() as c_uint;
            if unsafe { (self.process_util)(device, samples.as_mut_ptr(), &mut n, last) } != NVML_SUCCESS {
                return None;
            }
            samples.truncate(n as usize);
        }
        samples.retain(|s| s.time_stamp > last);
        if let Some(newest) = samples.iter().map(|s| s.time_stamp).max() {
            self.last_seen[ordinal] = newest;
        }
        if let Some(u) = container_utilization(samples.iter().map(|s| (s.pid as i32, s.time_stamp, s.sm_util)), pids) {
            return Some(u);
        }
        if samples.is_empty() {
            return None;
        }
        let mut rates = Utilization::default();
        if unsafe { (self.util_rates)(device, &mut rates) } != NVML_SUCCESS {
            return None;
        }
        Some(f64::from(rates.gpu) / 100.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utilization_sums_our_processes_per_instant() {
        let samples = [(1, 10, 20), (2, 10, 30), (3, 10, 40), (1, 20, 10)];
        // Instant 10: 20 + 30 of ours; instant 20: 10. Mean 30 %.
        assert_eq!(container_utilization(samples.into_iter(), &[1, 2]), Some(0.3));
        assert_eq!(container_utilization(samples.into_iter(), &[7]), None, "nothing of ours");
        assert_eq!(container_utilization(std::iter::empty(), &[1]), None);
    }
}
