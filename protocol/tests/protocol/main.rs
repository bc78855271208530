//! The protocol's one test binary: round trips and version rules, and the decoder under fuzzing.

mod fuzz;
mod roundtrip;
