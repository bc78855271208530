//! The device plugin against a test kubelet: a Registration server on a temp-dir
//! `kubelet.sock`, which then dials the plugin's socket like the real kubelet does.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::time::Duration;

use grus_agent::device_plugin::api::device_plugin_client::DevicePluginClient;
use grus_agent::device_plugin::api::registration_server::{Registration, RegistrationServer};
use grus_agent::device_plugin::api::{
    AllocateRequest, ContainerAllocateRequest, ContainerPreferredAllocationRequest, Empty, ListAndWatchResponse,
    PreferredAllocationRequest, RegisterRequest,
};
use grus_agent::device_plugin::{
    connect_unix, run_node_plugins, Assignment, DevicePluginConfig, GpuSharePlugin, InMemoryPlacement, LimiterLibrary,
    PluginGpu, PluginMig, ShareId, API_VERSION, HEALTHY, KUBELET_SOCKET, RESOURCE_NAME, UNHEALTHY,
};
use grus_protocol::wire::DeviceRef;
use tokio::net::UnixListener;
use tokio::sync::{mpsc, oneshot, watch};
use tokio::task::JoinHandle;
use tokio_stream::wrappers::UnixListenerStream;
use tokio_stream::StreamExt;
use tonic::transport::{Channel, Server};
use tonic::{Request, Response, Status, Streaming};

const GPU_A: &str = "GPU-0b3a5c9e-1111-4c2d-9e0f-0123456789ab";
const GPU_B: &str = "GPU-7d41f2aa-2222-4b8e-8f10-ba9876543210";
const ENDPOINT: &str = "grus-test.sock";
const WAIT: Duration = Duration::from_secs(10);

struct TestKubelet {
    registered: mpsc::UnboundedSender<RegisterRequest>,
    /// Registrations still to refuse (a kubelet that is not ready yet).
    refuse: AtomicU32,
}

#[tonic::async_trait]
impl Registration for TestKubelet {
    async fn register(&self, request: Request<RegisterRequest>) -> Result<Response<Empty>, Status> {
        if self.refuse.fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1)).is_ok() {
            return Err(Status::unavailable("device manager not started"));
        }
        let _ = self.registered.send(request.into_inner());
        Ok(Response::new(Empty {}))
    }
}

/// Serves Registration on `<dir>/kubelet.sock` until the task is aborted.
fn start_kubelet(dir: &Path, registered: mpsc::UnboundedSender<RegisterRequest>) -> JoinHandle<()> {
    start_refusing_kubelet(dir, registered, 0)
}

/// Like [`start_kubelet`], refusing the first `refuse` registrations.
fn start_refusing_kubelet(
    dir: &Path,
    registered: mpsc::UnboundedSender<RegisterRequest>,
    refuse: u32,
) -> JoinHandle<()> {
    let listener = UnixListener::bind(dir.join(KUBELET_SOCKET)).expect("bind kubelet.sock");
    let kubelet = TestKubelet { registered, refuse: AtomicU32::new(refuse) };
    tokio::spawn(async move {
        let _ = Server::builder()
            .add_service(RegistrationServer::new(kubelet))
            .serve_with_incoming(UnixListenerStream::new(listener))
            .await;
    })
}

fn gpu(index: u32, uuid: &str, memory_mib: u64, healthy: bool) -> PluginGpu {
    PluginGpu { index, uuid: Some(uuid.to_string()), memory_mib, numa: Some(0), healthy, mig: None }
}

struct Harness {
    dir: tempfile::TempDir,
    gpus: watch::Sender<Vec<PluginGpu>>,
    placement: Arc<InMemoryPlacement>,
    registered_tx: mpsc::UnboundedSender<RegisterRequest>,
    registered: mpsc::UnboundedReceiver<RegisterRequest>,
    kubelet: JoinHandle<()>,
    stop: Option<oneshot::Sender<()>>,
    plugin: JoinHandle<Result<(), grus_agent::device_plugin::DevicePluginError>>,
}

