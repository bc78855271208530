//! Which pod a process belongs to, read from `/proc/<pid>/cgroup`.
//!
//! The kubelet puts every container under a per-pod cgroup whose name carries the pod UID.
//! The spelling depends on the cgroup version and the kubelet's cgroup driver:
//!
//! - cgroupfs driver: `/kubepods/burstable/pod<uid>/<container>` (Guaranteed pods sit directly
//!   under `/kubepods/pod<uid>`), UID with dashes;
//! - systemd driver: `/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod<uid>.slice/
//!   cri-containerd-<id>.scope`, UID with `_` for `-` (systemd reserves `-` as the slice
//!   separator);
//! - v1 lists one line per controller (`12:memory:/…`), v2 a single `0::/…` line; under a
//!   container runtime's cgroup namespace the path may continue as `…slice:cri-containerd:<id>`.
//!
//! Static pods have a 32-hex-digit config hash for a UID instead of a dashed UUID.

use std::path::Path;

/// The pod UID in one `/proc/<pid>/cgroup` line, with dashes; `None` when the process is not in
/// a pod.
pub fn pod_uid_from_cgroup_line(line: &str) -> Option<String> {
    let mut fields = line.splitn(3, ':');
    let (_, _, path) = (fields.next()?, fields.next()?, fields.next()?);
    if !path.contains("kubepods") {
        return None;
    }
    path.split('/').find_map(pod_uid_from_segment)
}

/// The pod UID in a whole `/proc/<pid>/cgroup` file: the first line naming one.
pub fn pod_uid_from_cgroup(contents: &str) -> Option<String> {
    contents.lines().find_map(pod_uid_from_cgroup_line)
}

/// Reads `/proc/<pid>/cgroup` under `proc_root` (normally `/proc`; tests point it elsewhere).
/// `None` when the process is gone, unreadable or not in a pod.
pub fn pod_uid_of_pid(proc_root: &Path, pid: u32) -> Option<String> {
    let contents = std::fs::read_to_string(proc_root.join(pid.to_string()).join("cgroup")).ok()?;
    pod_uid_from_cgroup(&contents)
}

fn pod_uid_from_segment(segment: &str) -> Option<String> {
    // `kubepods-burstable-pod<uid>.slice:cri-containerd:<id>`: keep the part before the runtime.
    let segment = segment.split(':').next()?;
    let segment = segment.strip_suffix(".slice").unwrap_or(segment);
    let candidate = match segment.strip_prefix("pod") {
        Some(rest) => rest,
        None => &segment[segment.rfind("-pod")? + 4..],
    };
    let uid = candidate.replace('_', "-");
    is_pod_uid(&uid).then_some(uid)
}

fn is_pod_uid(uid: &str) -> bool {
    let bytes = uid.as_bytes();
    match bytes.len() {
        36 => bytes.iter().enumerate().all(|(i, b)| match i {
            8 | 13 | 18 | 23 => *b == b'-',
            _ => b.is_ascii_hexdigit(),
        }),
        32 => bytes.iter().all(u8::is_ascii_hexdigit),
        _ => false,
    }
}
