//! Requests to a router in the test's own process (tower's `oneshot`: no socket), as a dev
//! user, with any headers, or with a raw body; and the error code of a GraphQL answer.

use axum::body::Body;
use axum::http::{HeaderMap, Request, StatusCode};
use axum::Router;
use grus_api::graphql::auth::DEV_USER_HEADER;
use serde_json::{json, Value};
use tower::ServiceExt;

/// An answer: status, headers and body bytes.
pub struct Answer {
    pub status: StatusCode,
    pub headers: HeaderMap,
    pub body: Vec<u8>,
}

impl Answer {
    /// The body as JSON (`Null` when it is not JSON).
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or(Value::Null)
    }
}

/// Sends `request` through `app`.
pub async fn send(app: &Router, request: Request<Body>) -> Answer {
    let resp = app.clone().oneshot(request).await.expect("the router answers");
    let status = resp.status();
    let headers = resp.headers().clone();
    let body = axum::body::to_bytes(resp.into_body(), usize::MAX).await.expect("the body").to_vec();
    Answer { status, headers, body }
}

/// POST /graphql with `headers` and the raw `body`: the status and the body as JSON (`Null`
/// when it is not JSON).
pub async fn graphql(app: &Router, headers: &[(&str, &str)], body: impl Into<Body>) -> (StatusCode, Value) {
    let mut req = Request::post("/graphql").header("content-type", "application/json");
    for (k, v) in headers {
        req = req.header(*k, *v);
    }
    let answer = send(app, req.body(body.into()).expect("a request")).await;
    (answer.status, answer.json())
}

/// `query` with `variables` and `headers`: the whole answer (data and errors), whatever the
/// status.
pub async fn request(app: &Router, headers: &[(&str, &str)], query: &str, variables: Value) -> Value {
    graphql(app, headers, json!({ "query": query, "variables": variables }).to_string()).await.1
}

/// `query` as the dev user `who` (`None`: anonymous); asserts the request was answered with
/// 200 and returns the whole answer.
pub async fn gql<'a>(app: &Router, who: impl Into<Option<&'a str>>, query: &str, variables: Value) -> Value {
    let who = who.into();
    let headers: Vec<(&str, &str)> = who.map(|w| (DEV_USER_HEADER, w)).into_iter().collect();
    let (status, answer) = graphql(app, &headers, json!({ "query": query, "variables": variables }).to_string()).await;
    assert_eq!(status, StatusCode::OK, "{query}: {answer}");
    answer
}

/// `query` with `Authorization: Bearer <token>` (an API token or a JWT): the whole answer.
pub async fn bearer(app: &Router, token: &str, query: &str, variables: Value) -> Value {
    request(app, &[("authorization", &format!("Bearer {token}"))], query, variables).await
}

/// `OK` when the answer has no error, else the first error's `extensions.code` (`NO_CODE`
/// when it has none); `NOT_GRAPHQL` when the body was not a GraphQL answer at all (a plain-text
/// 4xx or 5xx), so such a reply never passes for a success.
pub fn code(answer: &Value) -> String {
    if !answer.is_object() {
        return "NOT_GRAPHQL".into();
    }
    match answer["errors"].get(0) {
        None => "OK".into(),
        Some(e) => e["extensions"]["code"].as_str().unwrap_or("NO_CODE").to_owned(),
    }
}

/// The input fields a VALIDATION error names, in order (empty for any other answer).
pub fn error_fields(answer: &Value) -> Vec<String> {
    answer["errors"][0]["extensions"]["fields"]
        .as_array()
        .map(|a| a.iter().filter_map(|f| f["field"].as_str().map(str::to_owned)).collect())
        .unwrap_or_default()
}