impl Harness {
    fn start() -> Harness {
        let dir = tempfile::tempdir().expect("temp dir");
        let (registered_tx, registered) = mpsc::unbounded_channel();
        let kubelet = start_kubelet(dir.path(), registered_tx.clone());
        let (gpus, gpus_rx) = watch::channel(vec![gpu(0, GPU_A, 16384, true), gpu(1, GPU_B, 81920, true)]);
        let placement = Arc::new(InMemoryPlacement::new());
        let config = DevicePluginConfig {
            dir: dir.path().to_path_buf(),
            endpoint: ENDPOINT.to_string(),
            limiter: Some(LimiterLibrary {
                host_path: PathBuf::from("/opt/grus/lib/libgrus_cuda_limiter.so"),
                container_path: "/usr/local/grus/libgrus_cuda_limiter.so".to_string(),
            }),
            poll: Duration::from_millis(20),
        };
        let (stop, stop_rx) = oneshot::channel::<()>();
        let plugin = GpuSharePlugin::new(config, gpus_rx, placement.clone());
        let plugin = tokio::spawn(plugin.run(async move {
            let _ = stop_rx.await;
        }));
        Harness { dir, gpus, placement, registered_tx, registered, kubelet, stop: Some(stop), plugin }
    }

    async fn next_registration(&mut self) -> RegisterRequest {
        tokio::time::timeout(WAIT, self.registered.recv()).await.expect("registration in time").expect("kubelet alive")
    }

    async fn client(&self) -> DevicePluginClient<Channel> {
        DevicePluginClient::new(connect_unix(&self.dir.path().join(ENDPOINT)).await.expect("dial the plugin"))
    }

    async fn shutdown(mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        let result = tokio::time::timeout(WAIT, &mut self.plugin).await.expect("plugin stops").expect("no panic");
        assert!(result.is_ok(), "{result:?}");
        assert!(!self.dir.path().join(ENDPOINT).exists(), "socket removed on shutdown");
        self.kubelet.abort();
    }
}

async fn next_list(stream: &mut Streaming<ListAndWatchResponse>) -> ListAndWatchResponse {
    tokio::time::timeout(WAIT, stream.next()).await.expect("list in time").expect("stream open").expect("no error")
}

/// The plugin's preferred ids for one container asking `size` of `available`.
async fn preferred(client: &mut DevicePluginClient<Channel>, available: Vec<String>, size: i32) -> Vec<String> {
    let request = PreferredAllocationRequest {
        container_requests: vec![ContainerPreferredAllocationRequest {
            available_device_i_ds: available,
            must_include_device_i_ds: vec![],
            allocation_size: size,
        }],
    };
    let answer = client.get_preferred_allocation(request).await.expect("preferred allocation").into_inner();
    answer.container_responses[0].device_i_ds.clone()
}

fn all_ids(list: &ListAndWatchResponse) -> Vec<String> {
    list.devices.iter().map(|d| d.id.clone()).collect()
}

#[tokio::test]
async fn registers_and_serves_list_preferred_and_allocate() {
    let mut h = Harness::start();
    let reg = h.next_registration().await;
    assert_eq!(reg.version, API_VERSION);
    assert_eq!(reg.resource_name, RESOURCE_NAME);
    assert_eq!(reg.endpoint, ENDPOINT);
    assert!(reg.options.expect("options").get_preferred_allocation_available);

    let mut client = h.client().await;
    let options = client.get_device_plugin_options(Empty {}).await.expect("options").into_inner();
    assert!(options.get_preferred_allocation_available && !options.pre_start_required);

    let mut stream = client.list_and_watch(Empty {}).await.expect("list and watch").into_inner();
    let list = next_list(&mut stream).await;
    assert_eq!(list.devices.len(), 200);
    assert!(list.devices.iter().all(|d| d.health == HEALTHY));

    // The agent placed pod ml/nb-0 on GPU 1 with 250 milli and 10 GiB.
    h.placement.push(Assignment {
        namespace: "ml".into(),
        pod: "nb-0".into(),
        devices: vec![DeviceRef::share(1, 250)],
        memory_mib: Some(10240),
        mig_profile: None,
    });
    let chosen = &preferred(&mut client, all_ids(&list), 25).await;
    assert_eq!(chosen.len(), 25);
    assert!(chosen.iter().all(|id| ShareId::parse(id).is_some_and(|s| s.is_on(1, Some(GPU_B)))), "{chosen:?}");
    assert_eq!(h.placement.pending().len(), 1, "preference does not consume the placement");

    let allocated = client
        .allocate(AllocateRequest {
            container_requests: vec![ContainerAllocateRequest { devices_ids: chosen.clone() }],
        })
        .await
        .expect("allocate")
        .into_inner();
    let response = &allocated.container_responses[0];
    let env = &response.envs;
    assert_eq!(env["NVIDIA_VISIBLE_DEVICES"], GPU_B);
    assert_eq!(env["CUDA_DEVICE_MEMORY_LIMIT"], "10240m");
    assert_eq!(env["CUDA_DEVICE_MEMORY_LIMIT_0"], "10240m");
    assert_eq!(env["CUDA_DEVICE_SM_LIMIT"], "25");
    assert_eq!(env["LD_PRELOAD"], "/usr/local/grus/libgrus_cuda_limiter.so");
    assert!(env["GRUS_CUDA_SHM"].starts_with("/dev/shm/grus-cuda-limiter-"), "a region per container");
    assert_eq!(response.mounts.len(), 1);
    assert_eq!(response.mounts[0].host_path, "/opt/grus/lib/libgrus_cuda_limiter.so");
    assert!(response.mounts[0].read_only);
    assert!(h.placement.pending().is_empty(), "allocation consumes the placement");

    h.shutdown().await;
}

