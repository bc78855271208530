//! The committed SDL (`api/schema.graphql`) matches the code (STYLE habit 10).

#[test]
fn schema_graphql_is_current() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/schema.graphql");
    let committed = std::fs::read_to_string(path).unwrap_or_default();
    let current = grus_api::graphql::sdl();
    assert!(
        committed == current,
        "api/schema.graphql is out of date; regenerate it with\n    cargo run -p grus-api -- schema > api/schema.graphql"
    );
}
