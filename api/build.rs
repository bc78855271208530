//! `sqlx::migrate!` embeds `migrations/` at compile time, but cargo only rebuilds when a
//! tracked file changes: a new migration file would otherwise be left out of the binary.
fn main() {
    println!("cargo:rerun-if-changed=../migrations");
}
