//! The HTTP router: POST /graphql, the subscription websocket /graphql/ws, export downloads
//! GET /api/exports/{id}, the /auth routes (`crate::auth::login`), and GET /healthz, /readyz
//! and /metrics.
//!
//! Authentication happens here, once per request, and the caller goes into the GraphQL
//! context; resolvers only authorize. A request authenticated by the session cookie must carry
//! the session's CSRF token in `X-Grus-CSRF`, or it is FORBIDDEN before any resolver runs.
//! This layer counts GraphQL requests ([`RequestMetrics`]: a counter and a latency histogram
//! per operation type) and renders the registry of metric families the server assembled
//! (`crate::metrics`); it owns no other loop's metrics.

use std::sync::Arc;
use std::time::{Duration, Instant};

use async_graphql::http::ALL_WEBSOCKET_PROTOCOLS;
use async_graphql::parser::types::{ExecutableDocument, OperationType};
use async_graphql::Data;
use async_graphql_axum::{GraphQLProtocol, GraphQLResponse, GraphQLWebSocket};
use axum::body::Bytes;
use axum::extract::ws::WebSocketUpgrade;
use axum::extract::{DefaultBodyLimit, FromRef, Path, State};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::Router;
use sqlx::PgPool;

use crate::auth::login::LoginState;
use crate::auth::web;
use crate::db::{self, DbError};
use crate::error::ApiError;
use crate::graphql::auth::{Authenticated, Authenticator, DEV_USER_HEADER};
use crate::graphql::{billing, Caller, GrusSchema};
use crate::metrics::{MetricFamily, Registry};
use prometheus::{HistogramOpts, HistogramVec, IntCounterVec, Opts};

/// Everything the handlers share.
#[derive(Clone)]
pub struct AppState {
    pub schema: GrusSchema,
    pub pool: PgPool,
    /// `None` in tests without Redis: /readyz then checks PostgreSQL only.
    pub redis: Option<redis::Client>,
    pub auth: Authenticator,
    /// Counted by the `/graphql` handler; registered in `metrics` by [`AppState::new`].
    pub requests: Arc<RequestMetrics>,
    /// What `/metrics` renders: the requests' family, then whatever the server registers.
    pub metrics: Registry,
}

impl AppState {
    /// The state without Redis (`/readyz` checks PostgreSQL only), whose `/metrics` shows the
    /// GraphQL requests; the server adds Redis and its loops' families.
    pub fn new(schema: GrusSchema, pool: PgPool, auth: Authenticator) -> AppState {
        let requests = Arc::new(RequestMetrics::default());
        let mut metrics = Registry::default();
        metrics.register(requests.clone());
        AppState { schema, pool, redis: None, auth, requests, metrics }
    }
}

/// What the `/auth` routes need of the server's state.
impl FromRef<AppState> for LoginState {
    fn from_ref(state: &AppState) -> LoginState {
        LoginState { pool: state.pool.clone(), provider: state.auth.oidc().cloned() }
    }
}

pub fn router(state: AppState, max_body_bytes: usize) -> Router {
    Router::new()
        .route("/graphql", post(graphql))
        .route("/graphql/ws", get(graphql_ws))
        .route("/api/exports/{id}", get(download_export))
        .route("/api/agent/credentials", post(agent_credentials))
        .route("/healthz", get(|| async { "ok" }))
        .route("/readyz", get(readyz))
        .route("/metrics", get(metrics))
        .merge(crate::auth::login::routes())
        .layer(DefaultBodyLimit::max(max_body_bytes))
        .with_state(state)
}

