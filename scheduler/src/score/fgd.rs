//! Fragmentation Gradient Descent (FGD, Weng et al., USENIX ATC'23): the fragmentation
//! measure F(n) of a node against a typical workload, and the [`Fgd`] plugin that prefers the
//! placement which increases it least.
//!
//! This module owns the math; the trace replay's FGD and grus policies and the general
//! [`Placer`](crate::place::Placer) all call it.
//!
//! For a node with idle milli `L_i` per GPU, `R = Σ L_i`, free CPU `cpuLeft`, and a typical
//! workload `M = {(m, p_m)}` (weights summing to 1), the fragment of the node for `m` is the
//! idle GPU milli that `m` cannot use:
//! - `m` is CPU-only: all of `R` (GPU milli a CPU-only pod cannot consume);
//! - `m` fits (at least `k_m` usable GPUs with `L_i ≥ g_m`, and `cpuLeft ≥ c_m`): the idle
//!   milli of the GPUs too small for it (`Σ_{L_i < g_m} L_i`) plus that of GPUs of a model `m`
//!   may not use;
//! - otherwise (not enough GPU, not enough CPU, or no allowed model): all of `R`.
//!
//! `F(n) = Σ_m p_m · f_m`, in milli. FGD scores a placement by how much it lowers `F`:
//! `int(100 · σ((F(n) − F(n')) / 1000))`, 50 when `F` does not change.

use crate::cluster::{DeviceShare, Node};
use crate::demand::Demand;
use crate::resources::{Milli, ModelId};
use crate::score::{ScoreContext, ScorePlugin, TypicalDemand};

/// The idle part of one GPU, as far as fragmentation is concerned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FreeGpu {
    pub model: ModelId,
    pub free: Milli,
}

/// Most devices kept on the stack when building a hypothetical node state.
const INLINE_GPUS: usize = 16;

/// F(n) of a node state, in milli (see the module doc).
pub fn fragmentation(cpu_free: u64, gpus: &[FreeGpu], workload: &[TypicalDemand]) -> f64 {
    let idle: u64 = gpus.iter().map(|g| g.free as u64).sum();
    if idle == 0 {
        // Nothing idle, nothing fragmented: the common case of a full node costs no scan.
        return 0.0;
    }
    let mut f = 0.0;
    for m in workload {
        f += m.weight * fragment_for(cpu_free, gpus, idle, &m.demand) as f64;
    }
    f
}

/// `f_m`: the idle milli of this node state that demand `d` cannot use.
fn fragment_for(cpu_free: u64, gpus: &[FreeGpu], idle: u64, d: &Demand) -> u64 {
    if d.gpus == 0 || cpu_free < d.cpu_milli {
        return idle;
    }
    let mut fitting = 0u32;
    let mut unusable = 0u64;
    for g in gpus {
        if d.models.allows(g.model) && g.free >= d.milli {
            fitting += 1;
        } else {
            unusable += g.free as u64;
        }
    }
    if fitting >= d.gpus {
        unusable
    } else {
        idle
    }
}

/// Calls `f` with the node's idle GPUs after taking `devices` away (`devices` empty: as is).
fn with_free_gpus<T>(node: &Node, devices: &[DeviceShare], f: impl FnOnce(&[FreeGpu]) -> T) -> T {
    let fill = |buf: &mut [FreeGpu]| {
        for (slot, g) in buf.iter_mut().zip(&node.gpus) {
            *slot = FreeGpu { model: g.model, free: g.free_milli() };
        }
        for d in devices {
            if let Some(slot) = buf.get_mut(d.gpu as usize) {
                slot.free = slot.free.saturating_sub(d.milli);
            }
        }
    };
    let blank = FreeGpu { model: ModelId(0), free: 0 };
    if node.gpus.len() <= INLINE_GPUS {
        let mut buf = [blank; INLINE_GPUS];
        fill(&mut buf[..node.gpus.len()]);
        f(&buf[..node.gpus.len()])
    } else {
        let mut buf = vec![blank; node.gpus.len()];
        fill(&mut buf);
        f(&buf)
    }
}

/// F(n) of a node as it is.
pub fn node_fragmentation(node: &Node, workload: &[TypicalDemand]) -> f64 {
    with_free_gpus(node, &[], |gpus| fragmentation(node.cpu_free(), gpus, workload))
}

/// F(n') of the node after placing `demand` on `devices` (the CPU is taken too).
pub fn fragmentation_after(node: &Node, demand: &Demand, devices: &[DeviceShare], workload: &[TypicalDemand]) -> f64 {
    let cpu = node.cpu_free().saturating_sub(demand.cpu_milli);
    with_free_gpus(node, devices, |gpus| fragmentation(cpu, gpus, workload))
}

/// F(n) − F(n'): how much the placement lowers the node's fragmentation (negative: raises it).
pub fn fragmentation_drop(node: &Node, demand: &Demand, devices: &[DeviceShare], workload: &[TypicalDemand]) -> f64 {
    node_fragmentation(node, workload) - fragmentation_after(node, demand, devices, workload)
}

/// FGD's published node score for a fragmentation drop: `int(100 · σ(drop / 1000))`.
pub fn paper_score(drop: f64) -> u32 {
    (100.0 / (1.0 + (-drop / 1000.0).exp())) as u32
}

