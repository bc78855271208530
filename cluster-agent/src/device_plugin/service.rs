//! The DevicePlugin gRPC service: what the kubelet calls on our socket.
//!
//! Decisions live in plain functions ([`device_list`], [`preferred_ids`], [`container_env`]) so
//! they are testable without gRPC; the trait impl only wires them to the current GPU list, the
//! [`PlacementSource`] and the request.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::Arc;

use grus_protocol::wire::DeviceRef;
use tokio::sync::{mpsc, watch};
use tokio_stream::wrappers::ReceiverStream;
use tonic::{Request, Response, Status};

use super::api::device_plugin_server::DevicePlugin;
use super::api::{
    AllocateRequest, AllocateResponse, ContainerAllocateResponse, ContainerPreferredAllocationRequest,
    ContainerPreferredAllocationResponse, Device, DevicePluginOptions, Empty, ListAndWatchResponse, Mount, NumaNode,
    PreStartContainerRequest, PreStartContainerResponse, PreferredAllocationRequest, PreferredAllocationResponse,
    TopologyInfo,
};
use super::ids::{ids_for_gpu, units_for_milli, ShareId, MILLI_PER_ID};
use super::placement::{Assignment, PlacementSource};
use super::served::Served;

/// The kubelet's health strings (k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1/constants.go).
pub const HEALTHY: &str = "Healthy";
pub const UNHEALTHY: &str = "Unhealthy";

/// One real GPU of this node, as the plugin advertises it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PluginGpu {
    pub index: u32,
    pub uuid: Option<String>,
    /// Total memory; 0 when unknown (then no memory limit is derived from the milli share).
    pub memory_mib: u64,
    /// NUMA node, for the kubelet's topology manager.
    pub numa: Option<u32>,
    pub healthy: bool,
    /// In MIG mode: its MIG instances (then it serves no shares). `None`: not in MIG mode.
    pub mig: Option<Vec<PluginMig>>,
}

/// One MIG instance of a GPU, as the driver reports it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PluginMig {
    pub profile: String,
    /// Its first memory slice: where the agent's placement names it.
    pub start: u8,
    /// The MIG device's UUID (what `NVIDIA_VISIBLE_DEVICES` names); `None` when unknown.
    pub uuid: Option<String>,
}

impl PluginMig {
    /// The device id the plugin advertises: `mig<gpu>_<start>[_<uuid>]` (the UUID, when
    /// known, changes the id when the instance is re-created).
    pub fn id(&self, gpu: u32) -> String {
        match &self.uuid {
            Some(uuid) => format!("mig{gpu}_{}_{uuid}", self.start),
            None => format!("mig{gpu}_{}", self.start),
        }
    }
}

/// Every MIG instance of `profile` on `gpus`, as (GPU, instance).
fn mig_instances<'a>(gpus: &'a [PluginGpu], profile: &'a str) -> impl Iterator<Item = (&'a PluginGpu, &'a PluginMig)> {
    gpus.iter().flat_map(move |g| g.mig.iter().flatten().filter(move |m| m.profile == profile).map(move |m| (g, m)))
}

/// The ListAndWatch answer of the plugin serving `profile`: one device per instance, with its
/// GPU's health and NUMA node.
pub fn mig_device_list(gpus: &[PluginGpu], profile: &str) -> ListAndWatchResponse {
    let devices = mig_instances(gpus, profile)
        .map(|(gpu, m)| Device {
            id: m.id(gpu.index),
            health: if gpu.healthy { HEALTHY } else { UNHEALTHY }.to_string(),
            topology: gpu.numa.map(|numa| TopologyInfo { nodes: vec![NumaNode { id: i64::from(numa) }] }),
        })
        .collect();
    ListAndWatchResponse { devices }
}

