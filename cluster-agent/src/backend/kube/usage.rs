//! Each running replica's CPU, memory, disk and network use on a Kubernetes cluster, read in
//! the background through the API server's node proxy: the kubelet's summary API
//! (`/stats/summary`: CPU, working set, network counters) and its cAdvisor endpoint
//! (`/metrics/cadvisor`: the only source of per-pod disk I/O counters).
//!
//! Counters become rates between two reads ([`RateMeter`]); the first read of a pod gives
//! rates of 0. A node that does not answer within [`NODE_TIMEOUT`] gives its replicas no
//! reading this round, not a stale one. Parsing and rates are pure; [`UsagePoller::poll`] is
//! the I/O, and [`spawn`] runs it whenever the backend hands it the current targets, so the
//! agent's loop never waits on a kubelet.

use std::collections::{BTreeMap, HashMap};
use std::time::Duration;

use futures::stream::{self, StreamExt};
use futures::AsyncReadExt;
use grus_protocol::wire::ReplicaUsage;
use kube::Client;
use serde::Deserialize;
use tokio::sync::watch;
use tokio::task::JoinHandle;
use tracing::debug;

use crate::backend::ReplicaKey;

/// How long one node's two reads may take.
pub const NODE_TIMEOUT: Duration = Duration::from_secs(5);
/// Nodes read at once.
const CONCURRENT_NODES: usize = 16;
/// The most bytes of a cAdvisor page kept (a busy node's page is a few MiB).
const MAX_CADVISOR_BYTES: u64 = 32 << 20;

/// A running replica whose use is read: its pod and the node it runs on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UsageTarget {
    pub key: ReplicaKey,
    pub node: String,
    pub namespace: String,
    pub pod: String,
}

/// A pod, by namespace and name.
type PodName = (String, String);

/// The part of the kubelet's summary (`stats/v1alpha1.Summary`) read here.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Summary {
    #[serde(default)]
    pub pods: Vec<PodStats>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PodStats {
    pub pod_ref: SummaryPodRef,
    #[serde(default)]
    pub cpu: Option<CpuStats>,
    #[serde(default)]
    pub memory: Option<MemoryStats>,
    #[serde(default)]
    pub network: Option<NetworkStats>,
}

