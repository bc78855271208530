//! Kubernetes Node → [`NodeInfo`]: CPU and memory from `status.allocatable`, GPUs from the
//! `nvidia.com/gpu` (or `grus.io/gpu-milli`) allocatable and GPU feature discovery's labels
//! (with MIG mode from `grus.io/gpu-mig` or the mixed strategy),
//! health from the Ready condition and `spec.unschedulable`, taints carried as labels.

use std::collections::BTreeMap;

use grus_protocol::wire::{GpuInfo, NodeInfo};
use grus_scheduler::cluster::{Taint, TaintEffect};
use k8s_openapi::api::core::v1::Node;
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;

use super::labels::{node as label, resource};

/// Model reported when neither `grus.io/gpu-model` nor GPU feature discovery names one.
pub const UNKNOWN_MODEL: &str = "unknown";

/// Converts one Node. `Err` says why the Node cannot be used (the caller logs and skips it).
pub fn node_info(node: &Node) -> Result<NodeInfo, String> {
    let name = node.metadata.name.clone().ok_or("node without a name")?;
    let mut labels = node.metadata.labels.clone().unwrap_or_default();
    let status = node.status.as_ref();
    let allocatable = status.and_then(|s| s.allocatable.as_ref());
    let quantity = |key: &str| -> Result<Option<f64>, String> {
        match allocatable.and_then(|a| a.get(key)) {
            None => Ok(None),
            Some(q) => parse_quantity(q).map(Some).map_err(|e| format!("allocatable {key}: {e}")),
        }
    };
    // Rounded, not floored: `63500m` is 63.49999… cores in binary floating point.
    let cpu_milli = quantity("cpu")?.map_or(0, |cores| (cores * 1000.0).round() as u64);
    let memory_mib = quantity("memory")?.map_or(0, |bytes| (bytes / (1024.0 * 1024.0) + 1e-6).floor() as u64);
    let whole = quantity(resource::GPU)?.map(|n| n.floor() as u32);
    let milli = quantity(resource::GPU_MILLI)?.map(|m| (m / 1000.0).floor() as u32);
    // GPUs in MIG mode are not in `nvidia.com/gpu`: GPU feature discovery's count includes them.
    let counted = match labels.get(label::GFD_COUNT) {
        None => None,
        Some(v) => Some(v.trim().parse::<u32>().map_err(|_| format!("{}: `{v}` is not a count", label::GFD_COUNT))?),
    };
    let gpu_count = whole.or(milli).unwrap_or(0).max(counted.unwrap_or(0));

    let ready = status
        .and_then(|s| s.conditions.as_ref())
        .and_then(|cs| cs.iter().find(|c| c.type_ == "Ready"))
        .is_some_and(|c| c.status == "True");
    let unschedulable = node.spec.as_ref().and_then(|s| s.unschedulable).unwrap_or(false);

    let model = labels
        .get(label::GPU_MODEL)
        .or_else(|| labels.get(label::GFD_PRODUCT))
        .cloned()
        .unwrap_or_else(|| UNKNOWN_MODEL.to_string());
    let memory = match labels.get(label::GPU_MEMORY_MIB).or_else(|| labels.get(label::GFD_MEMORY)) {
        None => 0,
        Some(v) => v.trim().parse::<u64>().map_err(|_| format!("GPU memory label `{v}` is not MiB"))?,
    };
    let nvlink = per_device(&labels, label::NVLINK_GROUPS, gpu_count)?;
    let numa = per_device(&labels, label::GPU_NUMA, gpu_count)?;
    let unhealthy: Vec<u32> = match labels.get(label::GPU_UNHEALTHY) {
        None => Vec::new(),
        Some(v) => index_list(v).map_err(|e| format!("{}: {e}", label::GPU_UNHEALTHY))?,
    };
    let mig: Vec<u32> = match labels.get(label::GPU_MIG) {
        Some(v) => index_list(v).map_err(|e| format!("{}: {e}", label::GPU_MIG))?,
        None if labels.get(label::GFD_MIG_STRATEGY).is_some_and(|s| s == "mixed")
            && grus_scheduler::mig::profiles_of(&model).is_some() =>
        {
            (0..gpu_count).collect()
        }
        None => Vec::new(),
    };
    let gpus = (0..gpu_count)
        .map(|index| GpuInfo {
            index,
            uuid: None,
            model: model.clone(),
            memory_mib: memory,
            numa: numa.get(index as usize).copied().unwrap_or(0),
            nvlink_group: nvlink.get(index as usize).copied().unwrap_or(0),
            healthy: !unhealthy.contains(&index),
            mig: mig.contains(&index),
        })
        .collect();

    let rack = labels.get(label::RACK).or_else(|| labels.get(label::ZONE)).cloned();
    for taint in node.spec.as_ref().and_then(|s| s.taints.as_ref()).into_iter().flatten() {
        labels.insert(
            format!("{}{}", label::TAINT_PREFIX, taint.key),
            format!("{}:{}", taint.value.as_deref().unwrap_or(""), taint.effect),
        );
    }
    Ok(NodeInfo { name, labels, rack, pool: None, cpu_milli, memory_mib, healthy: ready && !unschedulable, gpus })
}

