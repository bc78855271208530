//! The HTTP router: POST /graphql, GET /healthz, /readyz and /metrics.
//!
//! Authentication happens here, once per request, and the caller goes into the GraphQL
//! context; resolvers only authorize. Metrics are hand-written Prometheus text: a counter and
//! a latency histogram per GraphQL operation type.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use async_graphql::parser::types::OperationType;
use async_graphql_axum::GraphQLResponse;
use axum::body::Bytes;
use axum::extract::{DefaultBodyLimit, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::Router;
use sqlx::PgPool;

use crate::graphql::auth::Authenticator;
use crate::graphql::GrusSchema;

/// Everything the handlers share.
#[derive(Clone)]
pub struct AppState {
    pub schema: GrusSchema,
    pub pool: PgPool,
    /// `None` in tests without Redis: /readyz then checks PostgreSQL only.
    pub redis: Option<redis::Client>,
    pub auth: Authenticator,
    pub metrics: Arc<Metrics>,
}

pub fn router(state: AppState, max_body_bytes: usize) -> Router {
    Router::new()
        .route("/graphql", post(graphql))
        .route("/healthz", get(|| async { "ok" }))
        .route("/readyz", get(readyz))
        .route("/metrics", get(metrics))
        .layer(DefaultBodyLimit::max(max_body_bytes))
        .with_state(state)
}

/// Takes the body as `Bytes`, not async-graphql-axum's extractor: that one streams the body
/// itself and would bypass `DefaultBodyLimit`. JSON POST only (no multipart uploads).
async fn graphql(State(state): State<AppState>, headers: HeaderMap, body: Bytes) -> Response {
    let started = Instant::now();
    let Ok(mut req) = serde_json::from_slice::<async_graphql::Request>(&body) else {
        state.metrics.observe(OpKind::Invalid, false, started.elapsed());
        return (StatusCode::BAD_REQUEST, "expected a JSON GraphQL request").into_response();
    };
    let op = operation_kind(&req.query, req.operation_name.as_deref());
    let response = match state.auth.authenticate(&state.pool, &headers).await {
        Ok(caller) => {
            req = crate::graphql::prepare_request(req, caller, &state.pool);
            state.schema.execute(req).await
        }
        // Invalid credentials fail the whole request: no resolver runs.
        Err(e) => async_graphql::Response::from_errors(vec![
            async_graphql::Error::from(e).into_server_error(async_graphql::Pos::default())
        ]),
    };
    state.metrics.observe(op, response.is_ok(), started.elapsed());
    GraphQLResponse::from(response).into_response()
}

async fn readyz(State(state): State<AppState>) -> impl IntoResponse {
    let db_ok = sqlx::query("SELECT 1").execute(&state.pool).await.is_ok();
    let redis_ok = match &state.redis {
        None => true,
        Some(client) => {
            let ping = async {
                let mut conn = client.get_multiplexed_async_connection().await?;
                redis::cmd("PING").query_async::<String>(&mut conn).await
            };
            matches!(tokio::time::timeout(Duration::from_secs(2), ping).await, Ok(Ok(_)))
        }
    };
    let body = format!("postgres: {}\nredis: {}\n", ok(db_ok), ok(redis_ok));
    let status = if db_ok && redis_ok { StatusCode::OK } else { StatusCode::SERVICE_UNAVAILABLE };
    (status, body)
}

fn ok(b: bool) -> &'static str {
    if b {
        "ok"
    } else {
        "down"
    }
}

async fn metrics(State(state): State<AppState>) -> impl IntoResponse {
    ([(header::CONTENT_TYPE, "text/plain; version=0.0.4")], state.metrics.render())
}

/// The operation type of a request (what the metrics are labelled with).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OpKind {
    Query,
    Mutation,
    Subscription,
    /// Unparseable, or no operation of that name.
    Invalid,
}

const OP_KINDS: [OpKind; 4] = [OpKind::Query, OpKind::Mutation, OpKind::Subscription, OpKind::Invalid];

impl OpKind {
    fn label(self) -> &'static str {
        match self {
            OpKind::Query => "query",
            OpKind::Mutation => "mutation",
            OpKind::Subscription => "subscription",
            OpKind::Invalid => "invalid",
        }
    }
}

pub fn operation_kind(query: &str, name: Option<&str>) -> OpKind {
    let Ok(doc) = async_graphql::parser::parse_query(query) else { return OpKind::Invalid };
    let ty =
        doc.operations.iter().find(|(n, _)| name.is_none() || n.map(|n| n.as_str()) == name).map(|(_, op)| op.node.ty);
    match ty {
        Some(OperationType::Query) => OpKind::Query,
        Some(OperationType::Mutation) => OpKind::Mutation,
        Some(OperationType::Subscription) => OpKind::Subscription,
        None => OpKind::Invalid,
    }
}