#[derive(Debug, Deserialize)]
pub struct SummaryPodRef {
    pub name: String,
    pub namespace: String,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CpuStats {
    #[serde(default)]
    pub usage_nano_cores: Option<u64>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MemoryStats {
    #[serde(default)]
    pub working_set_bytes: Option<u64>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NetworkStats {
    #[serde(default)]
    pub rx_bytes: Option<u64>,
    #[serde(default)]
    pub tx_bytes: Option<u64>,
}

/// Cumulative counters of one pod at one read.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counters {
    pub disk_read: u64,
    pub disk_write: u64,
    pub net_rx: u64,
    pub net_tx: u64,
}

/// Per-pod disk counters from a cAdvisor page: `container_fs_{reads,writes}_bytes_total`
/// summed over the pod's containers and devices (the pod-level and pause-container series
/// are left out, as they would count the same bytes twice).
pub fn disk_counters(cadvisor: &str) -> HashMap<PodName, (u64, u64)> {
    let mut out: HashMap<PodName, (u64, u64)> = HashMap::new();
    for line in cadvisor.lines() {
        let (is_read, rest) = if let Some(rest) = line.strip_prefix("container_fs_reads_bytes_total{") {
            (true, rest)
        } else if let Some(rest) = line.strip_prefix("container_fs_writes_bytes_total{") {
            (false, rest)
        } else {
            continue;
        };
        let Some((labels, value)) = split_labels(rest) else { continue };
        let Some(value) = value.split_whitespace().next().and_then(|v| v.parse::<f64>().ok()) else { continue };
        let label = |name: &str| labels.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str());
        if matches!(label("container"), None | Some("") | Some("POD")) {
            continue;
        }
        let (Some(namespace), Some(pod)) = (label("namespace"), label("pod")) else { continue };
        let entry = out.entry((namespace.to_owned(), pod.to_owned())).or_default();
        let bytes = if value.is_finite() && value > 0.0 { value as u64 } else { 0 };
        if is_read {
            entry.0 = entry.0.saturating_add(bytes);
        } else {
            entry.1 = entry.1.saturating_add(bytes);
        }
    }
    out
}

/// The labels of one exposition line (after its `{`) and the text after the closing `}`.
fn split_labels(rest: &str) -> Option<(Vec<(String, String)>, &str)> {
    let mut labels = Vec::new();
    let mut chars = rest.char_indices().peekable();
    loop {
        while chars.next_if(|(_, c)| *c == ',' || c.is_whitespace()).is_some() {}
        let (start, c) = chars.next()?;
        if c == '}' {
            return Some((labels, &rest[start + 1..]));
        }
        let mut name = String::from(c);
        while let Some((_, c)) = chars.next_if(|(_, c)| *c != '=') {
            name.push(c);
        }
        chars.next()?; // '='
        if chars.next()?.1 != '"' {
            return None;
        }
        let mut value = String::new();
        loop {
            match chars.next()?.1 {
                '"' => break,
                '\\' => match chars.next()?.1 {
                    'n' => value.push('\n'),
                    other => value.push(other),
                },
                other => value.push(other),
            }
        }
        labels.push((name.trim().to_owned(), value));
    }
}

/// Turns cumulative counters into per-second rates between consecutive reads of a pod.
#[derive(Debug, Default)]
pub struct RateMeter {
    last: HashMap<PodName, (i64, Counters)>,
}

impl RateMeter {
    /// The rates of `pod` since its previous read (0 on its first read, and for a counter
    /// that went back, as after a container restart), remembering this read.
    pub fn rates(&mut self, pod: &PodName, at_ms: i64, now: Counters) -> Counters {
        let rates = match self.last.get(pod) {
            Some((then, before)) if at_ms > *then => {
                let seconds = (at_ms - then) as f64 / 1000.0;
                let per_s =
                    |new: u64, old: u64| new.checked_sub(old).map_or(0, |d| (d as f64 / seconds).round() as u64);
                Counters {
                    disk_read: per_s(now.disk_read, before.disk_read),
                    disk_write: per_s(now.disk_write, before.disk_write),
                    net_rx: per_s(now.net_rx, before.net_rx),
                    net_tx: per_s(now.net_tx, before.net_tx),
                }
            }
            _ => Counters::default(),
        };
        self.last.insert(pod.clone(), (at_ms, now));
        rates
    }