/// The taints [`node_info`] carried in `NodeInfo.labels`, for building the scheduler's model.
/// Entries with an unknown effect are left out.
pub fn taints_from_labels(labels: &BTreeMap<String, String>) -> Vec<Taint> {
    labels
        .iter()
        .filter_map(|(k, v)| {
            let key = k.strip_prefix(label::TAINT_PREFIX)?;
            let (value, effect) = v.rsplit_once(':')?;
            let effect = match effect {
                "NoSchedule" => TaintEffect::NoSchedule,
                "PreferNoSchedule" => TaintEffect::PreferNoSchedule,
                "NoExecute" => TaintEffect::NoExecute,
                _ => return None,
            };
            Some(Taint { key: key.to_string(), value: value.to_string(), effect })
        })
        .collect()
}

/// A comma-separated small integer per device; a list of the wrong length is an error because
/// it would silently misplace every device after the gap.
fn per_device(labels: &BTreeMap<String, String>, key: &str, count: u32) -> Result<Vec<u8>, String> {
    let Some(value) = labels.get(key) else { return Ok(Vec::new()) };
    let parsed: Vec<u8> = value
        .split(',')
        .map(|v| v.trim().parse::<u8>().map_err(|_| format!("{key}: `{v}` is not a small integer")))
        .collect::<Result<_, _>>()?;
    if parsed.len() != count as usize {
        return Err(format!("{key} lists {} devices, the node has {count}", parsed.len()));
    }
    Ok(parsed)
}

fn index_list(value: &str) -> Result<Vec<u32>, String> {
    value
        .split(',')
        .filter(|v| !v.trim().is_empty())
        .map(|v| v.trim().parse().map_err(|_| format!("`{v}` is not a device index")))
        .collect()
}

/// A Kubernetes quantity (`64`, `63500m`, `515942Mi`, `1.5Gi`, `2e3`) as a plain number.
pub fn parse_quantity(q: &Quantity) -> Result<f64, String> {
    let s = q.0.trim();
    let split = s.find(|c: char| c.is_ascii_alphabetic() && c != 'e' && c != 'E').unwrap_or(s.len());
    let (number, suffix) = s.split_at(split);
    let factor: f64 = match suffix {
        "" => 1.0,
        "n" => 1e-9,
        "u" => 1e-6,
        "m" => 1e-3,
        "k" => 1e3,
        "M" => 1e6,
        "G" => 1e9,
        "T" => 1e12,
        "P" => 1e15,
        "E" => 1e18,
        "Ki" => 1024.0,
        "Mi" => 1024.0 * 1024.0,
        "Gi" => 1024.0 * 1024.0 * 1024.0,
        "Ti" => 1024.0 * 1024.0 * 1024.0 * 1024.0,
        "Pi" => 1024.0 * 1024.0 * 1024.0 * 1024.0 * 1024.0,
        "Ei" => 1024.0 * 1024.0 * 1024.0 * 1024.0 * 1024.0 * 1024.0,
        _ => return Err(format!("unknown suffix in quantity `{s}`")),
    };
    let value: f64 = number.parse().map_err(|_| format!("`{s}` is not a quantity"))?;
    if !value.is_finite() || value < 0.0 {
        return Err(format!("`{s}` is not a non-negative quantity"));
    }
    Ok(value * factor)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn q(s: &str) -> f64 {
        parse_quantity(&Quantity(s.to_string())).unwrap()
    }

    #[test]
    fn quantities() {
        assert_eq!(q("64"), 64.0);
        assert_eq!(q("63500m"), 63.5);
        assert_eq!(q("2Ki"), 2048.0);
        assert_eq!(q("1.5Gi"), 1.5 * 1024.0 * 1024.0 * 1024.0);
        assert_eq!(q("2e3"), 2000.0);
        assert_eq!(q("8k"), 8000.0);
        for milli in [1u64, 7, 100, 63_500, 223_500, 999_999] {
            assert_eq!((q(&format!("{milli}m")) * 1000.0).round() as u64, milli);
        }
        assert!(parse_quantity(&Quantity("12Zi".into())).is_err());
        assert!(parse_quantity(&Quantity("-1".into())).is_err());
        assert!(parse_quantity(&Quantity("lots".into())).is_err());
    }

    #[test]
    fn taints_round_trip_through_labels() {
        let mut labels = BTreeMap::new();
        labels.insert("taint.grus.io/nvidia.com/gpu".to_string(), "present:NoSchedule".to_string());
        labels.insert("taint.grus.io/maintenance".to_string(), ":NoExecute".to_string());
        labels.insert("taint.grus.io/odd".to_string(), "x:Sometimes".to_string());
        labels.insert("kubernetes.io/hostname".to_string(), "n1".to_string());
        let taints = taints_from_labels(&labels);
        assert_eq!(
            taints,
            vec![
                Taint { key: "maintenance".into(), value: String::new(), effect: TaintEffect::NoExecute },
                Taint { key: "nvidia.com/gpu".into(), value: "present".into(), effect: TaintEffect::NoSchedule },
            ]
        );
    }
}
