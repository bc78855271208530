//! The names Grus writes on Kubernetes objects, and the pure helpers that build and read them:
//! pod and PodGroup names, DNS-safe label values, and the `grus.io/devices` annotation.
//!
//! These strings are a contract with the device plugin and with operators' tooling; change
//! one only together with its readers.

/// Value of [`MANAGED_BY`] on every object the agent creates.
pub const MANAGER: &str = "grus-agent";
/// Label selecting everything the agent owns; the rebuild after a restart lists by it.
pub const MANAGED_BY: &str = "grus.io/managed-by";
/// Job id (decimal).
pub const JOB: &str = "grus.io/job";
/// Task name made label-safe; the exact name is in the [`TASK_NAME`] annotation.
pub const TASK: &str = "grus.io/task";
/// Replica index (decimal).
pub const REPLICA: &str = "grus.io/replica";
/// Dispatch epoch (decimal), the fencing token of DESIGN.md invariant 2.
pub const EPOCH: &str = "grus.io/epoch";
/// Label the coscheduling plugin (scheduler-plugins) reads to find a pod's PodGroup.
pub const POD_GROUP: &str = "scheduling.x-k8s.io/pod-group";

/// Annotation: the agent's device assignment, `index:milli[@mig_start][,...]`
/// (`DeviceRef::format_list`; read by the device plugin).
pub const DEVICES: &str = "grus.io/devices";
/// Annotation: the MIG profile of the instance in [`DEVICES`], when the pod holds one (read by
/// the device plugin serving that profile).
pub const MIG_PROFILE: &str = "grus.io/mig-profile";
/// Annotation: GPU memory limit per device in MiB, when the task sets one (read by the device plugin).
pub const GPU_MEMORY_MIB: &str = "grus.io/gpu-memory-mib";
/// Annotation: the exact task name (label values are restricted, task names are not).
pub const TASK_NAME: &str = "grus.io/task-name";
/// Annotation: the job's name, project and queue, for people reading `kubectl describe`.
pub const JOB_NAME: &str = "grus.io/job-name";
pub const PROJECT: &str = "grus.io/project";
pub const QUEUE: &str = "grus.io/queue";
/// The inference service a replica serves (label-safe form of its name), and its project:
/// what the service's Kubernetes Service selects.
pub const SERVICE: &str = grus_protocol::wire::SERVICE_LABEL;
pub const SERVICE_PROJECT: &str = "grus.io/service-project";
/// On a workspace's pod (value `true`): its own Service selects it by job.
pub const WORKSPACE: &str = "grus.io/workspace";
/// Annotation: the node the agent chose, kept so an unbound pod still says where it belongs.
pub const NODE: &str = "grus.io/node";

/// Node labels read by the backend (besides GPU feature discovery's `nvidia.com/gpu.*`).
pub mod node {
    /// Overrides the GPU model from GPU feature discovery (e.g. to match the price book's names).
    pub const GPU_MODEL: &str = "grus.io/gpu-model";
    /// Overrides the GPU memory in MiB.
    pub const GPU_MEMORY_MIB: &str = "grus.io/gpu-memory-mib";
    /// NVLink island of each device, by index: `0,0,0,0,1,1,1,1`.
    pub const NVLINK_GROUPS: &str = "grus.io/nvlink-groups";
    /// NUMA node of each device, by index: `0,0,0,0,1,1,1,1`.
    pub const GPU_NUMA: &str = "grus.io/gpu-numa";
    /// Indices of devices that must not be used: `3,5`.
    pub const GPU_UNHEALTHY: &str = "grus.io/gpu-unhealthy";
    /// Indices of devices in MIG mode: `0,1` (overrides [`GFD_MIG_STRATEGY`]).
    pub const GPU_MIG: &str = "grus.io/gpu-mig";
    /// Overrides the rack (default: `topology.kubernetes.io/zone`).
    pub const RACK: &str = "grus.io/rack";
    /// Prefix under which node taints are carried in `NodeInfo.labels`: the key is
    /// `taint.grus.io/<taint key>` and the value `<value>:<effect>`.
    pub const TAINT_PREFIX: &str = "taint.grus.io/";

    pub const GFD_PRODUCT: &str = "nvidia.com/gpu.product";
    pub const GFD_MEMORY: &str = "nvidia.com/gpu.memory";
    /// GPU feature discovery's device count (MIG-mode GPUs are not in `nvidia.com/gpu`).
    pub const GFD_COUNT: &str = "nvidia.com/gpu.count";
    /// GPU feature discovery's MIG strategy: with `mixed`, every GPU of a MIG-capable model is
    /// taken to be in MIG mode unless [`GPU_MIG`] lists the ones that are.
    pub const GFD_MIG_STRATEGY: &str = "nvidia.com/mig.strategy";
    pub const ZONE: &str = "topology.kubernetes.io/zone";
}

/// Extended resources in pod specs and node allocatable.
pub mod resource {
    /// Whole GPUs (the NVIDIA device plugin's resource).
    pub const GPU: &str = "nvidia.com/gpu";
    /// Shares of one GPU in thousandths (Grus' device plugin).
    pub const GPU_MILLI: &str = "grus.io/gpu-milli";