/// The ids a container asking `size` instances of `profile` should get: `must_include` first,
/// then the instances the agent placed the pod on (by GPU and first slice), then any available.
pub fn preferred_mig_ids(
    gpus: &[PluginGpu],
    profile: &str,
    request: &ContainerPreferredAllocationRequest,
    assignment: Option<&Assignment>,
) -> Vec<String> {
    let size = usize::try_from(request.allocation_size).unwrap_or(0);
    let available: BTreeSet<&str> = request.available_device_i_ds.iter().map(String::as_str).collect();
    let mut chosen: Vec<String> = Vec::with_capacity(size);
    let take = |id: &str, chosen: &mut Vec<String>| {
        if chosen.len() < size && !chosen.iter().any(|c| c == id) {
            chosen.push(id.to_string());
        }
    };
    for id in &request.must_include_device_i_ds {
        take(id, &mut chosen);
    }
    for d in assignment.map(|a| a.devices.as_slice()).unwrap_or_default() {
        let placed = mig_instances(gpus, profile).find(|(g, m)| g.index == d.index && Some(m.start) == d.mig_start);
        if let Some((g, m)) = placed {
            let id = m.id(g.index);
            if available.contains(id.as_str()) {
                take(&id, &mut chosen);
            }
        }
    }
    for id in &request.available_device_i_ds {
        take(id, &mut chosen);
    }
    chosen
}

/// The environment a container gets for its MIG instances: which it sees (their UUIDs, else
/// `<gpu>:<n>`, the container toolkit's index form). The instance is its own isolated GPU, so
/// no limiter variables.
pub fn mig_container_env(instances: &[(&PluginGpu, &PluginMig)]) -> BTreeMap<String, String> {
    let visible: Vec<String> = instances
        .iter()
        .map(|(g, m)| {
            m.uuid.clone().unwrap_or_else(|| {
                let n = g.mig.iter().flatten().position(|x| x.start == m.start).unwrap_or(0);
                format!("{}:{n}", g.index)
            })
        })
        .collect();
    BTreeMap::from([(ENV_VISIBLE_DEVICES.to_string(), visible.join(","))])
}

/// The LD_PRELOAD library that enforces the limits inside the container (cuda-limiter).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LimiterLibrary {
    /// Where the `.so` lies on the host.
    pub host_path: PathBuf,
    /// Where it is mounted (read-only) in the container, and what `LD_PRELOAD` names.
    pub container_path: String,
}

pub(crate) const ENV_VISIBLE_DEVICES: &str = "NVIDIA_VISIBLE_DEVICES";
pub(crate) const ENV_MEMORY_LIMIT: &str = "CUDA_DEVICE_MEMORY_LIMIT";
pub(crate) const ENV_SM_LIMIT: &str = "CUDA_DEVICE_SM_LIMIT";
pub(crate) const ENV_LIMITER_REGION: &str = "GRUS_CUDA_SHM";

/// The limiter's shared accounting file for a container holding `ids`. Containers of one pod
/// share `/dev/shm`; a file per allocation keeps each container's limits its own. The ids a
/// container holds are its alone on the node, so they name it (FNV-1a of the sorted ids).
pub fn limiter_region(ids: &[String]) -> String {
    let mut sorted: Vec<&str> = ids.iter().map(String::as_str).collect();
    sorted.sort_unstable();
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in sorted.join(",").bytes() {
        hash = (hash ^ u64::from(byte)).wrapping_mul(0x0000_0100_0000_01b3);
    }
    format!("/dev/shm/grus-cuda-limiter-{hash:016x}.v1")
}

/// The ListAndWatch answer: every id of every GPU with the GPU's health (GPUs in MIG mode serve
/// MIG instances only: none of their ids).
pub fn device_list(gpus: &[PluginGpu]) -> ListAndWatchResponse {
    let devices = gpus
        .iter()
        .filter(|gpu| gpu.mig.is_none())
        .flat_map(|gpu| {
            let health = if gpu.healthy { HEALTHY } else { UNHEALTHY };
            let topology = gpu.numa.map(|numa| TopologyInfo { nodes: vec![NumaNode { id: i64::from(numa) }] });
            ids_for_gpu(gpu.index, gpu.uuid.as_deref())
                .map(move |id| Device { id, health: health.to_string(), topology: topology.clone() })
                .collect::<Vec<_>>()
        })
        .collect();
    ListAndWatchResponse { devices }
}

