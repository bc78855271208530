//! Interference-aware sharing: a share goes only to a device whose measured busy %, with the
//! share's expected load added, stays within `SchedulerConfig::sharing_busy_limit_pct`, unless
//! the device holds no work yet; a share that waits only for that says so.

use grus_scheduler::cluster::{LiveUtilization, NodeId};
use grus_scheduler::explain::FilterReason;
use grus_scheduler::explain::Unplaced;
use grus_scheduler::job::{Job, JobId, Resources};

use crate::common::*;

fn share(id: u64, milli: u32) -> Job {
    Job::single(id, 1, 1, Resources::gpu_share(milli, 1000, 1024))
}

fn busy(sim: &mut Sim, gpu: u8, busy_pct: f32) {
    sim.input.cluster.set_live_utilization(NodeId(0), gpu, Some(LiveUtilization { busy_pct, memory_used_mib: 0 }));
}

fn device_of(job: u64, d: &grus_scheduler::cycle::Decisions) -> u8 {
    let (_, replicas) = d.starts().find(|(j, _)| j.0 == job).expect("started");
    replicas[0].allocation.devices[0].gpu
}

/// Two devices each hold a 600-milli share; device 0 measures 60 % busy, device 1 20 %. A
/// 250-milli share (25 % expected) would take device 0 to 85 %: it goes to device 1 (45 %).
/// Without the limit the packing policy may choose either; with it, never device 0.
#[test]
fn a_share_goes_to_the_device_that_stays_under_the_limit() {
    let mut sim = Sim::new(cluster(1, 2, "T4"), vec![queue(1, "q", 0)], vec![share(1, 600), share(2, 600)]);
    let first = sim.step();
    assert_eq!(started(&first).len(), 2);
    let (a, b) = (device_of(1, &first), device_of(2, &first));
    assert_ne!(a, b, "one per device");
    busy(&mut sim, 0, 60.0);
    busy(&mut sim, 1, 20.0);
    sim.submit(share(3, 250));
    let d = sim.step();
    assert_eq!(device_of(3, &d), 1);
}

/// Both devices that hold work are too busy: the share waits, and says it waits only for the
/// sharing limit. Once a device calms down it starts there; with the limit off it starts at once.
#[test]
fn a_share_waits_only_for_interference_and_says_so() {
    let mut sim = Sim::new(cluster(1, 2, "T4"), vec![queue(1, "q", 0)], vec![share(1, 600), share(2, 600)]);
    sim.step();
    busy(&mut sim, 0, 60.0);
    busy(&mut sim, 1, 55.0);
    sim.submit(share(3, 250));
    let d = sim.step();
    assert!(started(&d).is_empty());
    match &d.unplaced[&JobId(3)] {
        Unplaced::NoFit { nodes, .. } => {
            assert_eq!(nodes.counts.get(&FilterReason::Interference), Some(&1), "{nodes}");
            assert!(nodes.to_string().contains("sharing limit"), "{nodes}");
        }
        other => panic!("{other:?}"),
    }
    busy(&mut sim, 1, 40.0);
    let d = sim.step();
    assert_eq!(device_of(3, &d), 1);

    let mut off = Sim::new(cluster(1, 2, "T4"), vec![queue(1, "q", 0)], vec![share(1, 600), share(2, 600)]);
    off.config.sharing_busy_limit_pct = None;
    off.step();
    busy(&mut off, 0, 60.0);
    busy(&mut off, 1, 55.0);
    off.submit(share(3, 250));
    assert_eq!(started(&off.step()), vec![3]);
}

/// A device without work of ours has no neighbour to interfere with, whatever it measures
/// (another process, a stale reading); whole GPUs are exclusive and never judged.
#[test]
fn idle_devices_and_whole_gpus_are_not_judged() {
    let mut sim = Sim::new(cluster(1, 2, "T4"), vec![queue(1, "q", 0)], vec![]);
    busy(&mut sim, 0, 95.0);
    busy(&mut sim, 1, 95.0);
    sim.submit(share(1, 900));
    sim.submit(job(2, 1, 1, 1));
    assert_eq!(started(&sim.step()), vec![1, 2]);
}

/// Shares placed in one cycle count at their booked load before the profiler sees them. Two
/// devices hold a 600-milli share each and measure 40 % busy; a burst of four 200-milli shares
/// (20 % expected each) fits two per device by the books, but a second on either device would
/// take it to 80 %: one starts per device and the other two wait for a reading.
#[test]
fn a_burst_of_shares_in_one_cycle_does_not_crowd_one_device_past_the_limit() {
    let mut sim = Sim::new(cluster(1, 2, "T4"), vec![queue(1, "q", 0)], vec![share(1, 600), share(2, 600)]);
    let first = sim.step();
    assert_ne!(device_of(1, &first), device_of(2, &first), "one per device");
    busy(&mut sim, 0, 40.0);
    busy(&mut sim, 1, 40.0);
    for id in 3..=6 {
        sim.submit(share(id, 200));
    }
    let d = sim.step();
    let started = started(&d);
    assert_eq!(started.len(), 2, "{started:?}");
    assert_ne!(device_of(started[0], &d), device_of(started[1], &d));
}
