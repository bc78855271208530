//! The simulated fleet's shape: a compact spec like `8x8xA100-80GB,4x2xT4:pool=inference`
//! (nodes x GPUs x model, then node labels, and `mig` for GPUs in MIG mode), or a node CSV such as the Alibaba trace's
//! (`sn,cpu_milli,memory_mib,gpu,model`).

use std::collections::BTreeMap;

use grus_protocol::wire::{GpuInfo, NodeInfo};

/// GPU feature discovery's label for how MIG devices are exposed (`single`, `mixed`).
pub const MIG_STRATEGY_LABEL: &str = "nvidia.com/mig.strategy";

/// Nodes per simulated rack.
const NODES_PER_RACK: usize = 8;

#[derive(Debug, thiserror::Error)]
pub enum SpecError {
    #[error(
        "node spec part `{part}`: expected <nodes>x<gpus>x<model>[:<label>=<value>...], e.g. 8x8xA100-80GB:pool=train"
    )]
    BadPart { part: String },
    #[error("node spec part `{part}`: {model} has no MIG profiles, so it cannot be in MIG mode")]
    NoMig { part: String, model: String },
    #[error("node spec is empty")]
    Empty,
    #[error("node CSV: {0}")]
    Csv(#[from] grus_scheduler::trace::TraceError),
    #[error("node CSV line {line}: {gpus} GPUs is more than 64")]
    TooManyGpus { line: usize, gpus: u32 },
}

/// GPU memory of well-known models, in MiB; unknown models get 16 GiB.
pub fn gpu_memory_mib(model: &str) -> u64 {
    let m = model.to_ascii_uppercase();
    let gib = |n: u64| n * 1024;
    if let Some(pos) = m.rfind('-') {
        if let Some(n) = m[pos + 1..].strip_suffix("GB").and_then(|n| n.parse::<u64>().ok()) {
            return gib(n);
        }
    }
    match m.as_str() {
        "T4" => gib(15),
        "L4" => gib(22),
        "A10" => gib(24),
        "P100" => gib(16),
        "V100M16" => gib(16),
        "V100M32" => gib(32),
        "A100" => gib(40),
        "H100" | "H200" => gib(80),
        _ => gib(16),
    }
}

/// Parses `8x8xA100-80GB,4x2xT4:pool=inference:zone=b,2x4xH100-80GB:mig`. Each node gets 16 CPU
/// cores and 128 GiB per GPU (at least 16 cores and 64 GiB), all its GPUs in one NVLink group,
/// split over two NUMA nodes, and the labels given after its part; `mig` puts every GPU of the
/// part in MIG mode (its model must have MIG profiles) and labels the nodes as NVIDIA's GPU
/// feature discovery does with the mixed strategy.
pub fn parse_compact(spec: &str) -> Result<Vec<NodeInfo>, SpecError> {
    let mut nodes = Vec::new();
    let mut per_model: BTreeMap<String, usize> = BTreeMap::new();
    for part in spec.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let bad = || SpecError::BadPart { part: part.to_string() };
        let mut pieces = part.split(':');
        let shape = pieces.next().unwrap_or_default();
        let mut labels = BTreeMap::new();
        let mut mig = false;
        for label in pieces {
            if label == "mig" {
                mig = true;
                continue;
            }
            let (k, v) = label.split_once('=').filter(|(k, _)| !k.is_empty()).ok_or_else(bad)?;
            labels.insert(k.to_string(), v.to_string());
        }
        let mut it = shape.splitn(3, 'x');
        let count: usize = it.next().and_then(|n| n.parse().ok()).ok_or_else(bad)?;
        let gpus: u32 = it.next().and_then(|n| n.parse().ok()).ok_or_else(bad)?;
        let model = it.next().filter(|m| !m.is_empty()).ok_or_else(bad)?;
        if count == 0 || gpus > 64 {
            return Err(bad());
        }
        if mig {
            if grus_scheduler::mig::profiles_of(model).is_none() {
                return Err(SpecError::NoMig { part: part.to_string(), model: model.to_string() });
            }
            labels.insert(MIG_STRATEGY_LABEL.to_string(), "mixed".to_string());
        }
        for _ in 0..count {
            let n = per_model.entry(model.to_string()).or_default();
            let name =
                format!("{}-{:03}", model.to_ascii_lowercase().replace(|c: char| !c.is_ascii_alphanumeric(), "-"), n);
            *n += 1;
            let mut n =
                node(name, gpus, model, (gpus as u64).max(1) * 16_000, (gpus as u64 * 128 * 1024).max(64 * 1024));
            n.labels.extend(labels.clone());
            for g in &mut n.gpus {
                g.mig = mig;
            }
            nodes.push(n);
        }
    }
    if nodes.is_empty() {
        return Err(SpecError::Empty);
    }
    assign_racks(&mut nodes);
    Ok(nodes)
}