/// Free ids per GPU (index, uuid), as (share, id).
type FreeIds<'a> = BTreeMap<(u32, Option<String>), Vec<(u32, &'a str)>>;

/// Picks `allocation_size` of the available ids: first those in `must_include`, then the ids of
/// the GPUs the agent assigned (when it did), then the tightest GPU that still fits the rest.
pub fn preferred_ids(request: &ContainerPreferredAllocationRequest, assignment: Option<&Assignment>) -> Vec<String> {
    let size = usize::try_from(request.allocation_size).unwrap_or(0);
    let mut chosen: Vec<String> = Vec::with_capacity(size);
    let mut taken: BTreeSet<&str> = BTreeSet::new();
    for id in &request.must_include_device_i_ds {
        if chosen.len() < size && taken.insert(id) {
            chosen.push(id.clone());
        }
    }
    // Available ids per GPU, in share order, without those already chosen.
    let mut free: FreeIds<'_> = BTreeMap::new();
    for id in &request.available_device_i_ds {
        if taken.contains(id.as_str()) {
            continue;
        }
        if let Some(share) = ShareId::parse(id) {
            free.entry((share.index, share.uuid)).or_default().push((share.share, id));
        }
    }
    for ids in free.values_mut() {
        ids.sort_unstable();
    }
    fn take_from(free: &mut FreeIds<'_>, gpu: &(u32, Option<String>), want: usize, chosen: &mut Vec<String>) {
        if let Some(ids) = free.get_mut(gpu) {
            let n = want.min(ids.len());
            chosen.extend(ids.drain(..n).map(|(_, id)| id.to_string()));
        }
    }
    if let Some(assignment) = assignment {
        for device in &assignment.devices {
            let want = (units_for_milli(device.milli) as usize).min(size - chosen.len());
            let gpu = free.keys().find(|(index, _)| *index == device.index).cloned();
            if let Some(gpu) = gpu {
                take_from(&mut free, &gpu, want, &mut chosen);
            }
        }
    }
    while chosen.len() < size {
        let missing = size - chosen.len();
        // Best fit: the GPU with the fewest free ids that still covers the rest alone, so whole
        // GPUs stay free for larger shares; failing that, the fullest-free GPU, to spread the
        // share over as few devices as possible.
        let fits = free.iter().filter(|(_, ids)| ids.len() >= missing).min_by_key(|(_, ids)| ids.len());
        let pick = fits.or_else(|| free.iter().filter(|(_, ids)| !ids.is_empty()).max_by_key(|(_, ids)| ids.len()));
        let Some((gpu, _)) = pick else { break };
        let gpu = gpu.clone();
        take_from(&mut free, &gpu, missing, &mut chosen);
    }
    chosen
}

/// The environment a container gets for its devices: which GPUs it sees and the limits the
/// cuda-limiter enforces. `devices` are in the order the container sees them.
pub fn container_env(devices: &[(&PluginGpu, u32)], memory_mib: Option<u64>) -> BTreeMap<String, String> {
    let mut env = BTreeMap::new();
    let visible: Vec<String> =
        devices.iter().map(|(gpu, _)| gpu.uuid.clone().unwrap_or_else(|| gpu.index.to_string())).collect();
    env.insert(ENV_VISIBLE_DEVICES.to_string(), visible.join(","));
    for (i, (gpu, milli)) in devices.iter().enumerate() {
        let memory = match memory_mib {
            Some(mib) if gpu.memory_mib > 0 => Some(mib.min(gpu.memory_mib)),
            Some(mib) => Some(mib),
            None if gpu.memory_mib > 0 => Some(gpu.memory_mib * u64::from(*milli) / 1000),
            None => None,
        };
        let sm_percent = (milli / MILLI_PER_ID).clamp(1, 100);
        let mut put = |name: &str, value: String| {
            if devices.len() == 1 {
                env.insert(name.to_string(), value.clone());
            }
            env.insert(format!("{name}_{i}"), value);
        };
        if let Some(memory) = memory {
            put(ENV_MEMORY_LIMIT, format!("{memory}m"));
        }
        put(ENV_SM_LIMIT, sm_percent.to_string());
    }
    env
}

