//! The agent's small HTTP surface: `/healthz`, `/metrics` (merged in by the profiler), and
//! with the sim backend `/sim/*` fault injection for tests and demos.

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::routing::{get, post};
use axum::Router;

use crate::backend::sim::SimControl;
use crate::backend::ReplicaKey;

pub fn health_router() -> Router {
    Router::new().route("/healthz", get(|| async { "ok" }))
}

/// `POST /sim/nodes/{node}/down|up`, `POST /sim/replicas/{job}/{task}/{replica}/fail`.
pub fn sim_router(control: SimControl) -> Router {
    Router::new()
        .route("/sim/nodes/{node}/{action}", post(node_health))
        .route("/sim/replicas/{job}/{task}/{replica}/fail", post(fail_replica))
        .with_state(control)
        .merge(health_router())
}

async fn node_health(State(control): State<SimControl>, Path((node, action)): Path<(String, String)>) -> (StatusCode, String) {
    let healthy = match action.as_str() {
        "up" => true,
        "down" => false,
        other => return (StatusCode::BAD_REQUEST, format!("unknown action `{other}`: use up or down\n")),
    };
    match control.set_node_health(&node, healthy) {
        Ok(true) => (StatusCode::OK, format!("node {node} {action}\n")),
        Ok(false) => (StatusCode::NOT_FOUND, format!("no node `{node}`\n")),
        Err(e) => (StatusCode::INTERNAL_SERVER_ERROR, format!("{e}\n")),
    }
}

async fn fail_replica(
    State(control): State<SimControl>,
    Path((job, task, replica)): Path<(u64, String, u32)>,
) -> (StatusCode, String) {
    let key = ReplicaKey { job, task, replica };
    match control.fail_replica(&key, "failure injected") {
        Ok(true) => (StatusCode::OK, format!("{key} failed\n")),
        Ok(false) => (StatusCode::NOT_FOUND, format!("{key} is not running\n")),
        Err(e) => (StatusCode::INTERNAL_SERVER_ERROR, format!("{e}\n")),
    }
}