/// `POST /api/agent/credentials` (`agent_access`): an agent's registration token for its
/// cluster's Redis credentials. 401 for a token of no cluster, 503 without Redis.
async fn agent_credentials(State(state): State<AppState>, headers: HeaderMap) -> Response {
    let token = headers
        .get(axum::http::header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "));
    let Some(token) = token else {
        return (StatusCode::UNAUTHORIZED, "an agent token is required (Authorization: Bearer ...)").into_response();
    };
    let Some(redis) = &state.redis else {
        return (StatusCode::SERVICE_UNAVAILABLE, "this server has no Redis").into_response();
    };
    match crate::agent_access::issue(&state.pool, redis, token).await {
        Ok(credentials) => axum::Json(credentials).into_response(),
        Err(e @ crate::agent_access::IssueError::UnknownToken) => {
            (StatusCode::UNAUTHORIZED, e.to_string()).into_response()
        }
        Err(e) => {
            tracing::error!(error = %e, "agent credentials not issued");
            (StatusCode::SERVICE_UNAVAILABLE, "could not issue the agent's credentials").into_response()
        }
    }
}

/// Takes the body as `Bytes`, not async-graphql-axum's extractor: that one streams the body
/// itself and would bypass `DefaultBodyLimit`. JSON POST only (no multipart uploads).
async fn graphql(State(state): State<AppState>, headers: HeaderMap, body: Bytes) -> Response {
    let started = Instant::now();
    let Ok(mut req) = serde_json::from_slice::<async_graphql::Request>(&body) else {
        state.requests.observe(OpKind::Invalid, false, started.elapsed());
        return (StatusCode::BAD_REQUEST, "expected a JSON GraphQL request").into_response();
    };
    // Parsed once here (or found parsed in the cache), for the metrics' operation type; the
    // executor reuses the document.
    let operation_name = req.operation_name.clone();
    let op = state
        .schema
        .documents()
        .parse(&mut req)
        .map_or(OpKind::Invalid, |doc| operation_kind(doc, operation_name.as_deref()));
    let refuse = |e: ApiError| {
        async_graphql::Response::from_errors(vec![
            async_graphql::Error::from(e).into_server_error(async_graphql::Pos::default())
        ])
    };
    let response = match state.auth.identify(&state.pool, &headers).await {
        Ok(Some(Authenticated { csrf_token: Some(expected), .. })) if !csrf_matches(&headers, &expected) => {
            refuse(ApiError::Forbidden)
        }
        // An API token whose scopes do not cover the operation (a read-only token's mutation).
        Ok(Some(a)) if !a.may(op == OpKind::Mutation) => refuse(ApiError::Forbidden),
        Ok(auth) => {
            req = crate::graphql::prepare_request(req, auth.map(|a| a.caller), &state.pool);
            state.schema.execute(req).await
        }
        // Invalid credentials fail the whole request: no resolver runs.
        Err(e) => refuse(e),
    };
    state.requests.observe(op, response.is_ok(), started.elapsed());
    GraphQLResponse::from(response).into_response()
}

/// Subscriptions over a websocket (graphql-transport-ws and the older graphql-ws). The caller
/// is authenticated from the upgrade request's headers (cookie, bearer token, dev header) or,
/// since browsers cannot set headers on a websocket, from the `connection_init` payload
/// (`{"authorization": "Bearer ..."}`). Without either, `connection_init` is refused and the
/// socket closed before any subscription starts; invalid header credentials fail the upgrade
/// with 401.
async fn graphql_ws(
    State(state): State<AppState>,
    protocol: GraphQLProtocol,
    headers: HeaderMap,
    upgrade: WebSocketUpgrade,
) -> Response {
    let from_headers = match state.auth.identify(&state.pool, &headers).await {
        // A browser sends the session cookie on a cross-site websocket too, and the socket has
        // no CSRF header: a cookie-authenticated upgrade must come from our own origin.
        Ok(Some(found)) if found.csrf_token.is_some() && !same_origin(&headers) => {
            return (StatusCode::FORBIDDEN, "cross-origin websocket").into_response()
        }
        Ok(Some(found)) if !found.may(false) => {
            return (StatusCode::FORBIDDEN, "this API token may not read").into_response()
        }
        Ok(found) => found.map(|a| a.caller),
        Err(_) => return (StatusCode::UNAUTHORIZED, "invalid credentials").into_response(),
    };
    let AppState { schema, pool, auth, .. } = state;
    upgrade.protocols(ALL_WEBSOCKET_PROTOCOLS).on_upgrade(move |socket| {
        GraphQLWebSocket::new(socket, schema, protocol)
            .on_connection_init(move |payload| connection_init(auth, pool, from_headers, payload))
            .serve()
    })
}

async fn connection_init(
    auth: Authenticator,
    pool: PgPool,
    from_headers: Option<Caller>,
    payload: serde_json::Value,
) -> async_graphql::Result<Data> {
    let field = |name: &str| payload.get(name).and_then(|v| v.as_str()).map(str::to_owned);
    let mut headers = HeaderMap::new();
    let invalid = || async_graphql::Error::new("invalid credentials");
    if let Some(value) = field("authorization").or_else(|| field("Authorization")) {
        headers.insert(header::AUTHORIZATION, HeaderValue::from_str(&value).map_err(|_| invalid())?);
    }
    if let Some(value) = field(DEV_USER_HEADER) {
        headers.insert(DEV_USER_HEADER, HeaderValue::from_str(&value).map_err(|_| invalid())?);
    }
    let caller = if headers.is_empty() {
        from_headers
    } else {
        match auth.identify(&pool, &headers).await.map_err(|_| invalid())? {
            Some(a) if !a.may(false) => return Err(async_graphql::Error::new("this API token may not read")),
            found => found.map(|a| a.caller),
        }
    };
    let caller = caller.ok_or_else(|| async_graphql::Error::new("authentication required"))?;
    let mut data = Data::default();
    data.insert(caller);
    Ok(data)
}

/// A stored FOCUS export, for its tenant's admins and platform admins. Unknown ids and
/// exports of other scopes are both 404, so ids do not leak. The ETag is the file's SHA-256:
/// the bytes of an export never change.
async fn download_export(State(state): State<AppState>, Path(id): Path<String>, headers: HeaderMap) -> Response {
    let caller = match state.auth.authenticate(&state.pool, &headers).await {
        Ok(Some(caller)) => caller,
        Ok(None) | Err(_) => {
            return (StatusCode::UNAUTHORIZED, [(header::WWW_AUTHENTICATE, "Bearer")], "authentication required")
                .into_response()
        }
    };
    let not_found = || (StatusCode::NOT_FOUND, "export not found").into_response();
    let internal = || (StatusCode::INTERNAL_SERVER_ERROR, "internal error").into_response();
    let Ok(id) = id.parse::<i64>() else { return not_found() };
    let export = match db::billing::get_export(&state.pool, id).await {
        Ok(e) => e,
        Err(DbError::NotFound(_)) => return not_found(),
        Err(e) => {
            tracing::error!(error = ?e, "load export");
            return internal();
        }
    };
    match billing::may_read_export(&state.pool, &caller.user, &export).await {
        Ok(true) => {}
        Ok(false) => return not_found(),
        Err(_) => return internal(),
    }
    let etag = format!("\"{}\"", export.sha256);
    if headers.get(header::IF_NONE_MATCH).is_some_and(|v| v.as_bytes() == etag.as_bytes()) {
        return (StatusCode::NOT_MODIFIED, [(header::ETAG, etag)]).into_response();
    }
    let (content, name) = match (
        db::billing::export_content(&state.pool, id).await,
        billing::export_file_name(&state.pool, &export).await,
    ) {
        (Ok(c), Ok(n)) => (c, n),
        (Err(e), _) => {
            tracing::error!(error = ?e, "load export content");
            return internal();
        }
        (_, Err(_)) => return internal(),
    };
    let content_type = export.format.content_type();
    (
        StatusCode::OK,
        [
            (header::CONTENT_TYPE, content_type.to_owned()),
            (header::CONTENT_DISPOSITION, format!("attachment; filename=\"{name}\"")),
            (header::ETAG, etag),
            (header::CACHE_CONTROL, "private, no-cache".to_owned()),
        ],
        content,
    )
        .into_response()
}

/// Whether the request's `Origin` names the host it was sent to (`Host`); a missing Origin is
/// not same-origin (browsers always send it on websocket upgrades).
fn same_origin(headers: &HeaderMap) -> bool {
    let get = |name| headers.get(name).and_then(|v: &HeaderValue| v.to_str().ok());
    match (get(header::ORIGIN), get(header::HOST)) {
        (Some(origin), Some(host)) => origin.split_once("://").is_some_and(|(_, authority)| authority == host),
        _ => false,
    }
}

/// Whether the request echoes the session's CSRF token.
fn csrf_matches(headers: &HeaderMap, expected: &str) -> bool {
    headers.get(web::CSRF_HEADER).and_then(|v| v.to_str().ok()).is_some_and(|v| web::secrets_equal(v, expected))
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
    ([(header::CONTENT_TYPE, crate::metrics::CONTENT_TYPE)], state.metrics.render())
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

impl From<OperationType> for OpKind {
    fn from(ty: OperationType) -> Self {
        match ty {
            OperationType::Query => OpKind::Query,
            OperationType::Mutation => OpKind::Mutation,
            OperationType::Subscription => OpKind::Subscription,
        }
    }
}

/// The type of the document's operation that `name` picks (the only one when unnamed);
/// `Invalid` when there is none.
pub fn operation_kind(doc: &ExecutableDocument, name: Option<&str>) -> OpKind {
    let ty =
        doc.operations.iter().find(|(n, _)| name.is_none() || n.map(|n| n.as_str()) == name).map(|(_, op)| op.node.ty);
    ty.map_or(OpKind::Invalid, OpKind::from)
}

/// Upper bounds of the latency buckets, seconds.
const BUCKETS: [f64; 11] = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5];

/// GraphQL request counters and latency histograms per operation type, counted by the
/// `/graphql` handler. Every operation type's series exist from the start (at 0).
pub struct RequestMetrics {
    requests: IntCounterVec,
    durations: HistogramVec,
}

impl Default for RequestMetrics {
    fn default() -> Self {
        let requests = IntCounterVec::new(
            Opts::new("grus_graphql_requests_total", "GraphQL requests by operation type and outcome."),
            &["operation", "outcome"],
        )
        .expect("a valid metric");
        let durations = HistogramVec::new(
            HistogramOpts::new("grus_graphql_request_duration_seconds", "GraphQL request latency.")
                .buckets(BUCKETS.to_vec()),
            &["operation"],
        )
        .expect("a valid metric");
        for kind in OP_KINDS {
            for outcome in ["ok", "error"] {
                requests.with_label_values(&[kind.label(), outcome]);
            }
            durations.with_label_values(&[kind.label()]);
        }
        RequestMetrics { requests, durations }
    }
}

impl RequestMetrics {
    pub fn observe(&self, op: OpKind, ok: bool, elapsed: Duration) {
        self.requests.with_label_values(&[op.label(), if ok { "ok" } else { "error" }]).inc();
        self.durations.with_label_values(&[op.label()]).observe(elapsed.as_secs_f64());
    }
}

impl MetricFamily for RequestMetrics {
    fn collectors(&self) -> Vec<Box<dyn prometheus::core::Collector>> {
        vec![crate::metrics::boxed(&self.requests), crate::metrics::boxed(&self.durations)]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn websocket_origin_must_match_host() {
        let headers = |origin: Option<&str>| {
            let mut h = HeaderMap::new();
            h.insert(header::HOST, HeaderValue::from_static("grus.example.com"));
            if let Some(o) = origin {
                h.insert(header::ORIGIN, HeaderValue::from_str(o).unwrap());
            }
            h
        };
        assert!(same_origin(&headers(Some("https://grus.example.com"))));
        assert!(!same_origin(&headers(Some("https://evil.example.com"))));
        assert!(!same_origin(&headers(Some("https://grus.example.com.evil.net"))));
        assert!(!same_origin(&headers(None)));
    }

    #[test]
    fn classifies_operations() {
        let kind = |query: &str, name: Option<&str>| {
            async_graphql::parser::parse_query(query).map_or(OpKind::Invalid, |doc| operation_kind(&doc, name))
        };
        assert_eq!(kind("{ me { id } }", None), OpKind::Query);
        assert_eq!(kind("mutation M { cancelJob(id: 1) { id } }", Some("M")), OpKind::Mutation);
        assert_eq!(kind("query A { me { id } } mutation B { x }", Some("B")), OpKind::Mutation);
        assert_eq!(kind("query A { me { id } }", Some("B")), OpKind::Invalid);
        assert_eq!(kind("{", None), OpKind::Invalid);
    }

    #[test]
    fn histogram_is_cumulative() {
        let m = RequestMetrics::default();
        m.observe(OpKind::Query, true, Duration::from_millis(3));
        m.observe(OpKind::Query, false, Duration::from_secs(10));
        let text = m.render();
        assert!(text.contains("grus_graphql_requests_total{operation=\"query\",outcome=\"ok\"} 1"));
        assert!(text.contains("grus_graphql_request_duration_seconds_bucket{operation=\"query\",le=\"0.005\"} 1"));
        assert!(text.contains("grus_graphql_request_duration_seconds_bucket{operation=\"query\",le=\"+Inf\"} 2"));
    }
}
