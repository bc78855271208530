//! MIG instances as the NVIDIA driver reports them: for a GPU in MIG mode, each GPU instance's
//! profile (from the MIG device's name, `NVIDIA A100-SXM4-80GB MIG 1g.10gb`), its first memory
//! slice and the MIG device's UUID (what `NVIDIA_VISIBLE_DEVICES` names).
//!
//! nvml-wrapper wraps none of these calls, so this module loads the same library through
//! nvml-wrapper-sys and calls them directly, after checking that the driver has every one (an
//! old driver without MIG then reads as "no MIG", never a crash).

use std::ffi::{c_char, c_uint, CStr, OsStr};

use nvml_wrapper_sys::bindings::{nvmlDevice_t, nvmlGpuInstanceInfo_t, nvmlGpuInstance_t, NvmlLib};

/// One GPU instance on a GPU in MIG mode.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MigInstanceReading {
    /// The profile name (`1g.10gb`).
    pub profile: String,
    /// Its first memory slice.
    pub start: u8,
    pub uuid: Option<String>,
}

/// An NVML return code other than success.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("NVML error {0}")]
pub struct NvmlCode(pub u32);

const NVML_SUCCESS: u32 = 0;
const NVML_ERROR_NOT_SUPPORTED: u32 = 3;
const NVML_ERROR_NOT_FOUND: u32 = 6;
const NVML_DEVICE_MIG_ENABLE: c_uint = 1;

fn check(code: u32) -> Result<(), NvmlCode> {
    if code == NVML_SUCCESS {
        Ok(())
    } else {
        Err(NvmlCode(code))
    }
}

/// The profile in a MIG device's name: the word after `MIG` (`… MIG 1g.10gb` → `1g.10gb`;
/// newer drivers may add a suffix such as `+me`, which is kept).
pub fn profile_of_name(name: &str) -> Option<&str> {
    let mut words = name.split_whitespace();
    words.by_ref().find(|w| *w == "MIG")?;
    words.next().filter(|p| p.contains('g') && p.contains('.'))
}

/// The driver's MIG calls. Every symbol was checked at [`MigReader::open`].
pub struct MigReader {
    lib: NvmlLib,
}

impl MigReader {
    /// Loads the NVML library at `path` (`libnvidia-ml.so.1`) and initializes it; `Err` says
    /// why MIG cannot be read (no library, or a driver without the MIG calls).
    pub fn open(path: impl AsRef<OsStr>) -> Result<MigReader, String> {
        // SAFETY: loading NVML runs its initializers only; every symbol is checked below before
        // any is called.
        let lib = unsafe { NvmlLib::new(path.as_ref()) }.map_err(|e| e.to_string())?;
        let missing = [
            ("nvmlInit_v2", lib.nvmlInit_v2.is_err()),
            ("nvmlDeviceGetHandleByIndex_v2", lib.nvmlDeviceGetHandleByIndex_v2.is_err()),
            ("nvmlDeviceGetMigMode", lib.nvmlDeviceGetMigMode.is_err()),
            ("nvmlDeviceGetMaxMigDeviceCount", lib.nvmlDeviceGetMaxMigDeviceCount.is_err()),
            ("nvmlDeviceGetMigDeviceHandleByIndex", lib.nvmlDeviceGetMigDeviceHandleByIndex.is_err()),
            ("nvmlDeviceGetGpuInstanceId", lib.nvmlDeviceGetGpuInstanceId.is_err()),
            ("nvmlDeviceGetGpuInstanceById", lib.nvmlDeviceGetGpuInstanceById.is_err()),
            ("nvmlGpuInstanceGetInfo", lib.nvmlGpuInstanceGetInfo.is_err()),
            ("nvmlDeviceGetName", lib.nvmlDeviceGetName.is_err()),
            ("nvmlDeviceGetUUID", lib.nvmlDeviceGetUUID.is_err()),
        ];
        if let Some((name, _)) = missing.iter().find(|(_, gone)| *gone) {
            return Err(format!("the NVIDIA driver has no {name}"));
        }
        // SAFETY: checked above; NVML counts initializations, so this adds to nvml-wrapper's.
        check(unsafe { lib.nvmlInit_v2() }).map_err(|e| e.to_string())?;
        Ok(MigReader { lib })
    }

