//! The agent's integration tests, one binary: the real `grus-agent` against the real Redis
//! (`agent_redis`), the device plugin against a test kubelet over Unix sockets
//! (`device_plugin`), the kube backend against scripted API exchanges (`kube_backend`, with
//! `kube_fixtures`; recorded objects in `fixtures/kube/`), and the profiler (`profiler`).

mod agent_redis;
mod device_plugin;
mod kube_backend;
mod kube_fixtures;
mod profiler;
mod support;