/// Parses a node CSV with header `sn,cpu_milli,memory_mib,gpu,model` (the trace format; the
/// scheduler's trace parser does the work, so both read the same files the same way).
pub fn parse_csv(text: &str) -> Result<Vec<NodeInfo>, SpecError> {
    let rows = grus_scheduler::trace::parse_nodes(text)?;
    if rows.is_empty() {
        return Err(SpecError::Empty);
    }
    if let Some(r) = rows.iter().find(|r| r.gpus > 64) {
        return Err(SpecError::TooManyGpus { line: r.line, gpus: r.gpus });
    }
    let mut nodes: Vec<NodeInfo> =
        rows.into_iter().map(|r| node(r.name, r.gpus, &r.model, r.cpu_milli, r.memory_mib)).collect();
    assign_racks(&mut nodes);
    Ok(nodes)
}

fn node(name: String, gpus: u32, model: &str, cpu_milli: u64, memory_mib: u64) -> NodeInfo {
    let memory = gpu_memory_mib(model);
    NodeInfo {
        labels: BTreeMap::from([("grus.io/gpu-model".to_string(), model.to_string())]),
        name,
        rack: None,
        pool: None,
        cpu_milli,
        memory_mib,
        healthy: true,
        gpus: (0..gpus)
            .map(|i| GpuInfo {
                index: i,
                uuid: None,
                model: model.to_string(),
                memory_mib: memory,
                numa: if i < gpus.div_ceil(2) { 0 } else { 1 },
                nvlink_group: 0,
                healthy: true,
                mig: false,
            })
            .collect(),
    }
}

fn assign_racks(nodes: &mut [NodeInfo]) {
    for (i, n) in nodes.iter_mut().enumerate() {
        n.rack = Some(format!("rack-{:03}", i / NODES_PER_RACK));
        for g in &mut n.gpus {
            g.uuid = Some(format!("GPU-sim-{}-{}", n.name, g.index));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compact_spec_builds_named_nodes_with_racks() {
        let nodes = parse_compact("2x8xA100-80GB, 1x2xT4").unwrap();
        assert_eq!(
            nodes.iter().map(|n| n.name.as_str()).collect::<Vec<_>>(),
            ["a100-80gb-000", "a100-80gb-001", "t4-000"]
        );
        assert_eq!(nodes[0].gpus.len(), 8);
        assert_eq!(nodes[0].gpus[0].memory_mib, 80 * 1024);
        assert_eq!(nodes[2].gpus[1].memory_mib, 15 * 1024);
        assert_eq!(nodes[2].rack.as_deref(), Some("rack-000"));
    }

    #[test]
    fn compact_spec_parts_may_carry_node_labels() {
        let nodes = parse_compact("1x8xA100-80GB:pool=train:zone=a,1x2xT4").unwrap();
        assert_eq!(nodes[0].labels.get("pool").map(String::as_str), Some("train"));
        assert_eq!(nodes[0].labels.get("zone").map(String::as_str), Some("a"));
        assert_eq!(nodes[0].labels.get("grus.io/gpu-model").map(String::as_str), Some("A100-80GB"));
        assert!(!nodes[1].labels.contains_key("pool"));
        assert!(matches!(parse_compact("1x8xT4:pool"), Err(SpecError::BadPart { .. })));
    }

    #[test]
    fn a_compact_part_may_put_its_gpus_in_mig_mode() {
        let nodes = parse_compact("1x2xA100-80GB:mig:pool=infer,1x1xA100-80GB").unwrap();
        assert!(nodes[0].gpus.iter().all(|g| g.mig));
        assert_eq!(nodes[0].labels.get(MIG_STRATEGY_LABEL).map(String::as_str), Some("mixed"));
        assert_eq!(nodes[0].labels.get("pool").map(String::as_str), Some("infer"));
        assert!(!nodes[1].gpus[0].mig);
        assert_eq!(
            parse_compact("1x2xT4:mig").unwrap_err().to_string(),
            "node spec part `1x2xT4:mig`: T4 has no MIG profiles, so it cannot be in MIG mode"
        );
    }

    #[test]
    fn compact_spec_errors_name_the_part() {
        assert!(matches!(parse_compact("8x8"), Err(SpecError::BadPart { part }) if part == "8x8"));
        assert!(matches!(parse_compact("ax8xT4"), Err(SpecError::BadPart { part }) if part == "ax8xT4"));
        assert!(matches!(parse_compact(""), Err(SpecError::Empty)));
    }

    #[test]
    fn csv_errors_name_the_line() {
        let text = "sn,cpu_milli,memory_mib,gpu,model\nn0,64000,262144,2,P100\nn1,x,1,1,T4\n";
        assert_eq!(
            parse_csv(text).unwrap_err().to_string(),
            "node CSV: line 3: column `cpu_milli`: `x` is not a non-negative integer"
        );
        let nodes = parse_csv(&text[..text.len() - 12]).unwrap();
        assert_eq!(nodes[0].gpus.len(), 2);
    }
}
