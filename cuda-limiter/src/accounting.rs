//! Owns the memory accounting rules over the shared slot table: one slot per live process of
//! the container, each holding that process's bytes per device. Pure: the table is a plain
//! slice (in production it lies in the shared region and is only touched under its lock) and
//! process liveness is an injected function.

use crate::config::MAX_DEVICES;

/// One process's usage. `pid == 0` marks a free slot. `start_time` (clock ticks since boot,
/// field 22 of `/proc/<pid>/stat`) tells a reused pid from the process that owned the slot.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Slot {
    pub pid: i32,
    pub _pad: u32,
    pub start_time: u64,
    pub used: [u64; MAX_DEVICES],
}

/// Why a reservation was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OverLimit {
    pub device: usize,
    pub used: u64,
    pub request: u64,
    pub limit: u64,
}

/// Bytes used on `device` by every process of the container.
pub fn used_on(slots: &[Slot], device: usize) -> u64 {
    slots.iter().filter(|s| s.pid != 0).map(|s| s.used.get(device).copied().unwrap_or(0)).fold(0, u64::saturating_add)
}

/// The slot of process (`pid`, `start_time`), claiming a free one if it has none.
/// `None` when the table is full.
pub fn claim_slot(slots: &mut [Slot], pid: i32, start_time: u64) -> Option<usize> {
    if let Some(i) = slots.iter().position(|s| s.pid == pid && s.start_time == start_time) {
        return Some(i);
    }
    let i = slots.iter().position(|s| s.pid == 0)?;
    slots[i] = Slot { pid, start_time, ..Slot::default() };
    Some(i)
}

/// Frees the slots of processes that are gone; returns (pid, bytes reclaimed over all devices).
pub fn reclaim(slots: &mut [Slot], alive: impl Fn(i32, u64) -> bool) -> Vec<(i32, u64)> {
    let mut freed = Vec::new();
    for slot in slots.iter_mut().filter(|s| s.pid != 0) {
        if !alive(slot.pid, slot.start_time) {
            let bytes = slot.used.iter().fold(0u64, |a, b| a.saturating_add(*b));
            freed.push((slot.pid, bytes));
            *slot = Slot::default();
        }
    }
    freed
}

/// Adds `bytes` on `device` to slot `me` when the container stays within `limit`.
pub fn try_reserve(slots: &mut [Slot], me: usize, device: usize, bytes: u64, limit: u64) -> Result<(), OverLimit> {
    let used = used_on(slots, device);
    let over = OverLimit { device, used, request: bytes, limit };
    if device >= MAX_DEVICES || me >= slots.len() {
        return Err(over);
    }
    match used.checked_add(bytes) {
        Some(total) if total <= limit => {
            slots[me].used[device] = slots[me].used[device].saturating_add(bytes);
            Ok(())
        }
        _ => Err(over),
    }
}

/// Gives `bytes` on `device` back from slot `me` (saturating: never below zero).
pub fn release(slots: &mut [Slot], me: usize, device: usize, bytes: u64) {
    if let Some(used) = slots.get_mut(me).and_then(|s| s.used.get_mut(device)) {
        *used = used.saturating_sub(bytes);
    }
}

/// What `cuMemGetInfo` reports under a limit: the limit as total, and as free the smaller of
/// what the share has left and what the device really has free.
pub fn mem_info(limit: u64, used: u64, real_free: u64) -> (u64, u64) {
    (limit.saturating_sub(used).min(real_free), limit)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn two_processes_share_one_limit() {
        let mut slots = [Slot::default(); 4];
        let a = claim_slot(&mut slots, 10, 1).unwrap();
        let b = claim_slot(&mut slots, 11, 1).unwrap();
        assert_ne!(a, b);
        assert_eq!(claim_slot(&mut slots, 10, 1), Some(a), "a process keeps its slot");
        assert!(try_reserve(&mut slots, a, 0, 600, 1000).is_ok());
        let err = try_reserve(&mut slots, b, 0, 500, 1000).unwrap_err();
        assert_eq!(err, OverLimit { device: 0, used: 600, request: 500, limit: 1000 });
        assert!(try_reserve(&mut slots, b, 0, 400, 1000).is_ok());
        assert!(try_reserve(&mut slots, b, 1, 1000, 1000).is_ok(), "devices are accounted apart");
        release(&mut slots, a, 0, 600);
        assert!(try_reserve(&mut slots, b, 0, 600, 1000).is_ok(), "a free returns quota");
    }

    #[test]
    fn dead_processes_are_reclaimed_and_reused_pids_are_not_confused() {
        let mut slots = [Slot::default(); 2];
        let a = claim_slot(&mut slots, 10, 1).unwrap();
        try_reserve(&mut slots, a, 0, 900, 1000).unwrap();
        // pid 10 now belongs to another process (start time 2).
        let freed = reclaim(&mut slots, |pid, start| pid == 10 && start == 2);
        assert_eq!(freed, vec![(10, 900)]);
        assert_eq!(used_on(&slots, 0), 0);
        let b = claim_slot(&mut slots, 10, 2).unwrap();
        assert!(try_reserve(&mut slots, b, 0, 1000, 1000).is_ok());
    }

    #[test]
    fn full_table_and_bad_device_are_refused() {
        let mut slots = [Slot::default(); 1];
        claim_slot(&mut slots, 1, 1).unwrap();
        assert_eq!(claim_slot(&mut slots, 2, 1), None);
        assert!(try_reserve(&mut slots, 0, MAX_DEVICES, 1, u64::MAX).is_err());
        assert!(try_reserve(&mut slots, 0, 0, u64::MAX, u64::MAX).is_ok());
        assert!(try_reserve(&mut slots, 0, 0, 1, u64::MAX).is_err(), "no overflow");
    }

    #[test]
    fn mem_info_reports_the_limit() {
        assert_eq!(mem_info(1000, 300, 10_000), (700, 1000));
        assert_eq!(mem_info(1000, 300, 100), (100, 1000), "never more free than the device has");
        assert_eq!(mem_info(1000, 1300, 100), (0, 1000));
    }

    proptest! {
        /// Whatever the interleaving of reservations and releases by several processes, the
        /// container never holds more than the limit and the accounting matches what was granted.
        #[test]
        fn never_over_the_limit(ops in proptest::collection::vec((0usize..3, any::<bool>(), 1u64..400), 1..200)) {
            let limit = 1000;
            let mut slots = [Slot::default(); 3];
            let mut held = [Vec::new(), Vec::new(), Vec::new()];
            for p in 0..3 { claim_slot(&mut slots, p + 1, 7).unwrap(); }
            for (p, alloc, bytes) in ops {
                if alloc {
                    if try_reserve(&mut slots, p, 0, bytes, limit).is_ok() { held[p].push(bytes); }
                } else if let Some(b) = held[p].pop() {
                    release(&mut slots, p, 0, b);
                }
                let total: u64 = held.iter().flatten().sum();
                prop_assert!(used_on(&slots, 0) <= limit);
                prop_assert_eq!(used_on(&slots, 0), total);
            }
            reclaim(&mut slots, |pid, _| pid != 2);
            let total: u64 = held[0].iter().chain(held[2].iter()).sum();
            prop_assert_eq!(used_on(&slots, 0), total);
        }
    }
}