#[tokio::test]
async fn allocate_follows_the_placement_even_when_the_kubelet_picks_other_ids() {
    let mut h = Harness::start();
    h.next_registration().await;
    let mut client = h.client().await;
    h.placement.push(Assignment {
        namespace: "ml".into(),
        pod: "train-0".into(),
        devices: vec![DeviceRef::share(0, 500)],
        memory_mib: None,
        mig_profile: None,
    });
    // The kubelet ignored the preference and handed out ids of GPU 1.
    let ids: Vec<String> =
        (0..50).map(|share| ShareId { index: 1, uuid: Some(GPU_B.into()), share }.to_string()).collect();
    let allocated = client
        .allocate(AllocateRequest { container_requests: vec![ContainerAllocateRequest { devices_ids: ids }] })
        .await
        .expect("allocate")
        .into_inner();
    let env = &allocated.container_responses[0].envs;
    assert_eq!(env["NVIDIA_VISIBLE_DEVICES"], GPU_A);
    assert_eq!(env["CUDA_DEVICE_MEMORY_LIMIT"], "8192m", "half of 16 GiB");
    assert_eq!(env["CUDA_DEVICE_SM_LIMIT"], "50");
    h.shutdown().await;
}

#[tokio::test]
async fn allocate_without_a_placement_grants_what_the_ids_say_and_rejects_foreign_ids() {
    let mut h = Harness::start();
    h.next_registration().await;
    let mut client = h.client().await;
    let ids: Vec<String> =
        (10..20).map(|share| ShareId { index: 0, uuid: Some(GPU_A.into()), share }.to_string()).collect();
    let allocated = client
        .allocate(AllocateRequest { container_requests: vec![ContainerAllocateRequest { devices_ids: ids }] })
        .await
        .expect("allocate")
        .into_inner();
    let env = &allocated.container_responses[0].envs;
    assert_eq!(env["NVIDIA_VISIBLE_DEVICES"], GPU_A);
    assert_eq!(env["CUDA_DEVICE_SM_LIMIT"], "10");
    assert_eq!(env["CUDA_DEVICE_MEMORY_LIMIT"], "1638m");

    let status = client
        .allocate(AllocateRequest {
            container_requests: vec![ContainerAllocateRequest { devices_ids: vec!["nvidia0".into()] }],
        })
        .await
        .expect_err("foreign id");
    assert_eq!(status.code(), tonic::Code::InvalidArgument);
    h.shutdown().await;
}

