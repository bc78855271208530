//! What one replica asks of a node: its resources resolved against a cluster's model table.
//! Placement filters and scores by it; the score plugins weigh it against a node.

use crate::job::Resources;
use crate::resources::{Milli, ModelSet, ModelTable, MILLI_PER_GPU};

/// One replica's request, resolved against a cluster's model table. Ordered field by field
/// (only so that shapes can be counted deterministically).
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Demand {
    pub gpus: u32,
    /// Milli per GPU (1000 for whole GPUs; 0 when `gpus` is 0).
    pub milli: Milli,
    pub gpu_memory_mib: u64,
    pub models: ModelSet,
    pub cpu_milli: u64,
    pub memory_mib: u64,
}

impl Demand {
    /// `None` when the resources name GPU models that this cluster does not have at all.
    pub fn resolve(r: &Resources, models: &ModelTable) -> Option<Demand> {
        let set = if r.gpus > 0 { models.resolve(&r.gpu_models)? } else { ModelSet::ANY };
        Some(Demand {
            gpus: r.gpus,
            milli: if r.gpus > 0 { r.gpu_milli } else { 0 },
            gpu_memory_mib: if r.gpus > 0 { r.gpu_memory_mib.unwrap_or(0) } else { 0 },
            models: set,
            cpu_milli: r.cpu_milli,
            memory_mib: r.memory_mib,
        })
    }

    pub fn cpu_only(cpu_milli: u64, memory_mib: u64) -> Demand {
        Demand { gpus: 0, milli: 0, gpu_memory_mib: 0, models: ModelSet::ANY, cpu_milli, memory_mib }
    }

    pub fn is_fractional(&self) -> bool {
        self.gpus == 1 && self.milli < MILLI_PER_GPU
    }

    pub fn total_milli(&self) -> u64 {
        self.gpus as u64 * self.milli as u64
    }
}
