//! grus-scheduler: the pure placement engine of Grus, used by the allocator in grus-api (which
//! cluster) and by grus-agent (which nodes and GPUs).
//!
//! No I/O, no async, no clock: every function is deterministic given its inputs and a seed.
//! See `scheduler/README.md` for the scheduling goals and ARCHITECTURE.md for the map.

pub mod cluster;
pub mod cycle;
pub mod demand;
pub mod explain;
pub mod fairshare;
pub mod job;
pub mod mig;
pub mod place;
pub mod pool;
pub mod predict;
pub mod preempt;
pub mod queue;
pub mod replay;
pub mod resources;
pub mod rng;
pub mod score;
pub mod synth;
pub mod trace;