#[tokio::test]
async fn health_change_is_sent_on_list_and_watch() {
    let mut h = Harness::start();
    h.next_registration().await;
    let mut client = h.client().await;
    let mut stream = client.list_and_watch(Empty {}).await.expect("list and watch").into_inner();
    assert!(next_list(&mut stream).await.devices.iter().all(|d| d.health == HEALTHY));

    h.gpus.send_modify(|gpus| gpus[1].healthy = false);
    let list = next_list(&mut stream).await;
    let (sick, well): (Vec<_>, Vec<_>) =
        list.devices.iter().partition(|d| ShareId::parse(&d.id).is_some_and(|s| s.index == 1));
    assert_eq!(sick.len(), 100);
    assert!(sick.iter().all(|d| d.health == UNHEALTHY));
    assert!(well.iter().all(|d| d.health == HEALTHY));

    // A GPU that disappears takes its ids along.
    h.gpus.send_modify(|gpus| gpus.truncate(1));
    assert_eq!(next_list(&mut stream).await.devices.len(), 100);
    h.shutdown().await;
}

#[tokio::test]
async fn kubelet_restart_makes_the_plugin_register_again() {
    let mut h = Harness::start();
    h.next_registration().await;

    // The kubelet restarts: its socket is deleted and created again, and (as the real kubelet
    // does on start) the plugin sockets in the dir are removed.
    h.kubelet.abort();
    let _ = (&mut h.kubelet).await;
    std::fs::remove_file(h.dir.path().join(KUBELET_SOCKET)).expect("remove kubelet.sock");
    std::fs::remove_file(h.dir.path().join(ENDPOINT)).expect("remove plugin socket");
    h.kubelet = start_kubelet(h.dir.path(), h.registered_tx.clone());
    let again = h.next_registration().await;
    assert_eq!(again.resource_name, RESOURCE_NAME);

    // The plugin serves again on a fresh socket.
    let mut client = h.client().await;
    let mut stream = client.list_and_watch(Empty {}).await.expect("list and watch").into_inner();
    assert_eq!(next_list(&mut stream).await.devices.len(), 200);

    // A kubelet that only re-creates its own socket is noticed too.
    h.kubelet.abort();
    let _ = (&mut h.kubelet).await;
    std::fs::remove_file(h.dir.path().join(KUBELET_SOCKET)).expect("remove kubelet.sock");
    h.kubelet = start_kubelet(h.dir.path(), h.registered_tx.clone());
    h.next_registration().await;
    h.shutdown().await;
}

#[tokio::test]
async fn a_refused_registration_is_retried() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (registered_tx, mut registered) = mpsc::unbounded_channel();
    let kubelet = start_refusing_kubelet(dir.path(), registered_tx, 2);
    let (_gpus, gpus_rx) = watch::channel(vec![gpu(0, GPU_A, 16384, true)]);
    let config = DevicePluginConfig {
        dir: dir.path().to_path_buf(),
        endpoint: ENDPOINT.to_string(),
        limiter: None,
        poll: Duration::from_millis(20),
    };
    let (stop, stop_rx) = oneshot::channel::<()>();
    let plugin = tokio::spawn(GpuSharePlugin::new(config, gpus_rx, Arc::new(InMemoryPlacement::new())).run(async {
        let _ = stop_rx.await;
    }));
    let reg = tokio::time::timeout(WAIT, registered.recv()).await.expect("registration in time").expect("open");
    assert_eq!(reg.resource_name, RESOURCE_NAME);
    let mut client = DevicePluginClient::new(connect_unix(&dir.path().join(ENDPOINT)).await.expect("dial"));
    let mut stream = client.list_and_watch(Empty {}).await.expect("list and watch").into_inner();
    assert_eq!(next_list(&mut stream).await.devices.len(), 100);
    let _ = stop.send(());
    tokio::time::timeout(WAIT, plugin).await.expect("stops").expect("no panic").expect("ok");
    kubelet.abort();
}

#[tokio::test]
async fn plugin_waits_for_the_kubelet_socket() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (registered_tx, mut registered) = mpsc::unbounded_channel();
    let (_gpus, gpus_rx) = watch::channel(vec![gpu(0, GPU_A, 16384, true)]);
    let config = DevicePluginConfig {
        dir: dir.path().to_path_buf(),
        endpoint: ENDPOINT.to_string(),
        limiter: None,
        poll: Duration::from_millis(20),
    };
    let (stop, stop_rx) = oneshot::channel::<()>();
    let plugin = tokio::spawn(GpuSharePlugin::new(config, gpus_rx, Arc::new(InMemoryPlacement::new())).run(async {
        let _ = stop_rx.await;
    }));
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert!(!dir.path().join(ENDPOINT).exists(), "no socket before a kubelet is there");
    let kubelet = start_kubelet(dir.path(), registered_tx);
    tokio::time::timeout(WAIT, registered.recv()).await.expect("registration in time");
    let _ = stop.send(());
    tokio::time::timeout(WAIT, plugin).await.expect("stops").expect("no panic").expect("ok");
    kubelet.abort();
}