/// FGD as a plugin: the published integer score of [`fragmentation_drop`] against
/// `ctx.workload`. With an empty workload every option scores 50.
pub struct Fgd;

impl ScorePlugin for Fgd {
    fn name(&self) -> &'static str {
        "fgd"
    }

    fn node_local(&self) -> bool {
        true
    }

    fn score(&self, ctx: &ScoreContext<'_>, node: &Node, demand: &Demand, devices: &[DeviceShare]) -> f64 {
        paper_score(fragmentation_drop(node, demand, devices, ctx.workload)) as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster::{Cluster, NodeId, NodeSpec, ReplicaAllocation};
    use crate::resources::ModelSet;

    fn demand(cpu: u64, milli: Milli, gpus: u32) -> Demand {
        Demand {
            gpus,
            milli,
            gpu_memory_mib: 0,
            models: ModelSet::ANY,
            cpu_milli: cpu,
            memory_mib: 0,
            mig: None,
            sharing_busy_limit_pct: None,
        }
    }

    fn gpus(free: &[Milli]) -> Vec<FreeGpu> {
        free.iter().map(|&f| FreeGpu { model: ModelId(0), free: f }).collect()
    }

    /// Two typical shapes: a half GPU (p = 0.6) and two whole GPUs (p = 0.4), 4 cores each.
    fn workload() -> Vec<TypicalDemand> {
        vec![
            TypicalDemand { demand: demand(4000, 500, 1), weight: 0.6 },
            TypicalDemand { demand: demand(4000, 1000, 2), weight: 0.4 },
        ]
    }

    #[test]
    fn fragmentation_by_hand() {
        let w = workload();
        // Idle [1000, 1000, 300, 0]: R = 2300. Half GPU fits; 300 is too small -> 300.
        // Two whole GPUs fit; 300 too small -> 300. F = 0.6·300 + 0.4·300 = 300.
        assert!((fragmentation(8000, &gpus(&[1000, 1000, 300, 0]), &w) - 300.0).abs() < 1e-9);
        // Idle [1000, 300, 0, 0]: half fits -> 300; two whole do not -> R = 1300.
        // F = 0.6·300 + 0.4·1300 = 700.
        assert!((fragmentation(8000, &gpus(&[1000, 300, 0, 0]), &w) - 700.0).abs() < 1e-9);
        // Without CPU nothing fits: F = R.
        assert!((fragmentation(3999, &gpus(&[1000, 300, 0, 0]), &w) - 1300.0).abs() < 1e-9);
        // CPU-only shapes count all idle milli as fragment.
        let cpu_only = vec![TypicalDemand { demand: demand(1000, 0, 0), weight: 1.0 }];
        assert!((fragmentation(8000, &gpus(&[1000, 200]), &cpu_only) - 1200.0).abs() < 1e-9);
        // A shape restricted to another model sees everything as fragment.
        let mut other = workload();
        other[0].demand.models = ModelSet::only(ModelId(1));
        other[1].weight = 0.0;
        assert!((fragmentation(8000, &gpus(&[1000, 1000]), &other) - 0.6 * 2000.0).abs() < 1e-9);
    }

    #[test]
    fn paper_score_is_the_truncated_sigmoid() {
        assert_eq!(paper_score(0.0), 50);
        assert_eq!(paper_score(-400.0), 40); // 100·σ(−0.4) = 40.13
        assert_eq!(paper_score(1000.0), 73); // 73.11
        assert_eq!(paper_score(-1000.0), 26); // 26.89
        assert_eq!(paper_score(-10_000.0), 0);
        assert_eq!(paper_score(10_000.0), 99);
    }

    #[test]
    fn fgd_prefers_the_share_that_keeps_whole_gpus() {
        // One node, idle [1000, 1000, 1000, 600] after a 400 share on GPU 3.
        let mut c = Cluster::new(vec![NodeSpec::new("n", 32000, 1 << 20, 4, "T4")]).unwrap();
        let share = |gpu, milli| ReplicaAllocation {
            node: NodeId(0),
            cpu_milli: 4000,
            memory_mib: 0,
            devices: vec![DeviceShare::plain(gpu, milli, 0)],
        };
        c.allocate(&share(3, 400)).unwrap();
        let w = workload();
        let node = c.node(NodeId(0));
        let half = demand(4000, 500, 1);
        // F(n): half fits, nothing small -> 0; two whole fit, 600 too small -> 600. F = 240.
        assert!((node_fragmentation(node, &w) - 240.0).abs() < 1e-9);
        // On GPU 3: idle [1000,1000,1000,100] -> 0.6·100 + 0.4·100 = 100; drop 140 -> 53.
        let on3 = [DeviceShare::plain(3, 500, 0)];
        assert!((fragmentation_drop(node, &half, &on3, &w) - 140.0).abs() < 1e-9);
        // On GPU 0: idle [500,1000,1000,600] -> 0 + 0.4·1100 = 440; drop −200 -> 45.
        let on0 = [DeviceShare::plain(0, 500, 0)];
        assert!((fragmentation_drop(node, &half, &on0, &w) + 200.0).abs() < 1e-9);
        let ctx = ScoreContext { cluster: &c, gang: &[], workload: &w };
        assert_eq!(Fgd.score(&ctx, node, &half, &on3), 53.0);
        assert_eq!(Fgd.score(&ctx, node, &half, &on0), 45.0);
    }
}
