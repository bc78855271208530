//! What one plugin socket serves: GPU shares (`grus.io/gpu-milli`), or the MIG instances of one
//! profile (`nvidia.com/mig-<profile>`, as NVIDIA's device plugin names them with the mixed
//! strategy). The kubelet takes one resource per registration, so a node with MIG-mode GPUs
//! runs one plugin per profile its instances have, beside the shares' plugin.

use crate::backend::kube::labels::resource;

#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Served {
    Shares,
    Mig(String),
}

impl Served {
    /// The extended resource name registered with the kubelet.
    pub fn resource_name(&self) -> String {
        match self {
            Served::Shares => super::RESOURCE_NAME.to_string(),
            Served::Mig(profile) => resource::mig(profile),
        }
    }

    /// The plugin's socket file name: the shares' configured one, or one per profile beside it.
    pub fn endpoint(&self, shares_endpoint: &str) -> String {
        match self {
            Served::Shares => shares_endpoint.to_string(),
            Served::Mig(profile) => format!("grus-mig-{profile}.sock"),
        }
    }
}