#[tokio::test]
async fn profiler_health_reaches_the_kubelet() {
    use grus_agent::backend::sim::SimBackend;
    use grus_agent::clock::ManualClock;
    use grus_agent::device_plugin::plugin_gpus_feed;
    use grus_agent::profiler::spawn_sampler;
    use grus_protocol::wire::{GpuInfo, NodeInfo};

    let node = NodeInfo {
        name: "gpu-node-1".into(),
        labels: Default::default(),
        rack: None,
        pool: None,
        cpu_milli: 32000,
        memory_mib: 262144,
        healthy: true,
        gpus: (0..2)
            .map(|index| GpuInfo {
                index,
                uuid: Some(format!("GPU-sim-{index}")),
                model: "H100-80GB".into(),
                memory_mib: 81920,
                numa: 0,
                nvlink_group: 0,
                healthy: true,
                mig: false,
            })
            .collect(),
    };
    let sim = SimBackend::new(vec![node], None, None, Arc::new(ManualClock::at(0))).expect("sim").control();
    let samples = spawn_sampler(Arc::new(sim.clone()), Duration::from_millis(10));
    let feed = plugin_gpus_feed(samples, "gpu-node-1".into());

    let dir = tempfile::tempdir().expect("temp dir");
    let (registered_tx, mut registered) = mpsc::unbounded_channel();
    let kubelet = start_kubelet(dir.path(), registered_tx);
    let config = DevicePluginConfig {
        dir: dir.path().to_path_buf(),
        endpoint: ENDPOINT.to_string(),
        limiter: None,
        poll: Duration::from_millis(20),
    };
    let (stop, stop_rx) = oneshot::channel::<()>();
    let plugin = tokio::spawn(GpuSharePlugin::new(config, feed, Arc::new(InMemoryPlacement::new())).run(async {
        let _ = stop_rx.await;
    }));
    tokio::time::timeout(WAIT, registered.recv()).await.expect("registration in time");
    let mut client = DevicePluginClient::new(connect_unix(&dir.path().join(ENDPOINT)).await.expect("dial"));
    let mut stream = client.list_and_watch(Empty {}).await.expect("list and watch").into_inner();
    // The first list may come before the first sample (no GPUs yet): wait for both GPUs.
    let mut list = next_list(&mut stream).await;
    while list.devices.len() < 200 {
        list = next_list(&mut stream).await;
    }
    assert!(list.devices.iter().all(|d| d.health == HEALTHY));

    assert!(sim.set_gpu_health("gpu-node-1", 0, false).expect("journal"));
    let list = next_list(&mut stream).await;
    let unhealthy: Vec<_> = list.devices.iter().filter(|d| d.health == UNHEALTHY).collect();
    assert_eq!(unhealthy.len(), 100);
    assert!(unhealthy.iter().all(|d| ShareId::parse(&d.id).is_some_and(|s| s.is_on(0, Some("GPU-sim-0")))));

    let _ = stop.send(());
    tokio::time::timeout(WAIT, plugin).await.expect("stops").expect("no panic").expect("ok");
    kubelet.abort();
}

/// A GPU in MIG mode with `instances` as (profile, first slice).
fn mig_gpu(index: u32, instances: &[(&str, u8)]) -> PluginGpu {
    let mig = instances
        .iter()
        .map(|&(profile, start)| PluginMig {
            profile: profile.into(),
            start,
            uuid: Some(format!("MIG-{index}-{start}")),
        })
        .collect();
    PluginGpu { mig: Some(mig), ..gpu(index, GPU_B, 81920, true) }
}

