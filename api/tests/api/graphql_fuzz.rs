//! GraphQL request parsing under fuzzing, through the real router with production limits and a
//! fresh database: documents mutated from a corpus of real operations (selections repeated into
//! alias floods, nested, cut, spliced with junk tokens, cyclic fragments, directive spam, extreme
//! numbers and strings) and random variables and bodies. Whatever arrives, the router answers
//! (no panic, no hang): 200 with data or coded errors, or a 4xx; never a 5xx. Nothing stored
//! changes except through a mutation whose answer says it succeeded.
//!
//! `GRUS_FUZZ_CASES=N` (default 600 requests) and `GRUS_FUZZ_SEED` lengthen or replay a run.

use std::time::Duration;

use axum::http::StatusCode;
use grus_api::domain::Role;
use grus_api::graphql::GraphqlLimits;
use grus_testkit::api::TestApi;
use grus_testkit::client::graphql;
use grus_testkit::{seed, TestDb};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde_json::{json, Value};

/// Real operations a portal or CLI user sends (member rights: they may submit and cancel).
const CORPUS: &[&str] = &[
    "{ me { id subject } }",
    "query($f: Int) { jobs(first: $f) { edges { node { id name state project { slug } tasks { name replicas } } } pageInfo { endCursor hasNextPage } } }",
    "{ projects { id slug queues { id name quotas { resource guaranteed limit } } } }",
    "query($id: ID!) { job(id: $id) { id state events { toState cause } dispatches { epoch outcome } } }",
    "{ clusters { id health capacity { model totalGpus freeGpus } } }",
    "mutation($input: JobInput!) { submitJob(input: $input) { borrowed job { id state } } }",
    "mutation($id: ID!) { cancelJob(id: $id) { id state } }",
    "fragment J on Job { id name } query { jobs(first: 5) { edges { node { ...J } } } }",
    "query Q($a: Boolean = true) { me @include(if: $a) { id } }",
];

/// Tokens spliced in at random: syntax, names that exist and do not, numbers past every bound.
const JUNK: &[&str] = &[
    "{",
    "}",
    "(",
    ")",
    ":",
    "$",
    "...",
    "@skip(if: true)",
    "@include(if: $nope)",
    "__typename",
    "__schema { types { name } }",
    "9999999999999999999999",
    "-1",
    "1e309",
    "\"\\u0000\"",
    "\"\\uD800\"",
    "first: 100000",
    "fragment F on Job { ...F }",
    "...F",
    "mutation",
    "subscription",
    "query",
    "null",
    "#",
    "\"\"\"block\"\"\"",
    "on",
    "!",
    "[",
    "]",
    "=",
    "|",
    "&",
    "\u{0}",
    "🚀",
];

fn mutate(rng: &mut StdRng, doc: &str) -> String {
    let mut doc = doc.to_owned();
    for _ in 0..rng.gen_range(1..4) {
        doc = match rng.gen_range(0..8) {
            // An alias flood: one field asked for many times under different names.
            0 => {
                let n = [10, 200, 5_000][rng.gen_range(0..3)];
                let field = (0..n).map(|i| format!("a{i}: me {{ id }}")).collect::<Vec<_>>().join(" ");
                format!("{{ {field} }}")
            }
            // Nesting: wrap the selection again and again.
            1 => {
                let depth = rng.gen_range(5..200);
                format!(
                    "{}{doc}{}",
                    "{ jobs(first: 1) { edges { node { project ".repeat(depth),
                    " } } } }".repeat(depth)
                )
            }
            // Cut at a random char boundary.
            2 if !doc.is_empty() => {
                let at = rng.gen_range(0..doc.len());
                let at = (0..=at).rev().find(|i| doc.is_char_boundary(*i)).unwrap_or(0);
                doc[..at].to_owned()
            }
            // Splice a junk token in.
            3..=5 => {
                let at = rng.gen_range(0..=doc.len());
                let at = (0..=at).rev().find(|i| doc.is_char_boundary(*i)).unwrap_or(0);
                format!("{} {} {}", &doc[..at], JUNK[rng.gen_range(0..JUNK.len())], &doc[at..])
            }
            // Many operations in one document.
            6 => format!("{doc} query A {{ me {{ id }} }} query A {{ me {{ id }} }}"),
            _ => doc.repeat(rng.gen_range(2..50)),
        };
    }
    doc
}