    /// Forgets pods that are no longer read.
    pub fn retain(&mut self, keep: impl Fn(&PodName) -> bool) {
        self.last.retain(|pod, _| keep(pod));
    }
}

/// What one node's kubelet said, as read.
#[derive(Debug, Default)]
pub struct NodeReadings {
    pub summary: Summary,
    pub disk: HashMap<PodName, (u64, u64)>,
}

/// The use of `targets` from their nodes' readings, rates through `meter`.
pub fn usage_of(
    targets: &[UsageTarget],
    readings: &BTreeMap<String, NodeReadings>,
    meter: &mut RateMeter,
    at_ms: i64,
) -> Vec<ReplicaUsage> {
    let mut out = Vec::new();
    for t in targets {
        let Some(node) = readings.get(&t.node) else { continue };
        let Some(stats) =
            node.summary.pods.iter().find(|p| p.pod_ref.namespace == t.namespace && p.pod_ref.name == t.pod)
        else {
            continue;
        };
        let name = (t.namespace.clone(), t.pod.clone());
        let (disk_read, disk_write) = node.disk.get(&name).copied().unwrap_or_default();
        let net = stats.network.as_ref();
        let counters = Counters {
            disk_read,
            disk_write,
            net_rx: net.and_then(|n| n.rx_bytes).unwrap_or(0),
            net_tx: net.and_then(|n| n.tx_bytes).unwrap_or(0),
        };
        let rates = meter.rates(&name, at_ms, counters);
        out.push(ReplicaUsage {
            job: t.key.job,
            task: t.key.task.clone(),
            replica: t.key.replica,
            cpu_milli: stats.cpu.as_ref().and_then(|c| c.usage_nano_cores).unwrap_or(0) / 1_000_000,
            memory_mib: stats.memory.as_ref().and_then(|m| m.working_set_bytes).unwrap_or(0) >> 20,
            disk_read_bps: rates.disk_read,
            disk_write_bps: rates.disk_write,
            net_rx_bps: rates.net_rx,
            net_tx_bps: rates.net_tx,
        });
    }
    meter.retain(|pod| targets.iter().any(|t| t.namespace == pod.0 && t.pod == pod.1));
    out
}

/// Reads the kubelets of the targets' nodes.
pub struct UsagePoller {
    client: Client,
    meter: RateMeter,
}

impl UsagePoller {
    pub fn new(client: Client) -> UsagePoller {
        UsagePoller { client, meter: RateMeter::default() }
    }