/// Upper bounds of the latency buckets, seconds.
const BUCKETS: [f64; 11] = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5];

#[derive(Default)]
struct Series {
    ok: AtomicU64,
    errors: AtomicU64,
    /// Cumulative counts are computed at render time; these are per bucket (+Inf last).
    buckets: [AtomicU64; BUCKETS.len() + 1],
    sum_micros: AtomicU64,
}

/// Request counters and latency histograms per operation type. Lock-free: one set of atomics
/// per type, since the label set is fixed.
#[derive(Default)]
pub struct Metrics {
    series: [Series; 4],
}

impl Metrics {
    pub fn observe(&self, op: OpKind, ok: bool, elapsed: Duration) {
        let s = &self.series[OP_KINDS.iter().position(|k| *k == op).unwrap_or(3)];
        if ok { &s.ok } else { &s.errors }.fetch_add(1, Ordering::Relaxed);
        let secs = elapsed.as_secs_f64();
        let slot = BUCKETS.iter().position(|b| secs <= *b).unwrap_or(BUCKETS.len());
        s.buckets[slot].fetch_add(1, Ordering::Relaxed);
        s.sum_micros.fetch_add(u64::try_from(elapsed.as_micros()).unwrap_or(u64::MAX), Ordering::Relaxed);
    }

    pub fn render(&self) -> String {
        use std::fmt::Write;
        let mut out = String::new();
        out.push_str("# HELP grus_graphql_requests_total GraphQL requests by operation type and outcome.\n");
        out.push_str("# TYPE grus_graphql_requests_total counter\n");
        for (kind, s) in OP_KINDS.iter().zip(&self.series) {
            let op = kind.label();
            let _ = writeln!(
                out,
                "grus_graphql_requests_total{{operation=\"{op}\",outcome=\"ok\"}} {}",
                s.ok.load(Ordering::Relaxed)
            );
            let _ = writeln!(
                out,
                "grus_graphql_requests_total{{operation=\"{op}\",outcome=\"error\"}} {}",
                s.errors.load(Ordering::Relaxed)
            );
        }
        out.push_str("# HELP grus_graphql_request_duration_seconds GraphQL request latency.\n");
        out.push_str("# TYPE grus_graphql_request_duration_seconds histogram\n");
        for (kind, s) in OP_KINDS.iter().zip(&self.series) {
            let op = kind.label();
            let mut cumulative = 0;
            for (i, bound) in BUCKETS.iter().enumerate() {
                cumulative += s.buckets[i].load(Ordering::Relaxed);
                let _ = writeln!(
                    out,
                    "grus_graphql_request_duration_seconds_bucket{{operation=\"{op}\",le=\"{bound}\"}} {cumulative}"
                );
            }
            cumulative += s.buckets[BUCKETS.len()].load(Ordering::Relaxed);
            let _ = writeln!(
                out,
                "grus_graphql_request_duration_seconds_bucket{{operation=\"{op}\",le=\"+Inf\"}} {cumulative}"
            );
            let sum = s.sum_micros.load(Ordering::Relaxed) as f64 / 1e6;
            let _ = writeln!(out, "grus_graphql_request_duration_seconds_sum{{operation=\"{op}\"}} {sum}");
            let _ = writeln!(out, "grus_graphql_request_duration_seconds_count{{operation=\"{op}\"}} {cumulative}");
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classifies_operations() {
        assert_eq!(operation_kind("{ me { id } }", None), OpKind::Query);
        assert_eq!(operation_kind("mutation M { cancelJob(id: 1) { id } }", Some("M")), OpKind::Mutation);
        assert_eq!(operation_kind("query A { me { id } } mutation B { x }", Some("B")), OpKind::Mutation);
        assert_eq!(operation_kind("{", None), OpKind::Invalid);
    }

    #[test]
    fn histogram_is_cumulative() {
        let m = Metrics::default();
        m.observe(OpKind::Query, true, Duration::from_millis(3));
        m.observe(OpKind::Query, false, Duration::from_secs(10));
        let text = m.render();
        assert!(text.contains("grus_graphql_requests_total{operation=\"query\",outcome=\"ok\"} 1"));
        assert!(text.contains("grus_graphql_request_duration_seconds_bucket{operation=\"query\",le=\"0.005\"} 1"));
        assert!(text.contains("grus_graphql_request_duration_seconds_bucket{operation=\"query\",le=\"+Inf\"} 2"));
    }
}
