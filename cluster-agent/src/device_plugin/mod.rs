//! The kubelet device plugin for `grus.io/gpu-milli`: GPU shares as countable devices.
//!
//! Each real GPU is advertised as 100 synthetic ids of 10 milli ([`ids`]); the kubelet counts
//! them, and on Allocate the plugin turns the ids back into the real GPU and the share's limits
//! that the agent placed ([`placement`]), passed to the container as the env contract of the
//! cuda-limiter (see `DEVICE_PLUGIN.md`). Health comes from the profiler through a watch
//! channel of [`PluginGpu`]s; a change re-sends the list on every open ListAndWatch stream.
//!
//! GPUs in MIG mode serve no shares; their instances are advertised as NVIDIA's device plugin
//! does with the mixed strategy, one resource per profile (`nvidia.com/mig-1g.10gb`), by one
//! plugin per profile ([`run_node_plugins`] keeps them in step with the profiler's MIG
//! readings); Allocate passes the instance's MIG UUID in `NVIDIA_VISIBLE_DEVICES`.
//!
//! [`GpuSharePlugin::run`] serves the DevicePlugin service on a Unix socket in the kubelet's
//! device-plugin dir, registers with `kubelet.sock`, and starts over (new socket, new
//! registration) when the kubelet restarts: a restarted kubelet re-creates `kubelet.sock` and
//! deletes the plugin sockets, so both are watched.

pub mod api {
    //! Generated from `proto/deviceplugin/v1beta1/api.proto`.
    #![allow(clippy::all, clippy::pedantic, missing_docs)]
    tonic::include_proto!("v1beta1");
}
mod health;
pub mod ids;
pub mod kube;
pub mod placement;
mod served;
mod service;

use std::future::Future;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use hyper_util::rt::TokioIo;
use tokio::net::{UnixListener, UnixStream};
use tokio::sync::watch;
use tokio_stream::wrappers::UnixListenerStream;
use tonic::transport::{Channel, Endpoint, Server};

pub use health::{plugin_gpus, plugin_gpus_feed};
pub use ids::{units_for_milli, ShareId, IDS_PER_GPU, MILLI_PER_ID};
pub use placement::{
    Assignment, InMemoryPlacement, PlacementSource, ANNOTATION_DEVICES, ANNOTATION_EPOCH, ANNOTATION_GPU_MEMORY_MIB,
    ANNOTATION_JOB, ANNOTATION_MIG_PROFILE,
};
pub use served::Served;
pub use service::{
    container_env, device_list, limiter_region, mig_container_env, mig_device_list, preferred_ids, preferred_mig_ids,
    LimiterLibrary, PluginGpu, PluginMig, HEALTHY, UNHEALTHY,
};

use api::device_plugin_server::DevicePluginServer;
use api::registration_client::RegistrationClient;
use api::RegisterRequest;
use service::PluginService;

/// The extended resource the plugin serves.
pub const RESOURCE_NAME: &str = "grus.io/gpu-milli";
/// The device plugin API version spoken.
pub const API_VERSION: &str = "v1beta1";
/// The kubelet's registration socket, inside the device-plugin dir.
pub const KUBELET_SOCKET: &str = "kubelet.sock";
/// Where the kubelet looks for device plugins.
pub const DEFAULT_PLUGIN_DIR: &str = "/var/lib/kubelet/device-plugins";
/// Our socket's file name inside the device-plugin dir.
pub const DEFAULT_ENDPOINT: &str = "grus-gpu-milli.sock";

/// How the plugin is set up.
#[derive(Clone, Debug)]
pub struct DevicePluginConfig {
    /// The kubelet's device-plugin dir (holds `kubelet.sock`).
    pub dir: PathBuf,
    /// File name of our socket in `dir`.
    pub endpoint: String,
    /// Mounted and preloaded into every container that gets a share, when set.
    pub limiter: Option<LimiterLibrary>,
    /// How often the sockets are checked for a kubelet restart; also the registration retry delay.
    pub poll: Duration,
}