/// The gRPC service. Cheap to build: one per served socket.
pub(crate) struct PluginService {
    pub served: Served,
    pub gpus: watch::Receiver<Vec<PluginGpu>>,
    pub placement: Arc<dyn PlacementSource>,
    pub limiter: Option<LimiterLibrary>,
    /// Set when the socket is being torn down: ends open ListAndWatch streams, which would
    /// otherwise hold the server's graceful shutdown forever.
    pub stop: watch::Receiver<bool>,
}

impl PluginService {
    fn allocate_mig(&self, profile: &str, ids: &[String]) -> Result<ContainerAllocateResponse, Status> {
        let gpus = self.gpus.borrow().clone();
        let instances = ids
            .iter()
            .map(|id| {
                mig_instances(&gpus, profile)
                    .find(|(g, m)| m.id(g.index) == *id)
                    .ok_or_else(|| Status::invalid_argument(format!("`{id}` is not a {profile} MIG instance here")))
            })
            .collect::<Result<Vec<_>, _>>()?;
        let units = u32::try_from(ids.len()).map_err(|_| Status::invalid_argument("too many device ids"))?;
        if let Some(a) = self.placement.pending_assignment(&self.served, units) {
            tracing::info!(namespace = %a.namespace, pod = %a.pod, profile, "allocated MIG instance");
            self.placement.mark_consumed(&a);
        }
        let envs = mig_container_env(&instances);
        Ok(ContainerAllocateResponse { envs: envs.into_iter().collect(), ..Default::default() })
    }

    fn allocate_one(&self, ids: &[String]) -> Result<ContainerAllocateResponse, Status> {
        if let Served::Mig(profile) = &self.served {
            return self.allocate_mig(profile, ids);
        }
        let gpus = self.gpus.borrow().clone();
        let units = u32::try_from(ids.len()).map_err(|_| Status::invalid_argument("too many device ids"))?;
        let assignment = self.placement.pending_assignment(&self.served, units);
        let (devices, memory_mib): (Vec<DeviceRef>, Option<u64>) = match &assignment {
            Some(a) => (a.devices.clone(), a.memory_mib),
            None => {
                // A pod the agent did not place (or whose annotations the cache has not seen
                // yet): grant what the ids themselves say, one unit per id on their GPU.
                let mut per_gpu: BTreeMap<u32, u32> = BTreeMap::new();
                for id in ids {
                    let share = ShareId::parse(id)
                        .ok_or_else(|| Status::invalid_argument(format!("`{id}` is not a grus device id")))?;
                    *per_gpu.entry(share.index).or_default() += MILLI_PER_ID;
                }
                tracing::warn!(units, "no pending placement for this allocation; limits follow the device ids");
                (per_gpu.into_iter().map(|(index, milli)| DeviceRef::share(index, milli.min(1000))).collect(), None)
            }
        };
        let resolved = devices
            .iter()
            .map(|d| {
                gpus.iter()
                    .find(|g| g.index == d.index)
                    .map(|g| (g, d.milli))
                    .ok_or_else(|| Status::failed_precondition(format!("GPU {} is not on this node", d.index)))
            })
            .collect::<Result<Vec<_>, _>>()?;
        let mut envs = container_env(&resolved, memory_mib);
        let mut mounts = Vec::new();
        if let Some(limiter) = &self.limiter {
            envs.insert("LD_PRELOAD".to_string(), limiter.container_path.clone());
            envs.insert(ENV_LIMITER_REGION.to_string(), limiter_region(ids));
            mounts.push(Mount {
                container_path: limiter.container_path.clone(),
                host_path: limiter.host_path.display().to_string(),
                read_only: true,
            });
        }
        if let Some(a) = &assignment {
            tracing::info!(namespace = %a.namespace, pod = %a.pod, units, "allocated GPU share");
            self.placement.mark_consumed(a);
        }
        Ok(ContainerAllocateResponse { envs: envs.into_iter().collect(), mounts, ..Default::default() })
    }
}

type DeviceStream = Pin<Box<dyn tokio_stream::Stream<Item = Result<ListAndWatchResponse, Status>> + Send + 'static>>;

