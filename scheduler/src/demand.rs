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
    /// A MIG instance of this profile (then `gpus` is 1, `milli` its equivalent, and `models`
    /// only models that offer the profile).
    pub mig: Option<&'static str>,
    /// For a share: the measured busy % a device that already holds work may reach once the
    /// share's expected load is added (interference-aware sharing; `None`: no such rule).
    /// Set by the cycle from `SchedulerConfig::sharing_busy_limit_pct` ([`Demand::sharing_under`]).
    pub sharing_busy_limit_pct: Option<u8>,
}

impl Demand {
    /// `None` when the resources name GPU models that this cluster does not have at all, or a
    /// MIG profile none of its allowed models offers.
    pub fn resolve(r: &Resources, models: &ModelTable) -> Option<Demand> {
        let mut set = if r.gpus > 0 { models.resolve(&r.gpu_models)? } else { ModelSet::ANY };
        let mig = match &r.mig_profile {
            None => None,
            Some(name) => {
                let profile = crate::mig::known_profile(name)?;
                let mut offering = ModelSet::default();
                for id in models.ids().filter(|&id| set.allows(id) && crate::mig::model_offers(models.name(id), name)) {
                    offering.insert(id);
                }
                if offering == ModelSet::default() {
                    return None;
                }
                set = offering;
                Some(profile.name)
            }
        };
        Some(Demand {
            mig,
            gpus: r.gpus,
            milli: if r.gpus > 0 { r.gpu_milli } else { 0 },
            gpu_memory_mib: if r.gpus > 0 { r.gpu_memory_mib.unwrap_or(0) } else { 0 },
            models: set,
            cpu_milli: r.cpu_milli,
            memory_mib: r.memory_mib,
            sharing_busy_limit_pct: None,
        })
    }

    /// This demand under the interference rule with `limit` (a share only; other demands are
    /// unchanged).
    pub fn sharing_under(mut self, limit: Option<u8>) -> Demand {
        if self.is_fractional() {
            self.sharing_busy_limit_pct = limit;
        }
        self
    }

    /// The load a share is expected to add to its device, in busy %: its booked part of the
    /// device's compute (a 250-milli share, 25 %), the most it is entitled to.
    pub fn expected_busy_pct(&self) -> f32 {
        self.milli as f32 / 10.0
    }

    /// Whether placing this share on `gpu` would break the interference rule: the device
    /// already holds work, its measured busy % is known, and with the share's expected load it
    /// would exceed the limit. A device without work has no neighbour to interfere with, and
    /// one without metrics is not judged.
    pub fn would_crowd(&self, gpu: &crate::cluster::Gpu) -> bool {
        match (self.sharing_busy_limit_pct, gpu.live) {
            (Some(limit), Some(live)) if gpu.used_milli > 0 => {
                live.busy_pct + self.expected_busy_pct() > f32::from(limit)
            }
            _ => false,
        }
    }

    pub fn cpu_only(cpu_milli: u64, memory_mib: u64) -> Demand {
        Demand {
            gpus: 0,
            milli: 0,
            gpu_memory_mib: 0,
            models: ModelSet::ANY,
            cpu_milli,
            memory_mib,
            mig: None,
            sharing_busy_limit_pct: None,
        }
    }

    /// A share of one GPU (not a MIG instance, which is placed by its geometry).
    pub fn is_fractional(&self) -> bool {
        self.gpus == 1 && self.milli < MILLI_PER_GPU && self.mig.is_none()
    }

    pub fn total_milli(&self) -> u64 {
        self.gpus as u64 * self.milli as u64
    }
}
