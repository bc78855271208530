//! grus-testkit: what the tests of Grus' crates share, and the workspace's structural checks.
//!
//! Test only (a dev-dependency): nothing here ships in a binary.
//!
//! - [`module_graph`]: the module graph of a crate's sources and its cycles; its test fails
//!   when any crate of the workspace has a module cycle.

pub mod module_graph;
