//! Owns the shared accounting region: a file (by default in the container's `/dev/shm`) mapped
//! by every process of the container, holding the slot table, and the lock that guards it.
//!
//! The lock is a POSIX record lock (`fcntl(F_SETLKW)`) on the region file's first byte, taken
//! after a process-local mutex (record locks belong to the process, not the thread). Why this
//! lock: the kernel drops a record lock when its process dies, however it dies, so a process
//! killed while holding it can never hang the others — the property robust mutexes give only
//! with EOWNERDEAD handling. A dead process's slot is reclaimed by the liveness check.
//! Any program may take the lock with the same `fcntl` call (the tests do).

use std::ffi::CString;
use std::fmt;
use std::io;
use std::ops::{Deref, DerefMut};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::sync::{Mutex, MutexGuard};

use crate::accounting::Slot;

/// Where the region lives unless `GRUS_CUDA_SHM` says otherwise. `/dev/shm` is private to the
/// container (unless it shares the host IPC namespace), which is exactly the sharing wanted.
pub const DEFAULT_PATH: &str = "/dev/shm/grus-cuda-limiter.v1";
pub const MAX_SLOTS: usize = 256;
const MAGIC: u64 = 0x6772_7573_6375_6c31;
const VERSION: u32 = 1;

#[repr(C)]
struct Layout {
    magic: u64,
    version: u32,
    slots_len: u32,
    slots: [Slot; MAX_SLOTS],
}

/// Why the region could not be used.
#[derive(Debug)]
pub enum RegionError {
    Open(io::Error),
    Size(io::Error),
    Map(io::Error),
    Lock(io::Error),
}

impl fmt::Display for RegionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RegionError::Open(e) => write!(f, "open shared region: {e}"),
            RegionError::Size(e) => write!(f, "size shared region: {e}"),
            RegionError::Map(e) => write!(f, "map shared region: {e}"),
            RegionError::Lock(e) => write!(f, "lock shared region: {e}"),
        }
    }
}

impl std::error::Error for RegionError {}

pub struct Region {
    fd: libc::c_int,
    map: *mut Layout,
    local: Mutex<()>,
}

// The mapping is only touched through `lock()`, which serializes threads and processes.
unsafe impl Send for Region {}
unsafe impl Sync for Region {}

/// Takes (`F_WRLCK`) or drops (`F_UNLCK`) the record lock on byte 0, waiting as needed.
pub fn record_lock(fd: libc::c_int, kind: libc::c_short) -> io::Result<()> {
    let mut fl: libc::flock = unsafe { std::mem::zeroed() };
    fl.l_type = kind;
    fl.l_whence = libc::SEEK_SET as libc::c_short;
    fl.l_start = 0;
    fl.l_len = 1;
    loop {
        if unsafe { libc::fcntl(fd, libc::F_SETLKW, &fl) } == 0 {
            return Ok(());
        }
        let err = io::Error::last_os_error();
        if err.kind() != io::ErrorKind::Interrupted {
            return Err(err);
        }
    }
}

impl Region {
    /// Opens (creating and initializing when needed) the region at `path`.
    pub fn open(path: &Path) -> Result<Region, RegionError> {
        let c_path = CString::new(path.as_os_str().as_bytes())
            .map_err(|_| RegionError::Open(io::Error::new(io::ErrorKind::InvalidInput, "NUL in path")))?;
        let fd = unsafe { libc::open(c_path.as_ptr(), libc::O_RDWR | libc::O_CREAT | libc::O_CLOEXEC, 0o666) };
        if fd < 0 {
            return Err(RegionError::Open(io::Error::last_os_error()));
        }
        // Every user of the container shares the region, whatever its umask.
        unsafe { libc::fchmod(fd, 0o666) };
        let result = Self::init(fd);
        if result.is_err() {
            unsafe { libc::close(fd) };
        }
        result
    }