fn variables(rng: &mut StdRng) -> Value {
    let any = [
        json!(null),
        json!(1),
        json!(-1),
        json!(1e300),
        json!("1"),
        json!("x".repeat(100_000)),
        json!([1, 2, 3]),
        json!({ "nested": { "deeper": [null] } }),
        json!(u64::MAX),
    ];
    let project = ["p", "nope", ""][rng.gen_range(0..3)];
    let whole_input_is_junk = rng.gen_bool(0.3);
    let mut pick = || any[rng.gen_range(0..any.len())].clone();
    let input = json!({
        "name": pick(),
        "project": project,
        "tasks": [{ "name": pick(), "replicas": pick(), "image": "busybox", "resources": { "gpus": pick() } }],
        "labels": pick(),
    });
    json!({ "f": pick(), "id": pick(), "input": if whole_input_is_junk { pick() } else { input }, "a": pick() })
}

/// A request body: mostly a JSON request, sometimes a batch, a wrong shape or arbitrary bytes.
fn body(rng: &mut StdRng) -> Vec<u8> {
    let original = CORPUS[rng.gen_range(0..CORPUS.len())];
    let doc = mutate(rng, original);
    let request = json!({ "query": doc, "variables": variables(rng) });
    match rng.gen_range(0..12) {
        0 => (0..rng.gen_range(0..300)).map(|_| rng.gen::<u8>()).collect(),
        1 => serde_json::to_vec(&json!([request, request])).unwrap(),
        2 => serde_json::to_vec(&json!({ "query": 7, "variables": "x", "operationName": ["?"] })).unwrap(),
        3 => serde_json::to_vec(&json!({ "query": doc, "operationName": "Nope" })).unwrap(),
        _ => serde_json::to_vec(&request).unwrap(),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fuzzed_graphql_requests_are_answered_with_a_code_and_change_nothing_unasked() {
    let cases: usize = std::env::var("GRUS_FUZZ_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(600);
    let seed: u64 =
        std::env::var("GRUS_FUZZ_SEED").ok().and_then(|v| v.parse().ok()).unwrap_or_else(|| rand::thread_rng().gen());
    println!("graphql fuzz: {cases} requests, seed {seed} (GRUS_FUZZ_SEED={seed} replays it)");
    let t = TestDb::new().await;
    let tenant = seed::tenant(&t.pool, "t", "T").await;
    let project = grus_api::db::create_project(&t.pool, tenant, "p", "P").await.unwrap();
    seed::member(&t.pool, project.id, "alice", Role::Member).await;
    let queue = grus_api::db::QueueSettings::named("default");
    grus_api::db::create_queue(&t.pool, project.id, &queue).await.unwrap();
    let app = TestApi::new(&t.pool).limits(GraphqlLimits::production()).body_limit(256 * 1024).router();

    let mut rng = StdRng::seed_from_u64(seed);
    let (mut submitted, mut answered) = (0i64, [0usize; 3]);
    for case in 0..cases {
        let bytes = body(&mut rng);
        let shown = String::from_utf8_lossy(&bytes[..bytes.len().min(300)]).into_owned();
        let sent = graphql(&app, &[("x-grus-dev-user", "alice")], bytes);
        // A bound on a wedged request, not a speed assertion.
        let (status, answer) = tokio::time::timeout(Duration::from_secs(60), sent)
            .await
            .unwrap_or_else(|_| panic!("seed {seed}, case {case}: no answer within 60 s to {shown}"));
        assert!(!status.is_server_error(), "seed {seed}, case {case}: {status} for {shown}: {answer}");
        if status == StatusCode::OK {
            answered[0] += 1;
            let answers = if answer.is_array() { answer.as_array().unwrap().clone() } else { vec![answer.clone()] };
            for a in &answers {
                for e in a["errors"].as_array().into_iter().flatten() {
                    assert!(e["message"].as_str().is_some_and(|m| !m.is_empty()), "seed {seed}, case {case}: {e}");
                    let code = e["extensions"]["code"].as_str();
                    assert!(code.is_some(), "seed {seed}, case {case}: an error without a code for {shown}: {e}");
                    assert_ne!(code, Some("INTERNAL"), "seed {seed}, case {case}: INTERNAL for {shown}: {e}");
                }
                if a["data"]["submitJob"]["job"]["id"].is_string() {
                    submitted += 1;
                }
            }
        } else {
            answered[if status.is_client_error() { 1 } else { 2 }] += 1;
        }
    }
    println!(
        "graphql fuzz: {cases} requests: {} answered 200, {} 4xx, {} other",
        answered[0], answered[1], answered[2]
    );
    let (jobs,): (i64,) = sqlx::query_as("SELECT count(*) FROM jobs").fetch_one(&t.pool).await.unwrap();
    assert_eq!(jobs, submitted, "seed {seed}: stored jobs differ from the submissions that succeeded");
    let (projects,): (i64,) = sqlx::query_as("SELECT count(*) FROM projects").fetch_one(&t.pool).await.unwrap();
    assert_eq!(projects, 1, "seed {seed}: the tenancy changed");
}