#[tokio::test]
async fn mig_instances_are_advertised_per_profile_as_the_mixed_strategy_does() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (registered_tx, mut registered) = mpsc::unbounded_channel();
    let kubelet = start_kubelet(dir.path(), registered_tx);
    let (gpus, gpus_rx) =
        watch::channel(vec![gpu(0, GPU_A, 16384, true), mig_gpu(1, &[("1g.10gb", 0), ("1g.10gb", 1), ("3g.40gb", 4)])]);
    let placement = Arc::new(InMemoryPlacement::new());
    let config = DevicePluginConfig {
        dir: dir.path().to_path_buf(),
        endpoint: ENDPOINT.to_string(),
        limiter: None,
        poll: Duration::from_millis(20),
    };
    let (stop, stop_rx) = oneshot::channel::<()>();
    let plugins = tokio::spawn(run_node_plugins(config, gpus_rx, placement.clone(), async move {
        let _ = stop_rx.await;
    }));
    let mut names = Vec::new();
    for _ in 0..3 {
        let reg = tokio::time::timeout(WAIT, registered.recv()).await.expect("registration").expect("kubelet");
        names.push((reg.resource_name, reg.endpoint));
    }
    names.sort();
    assert_eq!(
        names,
        [
            (RESOURCE_NAME.to_string(), ENDPOINT.to_string()),
            ("nvidia.com/mig-1g.10gb".to_string(), "grus-mig-1g.10gb.sock".to_string()),
            ("nvidia.com/mig-3g.40gb".to_string(), "grus-mig-3g.40gb.sock".to_string()),
        ]
    );
    // The shares' plugin leaves the MIG-mode GPU out; the 1g plugin lists its two instances.
    let dial = |endpoint: &str| {
        let path = dir.path().join(endpoint);
        async move { connect_unix(&path).await }
    };
    let mut shares = DevicePluginClient::new(dial(ENDPOINT).await.expect("dial"));
    let list = next_list(&mut shares.list_and_watch(Empty {}).await.expect("list").into_inner()).await;
    assert!(list.devices.iter().all(|d| ShareId::parse(&d.id).is_some_and(|s| s.index == 0)));
    let mut small = DevicePluginClient::new(dial("grus-mig-1g.10gb.sock").await.expect("dial"));
    let mut stream = small.list_and_watch(Empty {}).await.expect("list").into_inner();
    let list = next_list(&mut stream).await;
    assert_eq!(all_ids(&list), ["mig1_0_MIG-1-0", "mig1_1_MIG-1-1"]);
    // The agent placed a pod on the instance at slice 1: preferred and allocated.
    placement.push(Assignment {
        namespace: "ml".into(),
        pod: "serve-0".into(),
        devices: vec![DeviceRef { index: 1, milli: 142, mig_start: Some(1) }],
        memory_mib: None,
        mig_profile: Some("1g.10gb".into()),
    });
    assert_eq!(preferred(&mut small, all_ids(&list), 1).await, ["mig1_1_MIG-1-1"]);
    let allocated = small
        .allocate(AllocateRequest {
            container_requests: vec![ContainerAllocateRequest { devices_ids: vec!["mig1_1_MIG-1-1".into()] }],
        })
        .await
        .expect("allocate")
        .into_inner();
    let env = &allocated.container_responses[0].envs;
    assert_eq!(env["NVIDIA_VISIBLE_DEVICES"], "MIG-1-1");
    assert!(!env.contains_key("CUDA_DEVICE_SM_LIMIT"), "an instance is isolated by the hardware");
    assert!(placement.pending().is_empty(), "allocation consumes the placement");
    let refused = small
        .allocate(AllocateRequest {
            container_requests: vec![ContainerAllocateRequest { devices_ids: vec!["mig1_4_MIG-1-4".into()] }],
        })
        .await;
    assert!(refused.is_err(), "an id that is not a 1g instance here");
    // The GPU is re-partitioned: the 3g instance is gone, its plugin stops and removes its socket.
    gpus.send_replace(vec![gpu(0, GPU_A, 16384, true), mig_gpu(1, &[("1g.10gb", 0), ("1g.10gb", 1)])]);
    let gone = dir.path().join("grus-mig-3g.40gb.sock");
    let deadline = tokio::time::Instant::now() + WAIT;
    while gone.exists() && tokio::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(!gone.exists(), "the 3g plugin stopped");
    let _ = stop.send(());
    let result = tokio::time::timeout(WAIT, plugins).await.expect("plugins stop").expect("no panic");
    assert!(result.is_ok(), "{result:?}");
    kubelet.abort();
}
