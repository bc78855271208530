//! Quota keys: the resources a quota (and a fair-share guarantee) names, as stored and as the
//! API takes them, and the scheduler's resource for each.

/// The generic GPU key, charged by every GPU request whatever its model.
pub const GPU: &str = "gpu";

/// A usage key, never a quota: the GPU milli a queue's interactive workspaces hold, charged by
/// each workspace besides [`GPU`], and measured against the queue's interactive reserve.
pub const INTERACTIVE: &str = "interactive";

/// The level of the fair-share tree whose limit a job would pass: its queue's quota, its
/// project's limit, or its tenant's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QuotaLevel {
    Queue,
    Project,
    Tenant,
}

impl QuotaLevel {
    pub const fn as_str(self) -> &'static str {
        match self {
            QuotaLevel::Queue => "queue",
            QuotaLevel::Project => "project",
            QuotaLevel::Tenant => "tenant",
        }
    }
}

/// A quota's resource, as `queue_quotas.resource` (and `tenant_guarantees`,
/// `project_guarantees`, `tenant_limits`, `project_limits`) store it (migrations 0020, 0021
/// and 0024's CHECKs accept the same keys;
/// `api/tests/api/domain_drift.rs` compares them).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum QuotaKey {
    /// `gpu`: GPUs of every model, in milli.
    Gpu,
    /// `gpu/<model>`: GPUs of one model, in milli.
    GpuModel(String),
    /// `pool/<pool>`: GPUs of one node pool, in milli.
    Pool(String),
    /// `cpu_milli`.
    CpuMilli,
    /// `memory_mib`.
    MemoryMib,
}

impl QuotaKey {
    /// What the error says a key must be.
    pub const EXPECTED: &'static str = "one of gpu, gpu/<model>, pool/<node pool>, cpu_milli, memory_mib";

    /// The scheduler's resource for this key (same units).
    pub fn resource_key(&self) -> grus_scheduler::queue::ResourceKey {
        use grus_scheduler::queue::ResourceKey;
        match self {
            QuotaKey::Gpu => ResourceKey::Gpus,
            QuotaKey::GpuModel(m) => ResourceKey::gpu_model(m),
            QuotaKey::Pool(p) => ResourceKey::pool(p),
            QuotaKey::CpuMilli => ResourceKey::Cpu,
            QuotaKey::MemoryMib => ResourceKey::Memory,
        }
    }

    /// `amount` (in this key's stored unit) as people read it: `32 GPUs`, `0.5 GPUs`, `64 CPUs`,
    /// `12.5 GiB`.
    pub fn display(&self, amount: i64) -> String {
        let (per_unit, unit) = match self {
            QuotaKey::Gpu | QuotaKey::GpuModel(_) | QuotaKey::Pool(_) => (1000.0, "GPUs"),
            QuotaKey::CpuMilli => (1000.0, "CPUs"),
            QuotaKey::MemoryMib => (1024.0, "GiB"),
        };
        let value = format!("{:.3}", amount as f64 / per_unit);
        let value = value.trim_end_matches('0').trim_end_matches('.');
        format!("{value} {unit}")
    }

    pub fn parse(key: &str) -> Option<QuotaKey> {
        let model_name = |m: &str| {
            let mut chars = m.chars();
            chars.next().is_some_and(|c| c.is_ascii_alphanumeric())
                && m.len() <= 64
                && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
        };
        match key {
            "gpu" => Some(QuotaKey::Gpu),
            "cpu_milli" => Some(QuotaKey::CpuMilli),
            "memory_mib" => Some(QuotaKey::MemoryMib),
            _ => match (key.strip_prefix("gpu/"), key.strip_prefix("pool/")) {
                (Some(m), _) if model_name(m) => Some(QuotaKey::GpuModel(m.to_owned())),
                (_, Some(p)) if grus_scheduler::pool::valid_pool_name(p) => Some(QuotaKey::Pool(p.to_owned())),
                _ => None,
            },
        }
    }
}

#[cfg(test)]
mod display_tests {
    use super::*;

    #[test]
    fn quota_amounts_read_in_gpus_cpus_and_gib_not_milli() {
        assert_eq!(QuotaKey::Gpu.display(32_000), "32 GPUs");
        assert_eq!(QuotaKey::Pool("train".into()).display(500), "0.5 GPUs");
        assert_eq!(QuotaKey::GpuModel("A100".into()).display(8), "0.008 GPUs");
        assert_eq!(QuotaKey::CpuMilli.display(64_000), "64 CPUs");
        assert_eq!(QuotaKey::MemoryMib.display(12_800), "12.5 GiB");
    }
}