    fn init(fd: libc::c_int) -> Result<Region, RegionError> {
        let size = std::mem::size_of::<Layout>();
        record_lock(fd, libc::F_WRLCK as libc::c_short).map_err(RegionError::Lock)?;
        let mapped = (|| {
            let mut st: libc::stat = unsafe { std::mem::zeroed() };
            if unsafe { libc::fstat(fd, &mut st) } != 0 {
                return Err(RegionError::Size(io::Error::last_os_error()));
            }
            if (st.st_size as usize) < size && unsafe { libc::ftruncate(fd, size as libc::off_t) } != 0 {
                return Err(RegionError::Size(io::Error::last_os_error()));
            }
            let ptr = unsafe {
                libc::mmap(std::ptr::null_mut(), size, libc::PROT_READ | libc::PROT_WRITE, libc::MAP_SHARED, fd, 0)
            };
            if ptr == libc::MAP_FAILED {
                return Err(RegionError::Map(io::Error::last_os_error()));
            }
            let map = ptr.cast::<Layout>();
            unsafe {
                if (*map).magic != MAGIC || (*map).version != VERSION || (*map).slots_len != MAX_SLOTS as u32 {
                    // New, or left by another layout: start from an empty table.
                    std::ptr::write_bytes(map.cast::<u8>(), 0, size);
                    (*map).version = VERSION;
                    (*map).slots_len = MAX_SLOTS as u32;
                    (*map).magic = MAGIC;
                }
            }
            Ok(map)
        })();
        let _ = record_lock(fd, libc::F_UNLCK as libc::c_short);
        Ok(Region { fd, map: mapped?, local: Mutex::new(()) })
    }

    /// Locks the table for this thread and process.
    pub fn lock(&self) -> Result<RegionGuard<'_>, RegionError> {
        let local = self.local.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        record_lock(self.fd, libc::F_WRLCK as libc::c_short).map_err(RegionError::Lock)?;
        Ok(RegionGuard { region: self, _local: local })
    }
}

pub struct RegionGuard<'a> {
    region: &'a Region,
    _local: MutexGuard<'a, ()>,
}

impl Deref for RegionGuard<'_> {
    type Target = [Slot];
    fn deref(&self) -> &[Slot] {
        unsafe { &(*self.region.map).slots }
    }
}

impl DerefMut for RegionGuard<'_> {
    fn deref_mut(&mut self) -> &mut [Slot] {
        unsafe { &mut (*self.region.map).slots }
    }
}

impl Drop for RegionGuard<'_> {
    fn drop(&mut self) {
        let _ = record_lock(self.region.fd, libc::F_UNLCK as libc::c_short);
    }
}

/// Start time (field 22 of `/proc/<pid>/stat`, clock ticks since boot) and whether the process
/// is a zombie; `None` when there is no such process.
fn proc_stat(pid: i32) -> Option<(u64, bool)> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name may hold spaces and parentheses: fields resume after the last ')'.
    let rest = &text[text.rfind(')')? + 1..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let state = *fields.first()?;
    let start = fields.get(19)?.parse().ok()?;
    Some((start, matches!(state, "Z" | "X" | "x")))
}

/// This process's start time, to tell it apart from a later process reusing its pid.
pub fn self_start_time() -> u64 {
    proc_stat(std::process::id() as i32).map(|(start, _)| start).unwrap_or(0)
}

/// Whether the process that claimed a slot as (`pid`, `start_time`) still runs. Zombies count
/// as dead: their memory is already gone from the GPU.
pub fn process_alive(pid: i32, start_time: u64) -> bool {
    match proc_stat(pid) {
        None => false,
        Some((_, true)) => false,
        Some((start, false)) => start_time == 0 || start == start_time,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::accounting::{claim_slot, try_reserve, used_on};

    #[test]
    fn two_mappings_see_one_table() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("region");
        let a = Region::open(&path).unwrap();
        let b = Region::open(&path).unwrap();
        {
            let mut slots = a.lock().unwrap();
            let me = claim_slot(&mut slots, 42, 1).unwrap();
            try_reserve(&mut slots, me, 3, 1234, 10_000).unwrap();
        }
        assert_eq!(used_on(&b.lock().unwrap(), 3), 1234);
    }

    #[test]
    fn liveness() {
        assert!(process_alive(std::process::id() as i32, self_start_time()));
        assert!(!process_alive(std::process::id() as i32, self_start_time() + 1), "a reused pid is another process");
        assert!(!process_alive(i32::MAX, 0));
    }

    #[test]
    fn a_foreign_file_is_reset() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("region");
        std::fs::write(&path, b"not a region").unwrap();
        let region = Region::open(&path).unwrap();
        assert_eq!(used_on(&region.lock().unwrap(), 0), 0);
    }
}
