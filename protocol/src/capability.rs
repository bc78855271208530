//! The capabilities an agent names in its `Hello`: what the control plane may ask of it. An
//! agent older than a command does not name the capability that command needs; the API
//! refuses the operation on its cluster (CONFLICT, naming the agent's version) and never
//! sends it the command.

/// Places replicas on a part of a GPU (`gpu_milli` below 1000).
pub const GPU_MILLI: &str = "gpu-milli";
/// Places a job's replicas all or none.
pub const GANG: &str = "gang";
/// Grows and shrinks elastic jobs between their bounds.
pub const ELASTIC: &str = "elastic";
/// Takes `CordonNodes`: keeps new replicas off the nodes an operator cordoned.
pub const CORDON_NODES: &str = "cordon-nodes";

/// What an agent of this version names, after its backend's name.
pub const ALL: [&str; 4] = [GPU_MILLI, GANG, ELASTIC, CORDON_NODES];
