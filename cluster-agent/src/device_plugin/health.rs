//! The device plugin's GPU list with health, followed from the profiler's samples.

use std::sync::Arc;

use tokio::sync::watch;

use super::{PluginGpu, PluginMig};
use crate::profiler::Sample;

/// The device plugin's view of `node`'s GPUs in a sample.
pub fn plugin_gpus(sample: &Sample, node: &str) -> Vec<PluginGpu> {
    let mut gpus: Vec<PluginGpu> = sample
        .gpus
        .iter()
        .filter(|g| g.node == node)
        .map(|g| PluginGpu {
            index: g.index,
            uuid: g.uuid.clone(),
            memory_mib: g.memory_total_mib,
            numa: g.numa,
            healthy: g.healthy,
            mig: g.mig.as_ref().map(|instances| {
                instances
                    .iter()
                    .map(|m| PluginMig { profile: m.profile.clone(), start: m.start, uuid: m.uuid.clone() })
                    .collect()
            }),
        })
        .collect();
    gpus.sort_by_key(|g| g.index);
    gpus
}

/// Follows `samples` and publishes `node`'s GPU list for the device plugin, only when it changes
/// (utilization moves every sample; health and inventory rarely), so the kubelet is not sent
/// the same list every second.
pub fn plugin_gpus_feed(mut samples: watch::Receiver<Arc<Sample>>, node: String) -> watch::Receiver<Vec<PluginGpu>> {
    let (tx, rx) = watch::channel(plugin_gpus(&samples.borrow_and_update(), &node));
    tokio::spawn(async move {
        loop {
            tokio::select! {
                changed = samples.changed() => if changed.is_err() { return },
                _ = tx.closed() => return,
            }
            let gpus = plugin_gpus(&samples.borrow_and_update(), &node);
            tx.send_if_modified(|current| {
                let changed = *current != gpus;
                if changed {
                    *current = gpus;
                }
                changed
            });
        }
    });
    rx
}