#[tonic::async_trait]
impl DevicePlugin for PluginService {
    async fn get_device_plugin_options(&self, _: Request<Empty>) -> Result<Response<DevicePluginOptions>, Status> {
        Ok(Response::new(options()))
    }

    type ListAndWatchStream = DeviceStream;

    async fn list_and_watch(&self, _: Request<Empty>) -> Result<Response<Self::ListAndWatchStream>, Status> {
        let (tx, rx) = mpsc::channel(4);
        let mut gpus = self.gpus.clone();
        let mut stop = self.stop.clone();
        let served = self.served.clone();
        tokio::spawn(async move {
            let mut last: Option<ListAndWatchResponse> = None;
            let mut feed_open = true;
            loop {
                let list = match &served {
                    Served::Shares => device_list(&gpus.borrow_and_update()),
                    Served::Mig(profile) => mig_device_list(&gpus.borrow_and_update(), profile),
                };
                if last.as_ref() != Some(&list) {
                    if tx.send(Ok(list.clone())).await.is_err() {
                        return;
                    }
                    last = Some(list);
                }
                tokio::select! {
                    changed = gpus.changed(), if feed_open => feed_open = changed.is_ok(),
                    _ = stop.wait_for(|stop| *stop) => return,
                    _ = tx.closed() => return,
                }
            }
        });
        Ok(Response::new(Box::pin(ReceiverStream::new(rx))))
    }

    async fn get_preferred_allocation(
        &self,
        request: Request<PreferredAllocationRequest>,
    ) -> Result<Response<PreferredAllocationResponse>, Status> {
        let container_responses = request
            .into_inner()
            .container_requests
            .iter()
            .map(|req| {
                let units = u32::try_from(req.allocation_size).unwrap_or(0);
                let assignment = self.placement.pending_assignment(&self.served, units);
                let device_i_ds = match &self.served {
                    Served::Shares => preferred_ids(req, assignment.as_ref()),
                    Served::Mig(profile) => preferred_mig_ids(&self.gpus.borrow(), profile, req, assignment.as_ref()),
                };
                ContainerPreferredAllocationResponse { device_i_ds }
            })
            .collect();
        Ok(Response::new(PreferredAllocationResponse { container_responses }))
    }

    async fn allocate(&self, request: Request<AllocateRequest>) -> Result<Response<AllocateResponse>, Status> {
        let container_responses = request
            .into_inner()
            .container_requests
            .iter()
            .map(|req| self.allocate_one(&req.devices_ids))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Response::new(AllocateResponse { container_responses }))
    }

    async fn pre_start_container(
        &self,
        _: Request<PreStartContainerRequest>,
    ) -> Result<Response<PreStartContainerResponse>, Status> {
        // Nothing to reset per start: limits travel in the environment set by Allocate.
        Ok(Response::new(PreStartContainerResponse {}))
    }
}