impl Default for DevicePluginConfig {
    fn default() -> Self {
        DevicePluginConfig {
            dir: PathBuf::from(DEFAULT_PLUGIN_DIR),
            endpoint: DEFAULT_ENDPOINT.to_string(),
            limiter: None,
            poll: Duration::from_secs(1),
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum DevicePluginError {
    #[error("device plugin socket {path}: {source}")]
    Socket { path: PathBuf, source: std::io::Error },
    #[error("connect to the kubelet at {path}: {source}")]
    Connect { path: PathBuf, source: tonic::transport::Error },
    #[error("the kubelet refused the registration: {0}")]
    Refused(String),
    #[error("the kubelet did not answer the registration in time")]
    Timeout,
}

/// The device plugin: serve, register, re-register after kubelet restarts.
pub struct GpuSharePlugin {
    config: DevicePluginConfig,
    served: Served,
    gpus: watch::Receiver<Vec<PluginGpu>>,
    placement: Arc<dyn PlacementSource>,
}

impl GpuSharePlugin {
    /// The plugin for GPU shares. `gpus` is the node's GPU list with health (see
    /// [`plugin_gpus_feed`]); every change is pushed to the kubelet.
    pub fn new(
        config: DevicePluginConfig,
        gpus: watch::Receiver<Vec<PluginGpu>>,
        placement: Arc<dyn PlacementSource>,
    ) -> Self {
        GpuSharePlugin { config, served: Served::Shares, gpus, placement }
    }

    /// The plugin for the MIG instances of `profile` (socket `grus-mig-<profile>.sock` beside
    /// the shares' one).
    pub fn for_mig(
        config: DevicePluginConfig,
        profile: &str,
        gpus: watch::Receiver<Vec<PluginGpu>>,
        placement: Arc<dyn PlacementSource>,
    ) -> Self {
        let served = Served::Mig(profile.to_string());
        let config = DevicePluginConfig { endpoint: served.endpoint(&config.endpoint), ..config };
        GpuSharePlugin { config, served, gpus, placement }
    }

    fn socket_path(&self) -> PathBuf {
        self.config.dir.join(&self.config.endpoint)
    }

    fn kubelet_path(&self) -> PathBuf {
        self.config.dir.join(KUBELET_SOCKET)
    }

    /// Runs until `shutdown` completes. Fails only when our socket cannot be created (a setup
    /// error: wrong dir or permissions); registration failures are retried every `poll`.
    pub async fn run(self, shutdown: impl Future<Output = ()>) -> Result<(), DevicePluginError> {
        tokio::pin!(shutdown);
        // Failed registrations in a row: warn on the first and then once a minute or so, not
        // every poll while a kubelet is down.
        let mut failures: u32 = 0;
        loop {
            // Wait for a kubelet to register with.
            let kubelet = loop {
                if let Some(id) = file_identity(&self.kubelet_path()) {
                    break id;
                }
                tokio::select! {
                    _ = &mut shutdown => return Ok(()),
                    _ = tokio::time::sleep(self.config.poll) => {}
                }
            };
            let (stop_tx, stop_rx) = watch::channel(false);
            let server = self.serve(stop_rx)?;
            let socket = file_identity(&self.socket_path());
            let registered = tokio::select! {
                _ = &mut shutdown => None,
                result = self.register() => Some(result),
            };
            match registered {
                None => {
                    self.stop(stop_tx, server).await;
                    return Ok(());
                }
                Some(Err(error)) => {
                    if failures == 0 {
                        tracing::warn!(%error, "device plugin registration failed; retrying");
                    }
                    // Wraps every 60 failures, so the warning comes back now and then.
                    failures = (failures + 1) % 60;
                    self.stop(stop_tx, server).await;
                    tokio::select! {
                        _ = &mut shutdown => return Ok(()),
                        _ = tokio::time::sleep(self.config.poll) => continue,
                    }
                }
                Some(Ok(())) => {
                    failures = 0;
                    tracing::info!(resource = %self.served.resource_name(), socket = %self.socket_path().display(), "registered with the kubelet");
                }
            }
            // Serve until the kubelet restarts (kubelet.sock re-created, our socket removed),
            // the server dies, or we are told to stop.
            loop {
                tokio::select! {
                    _ = &mut shutdown => {
                        self.stop(stop_tx, server).await;
                        return Ok(());
                    }
                    _ = tokio::time::sleep(self.config.poll) => {}
                }
                let kubelet_now = file_identity(&self.kubelet_path());
                let socket_now = file_identity(&self.socket_path());
                if kubelet_now != Some(kubelet) || socket_now != socket || server.is_finished() {
                    tracing::info!("kubelet restarted or our socket went away; registering again");
                    break;
                }
            }
            self.stop(stop_tx, server).await;
        }
    }

    /// Binds our socket (replacing a stale one) and serves the DevicePlugin service on it.
    fn serve(&self, stop: watch::Receiver<bool>) -> Result<tokio::task::JoinHandle<()>, DevicePluginError> {
        let path = self.socket_path();
        match std::fs::remove_file(&path) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(source) => return Err(DevicePluginError::Socket { path, source }),
        }
        let listener = UnixListener::bind(&path).map_err(|source| DevicePluginError::Socket { path, source })?;
        let service = PluginService {
            served: self.served.clone(),
            gpus: self.gpus.clone(),
            placement: Arc::clone(&self.placement),
            limiter: self.config.limiter.clone(),
            stop: stop.clone(),
        };
        let mut signal = stop;
        Ok(tokio::spawn(async move {
            let result = Server::builder()
                .add_service(DevicePluginServer::new(service))
                .serve_with_incoming_shutdown(UnixListenerStream::new(listener), async move {
                    let _ = signal.wait_for(|stop| *stop).await;
                })
                .await;
            if let Err(error) = result {
                tracing::warn!(%error, "device plugin server stopped");
            }
        }))
    }

    async fn register(&self) -> Result<(), DevicePluginError> {
        let path = self.kubelet_path();
        let channel = connect_unix(&path).await.map_err(|source| DevicePluginError::Connect { path, source })?;
        let request = RegisterRequest {
            version: API_VERSION.to_string(),
            endpoint: self.config.endpoint.clone(),
            resource_name: self.served.resource_name(),
            options: Some(service::options()),
        };
        let mut client = RegistrationClient::new(channel);
        match tokio::time::timeout(Duration::from_secs(10), client.register(request)).await {
            Err(_) => Err(DevicePluginError::Timeout),
            Ok(Err(status)) => Err(DevicePluginError::Refused(status.message().to_string())),
            Ok(Ok(_)) => Ok(()),
        }
    }

    async fn stop(&self, stop: watch::Sender<bool>, server: tokio::task::JoinHandle<()>) {
        let _ = stop.send(true);
        // Open kubelet connections get a grace period; past it the server task is dropped.
        let abort = server.abort_handle();
        if tokio::time::timeout(Duration::from_secs(5), server).await.is_err() {
            abort.abort();
        }
        // Leave no socket behind for the kubelet to dial after we stopped serving.
        let _ = std::fs::remove_file(self.socket_path());
    }
}

/// The node's device plugins: the shares' one, and one per MIG profile the node's instances
/// have, started when a profile appears in `gpus` and stopped when it is gone (a GPU
/// re-partitioned), until `shutdown` completes.
pub async fn run_node_plugins(
    config: DevicePluginConfig,
    mut gpus: watch::Receiver<Vec<PluginGpu>>,
    placement: Arc<dyn PlacementSource>,
    shutdown: impl Future<Output = ()>,
) -> Result<(), DevicePluginError> {
    tokio::pin!(shutdown);
    type Running = (watch::Sender<bool>, tokio::task::JoinHandle<Result<(), DevicePluginError>>);
    let start = |plugin: GpuSharePlugin| -> Running {
        let (stop, mut stopped) = watch::channel(false);
        let task = tokio::spawn(plugin.run(async move {
            let _ = stopped.wait_for(|s| *s).await;
        }));
        (stop, task)
    };
    let mut shares = start(GpuSharePlugin::new(config.clone(), gpus.clone(), Arc::clone(&placement)));
    let mut mig: std::collections::BTreeMap<String, Running> = std::collections::BTreeMap::new();
    let mut feed_open = true;
    loop {
        let profiles: std::collections::BTreeSet<String> =
            gpus.borrow_and_update().iter().flat_map(|g| g.mig.iter().flatten().map(|m| m.profile.clone())).collect();
        for gone in mig.keys().filter(|p| !profiles.contains(*p)).cloned().collect::<Vec<_>>() {
            if let Some((stop, task)) = mig.remove(&gone) {
                let _ = stop.send(true);
                let _ = task.await;
                tracing::info!(profile = %gone, "no MIG instance of this profile left: its plugin stopped");
            }
        }
        for profile in profiles {
            if let std::collections::btree_map::Entry::Vacant(slot) = mig.entry(profile) {
                let plugin = GpuSharePlugin::for_mig(config.clone(), slot.key(), gpus.clone(), Arc::clone(&placement));
                slot.insert(start(plugin));
            }
        }
        tokio::select! {
            _ = &mut shutdown => break,
            changed = gpus.changed(), if feed_open => feed_open = changed.is_ok(),
            result = &mut shares.1 => {
                // A setup error (the socket cannot be made): the node has no plugin at all.
                for (stop, _) in mig.values() {
                    let _ = stop.send(true);
                }
                return result.unwrap_or(Ok(()));
            }
        }
    }
    let _ = shares.0.send(true);
    for (stop, _) in mig.values() {
        let _ = stop.send(true);
    }
    for (_, task) in mig.into_values() {
        let _ = task.await;
    }
    shares.1.await.unwrap_or(Ok(()))
}

/// Identity of a file: changes when it is deleted and created again, even at the same inode.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct FileIdentity {
    dev: u64,
    ino: u64,
    ctime: i64,
    ctime_nsec: i64,
}

fn file_identity(path: &Path) -> Option<FileIdentity> {
    let meta = std::fs::symlink_metadata(path).ok()?;
    Some(FileIdentity { dev: meta.dev(), ino: meta.ino(), ctime: meta.ctime(), ctime_nsec: meta.ctime_nsec() })
}

/// A gRPC channel over a Unix socket (the URI is a placeholder tonic requires; never dialled).
pub async fn connect_unix(path: &Path) -> Result<Channel, tonic::transport::Error> {
    let path = path.to_path_buf();
    Endpoint::from_static("http://[::]:50051")
        .connect_with_connector(tower::service_fn(move |_| {
            let path = path.clone();
            async move { Ok::<_, std::io::Error>(TokioIo::new(UnixStream::connect(path).await?)) }
        }))
        .await
}