    /// The handle of the GPU at `index`.
    pub fn device(&self, index: u32) -> Result<nvmlDevice_t, NvmlCode> {
        let mut device: nvmlDevice_t = std::ptr::null_mut();
        // SAFETY: symbol checked at open; `device` is a valid out pointer.
        check(unsafe { self.lib.nvmlDeviceGetHandleByIndex_v2(index, &mut device) })?;
        Ok(device)
    }

    /// The GPU instances of the GPU at `index`, ordered by first slice; `None` when it is not
    /// in MIG mode (or cannot be: MIG not supported).
    pub fn instances(&self, index: u32) -> Result<Option<Vec<MigInstanceReading>>, NvmlCode> {
        let device = self.device(index)?;
        let (mut current, mut pending): (c_uint, c_uint) = (0, 0);
        // SAFETY: symbols checked at open; every pointer below is a valid out pointer or
        // buffer of the length passed.
        match check(unsafe { self.lib.nvmlDeviceGetMigMode(device, &mut current, &mut pending) }) {
            Err(NvmlCode(NVML_ERROR_NOT_SUPPORTED)) => return Ok(None),
            other => other?,
        }
        if current != NVML_DEVICE_MIG_ENABLE {
            return Ok(None);
        }
        let mut max: c_uint = 0;
        check(unsafe { self.lib.nvmlDeviceGetMaxMigDeviceCount(device, &mut max) })?;
        let mut seen_instances = Vec::new();
        let mut out = Vec::new();
        for i in 0..max {
            let mut mig: nvmlDevice_t = std::ptr::null_mut();
            match check(unsafe { self.lib.nvmlDeviceGetMigDeviceHandleByIndex(device, i, &mut mig) }) {
                Err(NvmlCode(NVML_ERROR_NOT_FOUND)) => continue,
                other => other?,
            }
            let mut gi_id: c_uint = 0;
            check(unsafe { self.lib.nvmlDeviceGetGpuInstanceId(mig, &mut gi_id) })?;
            // Several compute instances of one GPU instance are several MIG devices: one entry.
            if seen_instances.contains(&gi_id) {
                continue;
            }
            seen_instances.push(gi_id);
            let mut gi: nvmlGpuInstance_t = std::ptr::null_mut();
            check(unsafe { self.lib.nvmlDeviceGetGpuInstanceById(device, gi_id, &mut gi) })?;
            let mut info: nvmlGpuInstanceInfo_t = unsafe { std::mem::zeroed() };
            check(unsafe { self.lib.nvmlGpuInstanceGetInfo(gi, &mut info) })?;
            let name = self.text(|buf, len| unsafe { self.lib.nvmlDeviceGetName(mig, buf, len) })?;
            let Some(profile) = profile_of_name(&name) else {
                tracing::debug!(index, %name, "a MIG device whose name names no profile");
                continue;
            };
            let uuid = self.text(|buf, len| unsafe { self.lib.nvmlDeviceGetUUID(mig, buf, len) }).ok();
            out.push(MigInstanceReading {
                profile: profile.to_string(),
                start: u8::try_from(info.placement.start).unwrap_or(u8::MAX),
                uuid,
            });
        }
        out.sort_by_key(|m| m.start);
        Ok(Some(out))
    }

    /// A string NVML writes into a buffer.
    fn text(&self, call: impl FnOnce(*mut c_char, c_uint) -> u32) -> Result<String, NvmlCode> {
        let mut buf = [0 as c_char; 96];
        check(call(buf.as_mut_ptr(), buf.len() as c_uint))?;
        // SAFETY: NVML wrote a NUL-terminated string into `buf` (zeroed, so always terminated).
        Ok(unsafe { CStr::from_ptr(buf.as_ptr()) }.to_string_lossy().into_owned())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_profile_is_the_word_after_mig() {
        assert_eq!(profile_of_name("NVIDIA A100-SXM4-80GB MIG 1g.10gb"), Some("1g.10gb"));
        assert_eq!(profile_of_name("NVIDIA H100 80GB HBM3 MIG 3g.40gb"), Some("3g.40gb"));
        assert_eq!(profile_of_name("NVIDIA H100 MIG 1g.10gb+me"), Some("1g.10gb+me"));
        assert_eq!(profile_of_name("NVIDIA A100-SXM4-80GB"), None);
        assert_eq!(profile_of_name("MIG"), None);
    }
}