/// What the plugin tells the kubelet at registration and on request.
pub(crate) fn options() -> DevicePluginOptions {
    DevicePluginOptions { pre_start_required: false, get_preferred_allocation_available: true }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gpu(index: u32, uuid: &str, memory_mib: u64) -> PluginGpu {
        PluginGpu { index, uuid: Some(uuid.to_string()), memory_mib, numa: Some(0), healthy: true, mig: None }
    }

    fn ids(index: u32, uuid: &str, shares: std::ops::Range<u32>) -> Vec<String> {
        shares.map(|share| ShareId { index, uuid: Some(uuid.to_string()), share }.to_string()).collect()
    }

    #[test]
    fn limiter_region_is_per_allocation() {
        let a = ids(0, "GPU-a", 0..25);
        let mut shuffled = a.clone();
        shuffled.reverse();
        assert_eq!(limiter_region(&a), limiter_region(&shuffled), "the order of the ids does not matter");
        assert_ne!(limiter_region(&a), limiter_region(&ids(0, "GPU-a", 25..50)));
        assert!(limiter_region(&a).starts_with("/dev/shm/grus-cuda-limiter-"));
    }

    #[test]
    fn env_for_one_share() {
        let g = gpu(1, "GPU-b", 81920);
        let env = container_env(&[(&g, 250)], None);
        let expected: BTreeMap<String, String> = [
            ("NVIDIA_VISIBLE_DEVICES", "GPU-b"),
            ("CUDA_DEVICE_MEMORY_LIMIT", "20480m"),
            ("CUDA_DEVICE_MEMORY_LIMIT_0", "20480m"),
            ("CUDA_DEVICE_SM_LIMIT", "25"),
            ("CUDA_DEVICE_SM_LIMIT_0", "25"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        assert_eq!(env, expected);
    }

    #[test]
    fn env_for_two_devices_is_indexed_and_memory_is_capped() {
        let (a, b) = (gpu(0, "GPU-a", 16384), gpu(3, "GPU-d", 16384));
        let env = container_env(&[(&b, 1000), (&a, 500)], Some(20000));
        assert_eq!(env["NVIDIA_VISIBLE_DEVICES"], "GPU-d,GPU-a");
        assert_eq!(env["CUDA_DEVICE_MEMORY_LIMIT_0"], "16384m");
        assert_eq!(env["CUDA_DEVICE_SM_LIMIT_0"], "100");
        assert_eq!(env["CUDA_DEVICE_SM_LIMIT_1"], "50");
        assert!(!env.contains_key("CUDA_DEVICE_SM_LIMIT"));
    }

    #[test]
    fn env_without_known_memory_sets_no_memory_limit() {
        let g = PluginGpu { index: 2, uuid: None, memory_mib: 0, numa: None, healthy: true, mig: None };
        let env = container_env(&[(&g, 5)], None);
        assert_eq!(env["NVIDIA_VISIBLE_DEVICES"], "2");
        assert_eq!(env["CUDA_DEVICE_SM_LIMIT"], "1");
        assert!(!env.contains_key("CUDA_DEVICE_MEMORY_LIMIT"));
    }

    #[test]
    fn preferred_follows_the_assignment() {
        let mut available = ids(0, "GPU-a", 0..100);
        available.extend(ids(1, "GPU-b", 40..100));
        let req = ContainerPreferredAllocationRequest {
            available_device_i_ds: available,
            must_include_device_i_ds: vec![],
            allocation_size: 25,
        };
        let assignment = Assignment {
            namespace: "ml".into(),
            pod: "p".into(),
            devices: vec![DeviceRef::share(0, 250)],
            memory_mib: None,
            mig_profile: None,
        };
        assert_eq!(preferred_ids(&req, Some(&assignment)), ids(0, "GPU-a", 0..25));
        // Without a placement: the tightest GPU that fits (GPU-b has 60 free, GPU-a 100).
        assert_eq!(preferred_ids(&req, None), ids(1, "GPU-b", 40..65));
    }

    #[test]
    fn preferred_spreads_only_when_no_gpu_fits_and_keeps_must_include() {
        let mut available = ids(0, "GPU-a", 90..100);
        available.extend(ids(1, "GPU-b", 80..100));
        let must = ids(0, "GPU-a", 90..91);
        let req = ContainerPreferredAllocationRequest {
            available_device_i_ds: available,
            must_include_device_i_ds: must.clone(),
            allocation_size: 25,
        };
        let got = preferred_ids(&req, None);
        assert_eq!(got.len(), 25);
        assert_eq!(got[0], must[0]);
        assert_eq!(got[1..21], ids(1, "GPU-b", 80..100)[..]);
        assert_eq!(got[21..], ids(0, "GPU-a", 91..95)[..]);
    }

    #[test]
    fn device_list_carries_health_and_numa() {
        let mut sick = gpu(1, "GPU-b", 1);
        sick.healthy = false;
        let list = device_list(&[gpu(0, "GPU-a", 1), sick]);
        assert_eq!(list.devices.len(), 200);
        assert!(list.devices[..100].iter().all(|d| d.health == HEALTHY));
        assert!(list.devices[100..].iter().all(|d| d.health == UNHEALTHY));
        assert_eq!(list.devices[0].topology.as_ref().unwrap().nodes[0].id, 0);
    }
}
