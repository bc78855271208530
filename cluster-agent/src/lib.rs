//! grus-agent: the per-cluster agent.
//!
//! Will own the command consumer (Redis stream `grus:{cluster}:cmd`), the local scheduling
//! loop over grus-scheduler, the `sim` and `kube` backends, the kubelet device plugin for
//! `grus.io/gpu-milli` shares and the NVML profiler. Not built yet: see the cluster-agent issue.
