//! The scheduler's integration tests, one binary: the cycle's behaviour (`cycle`) and property
//! tests of its invariants (`cycle_props`) and of the capacity index (`index_props`), moves that
//! make room for gangs (`consolidation`), node pools (`pools`), hierarchical fair share
//! (`hierarchy`), the
//! `grus` policy (`grus_policy`), and the trace replay (`replay`); `common` builds their worlds.

mod common;
mod consolidation;
mod cycle;
mod cycle_props;
mod grus_policy;
mod hierarchy;
mod index_props;
mod mig;
mod pools;
mod replay;
mod sharing;
