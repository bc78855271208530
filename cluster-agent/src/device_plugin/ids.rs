//! Synthetic device ids: one id per share unit of a real GPU.
//!
//! The kubelet only counts whole devices, so a fraction of a GPU has to be spelled as a number
//! of devices. Each GPU is advertised as [`IDS_PER_GPU`] ids of [`MILLI_PER_ID`] milli each. A
//! pod asks for `grus.io/gpu-milli: <units>` (units of 10 milli), and the kubelet's own count
//! then refuses a pod that would push a node past its total share.
//!
//! Why 10 milli: 1 % of a GPU is the finest step the limiter enforces (`CUDA_DEVICE_SM_LIMIT` is
//! an integer percent), and 100 ids per GPU keep what the kubelet checkpoints and what
//! ListAndWatch re-sends on every health change small (800 ids for an 8-GPU node, rather than
//! 8000 at 1 milli per id).
//!
//! Id format: `g<index>_<uuid>_<share>`, e.g. `g3_GPU-fef8089b-4820-abfc-e83e-94318197576e_07`
//! (46 characters; the kubelet allows 63), or `g3_07` when the GPU has no known uuid. The index
//! makes the ids readable in `kubectl describe node` and lets Allocate find the device without
//! state; the uuid changes the ids when a card is swapped at the same index, so ids the kubelet
//! checkpointed for the old card never silently name the new one.

use std::fmt;

/// Milli of a GPU per advertised id.
pub const MILLI_PER_ID: u32 = 10;
/// Ids advertised per GPU.
pub const IDS_PER_GPU: u32 = 1000 / MILLI_PER_ID;

/// How many ids (the `grus.io/gpu-milli` request) a share of `milli` takes.
///
/// Rounds down, so shares that sum to at most 1000 milli on a GPU never need more than
/// [`IDS_PER_GPU`] ids between them; a share under one unit still takes one id. A GPU split into
/// more than 100 shares would therefore run out of ids before it runs out of milli.
pub fn units_for_milli(milli: u32) -> u32 {
    (milli / MILLI_PER_ID).max(1)
}

/// One parsed device id.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ShareId {
    pub index: u32,
    pub uuid: Option<String>,
    /// 0..[`IDS_PER_GPU`].
    pub share: u32,
}

impl ShareId {
    /// Parses an id produced by [`ShareId`]'s `Display`; `None` for anything else (ids come from
    /// the kubelet, which may hold ids from an older plugin version).
    pub fn parse(id: &str) -> Option<ShareId> {
        let rest = id.strip_prefix('g')?;
        let (index, rest) = rest.split_once('_')?;
        let index = index.parse().ok().filter(|_| index.bytes().all(|b| b.is_ascii_digit()))?;
        let (uuid, share) = match rest.rsplit_once('_') {
            Some((uuid, share)) if !uuid.is_empty() => (Some(uuid.to_string()), share),
            Some(_) => return None,
            None => (None, rest),
        };
        if share.len() != 2 || !share.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        let share: u32 = share.parse().ok()?;
        (share < IDS_PER_GPU).then_some(ShareId { index, uuid, share })
    }

    /// Whether this id belongs to the GPU with this index and uuid.
    pub fn is_on(&self, index: u32, uuid: Option<&str>) -> bool {
        self.index == index && self.uuid.as_deref() == uuid
    }
}

impl fmt::Display for ShareId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.uuid {
            Some(uuid) => write!(f, "g{}_{}_{:02}", self.index, uuid, self.share),
            None => write!(f, "g{}_{:02}", self.index, self.share),
        }
    }
}

/// Every id of one GPU, in share order.
pub fn ids_for_gpu(index: u32, uuid: Option<&str>) -> impl Iterator<Item = String> + '_ {
    (0..IDS_PER_GPU).map(move |share| ShareId { index, uuid: uuid.map(str::to_string), share }.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    const UUID: &str = "GPU-fef8089b-4820-abfc-e83e-94318197576e";

    #[test]
    fn ids_round_trip_and_fit_the_kubelet_limit() {
        let ids: Vec<String> = ids_for_gpu(3, Some(UUID)).collect();
        assert_eq!(ids.len(), 100);
        assert_eq!(ids[7], format!("g3_{UUID}_07"));
        assert!(ids.iter().all(|id| id.len() <= 63));
        let parsed = ShareId::parse(&ids[99]).unwrap();
        assert_eq!(parsed, ShareId { index: 3, uuid: Some(UUID.to_string()), share: 99 });
        assert!(parsed.is_on(3, Some(UUID)));
        assert!(!parsed.is_on(3, None));
        assert_eq!(ShareId::parse("g12_05"), Some(ShareId { index: 12, uuid: None, share: 5 }));
    }

    #[test]
    fn foreign_ids_are_rejected() {
        for id in ["", "g", "g_05", "gx_05", "g1_5", "g1_100", "g1__05", "nvidia0", "g+1_05", "g1_GPU-x_7a"] {
            assert_eq!(ShareId::parse(id), None, "{id}");
        }
    }

    #[test]
    fn units_round_down_with_a_floor_of_one() {
        assert_eq!(units_for_milli(1000), 100);
        assert_eq!(units_for_milli(333), 33);
        assert_eq!(units_for_milli(250), 25);
        assert_eq!(units_for_milli(5), 1);
        assert_eq!(units_for_milli(0), 1);
    }
}