    /// One MIG instance of `profile`, as the device plugins' mixed strategy names it
    /// (`nvidia.com/mig-1g.10gb`).
    pub fn mig(profile: &str) -> String {
        format!("nvidia.com/mig-{profile}")
    }
}

/// The longest name we give a pod: the pod's hostname is its name, and hostnames are DNS labels.
const MAX_NAME: usize = 63;

/// `grus-<job>-<task>-<replica>`, DNS-1123 safe. When the task name has to be altered or
/// shortened, a hash of the exact name is appended so two tasks never share a pod name.
pub fn pod_name(job: u64, task: &str, replica: u32) -> String {
    let clean = dns_label(task);
    let plain = format!("grus-{job}-{clean}-{replica}");
    if clean == task && plain.len() <= MAX_NAME {
        return plain;
    }
    let hash = format!("{:08x}", fnv1a(task.as_bytes()) as u32);
    let fixed = format!("grus-{job}--{hash}-{replica}").len();
    let room = MAX_NAME.saturating_sub(fixed);
    let short: String = clean.chars().take(room).collect();
    let short = short.trim_end_matches('-');
    format!("grus-{job}-{short}-{hash}-{replica}")
}

/// The PodGroup of a gang job.
pub fn pod_group_name(job: u64) -> String {
    format!("grus-{job}")
}

/// A label value for an arbitrary string: at most 63 of `[A-Za-z0-9._-]`, alphanumeric at both
/// ends; longer or altered values get a hash suffix so they stay distinct.
pub fn label_value(raw: &str) -> String {
    let mapped: String =
        raw.chars().map(|c| if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') { c } else { '-' }).collect();
    let trimmed = mapped.trim_matches(|c: char| !c.is_ascii_alphanumeric());
    if trimmed == raw && raw.len() <= MAX_NAME {
        return raw.to_string();
    }
    let hash = format!("{:08x}", fnv1a(raw.as_bytes()) as u32);
    let short: String = trimmed.chars().take(MAX_NAME - hash.len() - 1).collect();
    let short = short.trim_end_matches(|c: char| !c.is_ascii_alphanumeric());
    if short.is_empty() {
        hash
    } else {
        format!("{short}-{hash}")
    }
}

/// Lower-case alphanumerics and `-`, starting and ending alphanumeric (may be empty).
fn dns_label(raw: &str) -> String {
    let mapped: String =
        raw.chars().map(|c| if c.is_ascii_alphanumeric() { c.to_ascii_lowercase() } else { '-' }).collect();
    mapped.trim_matches('-').to_string()
}

/// FNV-1a: stable across Rust releases, unlike `DefaultHasher`, so names survive an upgrade.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, b| (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3))
}

#[cfg(test)]
mod tests {
    use super::*;
    use grus_protocol::wire::DeviceRef;

    #[test]
    fn plain_names_stay_readable() {
        assert_eq!(pod_name(42, "main", 3), "grus-42-main-3");
        assert_eq!(pod_group_name(42), "grus-42");
    }

    #[test]
    fn unsafe_or_long_task_names_are_cleaned_and_hashed() {
        let a = pod_name(7, "Notebook_Share", 0);
        let b = pod_name(7, "notebook-share", 0);
        assert!(a.starts_with("grus-7-notebook-share-") && a.ends_with("-0"), "{a}");
        assert_ne!(a, b);
        let long = pod_name(u64::MAX, &"x".repeat(200), u32::MAX);
        assert!(long.len() <= 63, "{long}");
        assert!(long.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-'));
        assert_ne!(pod_name(1, &"x".repeat(100), 0), pod_name(1, &"x".repeat(101), 0));
    }

    #[test]
    fn label_values_are_valid() {
        assert_eq!(label_value("main"), "main");
        let v = label_value("/weird name/");
        assert!(v.len() <= 63 && v.starts_with("weird-name-"), "{v}");
        assert!(label_value(&"a".repeat(100)).len() <= 63);
        assert_eq!(label_value("@@").len(), 8);
    }

    #[test]
    fn devices_round_trip() {
        let devices = vec![DeviceRef::share(0, 1000), DeviceRef::share(3, 250)];
        assert_eq!(DeviceRef::format_list(&devices), "0:1000,3:250");
        assert_eq!(DeviceRef::parse_list("0:1000,3:250").unwrap(), devices);
        assert_eq!(DeviceRef::parse_list("").unwrap(), vec![]);
        for bad in ["0:0", "0:1001", "x:5", "3", "1:142@8", "1:142@x"] {
            assert!(DeviceRef::parse_list(bad).is_err(), "{bad}");
        }
        let mig = vec![DeviceRef { index: 2, milli: 142, mig_start: Some(4) }];
        assert_eq!(DeviceRef::format_list(&mig), "2:142@4");
        assert_eq!(DeviceRef::parse_list("2:142@4").unwrap(), mig);
    }
}
