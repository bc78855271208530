//! How long jobs run and when waiting ones start (issue 22): run time predictions from the
//! fleet's history (`grus_scheduler::predict`), the features a job is judged by
//! ([`features`]), the expected start of waiting jobs ([`start`], pure), and the history kept
//! from PostgreSQL ([`history`], the shell the GraphQL fields and the dispatcher share).

pub mod features;
pub mod history;
pub mod start;

pub use history::{RuntimeHistory, StartEstimate};