    /// One round: every target node's summary and cAdvisor page, then the targets' use.
    pub async fn poll(&mut self, targets: &[UsageTarget], at_ms: i64) -> Vec<ReplicaUsage> {
        let mut nodes: Vec<String> = targets.iter().map(|t| t.node.clone()).collect();
        nodes.sort_unstable();
        nodes.dedup();
        let readings: BTreeMap<String, NodeReadings> = stream::iter(nodes)
            .map(|node| {
                let client = self.client.clone();
                async move {
                    match tokio::time::timeout(NODE_TIMEOUT, read_node(&client, &node)).await {
                        Ok(Ok(r)) => Some((node, r)),
                        Ok(Err(e)) => {
                            debug!(node, error = %e, "no resource readings from the node's kubelet");
                            None
                        }
                        Err(_) => {
                            debug!(node, "the node's kubelet did not answer in time");
                            None
                        }
                    }
                }
            })
            .buffer_unordered(CONCURRENT_NODES)
            .filter_map(|r| async move { r })
            .collect()
            .await;
        usage_of(targets, &readings, &mut self.meter, at_ms)
    }
}

/// `node`'s summary and cAdvisor page through the API server's node proxy. The summary is
/// needed; a cAdvisor page that cannot be read only leaves disk I/O at 0.
async fn read_node(client: &Client, node: &str) -> Result<NodeReadings, kube::Error> {
    let get = |path: String| http::Request::get(path).body(Vec::new()).map_err(kube::Error::HttpError);
    let text = client.request_text(get(format!("/api/v1/nodes/{node}/proxy/stats/summary"))?).await?;
    let summary: Summary = serde_json::from_str(&text).map_err(kube::Error::SerdeError)?;
    let disk = match client.request_stream(get(format!("/api/v1/nodes/{node}/proxy/metrics/cadvisor"))?).await {
        Ok(body) => {
            let mut page = Vec::new();
            match body.take(MAX_CADVISOR_BYTES).read_to_end(&mut page).await {
                Ok(_) => disk_counters(&String::from_utf8_lossy(&page)),
                Err(e) => {
                    debug!(node, error = %e, "the cAdvisor page broke off");
                    HashMap::new()
                }
            }
        }
        Err(e) => {
            debug!(node, error = %e, "no disk counters from cAdvisor");
            HashMap::new()
        }
    };
    Ok(NodeReadings { summary, disk })
}

/// The backend's side of a background poller: hands it targets, reads its latest readings.
pub struct UsageFeed {
    targets: watch::Sender<Vec<UsageTarget>>,
    latest: watch::Receiver<Vec<ReplicaUsage>>,
}

impl UsageFeed {
    /// What the last round found; then `targets` are read in the next round.
    pub fn exchange(&mut self, targets: Vec<UsageTarget>) -> Vec<ReplicaUsage> {
        let found = self.latest.borrow().clone();
        self.targets.send_replace(targets);
        found
    }
}

/// Runs a poller that reads each time it is handed targets (one round at a time; targets
/// handed during a round are read in the next), publishing the latest use.
pub fn spawn(client: Client) -> (UsageFeed, JoinHandle<()>) {
    let (targets_tx, mut targets_rx) = watch::channel(Vec::<UsageTarget>::new());
    let (usage_tx, usage_rx) = watch::channel(Vec::new());
    let task = tokio::spawn(async move {
        let mut poller = UsagePoller::new(client);
        while targets_rx.changed().await.is_ok() {
            let targets = targets_rx.borrow_and_update().clone();
            let at_ms =
                std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_millis() as i64);
            let usage = poller.poll(&targets, at_ms).await;
            if usage_tx.send(usage).is_err() {
                break;
            }
        }
    });
    (UsageFeed { targets: targets_tx, latest: usage_rx }, task)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn disk_counters_sum_a_pods_containers_and_skip_pod_level_series() {
        let page = r#"# HELP container_fs_reads_bytes_total Cumulative count of bytes read
# TYPE container_fs_reads_bytes_total counter
container_fs_reads_bytes_total{container="main",device="/dev/sda",id="/a",image="x",name="b",namespace="grus-vision",pod="grus-7-main-0"} 1000 1700000000000
container_fs_reads_bytes_total{container="sidecar",device="/dev/sda",namespace="grus-vision",pod="grus-7-main-0"} 2.5e+03
container_fs_reads_bytes_total{container="",device="/dev/sda",namespace="grus-vision",pod="grus-7-main-0"} 99999
container_fs_reads_bytes_total{container="POD",device="/dev/sda",namespace="grus-vision",pod="grus-7-main-0"} 99999
container_fs_writes_bytes_total{container="main",device="/dev/sda",namespace="grus-vision",pod="grus-7-main-0",note="a \"quoted\", value}"} 400
container_fs_reads_total{container="main",namespace="grus-vision",pod="grus-7-main-0"} 77
container_fs_reads_bytes_total{container="main",namespace="other",pod="grus-7-main-0"} NaN
"#;
        let disk = disk_counters(page);
        assert_eq!(disk[&("grus-vision".to_owned(), "grus-7-main-0".to_owned())], (3500, 400));
        assert_eq!(disk[&("other".to_owned(), "grus-7-main-0".to_owned())], (0, 0), "NaN reads as nothing");
        assert_eq!(disk.len(), 2);
    }

    #[test]
    fn a_malformed_exposition_line_is_skipped() {
        assert!(disk_counters("container_fs_reads_bytes_total{container=\"main\",pod=\"x\n").is_empty());
        assert!(disk_counters("container_fs_reads_bytes_total{container=main} 5\n").is_empty());
    }

    #[test]
    fn rates_are_per_second_between_reads_and_zero_when_a_counter_goes_back() {
        let mut meter = RateMeter::default();
        let pod = ("ns".to_owned(), "p".to_owned());
        let c = |n: u64| Counters { disk_read: n, disk_write: n / 2, net_rx: n * 2, net_tx: 0 };
        assert_eq!(meter.rates(&pod, 1_000, c(1_000)), Counters::default(), "first read");
        assert_eq!(
            meter.rates(&pod, 3_000, c(5_000)),
            Counters { disk_read: 2_000, disk_write: 1_000, net_rx: 4_000, net_tx: 0 }
        );
        assert_eq!(meter.rates(&pod, 4_000, c(10)).disk_read, 0, "a restarted container's counter");
        assert_eq!(meter.rates(&pod, 4_000, c(5_000)), Counters::default(), "no time passed");
    }
}
